/*
 * check.c - `smelt check FILE [--input NAME=x.npy]... [-O3] [--rtol R]
 * [--atol A]`: runs the reference interpreter on the graph as loaded and
 * on the optimized graph with the same inputs (seeded random ones when
 * none are given), compares every output, and when they disagree runs the
 * pipeline again pass by pass to name the first pass after which the
 * results differ. Ends with the deployment checklist.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli.h"
#include "opt_common.h"
#include "plan_cli.h"

#define MAX_IO 256

void cli_check_help(FILE *out)
{
    fprintf(
        out,
        "check that optimizing a model keeps its results\n\n"
        "usage: smelt check FILE [--input NAME=x.npy]... [-O0..-O3 | "
        "--passes=a,b]\n"
        "                   [--rtol R] [--atol A] [--seed N] [--dim NAME=N]\n"
        "                   [--timeout SECONDS]\n\n"
        "Runs the reference interpreter on FILE as loaded and after the\n"
        "pipeline (default -O1), on the same inputs: the given .npy files,\n"
        "or random ones from --seed (default 0). Reports the largest\n"
        "absolute and relative error of every output; an element passes\n"
        "when |got - want| <= atol + rtol * |want| (defaults per dtype, as\n"
        "torch.testing.assert_close: f32 rtol 1.3e-6 atol 1e-5, f64 1e-7\n"
        "1e-7, f16 1e-3 1e-5, bf16 1.6e-2 1e-5, integers and bool exact).\n"
        "When an output differs, the pipeline is replayed one pass at a\n"
        "time to name the first pass that broke it. Exits 1 then.\n\n"
        "  --input NAME=PATH   an input (NAME= may be left out: in order)\n"
        "  -O0 .. -O3          the pipeline to check (default -O1)\n"
        "  --passes=a,b,c      check exactly these passes\n"
        "  --rtol R, --atol A  tolerances for every output\n"
        "  --seed N            seed of the random inputs\n"
        "  --timeout SECONDS   stop a run that takes longer with an error\n"
        "  --dim NAME=N        size of symbolic dimension NAME in random\n"
        "                      inputs (default 2)\n");
}

typedef struct check_args {
    const char *file;
    const char *inputs[MAX_IO];
    int n_inputs;
    const char *dims[MAX_IO];
    int n_dims;
    double rtol, atol; /* < 0: per dtype */
    uint64_t seed;
    int64_t timeout_ms; /* --timeout: each reference run's limit */
    smelt_opt_options o;
} check_args;

static int parse_double(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && !*end && *out >= 0;
}

static int parse_args(int argc, char **argv, check_args *a)
{
    for (int i = 1; i < argc; i++) {
        int r = cli_opt_option(argc, argv, &i, "check", &a->o);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *arg = argv[i], *v;
        if (!strcmp(arg, "--input") || !strcmp(arg, "-i") ||
            !strcmp(arg, "--dim")) {
            if (!(v = cli_option_value(argc, argv, &i, "check")))
                return 2;
            int is_dim = arg[2] == 'd';
            if ((is_dim ? a->n_dims : a->n_inputs) == MAX_IO)
                return cli_usage_error("check", "too many %s options", arg);
            if (is_dim)
                a->dims[a->n_dims++] = v;
            else
                a->inputs[a->n_inputs++] = v;
        } else if (!strcmp(arg, "--rtol") || !strcmp(arg, "--atol")) {
            if (!(v = cli_option_value(argc, argv, &i, "check")))
                return 2;
            if (!parse_double(v, arg[2] == 'r' ? &a->rtol : &a->atol))
                return cli_usage_error("check", "%s needs a number >= 0", arg);
        } else if (!strcmp(arg, "--timeout")) {
            if (!(v = cli_option_value(argc, argv, &i, "check")))
                return 2;
            if (cli_parse_timeout(v, "check", &a->timeout_ms))
                return 2;
        } else if (!strcmp(arg, "--seed")) {
            if (!(v = cli_option_value(argc, argv, &i, "check")))
                return 2;
            a->seed = strtoull(v, NULL, 10);
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage_error("check", "unknown option '%s'", arg);
        } else if (a->file) {
            return cli_usage_error("check", "more than one FILE given");
        } else {
            a->file = arg;
        }
    }
    if (!a->file)
        return cli_usage_error("check", "no FILE given");
    return 0;
}

/* Runs g on inputs into outs (freed first); 0 on success. */
static int run(smelt_ctx_t *ctx, const smelt_graph_t *g,
               smelt_tensor_t **inputs, smelt_tensor_t **outs)
{
    for (int i = 0; i < MAX_IO; i++) {
        smelt_tensor_free(outs[i]);
        outs[i] = NULL;
    }
    return smelt_graph_run_reference(ctx, g, inputs, smelt_graph_num_inputs(g),
                                     outs,
                                     smelt_graph_num_outputs(g)) != SMELT_OK;
}

