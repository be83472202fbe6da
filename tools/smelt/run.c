/*
 * run.c - `smelt run FILE --input NAME=x.npy ... [--output-dir DIR]`:
 * compiles a model into a plan for the inputs' shapes and runs it (or,
 * with --reference, runs the reference interpreter), and shows its
 * outputs.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"

#define LEADING 8

void cli_run_help(FILE *out)
{
    fprintf(out,
            "run a model on inputs from .npy files\n\n"
            "usage: smelt run FILE [--input NAME=x.npy]... [options]\n\n"
            "Binds each graph input to a .npy file, compiles the graph into\n"
            "a plan for those shapes (optimized at -O3 unless -O says\n"
            "otherwise) and runs it, or with --reference runs the reference\n"
            "interpreter; prints each output's name, dtype, shape and\n"
            "leading values.\n");
    cli_options_help(out, "run");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One element as text, exactly: integers through int64/uint64 (a double
 * loses them past 2^53), floats with enough digits to tell them apart. */
static void print_value(smelt_tensor_t *t, int64_t i)
{
    const void *p = smelt_tensor_data(t);
    switch (smelt_tensor_dtype(t)) {
    case SMELT_DTYPE_BOOL:
        printf(" %s", ((const uint8_t *)p)[i] ? "true" : "false");
        break;
    case SMELT_DTYPE_I64: printf(" %" PRId64, ((const int64_t *)p)[i]); break;
    case SMELT_DTYPE_U64: printf(" %" PRIu64, ((const uint64_t *)p)[i]); break;
    case SMELT_DTYPE_I32: printf(" %" PRId32, ((const int32_t *)p)[i]); break;
    case SMELT_DTYPE_U32: printf(" %" PRIu32, ((const uint32_t *)p)[i]); break;
    case SMELT_DTYPE_I16: printf(" %d", ((const int16_t *)p)[i]); break;
    case SMELT_DTYPE_U16: printf(" %u", ((const uint16_t *)p)[i]); break;
    case SMELT_DTYPE_I8: printf(" %d", ((const int8_t *)p)[i]); break;
    case SMELT_DTYPE_U8: printf(" %u", ((const uint8_t *)p)[i]); break;
    default: printf(" %.6g", smelt_tensor_get_f64(t, i)); break;
    }
}

static void print_tensor(const char *name, smelt_tensor_t *t)
{
    printf("%s: %s[", name, smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t); i++)
        printf("%s%lld", i ? "," : "", (long long)smelt_tensor_dim(t, i));
    printf("] =");
    int64_t n = smelt_tensor_numel(t);
    for (int64_t i = 0; i < n && i < LEADING; i++)
        print_value(t, i);
    printf("%s\n", n > LEADING ? " ..." : "");
}

/* The file name of an output in --output-dir: its name where that is a
 * plain file name (letters, digits, '.', '-', '_'; not starting with '.'),
 * else every other byte written %XX, like a URL. The mapping is one to
 * one ('%' itself is escaped), so two outputs never share a file, and no
 * name writes a hidden file or leaves DIR; "" becomes "%". */
static char *output_file(const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(3 * n + 2), *q = s;
    if (!s)
        return NULL;
    if (!n)
        *q++ = '%';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                    (c == '.' && i > 0);
        if (plain)
            *q++ = (char)c;
        else
            q += sprintf(q, "%%%02X", c);
    }
    *q = 0;
    return s;
}

/* DIR/FILE.npy for output `name` (malloc'd), NULL when out of memory. */
static char *output_path(const char *dir, const char *name)
{
    char *f = output_file(name);
    if (!f)
        return NULL;
    size_t n = strlen(dir) + strlen(f) + 6;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.npy", dir, f);
    free(f);
    return p;
}

/* Outputs with the same name would write the same file: refused before
 * running (the graph may return one value twice under one name). */
static int check_output_names(const char *dir, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(names[i], names[j])) {
                fprintf(stderr,
                        "smelt run: outputs %d and %d are both named '%s': "
                        "they would write the same file in %s\n",
                        j, i, names[i], dir);
                return 1;
            }
    return 0;
}

