/*
 * prof.c - timed runs and the profile table (prof.h), shared by `smelt
 * bench --profile` and `smelt profile`.
 *
 * Steps run one after another (the pool parallelizes inside a step), so
 * a run's time is its steps' times plus what the executor does around
 * and between them; that remainder is the table's "overhead" row, and
 * every row's share is of the runs' whole time, so the shares add to
 * 100%.
 */
#include "prof.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cli_prof_init(cli_prof *pr, int runs, int n_steps, int steps)
{
    memset(pr, 0, sizeof *pr);
    pr->runs = runs;
    pr->n_steps = n_steps;
    pr->steps_kept = steps;
    size_t cells = steps ? (size_t)runs * (size_t)n_steps : 0;
    pr->lat = calloc((size_t)runs + 1, sizeof *pr->lat);
    pr->start = calloc((size_t)runs + 1, sizeof *pr->start);
    pr->t0 = calloc(cells + 1, sizeof *pr->t0);
    pr->t1 = calloc(cells + 1, sizeof *pr->t1);
    if (!pr->lat || !pr->start || !pr->t0 || !pr->t1) {
        fprintf(stderr, "smelt: out of memory\n");
        cli_prof_free(pr);
        return 1;
    }
    return 0;
}

void cli_prof_free(cli_prof *pr)
{
    free(pr->lat);
    free(pr->start);
    free(pr->t0);
    free(pr->t1);
    free(pr->items);
    free(pr->item_run);
    memset(pr, 0, sizeof *pr);
}

/* Appends the session's work items of run r; items that do not fit
 * memory are counted as dropped. */
static void keep_items(cli_prof *pr, const smelt_session_t *s, int r)
{
    int n = smelt_session_num_work_items(s);
    pr->dropped_items += smelt_session_dropped_work_items(s);
    if (pr->n_items + n > pr->cap_items) {
        int cap = pr->cap_items ? pr->cap_items : 1024;
        while (cap < pr->n_items + n && cap < (1 << 26))
            cap *= 2;
        smelt_work_item *it = realloc(pr->items, sizeof *it * (size_t)cap);
        if (it)
            pr->items = it;
        int *ir = realloc(pr->item_run, sizeof *ir * (size_t)cap);
        if (ir)
            pr->item_run = ir;
        if (it && ir)
            pr->cap_items = cap;
    }
    for (int i = 0; i < n; i++) {
        if (pr->n_items >= pr->cap_items) {
            pr->dropped_items += n - i;
            return;
        }
        smelt_work_item w = SMELT_STRUCT_INIT(smelt_work_item);
        if (smelt_session_work_item(s, i, &w) != SMELT_OK)
            continue;
        pr->item_run[pr->n_items] = r;
        pr->items[pr->n_items++] = w;
    }
}

