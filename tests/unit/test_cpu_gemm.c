/*
 * test_cpu_gemm.c - the f32 GEMM driver (kernels/cpu/gemm.c) on every ISA
 * table this machine has, against a naive product: odd sizes, tails in M,
 * N and K, blocking boundaries, batches, prepacked operands, every
 * epilogue; and the tables' vectorized math (accuracy vs libm) and lane
 * transposes.
 */
#include "cpu_harness.h"

#include "kernels/cpu/gemm.h"
#include "core/act.h"

/* Every table this CPU can run, widest first. */
static const sm_cpu_ops *const all_ops[] = {
    &sm_cpu_ops_avx512, &sm_cpu_ops_avx2, &sm_cpu_ops_scalar};

static int have_ops(const sm_cpu_ops *o)
{
    return (o->isa & sm_cpu_detect()) == o->isa;
}

static float *rnd(int64_t n, unsigned seed)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    unsigned x = seed * 2654435761u + 1u;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (float)((x >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return p;
}

/* The product act(alpha A B + t0 + t1) in double, the independent oracle
 * of the GEMM tests. A is [M,K] (or [K,M] with ta), B [K,N] (or [N,K]). */
static void naive_gemm(int64_t M, int64_t N, int64_t K, const float *A, int ta,
                       const float *B, int tb, const sm_gemm_epi *e, double *y)
{
    sm_act act = {(sm_act_kind)e->act, e->act_a, e->act_b};
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(ta ? A[k * M + i] : A[i * K + k]) *
                     (double)(tb ? B[j * K + k] : B[k * N + j]);
            s *= e->alpha;
            for (int t = 0; t < 2; t++)
                if (e->t[t].p)
                    s += e->t[t].scale *
                         (double)e->t[t].p[i * e->t[t].rs + j * e->t[t].cs];
            y[i * N + j] = sm_act_apply(&act, s);
        }
}

static void expect_close(const char *what, const float *got, const double *want,
                         int64_t n, double atol, double rtol)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= atol + rtol * fabs(want[i])))
            fail_msg("%s: element %lld: got %.9g, expected %.9g", what,
                     (long long)i, (double)got[i], want[i]);
}

/* One GEMM on one table, B prepacked or not, A transposed or not. */
static void gemm_case(const sm_cpu_ops *ops, int64_t M, int64_t N, int64_t K,
                      int ta, int tb, int packed, const sm_gemm_epi *e,
                      sm_threadpool *tp)
{
    float *A = rnd(M * K, 1 + (unsigned)M), *B = rnd(K * N, 2 + (unsigned)N);
    float *C = malloc((size_t)(M * N > 0 ? M * N : 1) * sizeof *C);
    double *want = malloc((size_t)(M * N > 0 ? M * N : 1) * sizeof *want);
    for (int64_t i = 0; i < M * N; i++)
        C[i] = NAN;
    naive_gemm(M, N, K, A, ta, B, tb, e, want);
    sm_gemm_args g = {.M = M, .N = N, .K = K, .c = C, .ldc = N, .epi = *e};
    g.a = (sm_matf){A, ta ? 1 : K, ta ? M : 1};
    g.b = (sm_matf){B, tb ? 1 : N, tb ? K : 1};
    sm_gemm_pack *pb = NULL;
    if (packed) {
        assert_int_equal(sm_gemm_pack_new(NULL, ops, 0, &g.b, K, N, 1, 0, &pb),
                         SMELT_OK);
        g.pb = pb;
    }
    assert_int_equal(sm_gemm_f32(NULL, ops, &g, tp, NULL, 0), SMELT_OK);
    char what[160];
    snprintf(what, sizeof what, "%s gemm M=%lld N=%lld K=%lld ta=%d tb=%d%s",
             ops->name, (long long)M, (long long)N, (long long)K, ta, tb,
             packed ? " packed" : "");
    /* f32 sums of K products of values in [-1, 1): error grows with K */
    expect_close(what, C, want, M * N, 2e-6 * (double)(K + 1), 1e-5);
    sm_free(pb);
    free(A);
    free(B);
    free(C);
    free(want);
}

/* Every M, N in a set of odd sizes and tails around each table's tile,
 * against several depths (K = 1, a KC boundary crossing, the depths whose
 * full row tiles read a row-major A in place, ...). */
