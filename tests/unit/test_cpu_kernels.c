/*
 * test_cpu_kernels.c - Smelt's optimized CPU kernels against the
 * reference: the GEMM driver on every ISA table this machine has (odd
 * sizes, tails in M, N and K, blocking boundaries, batches, prepacked
 * operands, every epilogue), the vectorized math (accuracy vs libm), and
 * the MatMul / Gemm / FusedGemm / Conv / FusedConv kernels through their
 * registry entries (strides, pads, dilations, groups, depthwise, 1x1,
 * fused bias, residual and activation). Pooling, normalization and the
 * elementwise, reduction and layout kernels are in test_cpu_ops.c.
 */
#include "cpu_harness.h"

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/conv_winograd.h"
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

/* ---- MatMul, Gemm, FusedGemm through the registry --------------------- */

#define MM_TOL(k) 2e-6 * (double)((k) + 1), 1e-5

static void test_matmul_op(void **state)
{
    (void)state;
    static const int64_t sz[][3] = {
        {1, 1, 1}, {3, 5, 7}, {17, 33, 15}, {64, 31, 100}, {2, 130, 9}};
    for (size_t s = 0; s < N_OF(sz); s++) {
        int64_t M = sz[s][0], N = sz[s][1], K = sz[s][2];
        for (unsigned mask = 0; mask < 3; mask += 2)
            CK_CHECK(SM_OP_MatMul, 2,
                     ((sm_tensor *[]){ck_rand(2, D(M, K), 1),
                                      ck_rand(2, D(K, N), 2)}),
                     1, NO_ATTRS, CK_ENTRIES(matmul), mask, MM_TOL(K));
    }
    /* batched with broadcasting, constant B with its own batch dims */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(4, D(2, 1, 3, 4), 3),
                              ck_rand(3, D(5, 4, 19), 4)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(4));
    /* batch folded into M: [2,3,9,20] x [20,21] */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(4, D(2, 3, 9, 20), 5),
                              ck_rand(2, D(20, 21), 6)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(20));
    /* B broadcast over A's batch but B batched: [3,1,5,6] x [1,2,6,7] */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(4, D(3, 1, 5, 6), 7),
                              ck_rand(4, D(1, 2, 6, 7), 8)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 0, MM_TOL(6));
    /* 1-D operands */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(1, D(9), 9), ck_rand(3, D(2, 9, 5), 10)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 0, MM_TOL(9));
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(2, D(4, 9), 11), ck_rand(1, D(9), 12)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(9));
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(1, D(33), 13), ck_rand(1, D(33), 14)}), 1,
             NO_ATTRS, CK_ENTRIES(matmul), 0, MM_TOL(33));
}