/* Compares every output; prints a table when verbose. Returns the number
 * of outputs beyond tolerance; *first the index of the first one. */
static int compare_all(const check_args *a, const smelt_graph_t *g,
                       smelt_tensor_t **want, smelt_tensor_t **got, int verbose,
                       int *first, cli_cmp *first_res)
{
    int bad = 0;
    if (verbose)
        printf("%-16s %-14s %12s %12s %9s %9s  %s\n", "output", "type",
               "max abs err", "max rel err", "rtol", "atol", "result");
    for (int i = 0; i < smelt_graph_num_outputs(g); i++) {
        cli_cmp r;
        cli_cmp_tensors(want[i], got[i], a->rtol, a->atol, &r);
        if (!r.ok && !bad++) {
            *first = i;
            *first_res = r;
        }
        if (verbose) {
            char type[64];
            cli_tensor_type_str(want[i], type, sizeof type);
            printf("%-16s %-14s %12.4g %12.4g %9.3g %9.3g  %s\n",
                   smelt_graph_output_name(g, i), type, r.max_abs, r.max_rel,
                   r.rtol, r.atol, r.ok ? "ok" : r.why);
        }
    }
    return bad;
}

/* Replays the pipeline on a fresh copy one pass at a time; prints and
 * returns nothing, naming the first pass whose result differs. */
static void bisect(smelt_ctx_t *ctx, const check_args *a,
                   const smelt_graph_t *orig, smelt_tensor_t **inputs,
                   smelt_tensor_t **want)
{
    char *list = NULL;
    smelt_graph_t *g = NULL;
    smelt_tensor_t *got[MAX_IO] = {0};
    if (smelt_opt_pipeline(ctx, &a->o, &list) != SMELT_OK ||
        smelt_graph_clone(ctx, orig, &g) != SMELT_OK) {
        cli_fail(ctx, "bisect");
        smelt_string_free(list);
        return;
    }
    printf("\nbisecting the pipeline one pass at a time:\n");
    const char *culprit = NULL;
    char name[64];
    for (const char *p = list; *p && !culprit;) {
        size_t len = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        p += len + (p[len] == ',');
        smelt_opt_options o = a->o;
        o.passes = name;
        o.verify_each = 1;
        o.debug_dir = NULL;
        int first = -1;
        cli_cmp r;
        if (smelt_graph_optimize(ctx, g, &o, NULL) != SMELT_OK) {
            printf("  %-14s fails: %s\n", name, smelt_ctx_error(ctx));
            culprit = name;
        } else if (run(ctx, g, inputs, got)) {
            printf("  %-14s the graph no longer runs: %s\n", name,
                   smelt_ctx_error(ctx));
            culprit = name;
        } else if (compare_all(a, g, want, got, 0, &first, &r)) {
            printf("  %-14s DIFFERS: output '%s' max abs err %.4g, max rel "
                   "err %.4g (rtol %.3g, atol %.3g)\n",
                   name, smelt_graph_output_name(g, first), r.max_abs,
                   r.max_rel, r.rtol, r.atol);
            culprit = name;
        } else {
            printf("  %-14s ok\n", name);
        }
    }
    if (culprit)
        printf("first pass that broke the results: %s\n", culprit);
    else
        printf("no single pass reproduces the difference\n");
    for (int i = 0; i < MAX_IO; i++)
        smelt_tensor_free(got[i]);
    smelt_graph_free(g);
    smelt_string_free(list);
}

/* What the plan (the owner of memory decisions) makes of the optimized
 * graph for these inputs: stats->arena_bytes, or 0 with the reason in
 * why when it does not compile. */
static void plan_memory(smelt_ctx_t *ctx, const smelt_graph_t *g,
                        smelt_tensor_t *const *inputs, smelt_plan_stats *stats,
                        char *why, size_t size)
{
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 0; /* the graph is optimized already */
    o.inputs = inputs;
    o.n_inputs = smelt_graph_num_inputs(g);
    smelt_plan_t *p = NULL;
    memset(stats, 0, sizeof *stats);
    stats->struct_size = sizeof *stats;
    if (smelt_plan_compile(ctx, g, &o, &p) == SMELT_OK) {
        smelt_plan_get_stats(p, stats);
        why[0] = 0;
    } else {
        snprintf(why, size, "%s", smelt_ctx_error(ctx));
    }
    smelt_plan_free(p);
}