static void test_gemm_odd_sizes(void **state)
{
    (void)state;
    static const int64_t mn[] = {1,  2,  3,  7,  12, 13, 15,
                                 16, 17, 31, 33, 64, 100};
    static const int64_t ks[] = {1, 3, 16, 17, 24, 32, 64, 96, 100, 144, 257};
    sm_gemm_epi none = sm_gemm_epi_none();
    for (size_t o = 0; o < 3; o++) {
        if (!have_ops(all_ops[o]))
            continue;
        for (size_t i = 0; i < N_OF(mn); i++)
            for (size_t j = 0; j < N_OF(mn); j++)
                for (size_t k = 0; k < N_OF(ks); k++)
                    if (mn[i] * mn[j] * ks[k] <= 100 * 100 * 100 ||
                        (i + j + k) % 3 == 0)
                        gemm_case(all_ops[o], mn[i], mn[j], ks[k], 0, 0,
                                  (i + j + k) & 1, &none, NULL);
    }
}

/* Transposed operands (a weight gradient's X^T, dY W^T) packed on the
 * fly, on odd sizes around each table's tile and its vector: the
 * vectorized packing of a column-major A and of a B^T (in-register
 * transposes of VL x VL blocks, scalar tails in k, zero lanes past n),
 * with K below, at and past one vector and a KC boundary. */
static void test_gemm_transposed_odd(void **state)
{
    (void)state;
    static const int64_t mn[] = {1, 3, 5, 6, 7, 13, 14, 15, 17, 29, 33, 47};
    static const int64_t ks[] = {1, 7, 8, 9, 16, 17, 40, 515};
    sm_gemm_epi none = sm_gemm_epi_none();
    for (size_t o = 0; o < 3; o++) {
        if (!have_ops(all_ops[o]))
            continue;
        for (size_t i = 0; i < N_OF(mn); i++)
            for (size_t j = 0; j < N_OF(mn); j++)
                for (size_t k = 0; k < N_OF(ks); k++) {
                    if (ks[k] > 100 && (i + j) % 4)
                        continue;
                    int t = (int)((i + j + k) % 3) + 1; /* ta, tb or both */
                    gemm_case(all_ops[o], mn[i], mn[j], ks[k], t & 1, t >> 1, 0,
                              &none, NULL);
                }
    }
}

/* Sizes that cross every cache block (MC, KC, NC) and the thread split,
 * with transposed operands, on pools of 1, 2 and 3 threads. */
static void test_gemm_blocking_threads(void **state)
{
    (void)state;
    sm_gemm_epi none = sm_gemm_epi_none();
    static const int64_t sz[][3] = {
        {150, 530, 260}, {8, 1100, 70},  {300, 5, 9},   {1, 777, 513},
        {145, 33, 1},    {97, 1031, 31}, {200, 48, 32}, {185, 96, 16},
        {150, 40, 384},  {60, 70, 192}};
    for (size_t o = 0; o < 3; o++) {
        if (!have_ops(all_ops[o]))
            continue;
        for (size_t s = 0; s < N_OF(sz); s++)
            for (int p = 0; p < 3; p++)
                gemm_case(all_ops[o], sz[s][0], sz[s][1], sz[s][2], s & 1,
                          (s >> 1) & 1, p != 1, &none, ck_pools[p]);
    }
}

/* Every epilogue: bias per column, per row, scalar and full; residual;
 * alpha; each activation. */
static void test_gemm_epilogues(void **state)
{
    (void)state;
    const int64_t M = 19, N = 37, K = 23;
    float *t = rnd(M * N + 3, 9); /* the residual starts at t + 3 */
    for (int act = 0; act < SM_ACT_COUNT; act++) {
        for (int form = 0; form < 4; form++) {
            sm_gemm_epi e = sm_gemm_epi_none();
            e.act = act;
            e.act_a = act == SM_ACT_LEAKYRELU ? 0.1f : -0.5f;
            e.act_b = 0.75f;
            e.alpha = form == 3 ? 0.5f : 1.0f;
            static const int64_t rs[4] = {0, 1, 0, 37}, cs[4] = {1, 0, 0, 1};
            e.t[0] = (sm_epi_term){t, rs[form], cs[form], 0.25f};
            if (form >= 2)
                e.t[1] = (sm_epi_term){t + 3, N, 1, 1.0f};
            for (size_t o = 0; o < 3; o++)
                if (have_ops(all_ops[o]))
                    gemm_case(all_ops[o], M, N, K, 0, 0, form & 1, &e,
                              ck_pools[form % 3]);
        }
    }
    /* K = 0: the result is the epilogue of zeros */
    sm_gemm_epi e = sm_gemm_epi_none();
    e.t[0] = (sm_epi_term){t, 0, 1, 1.0f};
    e.act = SM_ACT_RELU;
    for (size_t o = 0; o < 3; o++)
        if (have_ops(all_ops[o]))
            gemm_case(all_ops[o], 5, 9, 0, 0, 0, 0, &e, NULL);
    free(t);
}

/* A batch of two products with a broadcast A and per-batch B, prepacked
 * as two matrices. */
