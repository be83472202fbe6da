/*
 * attn_bench.c - time of the flash attention kernel alone
 * (kernels/cpu/attention.h) on one batch of 8 heads of 64 at several
 * lengths, causal and not, and its GFLOP/s (4 T^2 D flops unmasked, about
 * half that causal), for tuning the block kernel without the plan around it.
 *
 *   attn_bench [--isa avx512|avx2|scalar] [--threads N] [--time SECONDS]
 *              [--len T]... [--heads H] [--dim D] [--group G] [--grad]
 *
 * --group sets the query blocks that share one sweep over the keys
 * (1..SM_ATTN_GROUP; default: the driver's choice by length).
 *
 * --grad times the backward kernel (attention_grad.h) as well, on the
 * forward's output and a random dO, and prints its time over the
 * forward's (CPU times, unmasked and causal).
 *
 * Each figure is the fastest of repeated runs filling about --time
 * seconds (default 0.5) after one warm-up run: on a machine shared with
 * other work the median mostly measures the others. Besides the wall
 * time it prints the CPU time per thread (process CPU time / threads),
 * which time slicing by other processes does not inflate; GFLOP/s are
 * from the CPU time. A benchmark prints; it never fails on speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/threadpool.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_grad.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpuid.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the whole process (every thread). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *rand_buf(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; p && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
    }
    return p;
}

/* One run of the forward (g NULL) or of the backward. */
static int run_once(const sm_cpu_ops *ops, const sm_attn_args *a,
                    const sm_attn_grad_args *g, void *ws, size_t wsb,
                    sm_threadpool *tp)
{
    return g ? sm_cpu_attention_grad(ops, g, ws, wsb, tp)
             : sm_cpu_attention(ops, a, ws, wsb, tp);
}

/* The fastest seconds of one attention of H heads of D at length T,
 * forward, or (grad) backward from the forward's output and a random dO. */
static double bench_one(const sm_cpu_ops *ops, int64_t T, int64_t H, int64_t D,
                        int causal, int grad, int group, sm_threadpool *tp,
                        double budget, double *cpu)
{
    float *q = rand_buf(H * T * D, 1), *k = rand_buf(H * T * D, 2);
    float *v = rand_buf(H * T * D, 3), *o = malloc((size_t)(H * T * D) * 4);
    float *dout = grad ? rand_buf(H * T * D, 4) : NULL;
    float *dq = grad ? malloc((size_t)(H * T * D) * 12) : NULL;
    size_t wsb = sm_cpu_attention_ws(ops, D, D, sm_threadpool_size(tp));
    size_t gwsb = sm_cpu_attention_grad_ws(D, D, T, sm_threadpool_size(tp));
    if (grad && gwsb > wsb)
        wsb = gwsb;
    void *ws = aligned_alloc(64, (wsb + 63) & ~(size_t)63);
    sm_attn_args a = {.batch = 1,
                      .q_heads = H,
                      .kv_heads = H,
                      .q_len = T,
                      .kv_len = T,
                      .head_dim = D,
                      .v_dim = D,
                      .scale = 0.125f,
                      .causal = causal,
                      .q = q,
                      .k = k,
                      .v = v,
                      .out = o,
                      .q_group = group};
    sm_attn_grad_args ga = {.f = a, .dout = dout, .dq = dq};
    ga.dk = dq ? dq + H * T * D : NULL;
    ga.dv = dq ? dq + 2 * H * T * D : NULL;
    const sm_attn_grad_args *g = grad ? &ga : NULL;
    double t[200], c[200], best = -1;
    int n = 0;
    if (q && k && v && o && ws && (!grad || (dout && dq)) &&
        sm_cpu_attention(ops, &a, ws, wsb, tp) == 0 &&
        run_once(ops, &a, g, ws, wsb, tp) == 0) {
        double start = now();
        while (n < 200 && (n < 3 || now() - start < budget)) {
            double t0 = now(), c0 = cpu_now();
            run_once(ops, &a, g, ws, wsb, tp);
            c[n] = (cpu_now() - c0) / sm_threadpool_size(tp);
            t[n++] = now() - t0;
        }
        qsort(t, (size_t)n, sizeof t[0], cmp_double);
        qsort(c, (size_t)n, sizeof c[0], cmp_double);
        best = t[0];
        *cpu = c[0];
    }
    free(q);
    free(k);
    free(v);
    free(o);
    free(dout);
    free(dq);
    free(ws);
    return best;
}