static void checklist(int valid, int n_passes, int n_out, int bad,
                      const smelt_plan_stats *plan, const char *why,
                      int64_t measured)
{
    char pl[32], me[32];
    cli_human_size(pl, sizeof pl, plan->arena_bytes);
    cli_human_size(me, sizeof me, measured);
    printf("\ndeployment checklist:\n");
    printf("  [%c] graph valid: verified as loaded and after each of %d "
           "pass(es)\n",
           valid ? 'x' : ' ', n_passes);
    printf("  [%c] numerics within tolerance: %d of %d output(s) match the "
           "reference interpreter\n",
           valid && !bad ? 'x' : ' ', valid ? n_out - bad : 0, n_out);
    /* The plan covers activation buffers; the measurement is everything
     * the reference interpreter allocates (bookkeeping included): shown
     * side by side, not judged. */
    if (!*why)
        printf("  [-] memory: plan arena %s (activations; %d of %d buffers "
               "shared, %d in place); measured %s allocated by the "
               "reference interpreter while running\n",
               pl, plan->shared_buffers, plan->arena_buffers, plan->inplace,
               me);
    else
        printf("  [-] memory: no plan (%s); measured %s allocated by the "
               "reference interpreter while running\n",
               why, me);
    printf("  [x] backends tested: reference interpreter (the only backend "
           "in this build)\n");
}

/* Everything after the arguments: returns the exit status. */
static int check(smelt_ctx_t *ctx, check_args *a, smelt_graph_t *orig)
{
    smelt_tensor_t *inputs[MAX_IO] = {0}, *want[MAX_IO] = {0},
                   *got[MAX_IO] = {0};
    smelt_graph_t *g = NULL;
    smelt_opt_report_t *rep = NULL;
    int rc = 0, bad = 0, valid = 0;
    int64_t measured = 0;
    char *list = NULL;
    if (smelt_graph_num_inputs(orig) > MAX_IO ||
        smelt_graph_num_outputs(orig) > MAX_IO) {
        fprintf(stderr, "smelt check: more than %d inputs or outputs\n",
                MAX_IO);
        return 1;
    }
    if (smelt_opt_pipeline(ctx, &a->o, &list) != SMELT_OK)
        return cli_fail(ctx, "pipeline");
    printf("smelt check %s (%s)\n", a->file, *list ? list : "no passes");
    smelt_string_free(list);
    rc = cli_make_inputs(ctx, orig, a->inputs, a->n_inputs, a->dims, a->n_dims,
                         a->seed, inputs);
    if (!rc && run(ctx, orig, inputs, want))
        rc = cli_fail(ctx, "reference run of the graph as loaded");
    if (!rc && smelt_graph_clone(ctx, orig, &g) != SMELT_OK)
        rc = cli_fail(ctx, "clone");
    smelt_opt_options o = a->o;
    o.verify_each = 1;
    if (!rc && smelt_graph_optimize(ctx, g, &o, &rep) != SMELT_OK) {
        printf("the pipeline fails: %s\n", smelt_ctx_error(ctx));
        bad = 1;
    } else if (!rc) {
        valid = 1;
        int64_t base = cli_mem_reset_peak();
        if (run(ctx, g, inputs, got)) {
            printf("the optimized graph fails to run: %s\n",
                   smelt_ctx_error(ctx));
            bad = 1;
        } else {
            measured = cli_mem_peak() - base;
            int first;
            cli_cmp r;
            bad = compare_all(a, orig, want, got, 1, &first, &r);
        }
    }
    if (!rc && bad)
        bisect(ctx, a, orig, inputs, want);
    smelt_plan_stats plan;
    char why[512] = "the pipeline failed";
    memset(&plan, 0, sizeof plan);
    if (!rc && valid)
        plan_memory(ctx, g, inputs, &plan, why, sizeof why);
    if (!rc)
        checklist(valid, smelt_opt_report_num_passes(rep),
                  smelt_graph_num_outputs(orig), bad, &plan, why, measured);
    for (int i = 0; i < MAX_IO; i++) {
        smelt_tensor_free(inputs[i]);
        smelt_tensor_free(want[i]);
        smelt_tensor_free(got[i]);
    }
    smelt_opt_report_free(rep);
    smelt_graph_free(g);
    return rc ? rc : bad ? 1 : 0;
}

int cli_check(int argc, char **argv)
{
    check_args a = {0};
    a.rtol = a.atol = -1;
    smelt_opt_options_default(&a.o);
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    cli_mem_track_start();
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_ctx_set_timeout(ctx, a.timeout_ms);
    smelt_graph_t *g = NULL;
    rc = cli_load_graph(ctx, a.file, 1, &g);
    if (!rc)
        rc = check(ctx, &a, g);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_mem_track_stop();
    return rc;
}
