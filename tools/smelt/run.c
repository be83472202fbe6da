/*
 * run.c - `smelt run FILE --input NAME=x.npy ... [--output-dir DIR]`:
 * compiles a model into a plan for the inputs' shapes and runs it (or,
 * with --reference, runs the reference interpreter), and shows its
 * outputs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "plan_cli.h"

#define MAX_IO 256
#define LEADING 8

void cli_run_help(FILE *out)
{
    fprintf(
        out,
        "run a model on inputs from .npy files\n\n"
        "usage: smelt run FILE [--input NAME=x.npy]... [--output-dir DIR]\n"
        "                 [--threads N] [-O N] [--isa NAME] [--reference]\n"
        "                 [--timeout SECONDS]\n\n"
        "Binds each graph input to a .npy file (NAME= may be left out to\n"
        "bind inputs in order), compiles the graph into a plan for those\n"
        "shapes and runs it (--reference: the reference interpreter), and\n"
        "prints each output's name, dtype, shape and leading values.\n\n"
        "  --input NAME=PATH   an input (repeat for each graph input)\n"
        "  --output-dir DIR    also write each output to DIR/NAME.npy\n");
    cli_plan_opts_help(out);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void print_tensor(const char *name, const smelt_tensor_t *t)
{
    printf("%s: %s[", name, smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t); i++)
        printf("%s%lld", i ? "," : "", (long long)smelt_tensor_dim(t, i));
    printf("] =");
    int64_t n = smelt_tensor_numel(t);
    smelt_dtype dt = smelt_tensor_dtype(t);
    int is_float = dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
                   dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
    for (int64_t i = 0; i < n && i < LEADING; i++) {
        double v = smelt_tensor_get_f64(t, i);
        if (dt == SMELT_DTYPE_BOOL)
            printf(" %s", v != 0 ? "true" : "false");
        else if (is_float)
            printf(" %.6g", v);
        else
            printf(" %.0f", v);
    }
    printf("%s\n", n > LEADING ? " ..." : "");
}

/* File name for an output: its name with path separators replaced. */
static void output_path(char *buf, size_t size, const char *dir,
                        const char *name)
{
    int k = snprintf(buf, size, "%s/", dir);
    for (const char *p = name; *p && (size_t)k + 5 < size; p++)
        buf[k++] = (*p == '/' || *p == '\\' || *p == ':') ? '_' : *p;
    snprintf(buf + k, size - (size_t)k, ".npy");
}

/* Finds graph input `name`; -1 when there is none. */
static int input_index(const smelt_graph_t *g, const char *name, size_t len)
{
    for (int i = 0; i < smelt_graph_num_inputs(g); i++) {
        const char *in = smelt_graph_input_name(g, i);
        if (strlen(in) == len && !strncmp(in, name, len))
            return i;
    }
    return -1;
}

static int bind_inputs(smelt_ctx_t *ctx, const smelt_graph_t *g, int n_specs,
                       char **specs, smelt_tensor_t **inputs)
{
    int next = 0;
    for (int s = 0; s < n_specs; s++) {
        const char *eq = strchr(specs[s], '=');
        const char *path = eq ? eq + 1 : specs[s];
        int idx =
            eq ? input_index(g, specs[s], (size_t)(eq - specs[s])) : next++;
        if (idx < 0 || idx >= smelt_graph_num_inputs(g)) {
            if (eq)
                fprintf(stderr, "smelt run: the graph has no input '%.*s'\n",
                        (int)(eq - specs[s]), specs[s]);
            else
                fprintf(stderr,
                        "smelt run: more inputs given than the graph "
                        "takes (%d)\n",
                        smelt_graph_num_inputs(g));
            return 1;
        }
        if (inputs[idx]) {
            fprintf(stderr, "smelt run: input '%s' is given twice\n",
                    smelt_graph_input_name(g, idx));
            return 1;
        }
        if (smelt_npy_load(ctx, path, &inputs[idx]) != SMELT_OK)
            return cli_fail(ctx, "input");
    }
    for (int i = 0; i < smelt_graph_num_inputs(g); i++)
        if (!inputs[i]) {
            fprintf(
                stderr,
                "smelt run: no value for input '%s' (use --input %s=x.npy)\n",
                smelt_graph_input_name(g, i), smelt_graph_input_name(g, i));
            return 1;
        }
    return 0;
}