static void test_gemm_batch(void **state)
{
    (void)state;
    const int64_t M = 7, N = 45, K = 13;
    float *A = rnd(M * K, 3), *B = rnd(2 * K * N, 4);
    float C[2 * 7 * 45];
    double want[7 * 45];
    sm_gemm_epi none = sm_gemm_epi_none();
    for (size_t o = 0; o < 3; o++) {
        const sm_cpu_ops *ops = all_ops[o];
        if (!have_ops(ops))
            continue;
        sm_gemm_pack *pb;
        sm_matf bv = {B, N, 1};
        assert_int_equal(
            sm_gemm_pack_new(NULL, ops, 0, &bv, K, N, 2, K * N, &pb), SMELT_OK);
        sm_gemm_args g = {.M = M,
                          .N = N,
                          .K = K,
                          .a = {A, K, 1},
                          .pb = pb,
                          .c = C,
                          .ldc = N,
                          .epi = none,
                          .nbd = 1,
                          .bdims = {2}};
        g.stride[SM_GB_PB][0] = 1;
        g.stride[SM_GB_C][0] = M * N;
        assert_int_equal(sm_gemm_f32(NULL, ops, &g, ck_pools[1], NULL, 0),
                         SMELT_OK);
        for (int b = 0; b < 2; b++) {
            naive_gemm(M, N, K, A, 0, B + b * K * N, 0, &none, want);
            expect_close(ops->name, C + b * M * N, want, M * N, 1e-4, 1e-5);
        }
        sm_free(pb);
    }
    free(A);
    free(B);
}

/* A pack made for one table is refused by another. */
static void test_gemm_errors(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, c[4];
    sm_gemm_pack *pb;
    sm_matf v = {a, 2, 1};
    assert_int_equal(
        sm_gemm_pack_new(NULL, &sm_cpu_ops_scalar, 0, &v, 2, 2, 1, 0, &pb),
        SMELT_OK);
    sm_gemm_args g = {.M = 2,
                      .N = 2,
                      .K = 2,
                      .a = v,
                      .pb = pb,
                      .c = c,
                      .ldc = 2,
                      .epi = sm_gemm_epi_none()};
    smelt_ctx_t *ctx = smelt_ctx_init();
    const sm_cpu_ops *other =
        have_ops(&sm_cpu_ops_avx2) ? &sm_cpu_ops_avx2 : NULL;
    if (other) {
        assert_int_equal(sm_gemm_f32(ctx, other, &g, NULL, NULL, 0),
                         SMELT_ERR_INVALID_ARG);
        nn_has_words(smelt_ctx_error(ctx), "gemm|another ISA");
    }
    g.pb = NULL;
    g.M = -1;
    assert_int_equal(sm_gemm_f32(ctx, &sm_cpu_ops_scalar, &g, NULL, NULL, 0),
                     SMELT_ERR_INVALID_ARG);
    nn_has_words(smelt_ctx_error(ctx), "gemm|M=-1");
    smelt_ctx_free(ctx);
    sm_free(pb);
}

/* ---- vectorized math --------------------------------------------------- */

