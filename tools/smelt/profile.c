/*
 * profile.c - `smelt profile FILE`: where a model's time and memory go.
 *
 * Compiles FILE into a plan as bench does, runs it --warmup times
 * untimed and --runs times profiled, and prints a table per node (or
 * per op and kernel with --by op): calls, total, mean, min and
 * percentile times, share of the runs, FLOPs, bytes, intensity,
 * achieved GFLOP/s and GB/s and the roof each sits under (prof.c).
 * --trace writes a Chrome trace, --memory the memory history as JSON,
 * --json the table as JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"
#include "prof.h"

void cli_profile_help(FILE *out)
{
    fprintf(out,
            "profile a model: time per node or op, FLOPs, bytes, roofline, "
            "memory\n\n"
            "usage: smelt profile FILE [options]\n\n"
            "Compiles FILE into a plan (-O3 unless -O says otherwise), runs "
            "it\n"
            "W times untimed, then R times profiled, on random inputs (or "
            "the\n"
            "--input files), and prints a table per node (--by op: per op "
            "and\n"
            "kernel). Shares are of the runs' whole time; the executor's "
            "own\n"
            "time is the (overhead) row. Each row is compute- or "
            "memory-bound\n"
            "against this machine's peaks, measured once by a short probe "
            "and\n"
            "cached under $XDG_CACHE_HOME/smelt (or given with "
            "--peak-gflops\n"
            "and --peak-gbs). See docs/PROFILING.md.\n");
    cli_options_help(out, "profile");
}

typedef struct profile_args {
    const char *file, *trace, *memory;
    int runs, warmup, by_op, json, quiet;
    double gflops, gbs;
    cli_args args;
    smelt_plan_options po;
} profile_args;

static int parse_args(int argc, char **argv, profile_args *a)
{
    memset(a, 0, sizeof *a);
    int rc = cli_args_parse(&a->args, "profile", argc, argv, 1, 1, "FILE");
    if (rc)
        return rc;
    const cli_args *c = &a->args;
    a->file = c->files[0];
    a->trace = c->str[CLI_OPT_trace];
    a->memory = c->str[CLI_OPT_memory];
    a->runs = (int)cli_num(c, CLI_OPT_runs, 20);
    a->warmup = (int)cli_num(c, CLI_OPT_warmup, 3);
    a->json = c->given[CLI_OPT_json] > 0;
    a->quiet = c->given[CLI_OPT_quiet] > 0;
    a->gflops = cli_real(c, CLI_OPT_peak_gflops, 0);
    a->gbs = cli_real(c, CLI_OPT_peak_gbs, 0);
    const char *by = c->str[CLI_OPT_by];
    if (by && strcmp(by, "op") && strcmp(by, "node"))
        return cli_usage_error("profile", "--by %s: expected op or node", by);
    a->by_op = by && !strcmp(by, "op");
    cli_plan_options(c, &a->po);
    return 0;
}

/* Opens an output file before the runs, so a bad path fails at once. */
static int open_out(const char *opt, const char *path, FILE **f)
{
    *f = NULL;
    if (path && !(*f = fopen(path, "w"))) {
        fprintf(stderr, "smelt profile: %s %s: %s\n", opt, path,
                strerror(errno));
        return 1;
    }
    return 0;
}

/* Loads, binds inputs and compiles: 0 with *p, or nonzero after the
 * error. */
static int compile(smelt_ctx_t *ctx, profile_args *a, smelt_tensor_t ***in,
                   int *n_in, smelt_plan_t **p)
{
    smelt_graph_t *g = NULL;
    int rc = cli_load_graph(ctx, a->file, 1, &g);
    *n_in = g ? smelt_graph_num_inputs(g) : 0;
    if (!rc)
        rc = cli_check_dims(&a->args, g);
    if (!rc && !(*in = calloc((size_t)*n_in + 1, sizeof **in))) {
        fprintf(stderr, "smelt profile: out of memory\n");
        rc = 1;
    }
    cli_input_rule rule = {
        .random = 1, .seed = 42, .dim_default = 1, .dim_notice = 1};
    if (!rc)
        rc = cli_bind_inputs(ctx, &a->args, g, &rule, *in);
    if (!rc) {
        a->po.inputs = *in;
        a->po.n_inputs = *n_in;
        smelt_status st = smelt_plan_compile_take(ctx, g, &a->po, p);
        g = NULL;
        if (st != SMELT_OK)
            rc = cli_fail(ctx, a->file);
    }
    smelt_graph_free(g);
    return rc;
}

