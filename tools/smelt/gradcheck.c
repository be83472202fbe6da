/*
 * gradcheck.c - `smelt gradcheck FILE [--input NAME=x.npy ...] [--seed S]
 * [--wrt NAME,...] [--loss sum|mean] [--samples K] [--dim NAME=SIZE]`:
 * checks the model's analytic gradients against float64 central
 * differences (smelt_gradcheck), one line per value checked, then
 * "gradcheck: N passed, M failed"; exit status 1 when any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "inputs.h"

void cli_gradcheck_help(FILE *out)
{
    fprintf(out,
            "check a model's gradients against central differences\n\n"
            "usage: smelt gradcheck FILE [--input NAME=x.npy]... [options]\n\n"
            "Differentiates the loss (the first output, summed or averaged\n"
            "by --loss) with respect to every float initializer and float\n"
            "input (or --wrt), in float64, and compares each element with\n"
            "(f(x+eps) - f(x-eps)) / 2eps: it passes within atol + rtol *\n"
            "|numeric| (PyTorch's 1e-5 and 1e-3). Inputs without --input\n"
            "are made from --seed: floats uniform in [--low, --high), which\n"
            "must lie where the model is defined (positive for Log),\n"
            "integers zero. Elements where the forward has a kink (relu at\n"
            "0) are left out and counted. Prints one line per value and\n"
            "'gradcheck: N passed, M failed'; exits 1 when any failed.\n");
    cli_options_help(out, "gradcheck");
}

int cli_loss_reduce(const char *verb, const char *s)
{
    if (!s || !strcmp(s, "sum"))
        return SMELT_LOSS_SUM;
    if (!strcmp(s, "mean"))
        return SMELT_LOSS_MEAN;
    cli_usage_error(verb, "--loss %s: expected sum or mean", s);
    return -1;
}

/* The --input files by graph input (NULL where none is given: the
 * library makes those). 0, or 1 after printing the problem. */
static int load_inputs(smelt_ctx_t *ctx, const cli_args *a,
                       const smelt_graph_t *g, smelt_tensor_t **in)
{
    int n_in = smelt_graph_num_inputs(g), next = 0;
    for (int s = 0; s < a->n_inputs; s++) {
        const char *spec = a->inputs[s], *eq = strchr(spec, '=');
        int idx = eq ? cli_input_index(g, spec, (size_t)(eq - spec)) : next++;
        if (idx < 0 || idx >= n_in) {
            if (eq)
                fprintf(stderr,
                        "smelt gradcheck: the graph has no input '%.*s'\n",
                        (int)(eq - spec), spec);
            else
                fprintf(stderr,
                        "smelt gradcheck: more inputs given than the graph "
                        "takes (%d)\n",
                        n_in);
            return 1;
        }
        if (in[idx]) {
            fprintf(stderr, "smelt gradcheck: input '%s' is given twice\n",
                    smelt_graph_input_name(g, idx));
            return 1;
        }
        const char *path = eq ? eq + 1 : spec;
        if (smelt_npy_load(ctx, path, &in[idx]) != SMELT_OK) {
            in[idx] = NULL;
            fprintf(stderr, "smelt gradcheck: input '%s': %s\n",
                    smelt_graph_input_name(g, idx), smelt_ctx_error(ctx));
            return 1;
        }
    }
    return 0;
}

/* Splits "a,b,c" into names (pointers into the copy *buf). */
static int split_names(const char *list, char **buf, const char ***names)
{
    *buf = strdup(list);
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    *names = calloc((size_t)n, sizeof **names);
    if (!*buf || !*names)
        return -1;
    n = 0;
    for (char *tok = strtok(*buf, ","); tok; tok = strtok(NULL, ","))
        (*names)[n++] = tok;
    return n;
}