int main(int argc, char **argv)
{
    const char *isa = NULL;
    int threads = 2, nlen = 0, ok = 1, grad = 0, group = 0;
    int64_t lens[16], H = 8, D = 64;
    double budget = 0.5;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--isa") && ++i)
            isa = v;
        else if (!strcmp(argv[i], "--threads") && ++i)
            threads = atoi(v);
        else if (!strcmp(argv[i], "--time") && ++i)
            budget = atof(v);
        else if (!strcmp(argv[i], "--len") && ++i && nlen < 16)
            lens[nlen++] = atoll(v);
        else if (!strcmp(argv[i], "--heads") && ++i)
            H = atoll(v);
        else if (!strcmp(argv[i], "--dim") && ++i)
            D = atoll(v);
        else if (!strcmp(argv[i], "--group") && ++i)
            group = atoi(v);
        else if (!strcmp(argv[i], "--grad"))
            grad = 1;
        else {
            fprintf(stderr, "attn_bench: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    unsigned feat = sm_cpu_detect() & sm_cpu_level_mask(isa, &ok);
    if (!ok) {
        fprintf(stderr, "attn_bench: unknown --isa %s\n", isa);
        return 2;
    }
    if (!nlen) {
        static const int64_t def[] = {512, 1024, 2048, 4096};
        for (nlen = 0; nlen < 4; nlen++)
            lens[nlen] = def[nlen];
    }
    const sm_cpu_ops *ops = sm_cpu_ops_for(feat);
    sm_threadpool *tp = NULL;
    if (threads > 1 && sm_threadpool_new(NULL, threads, &tp) != SMELT_OK)
        return 1;
    if (group < 0 || group > SM_ATTN_GROUP) {
        fprintf(stderr, "attn_bench: --group %d is not in 0..%d\n", group,
                SM_ATTN_GROUP);
        return 2;
    }
    printf("attention %s, %d thread(s), %lld heads of %lld, block %d x %d, "
           "query blocks per key sweep: %s%d\n",
           ops->name, threads, (long long)H, (long long)D, ops->attn_bq,
           SM_ATTN_BK, group ? "" : "by length, up to ",
           group ? group : SM_ATTN_GROUP);
    printf("%6s %9s %9s %9s %10s %10s %9s %7s\n", "T", "full ms", "cpu ms",
           "GFLOP/s", "causal ms", "cpu ms", "GFLOP/s", "ratio");
    for (int i = 0; i < nlen; i++) {
        int64_t T = lens[i];
        double fc = 0, cc = 0;
        double f = bench_one(ops, T, H, D, 0, 0, group, tp, budget, &fc);
        double c = bench_one(ops, T, H, D, 1, 0, group, tp, budget, &cc);
        double fl = 4.0 * (double)T * (double)T * (double)D * (double)H;
        printf("%6lld %9.3f %9.3f %9.1f %10.3f %10.3f %9.1f %7.2f\n",
               (long long)T, f * 1e3, fc * 1e3, fl / fc * 1e-9 / threads,
               c * 1e3, cc * 1e3, fl / 2 / cc * 1e-9 / threads, fc / cc);
        if (!grad)
            continue;
        double gfc = 0, gcc = 0;
        double gf = bench_one(ops, T, H, D, 0, 1, group, tp, budget, &gfc);
        double gc = bench_one(ops, T, H, D, 1, 1, group, tp, budget, &gcc);
        printf("%6s %9.3f %9.3f %9s %10.3f %10.3f %9s   backward; / forward "
               "(cpu): %.2f unmasked, %.2f causal\n",
               "bwd", gf * 1e3, gfc * 1e3, "", gc * 1e3, gcc * 1e3, "",
               gfc / fc, gcc / cc);
    }
    sm_threadpool_free(tp);
    return 0;
}
