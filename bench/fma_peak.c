/*
 * fma_peak.c - measures this machine's fp32 FMA peak on one core: a loop
 * of independent fused multiply-adds (enough accumulators to cover the
 * FMA latency on every pipe), timed, for AVX-512 (16 lanes), AVX2+FMA
 * (8 lanes) and scalar. Prints GFLOP/s (a multiply-add counts as 2).
 *
 * This is the denominator of bench/gemm_bench.c's "% of peak". It is a
 * benchmark, not a test: it prints figures and always succeeds.
 */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ITERS 20000000L
#ifndef NACC
#define NACC 12
#endif
/* latency 4 x 2 pipes, with slack for 512-bit ops */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Each FMA chain accumulates into its own register; the results are
 * summed and returned so the compiler cannot drop the loop. */
#define FMA_LOOP(VT, SET1, FMA, ADD, iters)                                    \
    VT acc[NACC], x = SET1(0.999999f), y = SET1(1e-7f);                        \
    for (int i = 0; i < NACC; i++)                                             \
        acc[i] = SET1((float)i);                                               \
    for (long it = 0; it < (iters); it++) {                                    \
        _Pragma("GCC unroll 16") for (int i = 0; i < NACC; i++) acc[i] =       \
            FMA(acc[i], x, y);                                                 \
        __asm__ volatile("" : "+v"(x));                                        \
    }                                                                          \
    VT s = acc[0];                                                             \
    for (int i = 1; i < NACC; i++)                                             \
        s = ADD(s, acc[i]);

__attribute__((target("avx512f"))) static float run_avx512(long iters)
{
    FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, iters)
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float run_avx2(long iters)
{
    FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, iters)
    float v[8];
    _mm256_storeu_ps(v, s);
    return v[0] + v[7];
}

/* Times fn over iters, best of 5 runs, returning GFLOP/s for `lanes`
 * lanes per FMA. */
static double measure(float (*fn)(long), long iters, int lanes, float *sink)
{
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        *sink += fn(iters);
        double t = now() - t0;
        double gf = 2.0 * lanes * NACC * (double)iters / t * 1e-9;
        if (gf > best)
            best = gf;
    }
    return best;
}

/* GFLOP/s of one core with AVX-512 and with AVX2 (0 when unsupported);
 * gemm_bench includes this file for its "% of peak" column. */
static void fma_peak_measure(double *avx512, double *avx2)
{
    float sink = 0;
    __builtin_cpu_init();
    *avx512 = *avx2 = 0;
    if (__builtin_cpu_supports("avx512f"))
        *avx512 = measure(run_avx512, ITERS, 16, &sink);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        *avx2 = measure(run_avx2, ITERS, 8, &sink);
    if (sink == 12345.f) /* never true; keeps the results live */
        *avx2 += 1e-9;
}

#ifndef FMA_PEAK_NO_MAIN
int main(int argc, char **argv)
{
    int quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
    double a512, a2;
    fma_peak_measure(&a512, &a2);
    if (quiet) {
        printf("%.1f %.1f\n", a512, a2);
        return 0;
    }
    printf("fp32 FMA peak, one core (%d accumulators, best of 5)\n", NACC);
    printf("  avx512 : %8.1f GFLOP/s%s\n", a512, a512 ? "" : " (unsupported)");
    printf("  avx2   : %8.1f GFLOP/s%s\n", a2, a2 ? "" : " (unsupported)");
    return 0;
}
#endif
