/*
 * gemm_bench.c - GFLOP/s of Smelt's f32 GEMM (kernels/cpu/gemm.h) at
 * square sizes and at the MLP benchmark's shapes, with the weights (B)
 * prepacked as a plan does it, on one thread and on two, as a share of
 * the FMA peak that fma_peak.c measures on this machine.
 *
 *   gemm_bench [--isa avx512|avx2|scalar] [--time SECONDS] [--peak GFLOPS]
 *              [--size MxNxK]... [--one-thread] [--layout L]
 *
 * --layout: pnn (default) B prepacked; nn, nt, tn B packed on the fly
 * (as a training step's products, whose weights are graph values), nt
 * with B transposed (dX = dY W^T), tn with A transposed (dW = X^T dY).
 *
 * Each figure is the median of repeated runs filling about --time seconds
 * (default 0.4) after one warm-up run. A benchmark prints; it never fails
 * on speed.
 */
#define FMA_PEAK_NO_MAIN
#include "fma_peak.c"

#include <stdlib.h>

#include "core/alloc.h"
#include "kernels/cpu/cpuid.h"
#include "kernels/cpu/gemm.h"
#include "core/threadpool.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *rand_buf(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
    }
    return p;
}

/* Median GFLOP/s of C = A B (+ bias, relu when epi) with the operands
 * laid out as `layout` says (see the top); *best receives the best run's. */
static double bench_one(const sm_cpu_ops *ops, int64_t M, int64_t N, int64_t K,
                        sm_threadpool *tp, double budget, int epi,
                        const char *layout, double *best)
{
    float *A = rand_buf(M * K, 1), *B = rand_buf(K * N, 2);
    float *C = malloc((size_t)(M * N) * sizeof *C), *bias = rand_buf(N, 3);
    sm_gemm_pack *pb = NULL;
    sm_matf bv = {B, N, 1};
    int prepack = layout[0] == 'p';
    if (prepack &&
        sm_gemm_pack_new(NULL, ops, 0, &bv, K, N, 1, 0, &pb) != SMELT_OK)
        return 0;
    sm_gemm_args g = {.M = M,
                      .N = N,
                      .K = K,
                      .a = {A, K, 1},
                      .b = bv,
                      .pb = pb,
                      .c = C,
                      .ldc = N,
                      .epi = sm_gemm_epi_none()};
    if (!prepack && layout[0] == 't')
        g.a = (sm_matf){A, 1, M}; /* A stored [K, M] */
    if (!prepack && layout[1] == 't')
        g.b = (sm_matf){B, 1, K}; /* B stored [N, K] */
    if (epi) {
        g.epi.t[0] = (sm_epi_term){bias, 0, 1, 1.0f};
        g.epi.act = 1; /* relu */
    }
    size_t wsb = sm_gemm_workspace(sm_threadpool_size(tp), K, N, prepack);
    void *ws = aligned_alloc(64, (wsb + 63) & ~(size_t)63);
    sm_gemm_f32(NULL, ops, &g, tp, ws, wsb); /* warm-up */
    double t[200];
    int n = 0;
    double start = now();
    while (n < 200 && (n < 3 || now() - start < budget)) {
        double t0 = now();
        sm_gemm_f32(NULL, ops, &g, tp, ws, wsb);
        t[n++] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    free(ws);
    sm_free(pb);
    free(A);
    free(B);
    free(C);
    free(bias);
    double flop = 2.0 * (double)M * (double)N * (double)K;
    *best = flop / t[0] * 1e-9;
    return flop / t[n / 2] * 1e-9;
}

int main(int argc, char **argv)
{
    const char *isa = NULL, *layout = "pnn";
    double budget = 0.4, peak = 0;
    int64_t user[16][3];
    int n_user = 0, one = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        long long m, n, k;
        if (!strcmp(argv[i], "--one-thread"))
            one = 1;
        else if (!strcmp(argv[i], "--isa") && ++i)
            isa = v;
        else if (!strcmp(argv[i], "--layout") && ++i)
            layout = v;
        else if (!strcmp(argv[i], "--time") && ++i)
            budget = atof(v);
        else if (!strcmp(argv[i], "--peak") && ++i)
            peak = atof(v);
        else if (!strcmp(argv[i], "--size") && ++i && n_user < 16 &&
                 sscanf(v, "%lldx%lldx%lld", &m, &n, &k) == 3) {
            user[n_user][0] = m;
            user[n_user][1] = n;
            user[n_user++][2] = k;
        }
    }
    int ok = 1;
    unsigned feat = sm_cpu_detect() & sm_cpu_level_mask(isa, &ok);
    if (!ok) {
        fprintf(stderr, "gemm_bench: unknown --isa %s\n", isa);
        return 2;
    }
    const sm_cpu_ops *ops = sm_cpu_ops_for(feat);
    double p512, p2;
    if (peak <= 0) {
        fma_peak_measure(&p512, &p2);
        peak = ops->vl == 16 ? p512 : ops->vl == 8 ? p2 : p2 / 8;
    }
    sm_threadpool *tp2;
    if (sm_threadpool_new(NULL, 2, &tp2) != SMELT_OK)
        return 1;
    if (strcmp(layout, "pnn") && strcmp(layout, "nn") && strcmp(layout, "nt") &&
        strcmp(layout, "tn")) {
        fprintf(stderr, "gemm_bench: unknown --layout %s\n", layout);
        return 2;
    }
    printf("Smelt f32 GEMM, %s kernels (tile %dx%d), layout %s%s; peak %.1f "
           "GFLOP/s per core (measured)\n",
           ops->name, ops->mr, ops->nr, layout,
           layout[0] == 'p' ? " (B prepacked)" : "", peak);
    printf("GFLOP/s as median (best) of the runs; %% of peak from the median "
           "(best)\n");
    printf("%-16s %15s %11s %15s %11s %14s\n", "M x N x K", "1 thread",
           "% peak", "2 threads", "% 2xpeak", "2T+bias+relu");
    static const int64_t sizes[][3] = {
        {64, 64, 64},       {256, 256, 256},    {512, 512, 512},
        {1024, 1024, 1024}, {2048, 2048, 2048}, {8, 4096, 1024},
        {8, 4096, 4096},    {8, 1024, 4096},    {128, 768, 768},
        {128, 3072, 768},   {3136, 64, 576},    {49, 512, 4608}};
    size_t count = n_user ? (size_t)n_user : sizeof sizes / sizeof sizes[0];
    for (size_t s = 0; s < count; s++) {
        const int64_t *sz = n_user ? user[s] : sizes[s];
        int64_t M = sz[0], N = sz[1], K = sz[2];
        double b1, b2 = 0, b2e = 0;
        double g1 = bench_one(ops, M, N, K, NULL, budget, 0, layout, &b1);
        double g2 =
            one ? 0 : bench_one(ops, M, N, K, tp2, budget, 0, layout, &b2);
        double g2e =
            one ? 0 : bench_one(ops, M, N, K, tp2, budget, 1, layout, &b2e);
        char name[64];
        snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)M,
                 (long long)N, (long long)K);
        printf("%-16s %6.1f (%6.1f) %3.0f%% (%3.0f%%) %6.1f (%6.1f) %3.0f%% "
               "(%3.0f%%) %6.1f (%6.1f)\n",
               name, g1, b1, 100 * g1 / peak, 100 * b1 / peak, g2, b2,
               50 * g2 / peak, 50 * b2 / peak, g2e, b2e);
    }
    sm_threadpool_free(tp2);
    return 0;
}
