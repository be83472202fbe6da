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
#include <sys/resource.h>
#include <time.h>

#include "check_util.h"
#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"

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
    int runs, warmup, profile, json, print_plan;
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
    cli_plan_options(c, &a->po);
    return 0;
}

/* ---- figures ---------------------------------------------------------------
 */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
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

/* Per-op table: total time of each (op, kernel) over the timed runs,
 * averaged per run, with FLOPs and bytes from the cost functions. */
typedef struct op_row {
    const char *op, *kernel;
    int count;
    double ms, flops, bytes;
} op_row;

static int cmp_row(const void *x, const void *y)
{
    const op_row *a = x, *b = y;
    return (a->ms < b->ms) - (a->ms > b->ms);
}

static void print_profile(const smelt_plan_t *p, const double *step_ms,
                          int runs, double median)
{
    int n = smelt_plan_num_steps(p), m = 0;
    op_row *rows = calloc((size_t)n + 1, sizeof *rows);
    if (!rows)
        return;
    double total = 0;
    for (int i = 0; i < n; i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        smelt_plan_step(p, i, &si);
        int k = 0;
        while (k < m &&
               (strcmp(rows[k].op, si.op) || strcmp(rows[k].kernel, si.kernel)))
            k++;
        if (k == m)
            rows[m++] = (op_row){si.op, si.kernel, 0, 0, 0, 0};
        rows[k].count++;
        rows[k].ms += step_ms[i] / runs;
        rows[k].flops += si.flops;
        rows[k].bytes += si.bytes_read + si.bytes_write;
        total += step_ms[i] / runs;
    }
    qsort(rows, (size_t)m, sizeof *rows, cmp_row);
    printf("\nprofile (per run; steps %.3f ms of %.3f ms median):\n", total,
           median);
    printf("%-20s %-22s %5s %9s %6s %10s %10s %9s %8s\n", "op", "kernel", "n",
           "ms", "%", "MFLOP", "MB", "GFLOP/s", "FLOP/B");
    for (int k = 0; k < m; k++) {
        const op_row *r = &rows[k];
        printf("%-20s %-22s %5d %9.3f %5.1f%% %10.2f %10.2f %9.2f %8.2f\n",
               r->op, r->kernel, r->count, r->ms,
               total > 0 ? 100 * r->ms / total : 0, r->flops / 1e6,
               r->bytes / 1e6, r->ms > 0 ? r->flops / (r->ms * 1e6) : 0,
               r->bytes > 0 ? r->flops / r->bytes : 0);
    }
    free(rows);
}

/* The timed runs as Chrome trace events: one "X" event per step. */
static int write_trace(FILE *f, const char *path, const smelt_plan_t *p,
                       const double *t0, const double *t1, const double *start,
                       int runs)
{
    int n = smelt_plan_num_steps(p);
    fprintf(f, "{\"traceEvents\":[\n");
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < n; i++) {
            smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
            smelt_plan_step(p, i, &si);
            size_t k = (size_t)r * (size_t)n + (size_t)i;
            fprintf(f,
                    "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\","
                    "\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":1,"
                    "\"args\":{\"step\":%d,\"node\":\"",
                    r || i ? "," : "", si.op, si.kernel,
                    (start[r] + t0[k]) * 1e3, (t1[k] - t0[k]) * 1e3, i);
            for (const char *c = si.name; *c; c++)
                if (*c == '"' || *c == '\\')
                    fprintf(f, "\\%c", *c);
                else if ((unsigned char)*c >= 0x20)
                    fputc(*c, f);
            fprintf(f, "\",\"run\":%d,\"flops\":%.0f}}\n", r, si.flops);
        }
    fprintf(f, "],\"displayTimeUnit\":\"ms\"}\n");
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

/* ---- the verb
 * ------------------------------------------------------------------- */

typedef struct timings {
    double *lat;             /* runs */
    double *t0, *t1, *start; /* runs x steps, runs (profile / trace) */
    double *step_ms;         /* steps: summed over runs */
} timings;