int cli_prof_run(smelt_ctx_t *ctx, const smelt_plan_t *p,
                 smelt_tensor_t *const *in, int n_in, int warmup,
                 const char *what, cli_progress *pg, cli_prof *pr)
{
    smelt_session_t *s = NULL;
    int n_out = smelt_plan_num_outputs(p), n = pr->n_steps;
    smelt_tensor_t **out = calloc((size_t)n_out + 1, sizeof *out);
    if (!out) {
        fprintf(stderr, "smelt: out of memory\n");
        return 1;
    }
    if (smelt_session_init(ctx, p, &s) != SMELT_OK) {
        free(out);
        return cli_fail(ctx, "session");
    }
    int rc = 0;
    smelt_session_set_profiling(s, pr->steps_kept);
    double origin = now_ms();
    for (int r = 0; r < warmup + pr->runs && !rc; r++) {
        double t = now_ms();
        if (smelt_session_run(ctx, s, in, n_in, out, n_out) != SMELT_OK)
            rc = cli_fail(ctx, what);
        double e = now_ms();
        for (int i = 0; i < n_out; i++) {
            smelt_tensor_free(out[i]);
            out[i] = NULL;
        }
        if (pg)
            cli_progress_update(pg, r + 1);
        int k = r - warmup;
        if (rc || k < 0)
            continue;
        if (k == 0)
            origin = t;
        pr->lat[k] = e - t;
        pr->start[k] = t - origin;
        for (int i = 0; pr->steps_kept && i < n; i++) {
            size_t at = (size_t)k * (size_t)n + (size_t)i;
            smelt_session_step_time(s, i, &pr->t0[at], &pr->t1[at]);
        }
        if (pr->steps_kept)
            keep_items(pr, s, k);
    }
    smelt_session_free(s);
    free(out);
    return rc;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The q-quantile (0..1) of sorted v[0..n), nearest rank. */
static double quantile(const double *v, long n, double q)
{
    long k = (long)(q * (double)n + 0.999999) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

void cli_prof_latency(const cli_prof *pr, double *median, double *min,
                      double *mean)
{
    int n = pr->runs;
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    *median = *min = *mean = 0;
    if (!v || n <= 0) {
        free(v);
        return;
    }
    memcpy(v, pr->lat, sizeof *v * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *min = v[0];
    for (int i = 0; i < n; i++)
        *mean += pr->lat[i] / n;
    free(v);
}

static double step_ms(const cli_prof *pr, int r, int i)
{
    size_t at = (size_t)r * (size_t)pr->n_steps + (size_t)i;
    return pr->t1[at] - pr->t0[at];
}

/* Fills a row's time figures from its calls' times v[0..n) (sorted here). */
static void row_times(cli_prof_row *row, double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    row->calls = n;
    row->total_ms = 0;
    for (long i = 0; i < n; i++)
        row->total_ms += v[i];
    row->min_ms = n ? v[0] : 0;
    row->p50 = n ? quantile(v, n, 0.50) : 0;
    row->p90 = n ? quantile(v, n, 0.90) : 0;
    row->p99 = n ? quantile(v, n, 0.99) : 0;
}

static int cmp_row(const void *x, const void *y)
{
    const cli_prof_row *a = x, *b = y;
    if (a->overhead != b->overhead)
        return a->overhead - b->overhead;
    return (a->total_ms < b->total_ms) - (a->total_ms > b->total_ms);
}

int cli_prof_rows(const smelt_plan_t *p, const cli_prof *pr, int by_op,
                  cli_prof_row **rows_out, int *n_rows)
{
    int n = pr->n_steps, runs = pr->runs, m = 0;
    cli_prof_row *rows = calloc((size_t)n + 2, sizeof *rows);
    int *row_of = calloc((size_t)n + 1, sizeof *row_of);
    double *v = malloc(sizeof *v * ((size_t)n * (size_t)runs + 1));
    if (!rows || !row_of || !v) {
        free(rows);
        free(row_of);
        free(v);
        fprintf(stderr, "smelt: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        smelt_plan_step(p, i, &si);
        int k = m;
        if (by_op)
            for (k = 0; k < m; k++)
                if (!strcmp(rows[k].op, si.op) &&
                    !strcmp(rows[k].kernel, si.kernel))
                    break;
        if (k == m)
            rows[m++] = (cli_prof_row){.name = by_op ? "" : si.name,
                                       .op = si.op,
                                       .kernel = si.kernel,
                                       .first_step = i};
        row_of[i] = k;
        rows[k].steps++;
        rows[k].flops += si.flops;
        rows[k].bytes += si.bytes_read + si.bytes_write;
    }
    for (int k = 0; k < m; k++) {
        long c = 0;
        for (int i = rows[k].first_step; i < n; i++)
            for (int r = 0; row_of[i] == k && r < runs; r++)
                v[c++] = step_ms(pr, r, i);
        row_times(&rows[k], v, c);
    }
    /* the executor's own time: each run's time its steps do not cover */
    for (int r = 0; r < runs; r++) {
        v[r] = pr->lat[r];
        for (int i = 0; i < n; i++)
            v[r] -= step_ms(pr, r, i);
        if (v[r] < 0)
            v[r] = 0;
    }
    rows[m] = (cli_prof_row){.name = by_op ? "" : "(overhead)",
                             .op = "(overhead)",
                             .kernel = "",
                             .first_step = -1,
                             .overhead = 1};
    row_times(&rows[m], v, runs);
    m++;
    qsort(rows, (size_t)m, sizeof *rows, cmp_row);
    free(row_of);
    free(v);
    *rows_out = rows;
    *n_rows = m;
    return 0;
}

/* Total of the runs' whole times, the 100% of the shares. */
static double runs_total(const cli_prof *pr)
{
    double t = 0;
    for (int r = 0; r < pr->runs; r++)
        t += pr->lat[r];
    return t;
}

/* "compute" or "memory": which roof a row with intensity ai sits under,
 * the ridge point being peak compute over peak bandwidth. */
static const char *bound_of(double flops, double bytes, double gflops,
                            double gbs)
{
    if (flops <= 0 || bytes <= 0 || gflops <= 0 || gbs <= 0)
        return bytes > 0 ? "memory" : "-";
    return flops / bytes >= gflops / gbs ? "compute" : "memory";
}

static void print_json_row(FILE *f, const cli_prof_row *r, int runs,
                           double total, double gflops, double gbs, int first)
{
    double s = r->total_ms / (runs > 0 ? runs : 1) / 1e3; /* per run */
    fprintf(f, "%s\n  {\"name\":", first ? "" : ",");
    cli_json_str(f, r->name);
    fprintf(f, ",\"op\":");
    cli_json_str(f, r->op);
    fprintf(f, ",\"kernel\":");
    cli_json_str(f, r->kernel);
    fprintf(f,
            ",\"step\":%d,\"steps\":%d,\"calls\":%ld,\"total_ms\":%.6f,"
            "\"mean_ms\":%.6f,\"min_ms\":%.6f,\"p50_ms\":%.6f,\"p90_ms\":%.6f,"
            "\"p99_ms\":%.6f,\"share\":%.6f,\"flops\":%.0f,\"bytes\":%.0f,"
            "\"intensity\":%.4f,\"gflops\":%.4f,\"gbs\":%.4f,\"bound\":\"%s\","
            "\"overhead\":%s}",
            r->first_step, r->steps, r->calls, r->total_ms,
            r->calls ? r->total_ms / (double)r->calls : 0, r->min_ms, r->p50,
            r->p90, r->p99, total > 0 ? r->total_ms / total : 0, r->flops,
            r->bytes, r->bytes > 0 ? r->flops / r->bytes : 0,
            s > 0 ? r->flops / s / 1e9 : 0, s > 0 ? r->bytes / s / 1e9 : 0,
            r->overhead ? "-" : bound_of(r->flops, r->bytes, gflops, gbs),
            r->overhead ? "true" : "false");
}

void cli_prof_print(FILE *f, const smelt_plan_t *p, const cli_prof *pr,
                    int by_op, double gflops, double gbs, int json)
{
    cli_prof_row *rows = NULL;
    int m = 0;
    if (cli_prof_rows(p, pr, by_op, &rows, &m))
        return;
    double total = runs_total(pr), med, mn, mean;
    cli_prof_latency(pr, &med, &mn, &mean);
    if (json) {
        fprintf(f,
                "{\"runs\":%d,\"median_ms\":%.6f,\"min_ms\":%.6f,"
                "\"mean_ms\":%.6f,\"peak_gflops\":%.3f,\"peak_gbs\":%.3f,"
                "\"by\":\"%s\",\"rows\":[",
                pr->runs, med, mn, mean, gflops, gbs, by_op ? "op" : "node");
        for (int k = 0; k < m; k++)
            print_json_row(f, &rows[k], pr->runs, total, gflops, gbs, k == 0);
        fprintf(f, "\n]}\n");
        free(rows);
        return;
    }
    fprintf(f,
            "\nprofile (%d runs; per-call ms; shares of the runs' whole time; "
            "peaks %.1f GFLOP/s, %.1f GB/s):\n",
            pr->runs, gflops, gbs);
    fprintf(f,
            "%-24s %-14s %-18s %6s %9s %8s %8s %8s %8s %8s %6s %9s %9s %7s "
            "%8s %7s %s\n",
            by_op ? "op" : "node", by_op ? "steps" : "op", "kernel", "calls",
            "total", "mean", "min", "p50", "p90", "p99", "%", "MFLOP", "MB",
            "FLOP/B", "GFLOP/s", "GB/s", "bound");
    for (int k = 0; k < m; k++) {
        const cli_prof_row *r = &rows[k];
        double per_run_s = r->total_ms / (pr->runs ? pr->runs : 1) / 1e3;
        char steps[16];
        snprintf(steps, sizeof steps, "%d", r->steps);
        fprintf(f,
                "%-24.24s %-14.14s %-18.18s %6ld %9.3f %8.4f %8.4f %8.4f %8.4f "
                "%8.4f %5.1f%% %9.2f %9.2f %7.2f %8.2f %7.2f %s\n",
                by_op ? r->op : r->name, by_op ? steps : r->op, r->kernel,
                r->calls, r->total_ms,
                r->calls ? r->total_ms / (double)r->calls : 0, r->min_ms,
                r->p50, r->p90, r->p99,
                total > 0 ? 100 * r->total_ms / total : 0, r->flops / 1e6,
                r->bytes / 1e6, r->bytes > 0 ? r->flops / r->bytes : 0,
                per_run_s > 0 ? r->flops / per_run_s / 1e9 : 0,
                per_run_s > 0 ? r->bytes / per_run_s / 1e9 : 0,
                r->overhead ? "-" : bound_of(r->flops, r->bytes, gflops, gbs));
    }
    free(rows);
}

void cli_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

/* The process's resident-set high-water mark in bytes: VmHWM from
 * /proc/self/status, which counts this program's memory only. Linux
 * carries ru_maxrss across exec, so a smelt started by a large parent
 * (a Python harness with numpy loaded: 58 MiB) would report the parent's
 * peak; getrusage is the fallback where /proc is missing. */
int64_t cli_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long long kib = -1;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %lld kB", &kib) == 1)
                break;
        fclose(f);
        if (kib >= 0)
            return (int64_t)kib * 1024;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)ru.ru_maxrss * 1024; /* KiB on Linux */
}
