/*
 * quant_gemm_bench.c - microseconds per call of Smelt's int8 GEMM
 * (kernels/cpu/quant_gemm.h) on each int8 micro-kernel this CPU has,
 * beside the f32 GEMM of the same shape (kernels/cpu/gemm.h, widest
 * table), weights prepacked in both, on one thread and on two: the MLP
 * benchmark's layers at batch 8, a transformer layer's and a square one.
 *
 *   quant_gemm_bench [--time SECONDS] [--size MxNxK]...
 *
 * Figures are medians of repeated runs filling about --time seconds
 * (default 0.3) after a warm-up run. The AVX2 kernel is timed with
 * full-range weights (its exact split) and with weights in [-64, 63]
 * (vpmaddubsw): "avx2/7bit". A benchmark prints; it never fails on speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/threadpool.h"
#include "kernels/cpu/cpuid.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/quant_gemm.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of fn(arg) over about `budget` seconds. */
static double median_time(void (*fn)(void *), void *arg, double budget)
{
    double t[400];
    int n = 0;
    fn(arg);
    double start = now();
    while (n < 400 && (n < 5 || now() - start < budget)) {
        double t0 = now();
        fn(arg);
        t[n++] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

typedef struct q8_run {
    const sm_q8_isa *isa;
    int64_t M;
    const uint8_t *A;
    const sm_q8_b *bp;
    sm_q8_epi e;
    float *C;
    void *ws;
    sm_threadpool *tp;
} q8_run;

static void q8_call(void *arg)
{
    q8_run *r = arg;
    sm_q8_gemm(r->isa, r->M, r->A, SMELT_DTYPE_U8, r->bp->k, r->bp, &r->e, r->C,
               r->bp->n, 1, r->ws, r->tp);
}

typedef struct f32_run {
    const sm_cpu_ops *ops;
    sm_gemm_args g;
    sm_threadpool *tp;
    void *ws;
    size_t wsb;
} f32_run;

static void f32_call(void *arg)
{
    f32_run *r = arg;
    sm_gemm_f32(NULL, r->ops, &r->g, r->tp, r->ws, r->wsb);
}

/* Microseconds of the int8 product on isa (f32 output: dequantized with
 * per-column scales); narrow: weights in [-64, 63]. */
static double time_q8(const sm_q8_isa *isa, int64_t M, int64_t N, int64_t K,
                      int narrow, sm_threadpool *tp, double budget)
{
    uint8_t *A = malloc((size_t)(M * K));
    int8_t *B = malloc((size_t)(K * N));
    float *C = malloc(sizeof(float) * (size_t)(M * N));
    float *sb = malloc(sizeof(float) * (size_t)N);
    unsigned x = 1;
    for (int64_t i = 0; i < M * K; i++)
        A[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    for (int64_t i = 0; i < K * N; i++) {
        x = x * 1103515245u + 12345u;
        B[i] = (int8_t)(narrow ? (int)((x >> 16) % 128) - 64 : (int)(x >> 16));
    }
    for (int64_t j = 0; j < N; j++)
        sb[j] = 0.01f;
    size_t pb = sm_q8_pack_b_bytes(isa, K, N);
    void *bmem = aligned_alloc(64, (pb + 63) & ~(size_t)63);
    size_t wb = sm_q8_gemm_workspace(isa, M, K, N, 0);
    q8_run r = {isa,
                M,
                A,
                sm_q8_pack_b(isa, B, SMELT_DTYPE_I8, N, 1, K, N, bmem),
                sm_q8_epi_i32(),
                C,
                aligned_alloc(64, (wb + 63) & ~(size_t)63),
                tp};
    float sa = 0.02f;
    r.e.kind = SM_Q8_OUT_F32;
    r.e.sa = (sm_q8_vec){&sa, SMELT_DTYPE_F32, 1};
    r.e.sb = (sm_q8_vec){sb, SMELT_DTYPE_F32, N};
    double t = median_time(q8_call, &r, budget);
    free(r.ws);
    free(bmem);
    free(A);
    free(B);
    free(C);
    free(sb);
    return t * 1e6;
}

/* Microseconds of the f32 product on ops with B prepacked. */
static double time_f32(const sm_cpu_ops *ops, int64_t M, int64_t N, int64_t K,
                       sm_threadpool *tp, double budget)
{
    float *A = malloc(sizeof(float) * (size_t)(M * K));
    float *B = malloc(sizeof(float) * (size_t)(K * N));
    float *C = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++)
        A[i] = (float)(i % 13) * 0.1f;
    for (int64_t i = 0; i < K * N; i++)
        B[i] = (float)(i % 7) * 0.1f;
    sm_gemm_pack *pk;
    sm_matf bv = {B, N, 1};
    if (sm_gemm_pack_new(NULL, ops, 0, &bv, K, N, 1, 0, &pk) != SMELT_OK)
        return 0;
    f32_run r = {.ops = ops, .tp = tp};
    r.g = (sm_gemm_args){.M = M,
                         .N = N,
                         .K = K,
                         .a = {A, K, 1},
                         .pb = pk,
                         .c = C,
                         .ldc = N,
                         .epi = sm_gemm_epi_none()};
    r.wsb = sm_gemm_workspace(sm_threadpool_size(tp), K, N, 1);
    r.ws = aligned_alloc(64, (r.wsb + 63) & ~(size_t)63);
    double t = median_time(f32_call, &r, budget);
    free(r.ws);
    sm_free(pk);
    free(A);
    free(B);
    free(C);
    return t * 1e6;
}

int main(int argc, char **argv)
{
    double budget = 0.3;
    int64_t user[16][3];
    int n_user = 0;
    for (int i = 1; i < argc; i++) {
        long long m, n, k;
        if (!strcmp(argv[i], "--time") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc && n_user < 16 &&
                 sscanf(argv[++i], "%lldx%lldx%lld", &m, &n, &k) == 3) {
            user[n_user][0] = m;
            user[n_user][1] = n;
            user[n_user++][2] = k;
        }
    }
    static const int64_t sizes[][3] = {{8, 4096, 1024},  {8, 4096, 4096},
                                       {8, 1024, 4096},  {128, 768, 768},
                                       {128, 3072, 768}, {512, 512, 512}};
    const sm_q8_isa *isas[] = {&sm_q8_isa_avx512vnni, &sm_q8_isa_avxvnni,
                               &sm_q8_isa_avx2, &sm_q8_isa_scalar};
    const unsigned need[] = {SM_CPU_ISA_AVX512 | SM_CPU_AVX512VNNI,
                             SM_CPU_ISA_AVX2 | SM_CPU_AVXVNNI, SM_CPU_ISA_AVX2,
                             0};
    unsigned feat = sm_cpu_detect();
    const sm_cpu_ops *ops = sm_cpu_ops_for(feat);
    sm_threadpool *tp2;
    if (sm_threadpool_new(NULL, 2, &tp2) != SMELT_OK)
        return 1;
    printf("microseconds per call (median); int8: u8 x s8 -> f32 "
           "dequantized; f32: %s GEMM; B prepacked\n",
           ops->name);
    size_t count = n_user ? (size_t)n_user : sizeof sizes / sizeof sizes[0];
    for (int th = 1; th <= 2; th++) {
        sm_threadpool *tp = th == 2 ? tp2 : NULL;
        printf("\n%d thread%s\n%-16s %10s", th, th > 1 ? "s" : "", "M x N x K",
               "f32");
        for (int s = 0; s < 4; s++)
            if ((feat & need[s]) == need[s])
                printf(" %12s", isas[s]->name);
        if ((feat & need[2]) == need[2])
            printf(" %12s", "avx2/7bit");
        printf("\n");
        for (size_t z = 0; z < count; z++) {
            const int64_t *sz = n_user ? user[z] : sizes[z];
            int64_t M = sz[0], N = sz[1], K = sz[2];
            char name[48];
            snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)M,
                     (long long)N, (long long)K);
            printf("%-16s %10.1f", name, time_f32(ops, M, N, K, tp, budget));
            for (int s = 0; s < 4; s++)
                if ((feat & need[s]) == need[s])
                    printf(" %12.1f", time_q8(isas[s], M, N, K, 0, tp, budget));
            if ((feat & need[2]) == need[2])
                printf(" %12.1f", time_q8(isas[2], M, N, K, 1, tp, budget));
            printf("\n");
            fflush(stdout);
        }
    }
    sm_threadpool_free(tp2);
    return 0;
}
