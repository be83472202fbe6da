/*
 * prof_peaks.c - this machine's peak compute and bandwidth, the roofs of
 * the profile's roofline (prof.h).
 *
 * The peaks are what Smelt's own kernels reach on a probe made for it: a
 * large MatMul (compute) and a large Add (bandwidth: it reads two
 * operands and writes one, far more bytes than any cache holds), each
 * through a plan of the session's thread count, best of a few runs. A
 * node's achieved rate is thus set against what this build can do on
 * this machine, not a datasheet. The probe takes about a second; the
 * result is cached per thread count under $XDG_CACHE_HOME/smelt (else
 * ~/.cache/smelt), and --peak-gflops / --peak-gbs skip it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define MM_N 768
#define ADD_N (16 * 1024 * 1024)

static const char mm_ir[] =
    "graph peak_mm(%a: f32[768,768], %b: f32[768,768]) {\n"
    "  %c: f32[768,768] = MatMul(%a, %b)\n"
    "  return %c\n"
    "}\n";
static const char add_ir[] =
    "graph peak_add(%a: f32[16777216], %b: f32[16777216]) {\n"
    "  %c: f32[16777216] = Add(%a, %b)\n"
    "  return %c\n"
    "}\n";

/* The best time (ms) of `runs` runs of the two-input graph `ir` whose
 * inputs have shape dims[0..ndim), or 0 when anything fails. */
static double best_ms(smelt_ctx_t *ctx, const char *ir, int ndim,
                      const int64_t *dims, int threads, int runs)
{
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = NULL;
    smelt_tensor_t *in[2] = {NULL, NULL}, *out = NULL;
    smelt_session_t *s = NULL;
    double best = 0;
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = threads;
    if (smelt_graph_parse(ctx, ir, strlen(ir), "peak-probe", &g) != SMELT_OK ||
        smelt_plan_compile(ctx, g, &po, &p) != SMELT_OK)
        goto done;
    for (int i = 0; i < 2; i++) {
        if (smelt_tensor_init(ctx, SMELT_DTYPE_F32, ndim, dims, &in[i]) !=
            SMELT_OK)
            goto done;
        float *d = smelt_tensor_data(in[i]);
        int64_t n = 1;
        for (int k = 0; k < ndim; k++)
            n *= dims[k];
        for (int64_t k = 0; k < n; k++)
            d[k] = (float)((k * 7 + i) % 13) * 0.01f;
    }
    /* the output is made once and touched by the first run, so page
     * faults on fresh memory are not timed as bandwidth */
    if (smelt_tensor_init(ctx, SMELT_DTYPE_F32, ndim, dims, &out) != SMELT_OK ||
        smelt_session_init(ctx, p, &s) != SMELT_OK)
        goto done;
    for (int r = 0; r < runs; r++) {
        double t = now_ms();
        if (smelt_session_run_into(ctx, s, in, 2, &out, 1) != SMELT_OK) {
            best = 0;
            goto done;
        }
        double e = now_ms() - t;
        if (r > 0 && (best == 0 || e < best)) /* the first run warms up */
            best = e;
    }
done:
    smelt_session_free(s);
    smelt_tensor_free(out);
    smelt_tensor_free(in[0]);
    smelt_tensor_free(in[1]);
    smelt_plan_free(p);
    smelt_graph_free(g);
    return best;
}

/* Both probes: r[0] GFLOP/s, r[1] GB/s (0 when a probe failed). */
static void measure(smelt_ctx_t *ctx, int threads, double r[2])
{
    int64_t mm[2] = {MM_N, MM_N}, add[1] = {ADD_N};
    double t_mm = best_ms(ctx, mm_ir, 2, mm, threads, 6);
    double t_add = best_ms(ctx, add_ir, 1, add, threads, 6);
    r[0] = t_mm > 0 ? 2.0 * MM_N * MM_N * MM_N / (t_mm * 1e6) : 0;
    r[1] = t_add > 0 ? 3.0 * 4 * ADD_N / (t_add * 1e6) : 0;
}

/* Measures the peaks in a child process, so the probe's 200 MB do not
 * become this process's peak RSS (which the profile reports); inline
 * where pipe or fork fails. */
static void probe(smelt_ctx_t *ctx, int threads, double *gf, double *bw)
{
    double r[2] = {0, 0};
    int fd[2] = {-1, -1};
    pid_t pid = -1;
    if (pipe(fd) == 0 && (pid = fork()) < 0) {
        close(fd[0]);
        close(fd[1]);
    }
    if (pid == 0) {
        close(fd[0]);
        measure(ctx, threads, r);
        ssize_t w = write(fd[1], r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    if (pid > 0) {
        close(fd[1]);
        if (read(fd[0], r, sizeof r) != (ssize_t)sizeof r)
            r[0] = r[1] = 0;
        close(fd[0]);
        waitpid(pid, NULL, 0);
    } else {
        measure(ctx, threads, r);
    }
    *gf = r[0];
    *bw = r[1];
}

/* The cache file's path for `threads` threads into buf; 0 when there is
 * no place for it (neither XDG_CACHE_HOME nor HOME). Makes the folder. */
static int cache_path(char *buf, size_t size, int threads)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[1024];
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/smelt", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/smelt", home);
    else
        return 0;
    if (xdg && *xdg)
        mkdir(xdg, 0755);
    else {
        char parent[1040];
        snprintf(parent, sizeof parent, "%s/.cache", home);
        mkdir(parent, 0755);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return 0;
    return snprintf(buf, size, "%s/peaks-%dt.txt", dir, threads) < (int)size;
}

void cli_peaks(smelt_ctx_t *ctx, int threads, double *gflops, double *gbs)
{
    if (*gflops > 0 && *gbs > 0)
        return;
    char path[1100];
    double gf = 0, bw = 0;
    int cached = cache_path(path, sizeof path, threads);
    FILE *f = cached ? fopen(path, "r") : NULL;
    if (f) {
        if (fscanf(f, "%lf %lf", &gf, &bw) != 2 || !(gf > 0) || !(bw > 0))
            gf = bw = 0;
        fclose(f);
    }
    if (gf <= 0) {
        probe(ctx, threads, &gf, &bw);
        if (cached && gf > 0 && bw > 0 && (f = fopen(path, "w"))) {
            fprintf(f,
                    "%.3f %.3f\n# GFLOP/s GB/s measured by smelt's "
                    "probe (a %dx%d MatMul, an Add of %d floats)\n",
                    gf, bw, MM_N, MM_N, ADD_N);
            fclose(f);
        }
    }
    if (*gflops <= 0)
        *gflops = gf;
    if (*gbs <= 0)
        *gbs = bw;
}
