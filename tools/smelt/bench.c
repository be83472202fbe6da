/*
 * bench.c - `smelt bench FILE [--threads N] [--runs R] [--warmup W]`:
 * compiles a model into a plan and times it.
 *
 * Inputs are random (cli_fill_random: floats in [-1, 1), integers in
 * [0, 4), bools 0/1) unless given with --input; symbolic dims come from
 * --dim NAME=SIZE, else 1 (with a notice). Prints
 * the median and minimum latency over the timed runs, peak memory (the
 * plan's arena and weights, and the process's RSS high-water mark), the
 * kernels the plan chose, and with --profile a per-op table (time, FLOPs
 * from the op table's cost functions, bytes, GFLOP/s, arithmetic
 * intensity); --trace FILE writes the timed runs as a Chrome trace
 * (chrome://tracing, Perfetto). --json prints one JSON line instead, for
 * the benchmark harness (bench/run_bench.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_util.h"
#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"
#include "prof.h"

void cli_bench_help(FILE *out)
{
    fprintf(out,
            "time a model: median and min latency, peak memory, kernels\n\n"
            "usage: smelt bench FILE [options]\n\n"
            "Compiles FILE into a plan (-O3 unless -O says otherwise) and\n"
            "runs it W times untimed, then R times timed, on random inputs\n"
            "(or the --input files). A symbolic dimension that --dim does\n"
            "not bind is set to 1, with a notice.\n");
    cli_options_help(out, "bench");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct bench_args {
    const char *file, *trace;
    int runs, warmup, profile, json, print_plan, quiet;
    cli_args args;
    smelt_plan_options po;
} bench_args;

static int parse_args(int argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    int rc = cli_args_parse(&a->args, "bench", argc, argv, 1, 1, "FILE");
    if (rc)
        return rc;
    const cli_args *c = &a->args;
    a->file = c->files[0];
    a->trace = c->str[CLI_OPT_trace];
    a->runs = (int)cli_num(c, CLI_OPT_runs, 20);
    a->warmup = (int)cli_num(c, CLI_OPT_warmup, 3);
    a->profile = c->given[CLI_OPT_profile] > 0;
    a->json = c->given[CLI_OPT_json] > 0;
    a->print_plan = c->given[CLI_OPT_print_plan] > 0;
    a->quiet = c->given[CLI_OPT_quiet] > 0;
    cli_plan_options(c, &a->po);
    return 0;
}

/* ---- figures ---------------------------------------------------------------
 */

static double peak_rss_mib(void)
{
    return (double)cli_peak_rss() / (1024.0 * 1024.0);
}

#define MIB(x) ((double)(x) / (1024.0 * 1024.0))

/* "gemm_f32_avx512 x12, ref x30": the kernels the plan chose. */
static void print_kernels(const smelt_plan_t *p)
{
    int n = smelt_plan_num_steps(p), n_names = 0;
    const char **names = calloc((size_t)n + 1, sizeof *names);
    int *counts = calloc((size_t)n + 1, sizeof *counts);
    if (!names || !counts) {
        free(names);
        free(counts);
        return;
    }
    for (int i = 0; i < n; i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        smelt_plan_step(p, i, &si);
        int k = 0;
        while (k < n_names && strcmp(names[k], si.kernel))
            k++;
        if (k == n_names)
            names[n_names++] = si.kernel;
        counts[k]++;
    }
    printf("kernels:");
    for (int k = 0; k < n_names; k++)
        printf("%s %s x%d", k ? "," : "", names[k], counts[k]);
    printf("\n");
    free(names);
    free(counts);
}

/* The process's CPU time in ms (every thread). */
static double cpu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* cpu_ms: the process's CPU time per run (warm-up runs included, every
 * thread, spinning too): at one thread a figure that time given to other
 * tenants of a loaded machine does not inflate. */