int cli_run(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "run", argc, argv, 1, 1, "FILE");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    if (a.given[CLI_OPT_reference] && a.given[CLI_OPT_plan]) {
        cli_args_free(&a);
        return cli_usage_error("run", "--plan and --reference exclude each "
                                      "other");
    }
    const char *file = a.files[0], *outdir = a.str[CLI_OPT_output_dir];
    smelt_plan_options po;
    cli_plan_options(&a, &po);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_ctx_set_timeout(ctx, po.timeout_ms); /* --reference runs too */
    smelt_graph_t *g = NULL;
    smelt_tensor_t **inputs = NULL, **outputs = NULL;
    char **names = NULL;
    rc = cli_load_graph(ctx, file, 1, &g);
    int n_in = g ? smelt_graph_num_inputs(g) : 0;
    int n_out = g ? smelt_graph_num_outputs(g) : 0;
    if (!rc && !(rc = cli_check_dims(&a, g))) {
        inputs = calloc((size_t)n_in + 1, sizeof *inputs);
        outputs = calloc((size_t)n_out + 1, sizeof *outputs);
        names = calloc((size_t)n_out + 1, sizeof *names);
        if (!inputs || !outputs || !names) {
            fprintf(stderr, "smelt run: out of memory\n");
            rc = 1;
        }
    }
    cli_input_rule rule = {0};
    if (!rc)
        rc = cli_bind_inputs(ctx, &a, g, &rule, inputs);
    /* the plan takes the graph (its weights are then held once): keep
     * the output names first */
    for (int i = 0; i < n_out && !rc; i++)
        if (!(names[i] = strdup(smelt_graph_output_name(g, i)))) {
            fprintf(stderr, "smelt run: out of memory\n");
            rc = 1;
        }
    if (!rc && outdir)
        rc = check_output_names(outdir, (const char *const *)names, n_out);
    double t0 = now_ms(), tc = t0;
    smelt_plan_t *plan = NULL;
    if (!rc && a.given[CLI_OPT_reference]) {
        if (smelt_graph_run_reference(ctx, g, inputs, n_in, outputs, n_out) !=
            SMELT_OK)
            rc = cli_fail(ctx, file);
    } else if (!rc) {
        po.inputs = inputs;
        po.n_inputs = n_in;
        smelt_graph_t *taken = g;
        g = NULL;
        if (smelt_plan_compile_take(ctx, taken, &po, &plan) != SMELT_OK)
            rc = cli_fail(ctx, file);
        tc = now_ms();
        if (!rc &&
            smelt_plan_run(ctx, plan, inputs, n_in, outputs, n_out) != SMELT_OK)
            rc = cli_fail(ctx, file);
    }
    double t1 = now_ms();
    if (!rc && plan && a.given[CLI_OPT_print_plan]) {
        /* the plan with each kernel's decision (algorithm, geometry) and
         * the memory map, after the run */
        rc = cli_plan_print(ctx, plan);
    }
    if (!rc && outdir && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "smelt run: %s: %s\n", outdir, strerror(errno));
        rc = 1;
    }
    for (int i = 0; !rc && i < n_out; i++) {
        print_tensor(names[i], outputs[i]);
        if (outdir) {
            char *path = output_path(outdir, names[i]);
            if (!path) {
                fprintf(stderr, "smelt run: out of memory\n");
                rc = 1;
            } else if (smelt_npy_save(ctx, path, outputs[i]) != SMELT_OK)
                rc = cli_fail(ctx, "output");
            free(path);
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
    for (int i = 0; inputs && i < n_in; i++)
        smelt_tensor_free(inputs[i]);
    for (int i = 0; outputs && i < n_out; i++)
        smelt_tensor_free(outputs[i]);
    for (int i = 0; names && i < n_out; i++)
        free(names[i]);
    free(inputs);
    free(outputs);
    free(names);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
