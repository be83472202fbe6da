/*
 * fused_ew_bench.c - AdamW's update (14 elementwise nodes over 4
 * tensors, 3 results) as one FusedElementwise run by the fused CPU
 * kernel (kernels/cpu/fused_ew.c) against the same nodes as 14 plan
 * steps, side by side, at several sizes.
 *
 *   fused_ew_bench [--threads N] [--rounds R] [--isa NAME] [N]...
 *
 * Both plans write into preallocated outputs (smelt_session_run_into),
 * as a training step does, so no page fault is timed. Rounds alternate
 * the two (default 15 each); it prints each one's fastest wall time and
 * median CPU time (the process's, which time slicing by other processes
 * does not inflate; per thread it is this divided by the threads), and
 * the ratios fused / unfused of both. A benchmark prints; it never fails on
 * speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smelt.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the whole process (every thread): time slicing by other
 * processes on a shared machine does not inflate it. */
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

static const char *const nodes = "%t0: f32[N] = Mul(%pm, %b1)\n"
                                 "%t1: f32[N] = Mul(%pg, %c1)\n"
                                 "%m2: f32[N] = Add(%t0, %t1)\n"
                                 "%t2: f32[N] = Mul(%pg, %pg)\n"
                                 "%t3: f32[N] = Mul(%t2, %c2)\n"
                                 "%t4: f32[N] = Mul(%pv, %b2)\n"
                                 "%v2: f32[N] = Add(%t4, %t3)\n"
                                 "%t5: f32[N] = Sqrt(%v2)\n"
                                 "%t6: f32[N] = Add(%t5, %eps)\n"
                                 "%t7: f32[N] = Div(%m2, %t6)\n"
                                 "%t8: f32[N] = Mul(%pw, %wd)\n"
                                 "%t9: f32[N] = Add(%t7, %t8)\n"
                                 "%t10: f32[N] = Mul(%t9, %plr)\n"
                                 "%w2: f32[N] = Sub(%pw, %t10)\n";

static const char *const consts = "%b1: f32[] = const 0.9\n"
                                  "%c1: f32[] = const 0.1\n"
                                  "%b2: f32[] = const 0.999\n"
                                  "%c2: f32[] = const 0.001\n"
                                  "%eps: f32[] = const 1e-8\n"
                                  "%wd: f32[] = const 0.01\n";

/* s with every "[N]" made "[n]" appended to out. */
static void put_sized(char *out, size_t cap, const char *s, long long n)
{
    char num[32];
    snprintf(num, sizeof num, "[%lld]", n);
    size_t len = strlen(out);
    for (; *s && len + 32 < cap; s++) {
        if (!strncmp(s, "[N]", 3)) {
            len += (size_t)snprintf(out + len, cap - len, "%s", num);
            s += 2;
        } else {
            out[len++] = *s;
            out[len] = 0;
        }
    }
}

/* The update as a graph: fused, or its nodes in the top block. */
static char *graph_text(long long n, int fused)
{
    size_t cap = 8192;
    char *t = calloc(cap, 1);
    if (!t)
        return NULL;
    if (fused) {
        put_sized(t, cap,
                  "graph g(%w: f32[N], %g: f32[N], %m: f32[N], %v: f32[N], "
                  "%lr: f32[1]) {\n%m2o: f32[N], %v2o: f32[N], %w2o: f32[N] "
                  "= FusedElementwise(%w, %g, %m, %v, %lr) body(%pw: f32[N], "
                  "%pg: f32[N], %pm: f32[N], %pv: f32[N], %plr: f32[1]) {\n",
                  n);
        put_sized(t, cap, consts, n);
        put_sized(t, cap, nodes, n);
        put_sized(t, cap, "return %m2, %v2, %w2\n}\n", n);
        put_sized(t, cap, "return %m2o, %v2o, %w2o\n}\n", n);
    } else {
        put_sized(t, cap,
                  "graph g(%pw: f32[N], %pg: f32[N], %pm: f32[N], %pv: "
                  "f32[N], %plr: f32[1]) {\n",
                  n);
        put_sized(t, cap, consts, n);
        put_sized(t, cap, nodes, n);
        put_sized(t, cap, "return %m2, %v2, %w2\n}\n", n);
    }
    return t;
}

typedef struct runner {
    smelt_plan_t *p;
    smelt_session_t *s;
    smelt_tensor_t *out[3];
    double t[256], c[256]; /* wall and CPU ms per round */
} runner;