/* The summary above the table: plan, latency, memory. */
static void print_summary(const profile_args *a, const smelt_plan_t *p,
                          const cli_prof *pr)
{
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    double med, mn, mean;
    cli_prof_latency(pr, &med, &mn, &mean);
    int peak_step = -1;
    int64_t peak = cli_memory_peak(p, &peak_step);
    printf("model:   %s\n", a->file);
    printf("plan:    %d steps (%d optimized, %d reference), %d threads, "
           "isa %s\n",
           st.steps, st.kernel_steps, st.ref_steps, st.threads, st.isa);
    printf("latency: median %.3f ms, min %.3f ms, mean %.3f ms (%d runs, "
           "%d warmup)\n",
           med, mn, mean, a->runs, a->warmup);
    printf("memory:  arena %.2f MiB (planned peak %.2f MiB at step %d), "
           "weights %.2f MiB, peak RSS %.1f MiB\n",
           (double)st.arena_bytes / 1048576.0, (double)peak / 1048576.0,
           peak_step, (double)st.weight_bytes / 1048576.0,
           (double)cli_peak_rss() / 1048576.0);
}

int cli_profile(int argc, char **argv)
{
    profile_args a;
    int rc = parse_args(argc, argv, &a);
    FILE *trace = NULL, *memory = NULL;
    if (!rc)
        rc = open_out("--trace", a.trace, &trace);
    if (!rc)
        rc = open_out("--memory", a.memory, &memory);
    smelt_ctx_t *ctx = rc ? NULL : smelt_ctx_init();
    if (ctx)
        smelt_ctx_set_timeout(ctx, a.po.timeout_ms);
    smelt_plan_t *p = NULL;
    smelt_tensor_t **in = NULL;
    int n_in = 0;
    cli_prof pr = {0};
    if (!rc)
        rc = compile(ctx, &a, &in, &n_in, &p);
    if (!rc)
        rc = cli_prof_init(&pr, a.runs, smelt_plan_num_steps(p), 1);
    if (!rc) {
        cli_progress pg;
        cli_progress_start(&pg, "profile", "runs", a.warmup + a.runs, a.quiet);
        rc = cli_prof_run(ctx, p, in, n_in, a.warmup, a.file, &pg, &pr);
        cli_progress_end(&pg);
    }
    if (!rc) {
        smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
        smelt_plan_get_stats(p, &st);
        cli_peaks(ctx, st.threads, &a.gflops, &a.gbs);
        if (!a.json)
            print_summary(&a, p, &pr);
        cli_prof_print(stdout, p, &pr, a.by_op, a.gflops, a.gbs, a.json);
    }
    if (!rc && trace) {
        rc = cli_prof_trace(trace, a.trace, p, &pr);
        trace = NULL;
        if (!rc && !a.json)
            printf("trace:   %s\n", a.trace);
    }
    if (!rc && memory) {
        rc = cli_memory_write(memory, a.memory, p);
        memory = NULL;
        if (!rc && !a.json)
            printf("memory:  %s\n", a.memory);
    }
    /* files not written: leave no empty file behind */
    if (trace)
        fclose(trace), remove(a.trace);
    if (memory)
        fclose(memory), remove(a.memory);
    cli_prof_free(&pr);
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    free(in);
    smelt_plan_free(p);
    smelt_ctx_free(ctx);
    cli_args_free(&a.args);
    return rc;
}