static int time_runs(smelt_ctx_t *ctx, const smelt_plan_t *p, bench_args *a,
                     smelt_tensor_t **in, int n_in, timings *tm)
{
    smelt_session_t *s = NULL;
    int n_out = smelt_plan_num_outputs(p), n = smelt_plan_num_steps(p);
    smelt_tensor_t **out = calloc((size_t)n_out + 1, sizeof *out);
    if (!out) {
        fprintf(stderr, "smelt bench: out of memory\n");
        return 1;
    }
    if (smelt_session_init(ctx, p, &s) != SMELT_OK) {
        free(out);
        return cli_fail(ctx, "session");
    }
    int rc = 0;
    int tracing = a->profile || a->trace;
    smelt_session_set_profiling(s, tracing);
    double origin = now_ms();
    for (int r = 0; r < a->warmup + a->runs && !rc; r++) {
        double t = now_ms();
        if (smelt_session_run(ctx, s, in, n_in, out, n_out) != SMELT_OK)
            rc = cli_fail(ctx, a->file);
        double e = now_ms();
        for (int i = 0; i < n_out; i++) {
            smelt_tensor_free(out[i]);
            out[i] = NULL;
        }
        int k = r - a->warmup;
        if (rc || k < 0)
            continue;
        tm->lat[k] = e - t;
        tm->start[k] = t - origin;
        for (int i = 0; tracing && i < n; i++) {
            size_t at = (size_t)k * (size_t)n + (size_t)i;
            smelt_session_step_time(s, i, &tm->t0[at], &tm->t1[at]);
            tm->step_ms[i] += tm->t1[at] - tm->t0[at];
        }
    }
    smelt_session_free(s);
    free(out);
    return rc;
}

static void report(const bench_args *a, const smelt_plan_t *p, double compile,
                   const timings *tm)
{
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    double *sorted = malloc(sizeof(double) * (size_t)a->runs);
    if (!sorted)
        return;
    memcpy(sorted, tm->lat, sizeof(double) * (size_t)a->runs);
    qsort(sorted, (size_t)a->runs, sizeof *sorted, cmp_double);
    double med = a->runs % 2
                     ? sorted[a->runs / 2]
                     : (sorted[a->runs / 2 - 1] + sorted[a->runs / 2]) / 2;
    double mn = sorted[0], mean = 0;
    for (int i = 0; i < a->runs; i++)
        mean += tm->lat[i] / a->runs;
    free(sorted);
    if (a->json) {
        printf("{\"model\":\"%s\",\"median_ms\":%.4f,\"min_ms\":%.4f,"
               "\"mean_ms\":%.4f,\"runs\":%d,\"threads\":%d,"
               "\"compile_ms\":%.3f,\"arena_bytes\":%lld,"
               "\"weight_bytes\":%lld,\"peak_rss_mib\":%.1f,\"steps\":%d,"
               "\"kernel_steps\":%d,\"ref_steps\":%d}\n",
               a->file, med, mn, mean, a->runs, st.threads, compile,
               (long long)st.arena_bytes, (long long)st.weight_bytes,
               peak_rss_mib(), st.steps, st.kernel_steps, st.ref_steps);
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
    if (a->profile)
        print_profile(p, tm->step_ms, a->runs, med);
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
    timings tm = {0};
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
    double compile = now_ms() - t0;
    if (!rc && a.print_plan)
        rc = cli_plan_print(ctx, p);
    size_t n = p ? (size_t)smelt_plan_num_steps(p) : 0;
    size_t cells = (a.profile || a.trace) ? (size_t)a.runs * n : 0;
    tm.lat = calloc((size_t)a.runs, sizeof(double));
    tm.start = calloc((size_t)a.runs, sizeof(double));
    tm.t0 = calloc(cells + 1, sizeof(double));
    tm.t1 = calloc(cells + 1, sizeof(double));
    tm.step_ms = calloc(n + 1, sizeof(double));
    if (!rc && (!tm.lat || !tm.start || !tm.t0 || !tm.t1 || !tm.step_ms)) {
        fprintf(stderr, "smelt bench: out of memory\n");
        rc = 1;
    }
    if (!rc)
        rc = time_runs(ctx, p, &a, in, n_in, &tm);
    if (!rc)
        report(&a, p, compile, &tm);
    if (!rc && trace) {
        rc = write_trace(trace, a.trace, p, tm.t0, tm.t1, tm.start, a.runs);
        trace = NULL;
        if (!rc && !a.json)
            printf("trace:   %s\n", a.trace);
    }
    if (trace) /* not written: leave no empty file behind */
        fclose(trace), remove(a.trace);
    free(tm.lat);
    free(tm.start);
    free(tm.t0);
    free(tm.t1);
    free(tm.step_ms);
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    free(in);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a.args);
    return rc;
}