static void report(const bench_args *a, const smelt_plan_t *p, double compile,
                   const cli_prof *pr, double cpu_ms)
{
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    double med, mn, mean;
    cli_prof_latency(pr, &med, &mn, &mean);
    if (a->json) {
        printf("{\"model\":\"%s\",\"median_ms\":%.4f,\"min_ms\":%.4f,"
               "\"mean_ms\":%.4f,\"runs\":%d,\"threads\":%d,"
               "\"compile_ms\":%.3f,\"arena_bytes\":%lld,"
               "\"weight_bytes\":%lld,\"peak_rss_mib\":%.1f,\"steps\":%d,"
               "\"kernel_steps\":%d,\"ref_steps\":%d,\"cpu_ms\":%.4f}\n",
               a->file, med, mn, mean, a->runs, st.threads, compile,
               (long long)st.arena_bytes, (long long)st.weight_bytes,
               peak_rss_mib(), st.steps, st.kernel_steps, st.ref_steps, cpu_ms);
        return;
    }
    printf("model:   %s\n", a->file);
    printf("plan:    %d steps (%d optimized, %d reference, %d dynamic), "
           "%d threads, isa %s, compiled in %.1f ms\n",
           st.steps, st.kernel_steps, st.ref_steps, st.dynamic_steps,
           st.threads, st.isa, compile);
    printf("latency: median %.3f ms, min %.3f ms, mean %.3f ms (%d runs, "
           "%d warmup)\n",
           med, mn, mean, a->runs, a->warmup);
    printf("memory:  arena %.2f MiB (%.2f MiB unshared), weights %.2f MiB, "
           "peak RSS %.1f MiB\n",
           MIB(st.arena_bytes), MIB(st.unshared_bytes), MIB(st.weight_bytes),
           peak_rss_mib());
    print_kernels(p);
    /* the table of `smelt profile --by op`, without its roofline column
     * (no peak probe in a benchmark) */
    if (a->profile)
        cli_prof_print(stdout, p, pr, 1, 0, 0, 0);
}

int cli_bench(int argc, char **argv)
{
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        cli_args_free(&a.args);
        return rc;
    }
    /* an unwritable trace fails now, not after the benchmark */
    FILE *trace = NULL;
    if (a.trace && !(trace = fopen(a.trace, "w"))) {
        fprintf(stderr, "smelt bench: --trace %s: %s\n", a.trace,
                strerror(errno));
        cli_args_free(&a.args);
        return 1;
    }
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_ctx_set_timeout(ctx, a.po.timeout_ms); /* reference runs too */
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = NULL;
    smelt_tensor_t **in = NULL;
    cli_prof pr = {0};
    rc = cli_load_graph(ctx, a.file, 1, &g);
    int n_in = g ? smelt_graph_num_inputs(g) : 0;
    if (!rc)
        rc = cli_check_dims(&a.args, g);
    if (!rc && !(in = calloc((size_t)n_in + 1, sizeof *in))) {
        fprintf(stderr, "smelt bench: out of memory\n");
        rc = 1;
    }
    cli_input_rule rule = {
        .random = 1, .seed = 42, .dim_default = 1, .dim_notice = 1};
    if (!rc)
        rc = cli_bind_inputs(ctx, &a.args, g, &rule, in);
    double t0 = now_ms();
    if (!rc) {
        a.po.inputs = in;
        a.po.n_inputs = n_in;
        /* The plan takes the graph: the weights are not held twice. */
        smelt_status st = smelt_plan_compile_take(ctx, g, &a.po, &p);
        g = NULL;
        if (st != SMELT_OK)
            rc = cli_fail(ctx, a.file);
    }
    double compile = now_ms() - t0, cpu_ms = 0;
    if (!rc && a.print_plan)
        rc = cli_plan_print(ctx, p);
    if (!rc)
        rc = cli_prof_init(&pr, a.runs, smelt_plan_num_steps(p),
                           a.profile || a.trace);
    if (!rc) {
        cli_progress pg;
        cli_progress_start(&pg, "bench", "runs", a.warmup + a.runs,
                           a.quiet || a.json);
        double c0 = cpu_now_ms();
        rc = cli_prof_run(ctx, p, in, n_in, a.warmup, a.file, &pg, &pr);
        cpu_ms = (cpu_now_ms() - c0) / (a.warmup + a.runs);
        cli_progress_end(&pg);
    }
    if (!rc)
        report(&a, p, compile, &pr, cpu_ms);
    if (!rc && trace) {
        rc = cli_prof_trace(trace, a.trace, p, &pr);
        trace = NULL;
        if (!rc && !a.json)
            printf("trace:   %s\n", a.trace);
    }
    if (trace) /* not written: leave no empty file behind */
        fclose(trace), remove(a.trace);
    cli_prof_free(&pr);
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    free(in);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a.args);
    return rc;
}