/* "[4,3]" */
static void dims_str(const smelt_gradcheck_value *v, char *buf, size_t size)
{
    int n = snprintf(buf, size, "[");
    for (int i = 0; i < v->ndim && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "",
                      (long long)v->dims[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
}

/* One line per value, then the summary; returns the exit status. */
static int print_report(const smelt_gradcheck_report_t *r)
{
    int n = smelt_gradcheck_num_values(r), wn = 4, wd = 2;
    char dims[160];
    for (int i = 0; i < n; i++) {
        smelt_gradcheck_value v = SMELT_STRUCT_INIT(smelt_gradcheck_value);
        smelt_gradcheck_get(r, i, &v);
        dims_str(&v, dims, sizeof dims);
        int k = (int)strlen(v.name), d = (int)strlen(dims);
        wn = k > wn ? k : wn;
        wd = d > wd ? d : wd;
    }
    for (int i = 0; i < n; i++) {
        smelt_gradcheck_value v = SMELT_STRUCT_INIT(smelt_gradcheck_value);
        smelt_gradcheck_get(r, i, &v);
        dims_str(&v, dims, sizeof dims);
        printf("%-4s  %-*s  %-*s  max abs err %.2g  max rel err %.2g",
               v.passed ? "ok" : "FAIL", wn, v.name, wd, dims, v.max_abs_err,
               v.max_rel_err);
        if (v.kinks)
            printf("  (%lld of %lld elements at kinks, left out)",
                   (long long)v.kinks, (long long)(v.kinks + v.checked));
        if (!v.passed)
            printf("  element %lld: analytic %.9g, numeric %.9g",
                   (long long)v.worst, v.worst_analytic, v.worst_numeric);
        printf("\n");
    }
    int failed = smelt_gradcheck_num_failed(r);
    printf("gradcheck: %d passed, %d failed\n", n - failed, failed);
    return failed ? 1 : 0;
}

int cli_gradcheck(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "gradcheck", argc, argv, 1, 1, "FILE");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    int reduce = cli_loss_reduce("gradcheck", a.str[CLI_OPT_loss]);
    if (reduce < 0) {
        cli_args_free(&a);
        return 2;
    }
    smelt_gradcheck_options o;
    smelt_gradcheck_options_default(&o);
    o.loss_reduce = reduce;
    o.seed = (uint64_t)cli_num(&a, CLI_OPT_seed, 0);
    o.samples = cli_num(&a, CLI_OPT_samples, 0);
    o.eps = cli_real(&a, CLI_OPT_eps, o.eps);
    o.atol = cli_real(&a, CLI_OPT_atol, o.atol);
    o.rtol = cli_real(&a, CLI_OPT_rtol, o.rtol);
    o.low = cli_real(&a, CLI_OPT_low, o.low);
    o.high = cli_real(&a, CLI_OPT_high, o.high);
    char *wrt_buf = NULL;
    const char **wrt = NULL;
    if (a.str[CLI_OPT_wrt]) {
        int n = split_names(a.str[CLI_OPT_wrt], &wrt_buf, &wrt);
        if (n < 0) {
            fprintf(stderr, "smelt gradcheck: out of memory\n");
            rc = 1;
        } else if (n == 0) {
            rc = cli_usage_error("gradcheck", "--wrt names no value");
        }
        o.n_wrt = n;
        o.wrt = wrt;
    }
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_tensor_t **in = NULL;
    smelt_gradcheck_report_t *r = NULL;
    if (!rc)
        rc = cli_load_graph(ctx, a.files[0], 1, &g);
    if (!rc)
        rc = cli_check_dims(&a, g);
    /* Bound in the model itself, as run binds them in its plan: the
     * inputs made for the check, and the rules, see the sizes. */
    if (!rc && a.n_dims &&
        smelt_graph_bind_dims(ctx, g, a.dims_text) != SMELT_OK)
        rc = cli_fail(ctx, a.files[0]);
    int n_in = g ? smelt_graph_num_inputs(g) : 0;
    if (!rc && !(in = calloc((size_t)n_in + 1, sizeof *in))) {
        fprintf(stderr, "smelt gradcheck: out of memory\n");
        rc = 1;
    }
    if (!rc)
        rc = load_inputs(ctx, &a, g, in);
    if (!rc) {
        o.inputs = in;
        o.n_inputs = n_in;
        if (smelt_gradcheck(ctx, g, &o, &r) != SMELT_OK)
            rc = cli_fail(ctx, a.files[0]);
        else
            rc = print_report(r);
    }
    smelt_gradcheck_report_free(r);
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    free(in);
    free(wrt);
    free(wrt_buf);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