static int runner_init(smelt_ctx_t *ctx, runner *r, long long n, int fused,
                       int threads, const char *isa)
{
    memset(r, 0, sizeof *r);
    char *text = graph_text(n, fused);
    smelt_graph_t *g = NULL;
    if (!text ||
        smelt_graph_parse(ctx, text, strlen(text), "adamw.ir", &g) != SMELT_OK)
        return free(text), 0;
    free(text);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 0;
    o.threads = threads;
    o.isa = isa;
    if (smelt_plan_compile_take(ctx, g, &o, &r->p) != SMELT_OK ||
        smelt_session_init(ctx, r->p, &r->s) != SMELT_OK)
        return 0;
    int64_t d = n;
    for (int i = 0; i < 3; i++)
        if (smelt_tensor_init(ctx, SMELT_DTYPE_F32, 1, &d, &r->out[i]) !=
            SMELT_OK)
            return 0;
    return 1;
}

static void runner_free(runner *r)
{
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(r->out[i]);
    smelt_session_free(r->s);
    smelt_plan_free(r->p);
}

int main(int argc, char **argv)
{
    int threads = 1, rounds = 15;
    const char *isa = NULL;
    long long sizes[16];
    int n_sizes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc)
            isa = argv[++i];
        else if (n_sizes < 16 && atoll(argv[i]) > 0)
            sizes[n_sizes++] = atoll(argv[i]);
        else {
            fprintf(stderr, "usage: fused_ew_bench [--threads N] [--rounds R] "
                            "[--isa NAME] [N]...\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 256 || threads < 1) {
        fprintf(stderr, "fused_ew_bench: rounds 1..256, threads >= 1\n");
        return 2;
    }
    if (!n_sizes) {
        sizes[n_sizes++] = 65536;
        sizes[n_sizes++] = 1048576;
        sizes[n_sizes++] = 4194304;
    }
    smelt_ctx_t *ctx = smelt_ctx_init();
    printf("AdamW update, %d thread(s), %d interleaved rounds; ms per run\n",
           threads, rounds);
    printf("%10s %10s %10s %10s %10s %6s %6s\n", "elements", "unf wall",
           "unf cpu", "fus wall", "fus cpu", "wall", "cpu");
    for (int k = 0; k < n_sizes; k++) {
        long long n = sizes[k];
        runner r[2];
        if (!runner_init(ctx, &r[0], n, 0, threads, isa) ||
            !runner_init(ctx, &r[1], n, 1, threads, isa)) {
            fprintf(stderr, "fused_ew_bench: %s\n", smelt_ctx_error(ctx));
            return 1;
        }
        smelt_tensor_t *in[5];
        int64_t d = n, one = 1;
        for (int i = 0; i < 5; i++) {
            smelt_tensor_init(ctx, SMELT_DTYPE_F32, 1, i < 4 ? &d : &one,
                              &in[i]);
            float *x = smelt_tensor_data(in[i]);
            for (int64_t j = 0; j < smelt_tensor_numel(in[i]); j++)
                x[j] = 0.001f * (float)(j % 1000) + 0.5f;
        }
        for (int rd = -1; rd < rounds; rd++)
            for (int w = 0; w < 2; w++) {
                double t0 = now(), c0 = cpu_now();
                if (smelt_session_run_into(ctx, r[w].s, in, 5, r[w].out, 3) !=
                    SMELT_OK) {
                    fprintf(stderr, "fused_ew_bench: %s\n",
                            smelt_ctx_error(ctx));
                    return 1;
                }
                if (rd >= 0) {
                    r[w].t[rd] = 1e3 * (now() - t0);
                    r[w].c[rd] = 1e3 * (cpu_now() - c0);
                }
            }
        for (int w = 0; w < 2; w++) {
            qsort(r[w].t, (size_t)rounds, sizeof(double), cmp_double);
            qsort(r[w].c, (size_t)rounds, sizeof(double), cmp_double);
        }
        printf("%10lld %10.3f %10.3f %10.3f %10.3f %6.2f %6.2f\n", n, r[0].t[0],
               r[0].c[rounds / 2], r[1].t[0], r[1].c[rounds / 2],
               r[1].t[0] / r[0].t[0], r[1].c[rounds / 2] / r[0].c[rounds / 2]);
        for (int i = 0; i < 5; i++)
            smelt_tensor_free(in[i]);
        runner_free(&r[0]);
        runner_free(&r[1]);
    }
    smelt_ctx_free(ctx);
    return 0;
}