static void test_gemm_op(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int64_t M = 13, N = 35, K = 21;
            const int64_t *ad = ta ? D(K, M) : D(M, K);
            const int64_t *bd = tb ? D(N, K) : D(K, N);
            /* C as [N], [M,1], scalar, [M,N] */
            const int64_t *cd[4] = {D(N), D(M, 1), D(1), D(M, N)};
            int cr[4] = {1, 2, 0, 2};
            int c = ta * 2 + tb;
            CK_CHECK(SM_OP_Gemm, 3,
                     ((sm_tensor *[]){ck_rand(2, ad, 1), ck_rand(2, bd, 2),
                                      ck_rand(cr[c], cd[c], 3)}),
                     1,
                     ATTRS(A_INT("transA", ta), A_INT("transB", tb),
                           A_FLOAT("alpha", 0.5), A_FLOAT("beta", -2)),
                     CK_ENTRIES(matmul), 2, MM_TOL(K));
        }
    /* no C */
    CK_CHECK(SM_OP_Gemm, 2,
             ((sm_tensor *[]){ck_rand(2, D(6, 8), 4), ck_rand(2, D(8, 3), 5)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(8));
}

static void test_fusedgemm_op(void **state)
{
    (void)state;
    for (int act = 0; act < SM_ACT_COUNT; act++) {
        sm_attr al[3] = {A_STR("activation", sm_act_name((sm_act_kind)act)),
                         A_FLOAT("activation_alpha", -0.25),
                         A_FLOAT("activation_beta", 0.5)};
        int n_al = act == SM_ACT_CLIP ? 3 : act == SM_ACT_LEAKYRELU ? 2 : 1;
        /* batched MatMul form with bias [N] and residual [B, M, N] */
        CK_CHECK(SM_OP_FusedGemm, 4,
                 ((sm_tensor *[]){
                     ck_rand(3, D(2, 9, 17), 1), ck_rand(2, D(17, 40), 2),
                     ck_rand(1, D(40), 3), ck_rand(3, D(2, 9, 40), 4)}),
                 1, al, n_al, CK_ENTRIES(matmul), 2, MM_TOL(17));
    }
    /* Gemm form: transB, alpha, C [M, 1], residual [1, N] */
    CK_CHECK(SM_OP_FusedGemm, 4,
             ((sm_tensor *[]){ck_rand(2, D(5, 11), 5), ck_rand(2, D(33, 11), 6),
                              ck_rand(2, D(5, 1), 7), ck_rand(2, D(1, 33), 8)}),
             1,
             ATTRS(A_INT("transB", 1), A_FLOAT("alpha", 2),
                   A_STR("activation", "relu")),
             CK_ENTRIES(matmul), 2, MM_TOL(11));
    /* residual per batch broadcast over M: [2,1,N] onto [2,M,N] */
    CK_CHECK(
        SM_OP_FusedGemm, 4,
        ((sm_tensor *[]){ck_rand(3, D(2, 6, 7), 9), ck_rand(2, D(7, 20), 10),
                         NULL, ck_rand(3, D(2, 1, 20), 11)}),
        1, ATTRS(A_STR("activation", "silu")), CK_ENTRIES(matmul), 2,
        MM_TOL(7));
}

/* What the kernels leave to the reference: integer MatMul, f64 Gemm, a
 * FusedGemm with 1-D operands and a residual. */
static void test_matmul_refusals(void **state)
{
    (void)state;
    sm_tensor *in[2] = {nn_tensor(I32, 2, D(2, 3), NULL),
                        nn_tensor(I32, 2, D(3, 2), NULL)};
    sm_tensor *out[1] = {nn_tensor(I32, 2, D(2, 2), NULL)};
    assert_false(ck_supports(CK_K(matmul, scalar), SM_OP_MatMul, 2, in, 1, out,
                             NO_ATTRS));
    sm_tensor_free(in[0]);
    sm_tensor_free(in[1]);
    sm_tensor_free(out[0]);
    sm_tensor *in4[4] = {nn_tensor(F32, 1, D(3), NULL),
                         nn_tensor(F32, 2, D(3, 2), NULL), NULL,
                         nn_tensor(F32, 1, D(2), NULL)};
    out[0] = nn_tensor(F32, 1, D(2), NULL);
    assert_false(ck_supports(CK_K(matmul, scalar), SM_OP_FusedGemm, 4, in4, 1,
                             out, NO_ATTRS));
    /* a run on shapes that do not fit reports the op */
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_kargs ka = {.op_name = "MatMul",
                   .n_in = 2,
                   .in = in4,
                   .n_out = 1,
                   .out = out,
                   .ctx = ctx};
    sm_tensor_free(in4[1]);
    in4[1] = nn_tensor(F32, 2, D(4, 2), NULL); /* K = 3 against 4 */
    const sm_op_info *info = sm_op_info_get(SM_OP_MatMul);
    ka.attrs = (sm_attrs){NULL, 0, info->spec, info->n_spec};
    sm_cpu_config cfg = {SM_CPU_ALGO_GEMM, 0, 0, {0}, 0};
    assert_int_equal(
        sm_cpu_kernel_run(CK_K(matmul, scalar), &ka, &cfg, NULL, NULL),
        SMELT_ERR_RUNTIME);
    nn_has_words(smelt_ctx_error(ctx), "MatMul|do not fit");
    smelt_ctx_free(ctx);
    for (int i = 0; i < 4; i++)
        sm_tensor_free(in4[i]);
    sm_tensor_free(out[0]);
}

/* ---- Conv and FusedConv ------------------------------------------------ */

#define CONV_TOL(k) 2e-6 * (double)((k) + 1), 1e-5

/* One Conv node: X [n,c,h,w], W [m,c/g,kh,kw], bias; weights constant. */
static void conv_case(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m,
                      int64_t kh, int64_t kw, const sm_attr *al, int n_al,
                      int64_t group, int bias)
{
    sm_tensor *in[3] = {ck_rand(4, D(n, c, h, w), (unsigned)(c * 7 + h)),
                        ck_rand(4, D(m, c / group, kh, kw), (unsigned)m),
                        bias ? ck_rand(1, D(m), 5) : NULL};
    ck_check(SM_OP_Conv, 3, in, 1, al, n_al, CK_ENTRIES(conv), 2,
             CONV_TOL(c / group * kh * kw));
    for (int i = 0; i < 3; i++)
        sm_tensor_free(in[i]);
}

static void test_conv_op(void **state)
{
    (void)state;
    /* 3x3 pad 1 stride 1 (odd sizes, odd channel counts) */
    conv_case(1, 3, 9, 11, 5, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
    conv_case(2, 16, 14, 14, 33, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
    /* stride 2, asymmetric pads, no bias */
    conv_case(1, 7, 13, 10, 12, 3, 3,
              ATTRS(A_INTS("pads", 0, 1, 2, 1), A_INTS("strides", 2, 2)), 1, 0);
    /* 7x7 stride 2 pad 3 (ResNet's stem, shrunk) */
    conv_case(1, 3, 23, 23, 8, 7, 7,
              ATTRS(A_INTS("pads", 3, 3, 3, 3), A_INTS("strides", 2, 2)), 1, 1);
    /* dilation 2, stride (1, 3) */
    conv_case(1, 4, 12, 15, 6, 3, 2,
              ATTRS(A_INTS("dilations", 2, 2), A_INTS("strides", 1, 3),
                    A_INTS("pads", 2, 1, 2, 0)),
              1, 1);
    /* groups 2 and 3 */
    conv_case(2, 6, 8, 9, 4, 3, 3,
              ATTRS(A_INT("group", 2), A_INTS("pads", 1, 1, 1, 1)), 2, 1);
    conv_case(1, 9, 7, 7, 12, 1, 3, ATTRS(A_INT("group", 3)), 3, 1);
    /* 1x1 as a plain GEMM, and 1x1 stride 2 through the implicit path */
    conv_case(2, 20, 9, 7, 17, 1, 1, NO_ATTRS, 1, 1);
    conv_case(1, 12, 9, 9, 24, 1, 1, ATTRS(A_INTS("strides", 2, 2)), 1, 1);
    /* SAME_UPPER */
    conv_case(1, 5, 10, 11, 7, 4, 3, ATTRS(A_STR("auto_pad", "SAME_UPPER")), 1,
              1);
    /* a K that crosses the GEMM's KC block: 32 * 3 * 3 = 288 */
    conv_case(1, 32, 6, 6, 13, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
}

static void test_conv_depthwise(void **state)
{
    (void)state;
    /* MobileNet's 3x3 depthwise, stride 1 and 2 */
    conv_case(2, 24, 15, 17, 24, 3, 3,
              ATTRS(A_INT("group", 24), A_INTS("pads", 1, 1, 1, 1)), 24, 1);
    conv_case(1, 19, 16, 33, 19, 3, 3,
              ATTRS(A_INT("group", 19), A_INTS("pads", 1, 1, 1, 1),
                    A_INTS("strides", 2, 2)),
              19, 0);
    /* 5x5, dilation 2, asymmetric pads; channel multiplier 2 */
    conv_case(1, 6, 12, 40, 6, 5, 5,
              ATTRS(A_INT("group", 6), A_INTS("pads", 2, 4, 3, 1),
                    A_INTS("dilations", 2, 1)),
              6, 1);
    conv_case(1, 5, 9, 9, 10, 3, 3,
              ATTRS(A_INT("group", 5), A_INTS("pads", 1, 1, 1, 1)), 5, 1);
    /* small planes (channel-interleaved): stride 2 with dilation 2 and
     * uneven pads, 5x3 taps, 35 channels (two full blocks and a part) */
    conv_case(2, 35, 13, 11, 35, 5, 3,
              ATTRS(A_INT("group", 35), A_INTS("pads", 3, 1, 2, 2),
                    A_INTS("dilations", 2, 1), A_INTS("strides", 2, 2)),
              35, 1);
    /* planes computed in several bands of rows, stride 1 and 2, and with
     * a residual that varies over the plane */
    conv_case(1, 20, 100, 90, 20, 3, 3,
              ATTRS(A_INT("group", 20), A_INTS("pads", 1, 1, 1, 1)), 20, 1);
    conv_case(1, 20, 101, 90, 20, 3, 3,
              ATTRS(A_INT("group", 20), A_INTS("pads", 1, 1, 1, 1),
                    A_INTS("strides", 2, 2)),
              20, 1);
    CK_CHECK(
        SM_OP_FusedConv, 4,
        ((sm_tensor *[]){ck_rand(4, D(1, 20, 100, 90), 1),
                         ck_rand(4, D(20, 1, 3, 3), 2), ck_rand(1, D(20), 3),
                         ck_rand(4, D(1, 20, 100, 90), 4)}),
        1,
        ATTRS(A_INT("group", 20), A_INTS("pads", 1, 1, 1, 1),
              A_STR("activation", "relu")),
        CK_ENTRIES(conv), 2, CONV_TOL(9));
}

/* FusedConv: bias, residual (full and per channel) and every activation,
 * on the GEMM path and the depthwise paths: planes channel-interleaved
 * (9 x 7, 9 x 37; 20 channels: a partial block of 16 too), and planes too
 * large for that (conv_depthwise_blocked.c), per plane: narrow ones as one flat
 * run (700 x 20), rows of 32 or more one by one (140 x 140; those two for the
 * first activations only, they are large). */
static void test_fusedconv_op(void **state)
{
    (void)state;
    for (int act = 0; act < SM_ACT_COUNT; act++) {
        for (int dw = 0; dw < 5; dw++) {
            if (dw >= 3 && act > SM_ACT_CLIP)
                continue;
            int64_t c = dw ? 20 : 10, m = dw ? 20 : 12, g = dw ? 20 : 1;
            int64_t w = dw == 2 ? 37 : dw == 3 ? 20 : dw == 4 ? 140 : 7;
            int64_t h = dw == 3 ? 700 : dw == 4 ? 140 : 9;
            sm_attr al[5] = {A_STR("activation", sm_act_name((sm_act_kind)act)),
                             A_INTS("pads", 1, 1, 1, 1), A_INT("group", g),
                             A_FLOAT("activation_alpha", -0.5),
                             A_FLOAT("activation_beta", 0.25)};
            const int64_t *rd = act & 1 ? D(1, m, 1, 1) : D(2, m, h, w);
            sm_tensor *in[4] = {ck_rand(4, D(2, c, h, w), 1),
                                ck_rand(4, D(m, c / g, 3, 3), 2),
                                ck_rand(1, D(m), 3), ck_rand(4, rd, 4)};
            ck_check(SM_OP_FusedConv, 4, in, 1, al,
                     act == SM_ACT_CLIP        ? 5
                     : act == SM_ACT_LEAKYRELU ? 4
                                               : 3,
                     CK_ENTRIES(conv), 2, CONV_TOL(c / g * 9));
            for (int i = 0; i < 4; i++)
                sm_tensor_free(in[i]);
        }
    }
    /* residual without bias, 1x1 */
    CK_CHECK(SM_OP_FusedConv, 4,
             ((sm_tensor *[]){ck_rand(4, D(1, 8, 5, 5), 1),
                              ck_rand(4, D(16, 8, 1, 1), 2), NULL,
                              ck_rand(4, D(1, 16, 5, 5), 4)}),
             1, ATTRS(A_STR("activation", "relu")), CK_ENTRIES(conv), 2,
             CONV_TOL(8));
}

/* The path the instance's configure chose for this FusedConv node with
 * constant weights, and whether it prepacks them. */
static sm_cpu_algo chosen(const sm_cpu_kernel *k, sm_tensor **in, int n_in,
                          sm_tensor *y, const sm_attr *al, int n_al, int *packs)
{
    const sm_op_info *info = sm_op_info_get(SM_OP_FusedConv);
    sm_attrs at = {al, n_al, info->spec, info->n_spec};
    sm_kernel_operand ins[4], outs[1];
    sm_kernel_desc d;
    ck_desc(SM_OP_FusedConv, n_in, in, 1, &y, &at, 2, 1, ins, outs, &d);
    sm_cpu_config c;
    sm_cpu_kernel_configure(k, &d, &c);
    *packs = c.packs;
    return c.algo;
}

static int chose_winograd(const sm_cpu_kernel *k, sm_tensor **in, int n_in,
                          sm_tensor *y, const sm_attr *al, int n_al)
{
    int packs;
    return chosen(k, in, n_in, y, al, n_al, &packs) == SM_CPU_ALGO_WINOGRAD &&
           packs;
}

static int chose_pm(const sm_cpu_kernel *k, sm_tensor **in, int n_in,
                    sm_tensor *y, const sm_attr *al, int n_al)
{
    int packs;
    return chosen(k, in, n_in, y, al, n_al, &packs) == SM_CPU_ALGO_POS_MAJOR &&
           packs;
}

/* Winograd F(4x4, 3x3): output sizes that are not multiples of 4, pads
 * on one side only, two images, channel counts off the tile sizes, with
 * bias, residual and activation in the output transform's epilogue. */
static void test_conv_winograd(void **state)
{
    (void)state;
    struct {
        int64_t n, c, h, w, m, p0, p1;
    } cs[] = {{1, 16, 23, 29, 17, 1, 1},
              {2, 19, 18, 17, 24, 1, 0},
              {1, 64, 28, 28, 64, 1, 1},
              {1, 16, 30, 15, 33, 0, 2}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t oh = cs[i].h + cs[i].p0 + cs[i].p1 - 2;
        int64_t ow = cs[i].w + cs[i].p0 + cs[i].p1 - 2;
        sm_attr al[2] = {A_INTS("pads", cs[i].p0, cs[i].p0, cs[i].p1, cs[i].p1),
                         A_STR("activation", i & 1 ? "relu" : "silu")};
        sm_tensor *in[4] = {
            ck_rand(4, D(cs[i].n, cs[i].c, cs[i].h, cs[i].w), 1),
            ck_rand(4, D(cs[i].m, cs[i].c, 3, 3), 2), ck_rand(1, D(cs[i].m), 3),
            ck_rand(4, D(cs[i].n, cs[i].m, oh, ow), 4)};
        sm_tensor *y = nn_tensor(F32, 4, D(cs[i].n, cs[i].m, oh, ow), NULL);
        for (int e = 0; e < 3; e++)
            if (ck_have(CK_ENTRIES(conv)[e]))
                assert_true(
                    chose_winograd(CK_ENTRIES(conv)[e], in, 4, y, al, 2));
        sm_tensor_free(y);
        /* the transforms add a few ulps per stage: a K-scaled bound */
        ck_check(SM_OP_FusedConv, 4, in, 1, al, 2, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c * 9));
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
}

/* Position-major convolutions (few output positions, channels a multiple
 * of 32): 3x3 and 1x1, stride 2, two images, K across the KC block,
 * residual full and per channel, and enough channels that the threads
 * split only the columns and share one packed A (threshold 0 so that
 * these small products run threaded). */
static void test_conv_position_major(void **state)
{
    (void)state;
    double old = sm_gemm_set_parallel_threshold(0);
    struct {
        int64_t n, c, h, m, k, s, pad;
        int full_res;
    } cs[] = {{1, 40, 7, 64, 3, 1, 1, 1},   {2, 24, 14, 32, 3, 2, 1, 0},
              {1, 48, 7, 96, 1, 1, 0, 1},   {2, 20, 5, 64, 1, 1, 0, 0},
              {1, 72, 7, 64, 3, 1, 1, 0},   {1, 8, 7, 512, 3, 1, 1, 1},
              {1, 16, 13, 512, 3, 2, 1, 1}, {1, 9, 4, 32, 3, 1, 0, 1}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t o = (cs[i].h + 2 * cs[i].pad - cs[i].k) / cs[i].s + 1;
        int64_t n = cs[i].n, m = cs[i].m;
        sm_attr al[3] = {
            A_INTS("pads", cs[i].pad, cs[i].pad, cs[i].pad, cs[i].pad),
            A_INTS("strides", cs[i].s, cs[i].s),
            A_STR("activation", i & 1 ? "relu" : "none")};
        const int64_t *rd = cs[i].full_res ? D(n, m, o, o) : D(1, m, 1, 1);
        sm_tensor *in[4] = {ck_rand(4, D(n, cs[i].c, cs[i].h, cs[i].h), 1),
                            ck_rand(4, D(m, cs[i].c, cs[i].k, cs[i].k), 2),
                            ck_rand(1, D(m), 3), ck_rand(4, rd, 4)};
        sm_tensor *y = nn_tensor(F32, 4, D(n, m, o, o), NULL);
        for (int e = 0; e < 3; e++)
            if (ck_have(CK_ENTRIES(conv)[e]))
                assert_true(chose_pm(CK_ENTRIES(conv)[e], in, 4, y, al, 3));
        sm_tensor_free(y);
        ck_check(SM_OP_FusedConv, 4, in, 1, al, 3, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c * cs[i].k * cs[i].k));
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
    sm_gemm_set_parallel_threshold(old);
}

/* Direct convolution (few input channels, conv_direct.c): stems of 1
 * to 4 channels, 3x3 / 7x7 / 5x3 kernels, strides 1 and 2, one-sided and
 * uneven pads, dilation 2, channel counts off the block of 8, two images,
 * rows of outputs off the vector, activations in its store; no weights
 * packed ahead (it lays them out per run). */
static void test_conv_direct(void **state)
{
    (void)state;
    struct {
        int64_t n, c, h, w, m, kh, kw, s, pt, pl, pb, pr, d;
    } cs[] = {{1, 3, 40, 40, 32, 3, 3, 2, 1, 1, 1, 1, 1},
              {2, 3, 37, 41, 13, 7, 7, 2, 3, 3, 3, 3, 1},
              {1, 1, 20, 35, 8, 3, 3, 1, 1, 1, 1, 1, 1},
              {1, 4, 19, 50, 24, 5, 3, 1, 0, 2, 1, 0, 1},
              {1, 2, 30, 44, 9, 3, 3, 1, 2, 2, 2, 2, 2},
              {1, 3, 64, 70, 64, 3, 3, 2, 0, 0, 1, 1, 1}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t oh =
            (cs[i].h + cs[i].pt + cs[i].pb - cs[i].d * (cs[i].kh - 1) - 1) /
                cs[i].s +
            1;
        int64_t ow =
            (cs[i].w + cs[i].pl + cs[i].pr - cs[i].d * (cs[i].kw - 1) - 1) /
                cs[i].s +
            1;
        const char *act[] = {"relu6", "none", "silu"};
        sm_attr al[4] = {A_INTS("pads", cs[i].pt, cs[i].pl, cs[i].pb, cs[i].pr),
                         A_INTS("strides", cs[i].s, cs[i].s),
                         A_INTS("dilations", cs[i].d, cs[i].d),
                         A_STR("activation", act[i % 3])};
        sm_tensor *in[3] = {
            ck_rand(4, D(cs[i].n, cs[i].c, cs[i].h, cs[i].w), 1),
            ck_rand(4, D(cs[i].m, cs[i].c, cs[i].kh, cs[i].kw), 2),
            i == 2 ? NULL : ck_rand(1, D(cs[i].m), 3)};
        sm_tensor *y = nn_tensor(F32, 4, D(cs[i].n, cs[i].m, oh, ow), NULL);
        int packs;
        for (int e = 0; e < 3; e++) {
            if (!ck_have(CK_ENTRIES(conv)[e]))
                continue;
            assert_int_equal(
                chosen(CK_ENTRIES(conv)[e], in, 3, y, al, 4, &packs),
                SM_CPU_ALGO_DIRECT);
            assert_false(packs);
        }
        sm_tensor_free(y);
        ck_check(SM_OP_FusedConv, 3, in, 1, al, 4, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c * cs[i].kh * cs[i].kw));
        for (int j = 0; j < 3; j++)
            sm_tensor_free(in[j]);
    }
}

static void test_conv_refusals(void **state)
{
    (void)state;
    /* 1-D convolution and f64 go to the reference */
    sm_tensor *in[2] = {nn_tensor(F32, 3, D(1, 2, 5), NULL),
                        nn_tensor(F32, 3, D(3, 2, 3), NULL)};
    sm_tensor *out[1] = {nn_tensor(F32, 3, D(1, 3, 3), NULL)};
    assert_false(
        ck_supports(CK_K(conv, scalar), SM_OP_Conv, 2, in, 1, out, NO_ATTRS));
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
    in[0] = nn_tensor(F64, 4, D(1, 2, 5, 5), NULL);
    in[1] = nn_tensor(F64, 4, D(3, 2, 3, 3), NULL);
    out[0] = nn_tensor(F64, 4, D(1, 3, 3, 3), NULL);
    assert_false(
        ck_supports(CK_K(conv, scalar), SM_OP_Conv, 2, in, 1, out, NO_ATTRS));
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_odd_sizes),
        cmocka_unit_test(test_gemm_blocking_threads),
        cmocka_unit_test(test_gemm_epilogues),
        cmocka_unit_test(test_gemm_batch),
        cmocka_unit_test(test_gemm_errors),
        cmocka_unit_test(test_vmath_accuracy),
        cmocka_unit_test(test_lanes),
        cmocka_unit_test(test_matmul_op),
        cmocka_unit_test(test_gemm_op),
        cmocka_unit_test(test_fusedgemm_op),
        cmocka_unit_test(test_matmul_refusals),
        cmocka_unit_test(test_conv_op),
        cmocka_unit_test(test_conv_depthwise),
        cmocka_unit_test(test_conv_position_major),
        cmocka_unit_test(test_conv_direct),
        cmocka_unit_test(test_fusedconv_op),
        cmocka_unit_test(test_conv_winograd),
        cmocka_unit_test(test_conv_refusals),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
