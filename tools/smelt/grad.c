/*
 * grad.c - `smelt grad FILE --input NAME=x.npy ... [--loss sum|mean]
 * --output-dir D`: the gradient of the loss (the first output, summed or
 * averaged) with respect to every floating-point initializer, written to
 * D/NAME.npy, and the loss printed. The joint graph (smelt_graph_grad)
 * runs as a compiled plan, as `smelt run` runs models, or with
 * --reference on the reference interpreter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"

void cli_grad_help(FILE *out)
{
    fprintf(out,
            "write the gradients of a model's initializers\n\n"
            "usage: smelt grad FILE --input NAME=x.npy... --output-dir D "
            "[options]\n\n"
            "Builds the joint forward+backward graph of the loss (the\n"
            "first output, summed or averaged by --loss) with respect to\n"
            "every floating-point initializer, runs it as a compiled plan\n"
            "(or with --reference on the reference interpreter), prints\n"
            "the loss and writes each gradient to D/NAME.npy, NAME being\n"
            "the initializer's name with every character outside\n"
            "[A-Za-z0-9._-] replaced by '_'.\n");
    cli_options_help(out, "grad");
}

/* D/NAME.npy for initializer `name`, NAME with every byte outside
 * [A-Za-z0-9._-] replaced by '_' (malloc'd; NULL when out of memory). */
static char *grad_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 6;
    char *p = malloc(n);
    if (!p)
        return NULL;
    int k = snprintf(p, n, "%s/", dir);
    for (const char *c = name; *c; c++) {
        unsigned char u = (unsigned char)*c;
        int keep = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
                   (u >= '0' && u <= '9') || u == '.' || u == '_' || u == '-';
        p[k++] = keep ? (char)u : '_';
    }
    snprintf(p + k, n - (size_t)k, ".npy");
    return p;
}

/* The file of every gradient of joint graph j, refusing two names that
 * map to one file ('/' becomes '_', so no name leaves D). 0, or 1 after
 * printing the error. */
static int grad_paths(const smelt_graph_t *j, const char *dir, char **paths)
{
    int n = smelt_graph_num_grads(j);
    for (int i = 0; i < n; i++) {
        const char *name = smelt_graph_grad_wrt(j, i);
        if (!(paths[i] = grad_path(dir, name))) {
            fprintf(stderr, "smelt grad: out of memory\n");
            return 1;
        }
        for (int k = 0; k < i; k++)
            if (!strcmp(paths[i], paths[k])) {
                fprintf(stderr,
                        "smelt grad: initializers '%s' and '%s' would both "
                        "write %s (names keep only [A-Za-z0-9._-])\n",
                        smelt_graph_grad_wrt(j, k), name, paths[i]);
                return 1;
            }
    }
    return 0;
}

/* Runs joint graph j on inputs: a compiled plan, or the reference
 * interpreter with --reference. 0, or 1 after printing the error. */
static int run_joint(smelt_ctx_t *ctx, const cli_args *a, const char *file,
                     const smelt_graph_t *j, smelt_tensor_t **in, int n_in,
                     smelt_tensor_t **out, int n_out)
{
    if (a->given[CLI_OPT_reference])
        return smelt_graph_run_reference(ctx, j, in, n_in, out, n_out) ==
                       SMELT_OK
                   ? 0
                   : cli_fail(ctx, file);
    smelt_plan_options po;
    cli_plan_options(a, &po);
    po.inputs = in;
    po.n_inputs = n_in;
    smelt_plan_t *plan = NULL;
    int rc = 0;
    if (smelt_plan_compile(ctx, j, &po, &plan) != SMELT_OK ||
        smelt_plan_run(ctx, plan, in, n_in, out, n_out) != SMELT_OK)
        rc = cli_fail(ctx, file);
    smelt_plan_free(plan);
    return rc;
}

/* Writes each gradient output of j to its file. */
static int write_grads(smelt_ctx_t *ctx, const smelt_graph_t *j,
                       const char *dir, char **paths, smelt_tensor_t **out)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "smelt grad: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    for (int i = 0; i < smelt_graph_num_grads(j); i++)
        if (smelt_npy_save(ctx, paths[i], out[smelt_graph_grad_output(j, i)]) !=
            SMELT_OK)
            return cli_fail(ctx, paths[i]);
    return 0;
}

int cli_grad(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "grad", argc, argv, 1, 1, "FILE");
    int reduce = rc ? 0 : cli_loss_reduce("grad", a.str[CLI_OPT_loss]);
    const char *dir = a.str[CLI_OPT_output_dir];
    if (!rc && reduce < 0)
        rc = 2;
    if (!rc && !dir)
        rc = cli_usage_error("grad", "--output-dir D is required: the "
                                     "gradients are written there");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *file = a.files[0];
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL, *j = NULL;
    smelt_tensor_t **in = NULL, **out = NULL;
    char **paths = NULL;
    rc = cli_load_graph(ctx, file, 1, &g);
    if (!rc)
        rc = cli_check_dims(&a, g);
    int n_in = g ? smelt_graph_num_inputs(g) : 0;
    if (!rc && !(in = calloc((size_t)n_in + 1, sizeof *in))) {
        fprintf(stderr, "smelt grad: out of memory\n");
        rc = 1;
    }
    cli_input_rule rule = {0};
    if (!rc)
        rc = cli_bind_inputs(ctx, &a, g, &rule, in);
    smelt_grad_options go;
    smelt_grad_options_default(&go);
    go.loss_reduce = reduce;
    if (!rc && smelt_graph_grad(ctx, g, &go, &j) != SMELT_OK)
        rc = cli_fail(ctx, file);
    int n_out = j ? smelt_graph_num_outputs(j) : 0;
    int n_grads = j ? smelt_graph_num_grads(j) : 0;
    if (!rc && (!(out = calloc((size_t)n_out + 1, sizeof *out)) ||
                !(paths = calloc((size_t)n_grads + 1, sizeof *paths)))) {
        fprintf(stderr, "smelt grad: out of memory\n");
        rc = 1;
    }
    if (!rc)
        rc = grad_paths(j, dir, paths);
    if (!rc)
        rc = run_joint(ctx, &a, file, j, in, n_in, out, n_out);
    if (!rc)
        rc = write_grads(ctx, j, dir, paths, out);
    if (!rc) {
        printf("loss: %.9g\n",
               smelt_tensor_get_f64(out[smelt_graph_loss_output(j)], 0));
        fprintf(stderr, "wrote %d gradients to %s\n", n_grads, dir);
    }
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    for (int i = 0; out && i < n_out; i++)
        smelt_tensor_free(out[i]);
    for (int i = 0; paths && i < n_grads; i++)
        free(paths[i]);
    free(in);
    free(out);
    free(paths);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