int cli_run(int argc, char **argv)
{
    const char *file = NULL, *outdir = NULL;
    char *specs[MAX_IO];
    int n_specs = 0;
    cli_plan_opts po;
    cli_plan_opts_init(&po);
    for (int i = 1; i < argc; i++) {
        int r = cli_plan_opt(&po, argc, argv, &i, "run");
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--input") || !strcmp(argv[i], "-i")) {
            const char *v = cli_option_value(argc, argv, &i, "run");
            if (!v)
                return 2;
            if (n_specs == MAX_IO)
                return cli_usage_error("run", "too many inputs");
            specs[n_specs++] = (char *)v;
        } else if (!strcmp(argv[i], "--output-dir")) {
            if (!(outdir = cli_option_value(argc, argv, &i, "run")))
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("run", "unknown option '%s'", argv[i]);
        } else if (file) {
            return cli_usage_error("run", "more than one FILE given");
        } else {
            file = argv[i];
        }
    }
    if (!file)
        return cli_usage_error("run", "no FILE given");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_ctx_set_timeout(ctx, po.o.timeout_ms); /* --reference runs */
    smelt_graph_t *g = NULL;
    smelt_tensor_t *inputs[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
    char *names[MAX_IO] = {0};
    int rc = cli_load_graph(ctx, file, 1, &g);
    int n_in = g ? smelt_graph_num_inputs(g) : 0;
    int n_out = g ? smelt_graph_num_outputs(g) : 0;
    if (!rc && (n_in > MAX_IO || n_out > MAX_IO)) {
        fprintf(stderr, "smelt run: more than %d inputs or outputs\n", MAX_IO);
        rc = 1;
    }
    if (!rc)
        rc = bind_inputs(ctx, g, n_specs, specs, inputs);
    double t0 = now_ms(), tc = t0;
    smelt_plan_t *plan = NULL;
    if (!rc && po.reference) {
        if (smelt_graph_run_reference(ctx, g, inputs, n_in, outputs, n_out) !=
            SMELT_OK)
            rc = cli_fail(ctx, file);
    } else if (!rc) {
        po.o.inputs = inputs;
        po.o.n_inputs = n_in;
        /* the plan takes the graph (its weights are then held once):
         * keep the output names first */
        for (int i = 0; i < n_out && !rc; i++)
            if (!(names[i] = strdup(smelt_graph_output_name(g, i)))) {
                fprintf(stderr, "smelt run: out of memory\n");
                rc = 1;
            }
        smelt_graph_t *taken = g;
        g = NULL;
        if (!rc &&
            smelt_plan_compile_take(ctx, taken, &po.o, &plan) != SMELT_OK)
            rc = cli_fail(ctx, file);
        else if (rc)
            smelt_graph_free(taken);
        tc = now_ms();
        if (!rc &&
            smelt_plan_run(ctx, plan, inputs, n_in, outputs, n_out) != SMELT_OK)
            rc = cli_fail(ctx, file);
    }
    double t1 = now_ms();
    if (!rc && outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "smelt run: %s: %s\n", outdir, strerror(errno));
        rc = 1;
    }
    for (int i = 0; !rc && i < n_out; i++) {
        const char *name = g ? smelt_graph_output_name(g, i) : names[i];
        print_tensor(name, outputs[i]);
        if (outdir) {
            char path[4096];
            output_path(path, sizeof path, outdir, name);
            if (smelt_npy_save(ctx, path, outputs[i]) != SMELT_OK)
                rc = cli_fail(ctx, "output");
        }
    }
    smelt_plan_stats ps = SMELT_STRUCT_INIT(smelt_plan_stats);
    if (!rc && plan && smelt_plan_get_stats(plan, &ps) == SMELT_OK)
        fprintf(stderr,
                "ran %s in %.3f ms (plan: %d steps, %d threads; compiled in "
                "%.3f ms)\n",
                file, t1 - tc, ps.steps, ps.threads, tc - t0);
    else if (!rc)
        fprintf(stderr, "ran %s in %.3f ms (reference interpreter)\n", file,
                t1 - t0);
    smelt_plan_free(plan);
    for (int i = 0; i < MAX_IO; i++) {
        smelt_tensor_free(inputs[i]);
        smelt_tensor_free(outputs[i]);
        free(names[i]);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return rc;
}
