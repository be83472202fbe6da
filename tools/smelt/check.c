/*
 * check.c - `smelt check FILE [--input NAME=x.npy]... [-O3] [--rtol R]
 * [--atol A]`: runs the reference interpreter on the graph as loaded and
 * on the optimized graph with the same inputs (seeded random ones when
 * none are given), compares every output, and when they disagree runs the
 * pipeline again pass by pass to name the first pass after which the
 * results differ. Then compiles the model into a plan for every ISA the
 * CPU has and compares those outputs too. Ends with the deployment
 * checklist, which states only what this run verified.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"
#include "progress.h"

void cli_check_help(FILE *out)
{
    fprintf(
        out,
        "check that optimizing and compiling a model keep its results\n\n"
        "usage: smelt check FILE [--input NAME=x.npy]... [-O N | --passes "
        "a,b] [options]\n\n"
        "Runs the reference interpreter on FILE as loaded and after the\n"
        "pipeline (default -O1), and runs FILE compiled into a plan (at\n"
        "-O N, default 3) once per ISA this CPU has (scalar, avx2,\n"
        "avx512), all on the same inputs: the given .npy files, or random\n"
        "ones from --seed (symbolic dims from --dim, else 2). Reports the\n"
        "largest absolute and relative error of every output against the\n"
        "model as loaded; an element passes when |got - want| <= atol +\n"
        "rtol * |want| (defaults per dtype, as torch.testing.assert_close:\n"
        "f32 rtol 1.3e-6 atol 1e-5, f64 1e-7 1e-7, f16 1e-3 1e-5, bf16\n"
        "1.6e-2 1e-5, integers and bool exact). When the optimized graph\n"
        "differs, the pipeline is replayed one pass at a time to name the\n"
        "first pass that broke it. Exits 1 when anything differs.\n");
    cli_options_help(out, "check");
}

typedef struct check_args {
    const char *file;
    cli_args args;
    double rtol, atol; /* < 0: per dtype */
    uint64_t seed;
    smelt_opt_options o;
    cli_progress pg; /* stages: reference, optimized, a plan per ISA */
} check_args;

static int parse_args(int argc, char **argv, check_args *a)
{
    int rc = cli_args_parse(&a->args, "check", argc, argv, 1, 1, "FILE");
    if (rc)
        return rc;
    a->file = a->args.files[0];
    a->rtol = cli_real(&a->args, CLI_OPT_rtol, -1);
    a->atol = cli_real(&a->args, CLI_OPT_atol, -1);
    a->seed = (uint64_t)cli_num(&a->args, CLI_OPT_seed, 0);
    cli_progress_start(&a->pg, "check", "stages", 5,
                       a->args.given[CLI_OPT_quiet] > 0);
    a->pg.tty = 0; /* plain lines: check prints its results as it goes */
    cli_opt_options(&a->args, &a->o, 1);
    const char *isa = a->args.str[CLI_OPT_isa];
    if (isa && strcmp(isa, "scalar") && strcmp(isa, "avx2") &&
        strcmp(isa, "avx512"))
        return cli_usage_error("check",
                               "--isa needs scalar, avx2 or avx512, "
                               "got '%s'",
                               isa);
    return 0;
}