typedef double (*libm_fn)(double);
static double d_sigmoid(double x)
{
    return 1 / (1 + exp(-x));
}
static double d_silu(double x)
{
    return x * d_sigmoid(x);
}
/* Oracles without the cancellation of 1 + erf(.) in the left tail. */
static double d_gelu(double x)
{
    return 0.5 * x * erfc(-x * 0.70710678118654752440);
}
static double d_gelu_tanh(double x)
{
    return x /
           (1 + exp(-2 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

/* Max error of ops->unary(f) against the double function over a grid of
 * [-30, 30] (and the tiny values near 0): absolute, and relative where
 * |want| > 1e-30. */
static void vmath_err(const sm_cpu_ops *ops, int f, libm_fn ref, double *abs_e,
                      double *rel_e)
{
    enum { N = 60001 + 200 };
    static float x[N], y[N];
    for (int i = 0; i < 60001; i++)
        x[i] = -30.0f + (float)i * 0.001f;
    for (int i = 0; i < 200; i++)
        x[60001 + i] = (float)(i - 100) * 1e-6f;
    ops->unary(f, 0, 0, x, y, N);
    *abs_e = *rel_e = 0;
    for (int i = 0; i < N; i++) {
        double w = ref(x[i]), d = fabs(y[i] - w);
        if (d > *abs_e)
            *abs_e = d;
        if (fabs(w) > 1e-30 && d / fabs(w) > *rel_e)
            *rel_e = d / fabs(w);
    }
}

/* The bounds documented in vmath.inc.h, on every table. */
static void test_vmath_accuracy(void **state)
{
    (void)state;
    struct {
        int f;
        libm_fn ref;
        double abs_max, rel_max;
        const char *name;
    } fns[] = {
        {SM_UNARY_EXP, exp, INFINITY, 3e-7, "exp"},
        {SM_ACT_TANH, tanh, INFINITY, 3e-7, "tanh"},
        {SM_UNARY_ERF, erf, 3e-7, 1e-6, "erf"},
        {SM_ACT_SIGMOID, d_sigmoid, INFINITY, 3e-7, "sigmoid"},
        {SM_ACT_SILU, d_silu, INFINITY, 3e-7, "silu"},
        {SM_ACT_GELU, d_gelu, INFINITY, 3e-5, "gelu"},
        {SM_ACT_GELU_TANH, d_gelu_tanh, INFINITY, 3e-5, "gelu_tanh"},
    };
    for (size_t o = 0; o < 3; o++) {
        if (!have_ops(all_ops[o]))
            continue;
        for (size_t i = 0; i < N_OF(fns); i++) {
            double ae, re;
            vmath_err(all_ops[o], fns[i].f, fns[i].ref, &ae, &re);
            if (ae > fns[i].abs_max || re > fns[i].rel_max)
                fail_msg("%s %s: max abs error %.3g, rel %.3g",
                         all_ops[o]->name, fns[i].name, ae, re);
        }
    }
}

/* GELU past the range its fit covers, on every table: |x| >= 13 takes
 * Q = 0 (not x times a capped Q, which would grow with x), infinities
 * and NaN as the reference's 0.5 x (1 + erf(x / sqrt2)) gives them. */
static void test_vmath_gelu_edges(void **state)
{
    (void)state;
    float x[] = {-13.0f, -20.0f,   -1e30f,    -3e38f, 13.0f,
                 3e38f,  INFINITY, -INFINITY, NAN};
    for (size_t o = 0; o < 3; o++) {
        if (!have_ops(all_ops[o]))
            continue;
        float y[N_OF(x)];
        all_ops[o]->unary(SM_ACT_GELU, 0, 0, x, y, (int64_t)N_OF(x));
        for (int i = 0; i < 4; i++)
            assert_true(y[i] == 0.0f);
        assert_true(y[4] == 13.0f && y[5] == 3e38f && y[6] == INFINITY);
        assert_true(isnan(y[7]) && isnan(y[8]));
    }
}

/* lanes_in / lanes_out against their definitions, on every table: whole
 * register blocks, ragged tails, an output stride wider than a vector. */
static void test_lanes(void **state)
{
    (void)state;
    enum { MAXN = 53, MAXL = 16, STRIDE = 21 };
    static float src[MAXL][MAXN], il[MAXN * MAXL], back[MAXL][MAXN];
    static float wide[MAXN * STRIDE];
    for (int l = 0; l < MAXL; l++)
        for (int j = 0; j < MAXN; j++)
            src[l][j] = (float)(l * 1000 + j);
    for (size_t o = 0; o < 3; o++) {
        const sm_cpu_ops *ops = all_ops[o];
        if (!have_ops(ops))
            continue;
        int vl = ops->vl;
        const int64_t ns[] = {0, 3, 16, 37, MAXN};
        for (size_t t = 0; t < N_OF(ns); t++) {
            int64_t n = ns[t];
            const float *s[MAXL];
            float *d[MAXL];
            for (int l = 0; l < vl; l++) {
                s[l] = src[l];
                d[l] = back[l];
            }
            ops->lanes_in(s, n, il);
            for (int64_t j = 0; j < n; j++)
                for (int l = 0; l < vl; l++)
                    assert_true(il[j * vl + l] == src[l][j]);
            /* out of a wider pixel stride: lane l of pixel j at j * 21 + l */
            for (int64_t j = 0; j < n; j++)
                for (int l = 0; l < STRIDE; l++)
                    wide[j * STRIDE + l] = (float)(l * 1000 + j);
            memset(back, 0, sizeof back);
            ops->lanes_out(wide, n, STRIDE, d);
            for (int l = 0; l < vl; l++)
                for (int64_t j = 0; j < n; j++)
                    assert_true(back[l][j] == src[l][j]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_odd_sizes),
        cmocka_unit_test(test_gemm_transposed_odd),
        cmocka_unit_test(test_gemm_blocking_threads),
        cmocka_unit_test(test_gemm_epilogues),
        cmocka_unit_test(test_gemm_batch),
        cmocka_unit_test(test_gemm_errors),
        cmocka_unit_test(test_vmath_accuracy),
        cmocka_unit_test(test_vmath_gelu_edges),
        cmocka_unit_test(test_lanes),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