/* Runs g on inputs into outs (freed first); 0 on success. */
static int run(smelt_ctx_t *ctx, const smelt_graph_t *g,
               smelt_tensor_t **inputs, smelt_tensor_t **outs)
{
    for (int i = 0; i < smelt_graph_num_outputs(g); i++) {
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
    int n_out = smelt_graph_num_outputs(orig);
    smelt_tensor_t **got = calloc((size_t)n_out + 1, sizeof *got);
    if (!got || smelt_opt_pipeline(ctx, &a->o, &list) != SMELT_OK ||
        smelt_graph_clone(ctx, orig, &g) != SMELT_OK) {
        if (got)
            cli_fail(ctx, "bisect");
        free(got);
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
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(got[i]);
    free(got);
    smelt_graph_free(g);
    smelt_string_free(list);
}

/* What the compiled plans showed, for the checklist. */
typedef struct plan_result {
    char ran[64];  /* "scalar, avx2, avx512": the ISAs planned */
    int level;     /* -O of the plans */
    int bad;       /* outputs beyond tolerance, over every ISA */
    int failed;    /* a plan failed to compile or run */
    int64_t arena; /* bytes of the widest plan's arena */
    int32_t buffers, shared, inplace; /* its memory decisions */
    char why[512];                    /* the first failure */
} plan_result;

/* The ISAs a plan can be compiled for here: "avx2" and "avx512" only when
 * the CPU has them (the planner silently lowers an ISA the CPU lacks,
 * so the plan's own feature list tells). */
static int isa_present(const char *want, const char *have)
{
    if (!strcmp(want, "scalar"))
        return 1;
    return strstr(have, !strcmp(want, "avx2") ? "avx2" : "avx512f") != NULL;
}

/* Compiles orig into a plan for each ISA of this CPU, runs it on inputs
 * and compares every output with want (the reference run of the model as
 * loaded). */
static void check_plans(smelt_ctx_t *ctx, check_args *a,
                        const smelt_graph_t *orig, smelt_tensor_t **inputs,
                        smelt_tensor_t **want, plan_result *pr)
{
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    int n_in = smelt_graph_num_inputs(orig),
        n_out = smelt_graph_num_outputs(orig);
    smelt_tensor_t **got = calloc((size_t)n_out + 1, sizeof *got);
    if (!got) {
        pr->failed = 1;
        snprintf(pr->why, sizeof pr->why, "out of memory");
        return;
    }
    smelt_plan_options po;
    cli_plan_options(&a->args, &po);
    po.inputs = inputs;
    po.n_inputs = n_in;
    pr->level = po.level;
    printf("\ncompiled plans (-O%d):\n", po.level);
    const char *only = a->args.str[CLI_OPT_isa]; /* --isa: that one alone */
    for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
        smelt_plan_t *p = NULL;
        smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
        cli_progress_update(&a->pg, 2 + (long)k);
        if (only && strcmp(only, isas[k]) != 0)
            continue;
        snprintf(a->pg.note, sizeof a->pg.note, "plan for %s", isas[k]);
        po.isa = isas[k];
        if (smelt_plan_compile(ctx, orig, &po, &p) != SMELT_OK) {
            printf("  %-8s fails to compile: %s\n", isas[k],
                   smelt_ctx_error(ctx));
            if (!pr->failed++)
                snprintf(pr->why, sizeof pr->why, "%s", smelt_ctx_error(ctx));
            break;
        }
        smelt_plan_get_stats(p, &st);
        if (!isa_present(isas[k], st.isa)) {
            smelt_plan_free(p);
            continue;
        }
        if (smelt_plan_run(ctx, p, inputs, n_in, got, n_out) != SMELT_OK) {
            printf("  %-8s fails to run: %s\n", isas[k], smelt_ctx_error(ctx));
            if (!pr->failed++)
                snprintf(pr->why, sizeof pr->why, "%s", smelt_ctx_error(ctx));
        } else {
            int bad = 0;
            for (int i = 0; i < n_out; i++) {
                cli_cmp r;
                cli_cmp_tensors(want[i], got[i], a->rtol, a->atol, &r);
                printf("  %-8s %-16s max abs err %10.4g  max rel err %10.4g  "
                       "%s\n",
                       isas[k], smelt_graph_output_name(orig, i), r.max_abs,
                       r.max_rel, r.ok ? "ok" : r.why);
                bad += !r.ok;
            }
            pr->bad += bad;
        }
        size_t len = strlen(pr->ran);
        snprintf(pr->ran + len, sizeof pr->ran - len, "%s%s", len ? ", " : "",
                 isas[k]);
        pr->arena = st.arena_bytes;
        pr->buffers = st.arena_buffers;
        pr->shared = st.shared_buffers;
        pr->inplace = st.inplace;
        for (int i = 0; i < n_out; i++) {
            smelt_tensor_free(got[i]);
            got[i] = NULL;
        }
        smelt_plan_free(p);
    }
    free(got);
}

/* The deployment checklist: each line states what this run verified and
 * nothing more. */
static void checklist(int valid, int n_passes, int n_out, int bad,
                      int64_t measured, const plan_result *pr)
{
    char me[32], ar[32];
    cli_human_size(me, sizeof me, measured);
    cli_human_size(ar, sizeof ar, pr->arena);
    printf("\ndeployment checklist:\n");
    printf("  [%c] graph valid: verified as loaded and after each of %d "
           "pass(es)\n",
           valid ? 'x' : ' ', n_passes);
    printf("  [%c] optimized graph: %d of %d output(s) match the model as "
           "loaded (reference interpreter)\n",
           valid && !bad ? 'x' : ' ', valid ? n_out - bad : 0, n_out);
    if (pr->failed)
        printf("  [ ] compiled plan (-O%d): fails: %s\n", pr->level, pr->why);
    else if (!pr->ran[0])
        printf("  [ ] compiled plan (-O%d): this CPU lacks the ISA asked "
               "for; nothing ran\n",
               pr->level);
    else
        printf("  [%c] compiled plan (-O%d) on %s: %s\n", pr->bad ? ' ' : 'x',
               pr->level, pr->ran,
               pr->bad ? "outputs DIFFER from the model as loaded"
                       : "every output matches the model as loaded");
    /* Shown side by side, not judged: the figures measure different
     * things (the plan's arena for activations, everything the reference
     * interpreter allocated, bookkeeping included). */
    if (pr->ran[0])
        printf("  [-] memory: plan arena %s (activations; %d of %d buffers "
               "shared, %d in place); the reference interpreter allocated "
               "%s while running\n",
               ar, pr->shared, pr->buffers, pr->inplace, me);
    else
        printf("  [-] memory: no plan ran; the reference interpreter "
               "allocated %s while running\n",
               me);
}

/* Everything after the arguments: returns the exit status. */
static int check(smelt_ctx_t *ctx, check_args *a, smelt_graph_t *orig)
{
    int n_in = smelt_graph_num_inputs(orig),
        n_out = smelt_graph_num_outputs(orig);
    smelt_tensor_t **inputs = calloc((size_t)n_in + 1, sizeof *inputs),
                   **want = calloc((size_t)n_out + 1, sizeof *want),
                   **got = calloc((size_t)n_out + 1, sizeof *got);
    smelt_graph_t *g = NULL;
    smelt_opt_report_t *rep = NULL;
    int rc = 0, bad = 0, valid = 0;
    int64_t measured = 0;
    char *list = NULL;
    plan_result pr = {0};
    if (!inputs || !want || !got) {
        fprintf(stderr, "smelt check: out of memory\n");
        rc = 1;
    } else if ((rc = cli_check_dims(&a->args, orig)) != 0) {
        /* printed */
    } else if (smelt_opt_pipeline(ctx, &a->o, &list) != SMELT_OK) {
        rc = cli_fail(ctx, "pipeline");
    } else {
        printf("smelt check %s (%s)\n", a->file, *list ? list : "no passes");
        cli_input_rule rule = {.random = 1, .seed = a->seed, .dim_default = 2};
        rc = cli_bind_inputs(ctx, &a->args, orig, &rule, inputs);
        if (!rc && rule.n_random)
            printf("inputs: %d random (seed %llu)%s\n", rule.n_random,
                   (unsigned long long)a->seed,
                   a->args.n_inputs ? ", the rest from files" : "");
    }
    smelt_string_free(list);
    snprintf(a->pg.note, sizeof a->pg.note, "reference run");
    if (!rc && run(ctx, orig, inputs, want))
        rc = cli_fail(ctx, "reference run of the graph as loaded");
    cli_progress_update(&a->pg, 1);
    snprintf(a->pg.note, sizeof a->pg.note, "optimized graph");
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
    if (!rc)
        check_plans(ctx, a, orig, inputs, want, &pr);
    cli_progress_update(&a->pg, 5);
    cli_progress_end(&a->pg);
    if (!rc)
        checklist(valid, smelt_opt_report_num_passes(rep), n_out, bad, measured,
                  &pr);
    for (int i = 0; inputs && i < n_in; i++)
        smelt_tensor_free(inputs[i]);
    for (int i = 0; want && got && i < n_out; i++) {
        smelt_tensor_free(want[i]);
        smelt_tensor_free(got[i]);
    }
    free(inputs);
    free(want);
    free(got);
    smelt_opt_report_free(rep);
    smelt_graph_free(g);
    return rc ? rc : (bad || pr.bad || pr.failed) ? 1 : 0;
}

int cli_check(int argc, char **argv)
{
    check_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        cli_args_free(&a.args);
        return rc;
    }
    cli_mem_track_start();
    smelt_ctx_t *ctx = smelt_ctx_init();
    {
        /* every run of check (reference and plans) under --timeout */
        smelt_plan_options po;
        cli_plan_options(&a.args, &po);
        smelt_ctx_set_timeout(ctx, po.timeout_ms);
    }
    smelt_graph_t *g = NULL;
    rc = cli_load_graph(ctx, a.file, 1, &g);
    if (!rc)
        rc = check(ctx, &a, g);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_mem_track_stop();
    cli_args_free(&a.args);
    return rc;
}
