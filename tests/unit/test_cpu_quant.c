/*
 * test_cpu_quant.c - the int8 GEMM (kernels/cpu/quant_gemm.h) on every
 * int8 micro-kernel this CPU has, bit-exactly against a plain int64
 * computation: odd shapes and depths, u8 and s8 on either side, zero
 * points per tensor, per row and per column, narrow and full-range
 * weights (the AVX2 kernel's two paths), every output kind, 1-3
 * threads. Then MatMulInteger and QLinearMatMul through their registry
 * instances against the reference kernels (kernels/cpu/quant.c), with
 * run-time and prepacked constant weights, and what they refuse; the
 * same for FusedQMatMul (kernels/cpu/quant_fused.c), f32 A quantized
 * per call included.
 */
#include "cpu_harness.h"

#include "core/act.h"
#include "kernels/cpu/quant_gemm.h"

#define U8 SMELT_DTYPE_U8

static const sm_q8_isa *const isas[] = {&sm_q8_isa_avx512vnni,
                                        &sm_q8_isa_avxvnni, &sm_q8_isa_avx2,
                                        &sm_q8_isa_scalar};
static const unsigned isa_need[] = {SM_CPU_ISA_AVX512 | SM_CPU_AVX512VNNI,
                                    SM_CPU_ISA_AVX2 | SM_CPU_AVXVNNI,
                                    SM_CPU_ISA_AVX2, 0};

/* Reproducible bytes: lo..hi inclusive. */
static void fill(int8_t *p, int64_t n, int lo, int hi, unsigned seed)
{
    unsigned x = seed * 2654435761u + 99u;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (int8_t)(lo + (int)((x >> 12) % (unsigned)(hi - lo + 1)));
    }
}

/* The byte at p[i] as a value of dtype dt (u8 or s8). */
static int64_t q_at(smelt_dtype dt, const void *p, int64_t i)
{
    return dt == U8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* One product on every ISA against the int64 computation. wide: B's
 * full range (else [-64, 63]); zmode 0 none, 1 per tensor, 2 per row /
 * column; kind the output. */
static void check_gemm(int64_t M, int64_t K, int64_t N, smelt_dtype adt,
                       smelt_dtype bdt, int wide, int zmode,
                       sm_q8_out_kind kind, unsigned seed)
{
    int8_t *A = malloc((size_t)(M * K)), *B = malloc((size_t)(K * N));
    int32_t *za = malloc(sizeof(int32_t) * (size_t)M);
    int32_t *zb = malloc(sizeof(int32_t) * (size_t)N);
    float *sa = malloc(sizeof(float) * (size_t)M);
    float *sb = malloc(sizeof(float) * (size_t)N);
    float *bias = malloc(sizeof(float) * (size_t)N);
    int64_t *want = malloc(sizeof(int64_t) * (size_t)(M * N));
    /* bytes over the full range: u8 0..255 or s8 -128..127 */
    fill(A, M * K, -128, 127, seed);
    if (wide) {
        fill(B, K * N, -128, 127, seed + 1);
    } else { /* s8 in [-64, 63]; u8 in [64, 191], stored minus 128 */
        fill(B, K * N, -64, 63, seed + 1);
        for (int64_t i = 0; bdt == U8 && i < K * N; i++)
            B[i] = (int8_t)(uint8_t)(B[i] + 128);
    }
    for (int64_t i = 0; i < M; i++) {
        za[i] = zmode
                    ? (int32_t)((adt == U8 ? 100 : -20) + (zmode == 2) * i % 7)
                    : 0;
        sa[i] = 0.01f + 0.001f * (float)(i % 5);
    }
    for (int64_t j = 0; j < N; j++) {
        zb[j] =
            zmode ? (int32_t)((bdt == U8 ? 120 : 3) + (zmode == 2) * j % 5) : 0;
        sb[j] = 0.02f + 0.0005f * (float)(j % 9);
        bias[j] = (float)(j % 7) - 3.0f;
    }
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (q_at(adt, A, i * K + k) - za[i]) *
                     (q_at(bdt, B, k * N + j) - zb[j]);
            want[i * N + j] = s;
        }
    sm_q8_epi e = sm_q8_epi_i32();
    e.kind = kind;
    if (zmode) {
        e.za = (sm_q8_vec){za, I32, zmode == 2 ? M : 1};
        e.zb = (sm_q8_vec){zb, I32, zmode == 2 ? N : 1};
    }
    e.sa = (sm_q8_vec){sa, F32, M};
    e.sb = (sm_q8_vec){sb, F32, N};
    e.bias = (sm_q8_vec){bias, F32, N};
    e.act = SM_ACT_RELU;
    e.sy = 0.05;
    e.zy = 10;
    e.ydt = U8;
    for (size_t s = 0; s < N_OF(isas); s++) {
        if ((sm_cpu_detect() & isa_need[s]) != isa_need[s])
            continue;
        const sm_q8_isa *isa = isas[s];
        size_t pb = sm_q8_pack_b_bytes(isa, K, N);
        void *bmem = aligned_alloc(64, (pb + 63) & ~(size_t)63);
        sm_q8_b *bp = sm_q8_pack_b(isa, B, bdt, N, 1, K, N, bmem);
        if (!wide)
            assert_true(bp->narrow);
        size_t wb = sm_q8_gemm_workspace(isa, M, K, N, 0);
        void *ws = aligned_alloc(64, (wb + 63) & ~(size_t)63);
        for (int p = 0; p < 3; p++) {
            size_t esz = kind == SM_Q8_OUT_Q8 ? 1 : 4;
            void *c = malloc(esz * (size_t)(M * N));
            memset(c, 0xa5, esz * (size_t)(M * N));
            sm_q8_gemm(isa, M, A, adt, K, bp, &e, c, N, 1, ws, ck_pools[p]);
            for (int64_t i = 0; i < M * N; i++) {
                int64_t r = i / N, j = i % N;
                int32_t acc = (int32_t)want[i];
                if (kind == SM_Q8_OUT_I32) {
                    if (((int32_t *)c)[i] != acc)
                        fail_msg("%s %lldx%lldx%lld el %lld: got %d want %d",
                                 isa->name, (long long)M, (long long)K,
                                 (long long)N, (long long)i, ((int32_t *)c)[i],
                                 acc);
                } else if (kind == SM_Q8_OUT_F32) {
                    float v =
                        (float)acc * (float)((double)sa[r] * sb[j]) + bias[j];
                    v = v > 0 ? v : 0;
                    assert_true(((float *)c)[i] == v);
                } else {
                    double v = ((double)acc + bias[j]) *
                               ((double)sa[r] * sb[j] / 0.05);
                    double q = nearbyint(v) + 10;
                    q = q < 0 ? 0 : q > 255 ? 255 : q;
                    assert_int_equal(((uint8_t *)c)[i], (int)q);
                }
            }
            free(c);
        }
        free(ws);
        free(bmem);
    }
    free(A);
    free(B);
    free(za);
    free(zb);
    free(sa);
    free(sb);
    free(bias);
    free(want);
}

/* Odd sizes around every tile and group edge, all operand dtypes, zero
 * point modes and both weight ranges. */
static void test_q8_gemm_exact(void **state)
{
    (void)state;
    static const int64_t sz[][3] = {{1, 1, 1},     {1, 4, 1},   {3, 5, 7},
                                    {8, 17, 32},   {9, 33, 33}, {13, 3, 65},
                                    {17, 130, 15}, {70, 64, 40}};
    unsigned seed = 1;
    for (int s = 0; s < N_OF(sz); s++)
        for (int adt = 0; adt < 2; adt++)
            for (int bdt = 0; bdt < 2; bdt++)
                for (int wide = 0; wide < 2; wide++)
                    check_gemm(sz[s][0], sz[s][1], sz[s][2], adt ? I8 : U8,
                               bdt ? I8 : U8, wide, (adt + bdt + wide) % 3,
                               SM_Q8_OUT_I32, seed++);
}

/* The extreme operands that saturate vpmaddubsw: 255 x -128 pairs. */
static void test_q8_gemm_saturating(void **state)
{
    (void)state;
    for (int s = 0; s < N_OF(isas); s++) {
        if ((sm_cpu_detect() & isa_need[s]) != isa_need[s])
            continue;
        const sm_q8_isa *isa = isas[s];
        int64_t M = 5, K = 37, N = 19;
        uint8_t A[5 * 37];
        int8_t B[37 * 19];
        memset(A, 255, sizeof A);
        memset(B, 0x80, sizeof B);
        size_t pb = sm_q8_pack_b_bytes(isa, K, N);
        void *bmem = aligned_alloc(64, (pb + 63) & ~(size_t)63);
        sm_q8_b *bp = sm_q8_pack_b(isa, B, I8, N, 1, K, N, bmem);
        assert_false(bp->narrow);
        size_t wb = sm_q8_gemm_workspace(isa, M, K, N, 0);
        void *ws = aligned_alloc(64, (wb + 63) & ~(size_t)63);
        int32_t c[5 * 19];
        sm_q8_epi e = sm_q8_epi_i32();
        sm_q8_gemm(isa, M, A, U8, K, bp, &e, c, N, 1, ws, NULL);
        for (int i = 0; i < 5 * 19; i++)
            assert_int_equal(c[i], 255 * -128 * 37);
        free(ws);
        free(bmem);
    }
}

/* The float and requantizing epilogues. */
static void test_q8_gemm_epilogues(void **state)
{
    (void)state;
    check_gemm(11, 29, 37, U8, I8, 1, 2, SM_Q8_OUT_F32, 7);
    check_gemm(11, 29, 37, I8, U8, 0, 1, SM_Q8_OUT_F32, 8);
    check_gemm(11, 29, 37, U8, I8, 1, 2, SM_Q8_OUT_Q8, 9);
    check_gemm(3, 300, 70, U8, I8, 0, 1, SM_Q8_OUT_Q8, 10);
}

/* ---- the registry instances ------------------------------------------- */

#define Q8_ENTRIES(name)                                                       \
    ((const sm_cpu_kernel *const[]){ck_kernel(#name "_i8_avx512vnni"),         \
                                    ck_kernel(#name "_i8_avxvnni"),            \
                                    ck_kernel(#name "_i8_avx2")})
#define Q8_SCALAR(name)                                                        \
    ((const sm_cpu_kernel *const[]){ck_kernel(#name "_i8_scalar"), NULL, NULL})

/* A tensor of random bytes of dtype dt (u8 or s8). */
static sm_tensor *q_rand(smelt_dtype dt, int ndim, const int64_t *dims,
                         unsigned seed)
{
    sm_tensor *t = nn_tensor(dt, ndim, dims, NULL);
    fill(t->data, t->numel, -128, 127, seed);
    return t;
}

static sm_tensor *f_scalar(double v)
{
    return nn_tensor(F32, 0, NULL, V(v));
}

static void mmi_case(int nd, const int64_t *ad, int64_t N, smelt_dtype adt,
                     smelt_dtype bdt, int zmode, unsigned seed)
{
    int64_t K = ad[nd - 1], rows = nd > 1 ? ad[nd - 2] : 1;
    for (int e = 0; e < 2; e++) {
        sm_tensor *in[4] = {q_rand(adt, nd, ad, seed),
                            q_rand(bdt, 2, D(K, N), seed + 1), NULL, NULL};
        if (zmode == 1) {
            in[2] = q_rand(adt, 0, NULL, seed + 2);
            in[3] = q_rand(bdt, 0, NULL, seed + 3);
        } else if (zmode == 2) {
            in[2] = q_rand(adt, 1, D(rows), seed + 2);
            in[3] = q_rand(bdt, 1, D(N), seed + 3);
        }
        CK_CHECK(SM_OP_MatMulInteger, 4, in, 1, NO_ATTRS,
                 e ? Q8_SCALAR(qmatmul) : Q8_ENTRIES(qmatmul), 2u, 0, 0);
    }
}

static void test_matmulinteger(void **state)
{
    (void)state;
    mmi_case(2, D(1, 1), 1, U8, I8, 0, 1);
    mmi_case(2, D(7, 13), 21, U8, I8, 1, 2);
    mmi_case(2, D(9, 64), 33, U8, U8, 2, 3);
    mmi_case(3, D(2, 5, 19), 40, I8, I8, 2, 4);
    mmi_case(1, D(23), 17, I8, U8, 1, 5);
    mmi_case(4, D(2, 3, 4, 9), 70, U8, I8, 2, 6);
}

static void qlm_case(int64_t M, int64_t K, int64_t N, smelt_dtype adt,
                     smelt_dtype bdt, smelt_dtype ydt, int per_col,
                     unsigned seed)
{
    for (int e = 0; e < 2; e++) {
        sm_tensor *sb =
            per_col ? nn_tensor(F32, 1, D(N), NULL) : f_scalar(0.03);
        for (int64_t j = 0; per_col && j < N; j++)
            ((float *)sb->data)[j] = 0.01f + 0.002f * (float)(j % 11);
        sm_tensor *in[8] = {q_rand(adt, 2, D(M, K), seed),
                            f_scalar(0.02),
                            q_rand(adt, 0, NULL, seed + 2),
                            q_rand(bdt, 2, D(K, N), seed + 1),
                            sb,
                            per_col ? q_rand(bdt, 1, D(N), seed + 3)
                                    : q_rand(bdt, 0, NULL, seed + 3),
                            f_scalar(0.9),
                            q_rand(ydt, 0, NULL, seed + 4)};
        CK_CHECK(SM_OP_QLinearMatMul, 8, in, 1, NO_ATTRS,
                 e ? Q8_SCALAR(qmatmul) : Q8_ENTRIES(qmatmul), 8u, 0, 0);
    }
}

static void test_qlinearmatmul(void **state)
{
    (void)state;
    qlm_case(1, 1, 1, U8, I8, U8, 0, 1);
    qlm_case(6, 31, 45, U8, I8, U8, 1, 2);
    qlm_case(17, 64, 16, I8, I8, I8, 1, 3);
    qlm_case(8, 100, 33, U8, U8, I8, 0, 4);
}

/* One ConvInteger case on every instance against the reference: x
 * [N, C, H, W] of dtype xdt, w [M, C, kh, kw] of wdt, zero points per
 * tensor (x) and per channel (w) when zp. */
static void qconv_case(const int64_t *xd, const int64_t *wd, smelt_dtype xdt,
                       smelt_dtype wdt, int zp, const sm_attr *al, int n_al,
                       unsigned seed)
{
    for (int e = 0; e < 2; e++) {
        sm_tensor *in[4] = {q_rand(xdt, 4, xd, seed),
                            q_rand(wdt, 4, wd, seed + 1),
                            zp ? q_rand(xdt, 0, NULL, seed + 2) : NULL,
                            zp ? q_rand(wdt, 1, D(wd[0]), seed + 3) : NULL};
        CK_CHECK(SM_OP_ConvInteger, 4, in, 1, al, n_al,
                 e ? Q8_SCALAR(qconv) : Q8_ENTRIES(qconv), 2u, 0, 0);
    }
}

static void test_convinteger(void **state)
{
    (void)state;
    qconv_case(D(1, 1, 5, 5), D(2, 1, 3, 3), U8, I8, 0, NO_ATTRS, 1);
    qconv_case(D(2, 3, 7, 6), D(5, 3, 3, 3), U8, I8, 1,
               ATTRS(A_INTS("pads", 1, 1, 1, 1)), 2);
    qconv_case(D(1, 4, 9, 8), D(7, 4, 3, 2), I8, U8, 1,
               ATTRS(A_INTS("pads", 2, 0, 1, 1), A_INTS("strides", 2, 3),
                     A_INTS("dilations", 1, 2)),
               3);
    qconv_case(D(1, 17, 4, 4), D(33, 17, 1, 1), U8, U8, 1, NO_ATTRS, 4);
    /* the channels-last paths: a kernel row inside the image copied as
     * one run, rows and taps in the padding, a direct 1x1, a 1x1 with a
     * stride, layouts large enough to split over the threads */
    qconv_case(D(1, 19, 23, 21), D(37, 19, 3, 3), U8, I8, 1,
               ATTRS(A_INTS("pads", 1, 1, 1, 1)), 5);
    qconv_case(D(1, 3, 29, 31), D(9, 3, 7, 7), U8, I8, 1,
               ATTRS(A_INTS("pads", 3, 3, 3, 3), A_INTS("strides", 2, 2)), 6);
    qconv_case(D(2, 67, 13, 11), D(35, 67, 1, 1), I8, I8, 1, NO_ATTRS, 7);
    qconv_case(D(1, 33, 15, 17), D(20, 33, 1, 1), U8, I8, 1,
               ATTRS(A_INTS("strides", 2, 2)), 8);
    qconv_case(D(1, 5, 40, 41), D(6, 5, 3, 5), U8, U8, 0,
               ATTRS(A_INTS("pads", 0, 2, 1, 0), A_INTS("dilations", 2, 1)), 9);
}

/* One QLinearConv case on every instance against the reference, bit
 * for bit: x [N, C, H, W] of xdt, w [M, C, kh, kw] of wdt, w's scale
 * and zero point per channel (per_ch) or per tensor, an i32 bias when
 * bias, y of ydt. */
static void qlconv_case(const int64_t *xd, const int64_t *wd, smelt_dtype xdt,
                        smelt_dtype wdt, smelt_dtype ydt, int per_ch, int bias,
                        const sm_attr *al, int n_al, unsigned seed)
{
    int64_t M = wd[0];
    for (int e = 0; e < 2; e++) {
        sm_tensor *sw = per_ch ? nn_tensor(F32, 1, D(M), NULL) : f_scalar(0.02);
        for (int64_t j = 0; per_ch && j < M; j++)
            ((float *)sw->data)[j] = 0.005f + 0.003f * (float)(j % 7);
        sm_tensor *b = NULL;
        if (bias) {
            b = nn_tensor(SMELT_DTYPE_I32, 1, D(M), NULL);
            for (int64_t j = 0; j < M; j++)
                ((int32_t *)b->data)[j] = (int32_t)((j * 7919) % 4001) - 2000;
        }
        sm_tensor *in[9] = {q_rand(xdt, 4, xd, seed),
                            f_scalar(0.03),
                            q_rand(xdt, 0, NULL, seed + 2),
                            q_rand(wdt, 4, wd, seed + 1),
                            sw,
                            per_ch ? q_rand(wdt, 1, D(M), seed + 3)
                                   : q_rand(wdt, 0, NULL, seed + 3),
                            f_scalar(0.7),
                            q_rand(ydt, 0, NULL, seed + 4),
                            b};
        CK_CHECK(SM_OP_QLinearConv, bias ? 9 : 8, in, 1, al, n_al,
                 e ? Q8_SCALAR(qconv) : Q8_ENTRIES(qconv), 8u, 0, 0);
    }
}

static void test_qlinearconv(void **state)
{
    (void)state;
    qlconv_case(D(1, 1, 5, 5), D(2, 1, 3, 3), U8, I8, U8, 0, 0, NO_ATTRS, 1);
    qlconv_case(D(2, 3, 7, 6), D(5, 3, 3, 3), U8, I8, U8, 1, 1,
                ATTRS(A_INTS("pads", 1, 1, 1, 1)), 2);
    qlconv_case(D(1, 4, 9, 8), D(7, 4, 3, 2), I8, U8, I8, 1, 1,
                ATTRS(A_INTS("pads", 2, 0, 1, 1), A_INTS("strides", 2, 3),
                      A_INTS("dilations", 1, 2)),
                3);
    qlconv_case(D(1, 17, 4, 4), D(33, 17, 1, 1), U8, U8, I8, 1, 0, NO_ATTRS, 4);
    qlconv_case(D(1, 21, 19, 18), D(34, 21, 3, 3), U8, I8, U8, 1, 1,
                ATTRS(A_INTS("pads", 1, 1, 1, 1)), 5);
    qlconv_case(D(2, 40, 9, 7), D(17, 40, 1, 1), I8, I8, I8, 0, 1, NO_ATTRS, 6);
}

/* Pattern c (0..7) of the dynamic quantization's edge inputs in x:
 * random, all negative, all zero, one NaN, quotients exactly on halves
 * (scale 1 and 2: ties to even, where x * (1 / scale) must give way to
 * the division), just off the halves, a tiny range (1 / scale large). */
static void dq_pattern(sm_tensor *x, int c)
{
    float *p = x->data;
    for (int64_t i = 0; i < x->numel; i++) {
        if (c == 1)
            p[i] = -fabsf(p[i]) * 3;
        if (c == 2)
            p[i] = 0;
        if (c == 3 && i % 1000 == 5)
            p[i] = NAN;
        if (c == 4) /* scale 1: x = k + 0.5 ties */
            p[i] = i == 0 ? 255.0f : (float)(i % 255) + 0.5f;
        if (c == 5) /* scale 2, zero point 64: odd x are ties */
            p[i] = i == 0   ? 382.0f
                   : i == 1 ? -128.0f
                            : (float)(i % 300) - 127.0f;
        if (c == 6) /* just off the halves */
            p[i] = i == 0 ? 255.0f
                          : nextafterf((float)(i % 255) + 0.5f,
                                       i % 2 ? 1e9f : -1e9f);
        if (c == 7)
            p[i] *= 1e-30f;
    }
}

/* DynamicQuantizeLinear against the reference, bit for bit, on every
 * pattern of dq_pattern, on every int8 instance (each ISA's vector passes
 * and the scalar one), small and split over the threads. */
static void test_dynamicquantizelinear(void **state)
{
    (void)state;
    for (int c = 0; c < 8; c++)
        for (int big = 0; big < 2; big++)
            for (int e = 0; e < 2; e++) {
                /* 3 x 9001: several chunks, split over the threads */
                sm_tensor *x =
                    ck_rand(2, big ? D(3, 9001) : D(7, 19), (unsigned)c + 1);
                dq_pattern(x, c);
                sm_tensor *in[1] = {x};
                CK_CHECK(SM_OP_DynamicQuantizeLinear, 1, in, 3, NO_ATTRS,
                         e ? Q8_SCALAR(dql) : Q8_ENTRIES(dql), 0u, 0, 0);
            }
}

/* Cast i32 -> f32 against the reference, values past 2^24 included
 * (rounded to the nearest f32), over several 64 Ki-element tasks. */
static void test_cast_i32(void **state)
{
    (void)state;
    sm_tensor *x = nn_tensor(I32, 2, D(3, 70001), NULL);
    int32_t *p = x->data;
    unsigned r = 5;
    for (int64_t i = 0; i < x->numel; i++) {
        r = r * 1103515245u + 12345u;
        p[i] = (int32_t)r;
    }
    p[0] = INT32_MIN;
    p[1] = INT32_MAX;
    p[2] = (1 << 24) + 1;
    sm_tensor *in[1] = {x};
    CK_CHECK(SM_OP_Cast, 1, in, 1, ATTRS(A_INT("to", 1)), CK_ONE(cast_i32), 0u,
             0, 0);
}

/* Shapes and dtypes the int8 kernel leaves to the reference. */
static void test_refusals(void **state)
{
    (void)state;
    const sm_cpu_kernel *k = ck_kernel("qmatmul_i8_scalar");
    /* B batched */
    sm_tensor *in[4] = {q_rand(U8, 3, D(2, 3, 4), 1),
                        q_rand(I8, 3, D(2, 4, 5), 2), NULL, NULL};
    sm_tensor *out[1] = {nn_tensor(I32, 3, D(2, 3, 5), NULL)};
    assert_false(ck_supports(k, SM_OP_MatMulInteger, 4, in, 1, out, NO_ATTRS));
    sm_tensor_free(in[1]);
    /* a zero point of the wrong length */
    in[1] = q_rand(I8, 2, D(4, 5), 2);
    in[3] = q_rand(I8, 1, D(3), 3);
    assert_false(ck_supports(k, SM_OP_MatMulInteger, 4, in, 1, out, NO_ATTRS));
    sm_tensor_free(in[3]);
    in[3] = q_rand(I8, 1, D(5), 3);
    assert_true(ck_supports(k, SM_OP_MatMulInteger, 4, in, 1, out, NO_ATTRS));
    for (int i = 0; i < 4; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

/* Scales known only at run time are checked when the node runs: a
 * negative weight scale or a zero output scale is an error naming the
 * op, on every instance and in the reference. */
static void test_bad_scales(void **state)
{
    (void)state;
    static const double bad_b[] = {-0.1, NAN, 0.05}, bad_y[] = {0.9, 0.9, 0};
    for (int c = 0; c < 3; c++) {
        sm_tensor *in[8] = {
            q_rand(U8, 2, D(3, 5), 1), f_scalar(0.02),
            q_rand(U8, 0, NULL, 2),    q_rand(I8, 2, D(5, 4), 3),
            f_scalar(bad_b[c]),        q_rand(I8, 0, NULL, 4),
            f_scalar(bad_y[c]),        q_rand(U8, 0, NULL, 5)};
        const sm_op_info *info = sm_op_info_get(SM_OP_QLinearMatMul);
        sm_attrs at = {NULL, 0, info->spec, info->n_spec};
        sm_tensor *out[1] = {nn_tensor(U8, 2, D(3, 4), NULL)};
        const char *names[] = {"qmatmul_i8_avx512vnni", "qmatmul_i8_avxvnni",
                               "qmatmul_i8_avx2", "qmatmul_i8_scalar"};
        for (int e = 0; e < 4; e++) {
            const sm_cpu_kernel *k = ck_kernel(names[e]);
            if (!ck_have(k))
                continue;
            sm_kernel_operand ins[8], outs[1];
            sm_kernel_desc d;
            ck_desc(SM_OP_QLinearMatMul, 8, in, 1, out, &at, 0, 1, ins, outs,
                    &d);
            sm_cpu_config cfg;
            sm_cpu_kernel_configure(k, &d, &cfg);
            void *ws = aligned_alloc(64, (cfg.ws_bytes + 63) & ~(size_t)63);
            smelt_ctx_t *ctx = smelt_ctx_init();
            sm_kargs ka = {.op_name = "QLinearMatMul",
                           .attrs = at,
                           .n_in = 8,
                           .in = in,
                           .n_out = 1,
                           .out = out,
                           .ctx = ctx,
                           .workspace = ws,
                           .workspace_bytes = cfg.ws_bytes};
            assert_int_equal(sm_cpu_kernel_run(k, &ka, &cfg, NULL, NULL),
                             SMELT_ERR_INVALID_ARG);
            assert_non_null(
                strstr(smelt_ctx_error(ctx), "QLinearMatMul: scale"));
            if (e == 3) { /* and the reference */
                assert_int_equal(sm_ref_qlinearmatmul(&ka),
                                 SMELT_ERR_INVALID_ARG);
                assert_non_null(
                    strstr(smelt_ctx_error(ctx), "a scale must be positive"));
            }
            smelt_ctx_free(ctx);
            free(ws);
        }
        for (int i = 0; i < 8; i++)
            sm_tensor_free(in[i]);
        sm_tensor_free(out[0]);
    }
}

/* ---- FusedQMatMul ------------------------------------------------------- */

/*
 * One FusedQMatMul case on every instance against the reference: A of
 * rank nd and dims ad (f32, quantized per call, or u8 / s8 with a scale
 * and zero point), B [K, N] of bdt; per_col: B's scale and zero point
 * per column, else per tensor; bias: a per-column bias; act: the
 * activation ("none", "relu" or "gelu"); res: a residual of the result's
 * shape. The integer sums, the scale product and the bias and residual
 * sums are bit-exact (tolerance 0); gelu runs on the
 * vector function of the f32 table (1e-5).
 */
static void qfmm_case(int nd, const int64_t *ad, int64_t N, smelt_dtype adt,
                      smelt_dtype bdt, int per_col, int bias, const char *act,
                      int res, unsigned seed)
{
    int64_t K = ad[nd - 1];
    double tol = strcmp(act, "gelu") ? 0 : 1e-5;
    for (int e = 0; e < 2; e++) {
        sm_tensor *in[8] = {NULL};
        in[0] = adt == F32 ? ck_rand(nd, ad, seed) : q_rand(adt, nd, ad, seed);
        in[1] = q_rand(bdt, 2, D(K, N), seed + 1);
        if (per_col) {
            in[2] = nn_tensor(F32, 1, D(N), NULL);
            for (int64_t j = 0; j < N; j++)
                ((float *)in[2]->data)[j] = 0.01f + 0.003f * (float)(j % 13);
            in[3] = q_rand(bdt, 1, D(N), seed + 3);
        } else {
            in[2] = f_scalar(0.037);
            in[3] = bdt == U8 ? q_rand(bdt, 0, NULL, seed + 3) : NULL;
        }
        if (bias)
            in[4] = ck_rand(1, D(N), seed + 4);
        if (adt != F32) {
            in[5] = f_scalar(0.021);
            in[6] = q_rand(adt, 0, NULL, seed + 5);
        }
        if (res) {
            int64_t yd[4];
            memcpy(yd, ad, (size_t)nd * sizeof *yd);
            yd[nd - 1] = N;
            in[7] = ck_rand(nd, yd, seed + 6);
        }
        int n_in = res ? 8 : adt != F32 ? 7 : bias ? 5 : 4;
        CK_CHECK(SM_OP_FusedQMatMul, n_in, in, 1,
                 ATTRS(A_STR("activation", act)),
                 e ? Q8_SCALAR(qfmm) : Q8_ENTRIES(qfmm), 2u, tol, tol);
    }
}

static void test_fusedqmatmul(void **state)
{
    (void)state;
    qfmm_case(2, D(1, 1), 1, F32, I8, 0, 0, "none", 0, 1);
    qfmm_case(2, D(7, 13), 21, F32, I8, 1, 1, "none", 0, 2);
    qfmm_case(3, D(2, 5, 19), 40, F32, I8, 1, 1, "relu", 0, 3);
    qfmm_case(2, D(9, 64), 33, F32, U8, 1, 0, "none", 0, 4);
    qfmm_case(2, D(17, 100), 70, F32, I8, 0, 1, "gelu", 0, 5);
    qfmm_case(1, D(23), 17, U8, I8, 1, 1, "none", 0, 6);
    qfmm_case(2, D(6, 31), 45, U8, U8, 1, 1, "relu", 0, 7);
    qfmm_case(4, D(2, 3, 4, 9), 70, I8, I8, 0, 0, "none", 0, 8);
    qfmm_case(2, D(65, 257), 3, I8, U8, 1, 1, "none", 0, 9);
    /* an f32 A split by rows (up to 64 per thread: odd bands, several
     * column panels, a short last panel) and, past 64 rows a thread,
     * quantized over the threads then split by columns */
    qfmm_case(2, D(64, 40), 70, F32, I8, 0, 1, "gelu", 0, 10);
    qfmm_case(3, D(3, 21, 29), 77, F32, I8, 1, 1, "relu", 0, 11);
    qfmm_case(2, D(131, 37), 45, F32, U8, 1, 1, "gelu", 0, 12);
    qfmm_case(2, D(200, 96), 33, F32, I8, 0, 0, "none", 0, 13);
    /* a residual: after the bias, before the activation; the row split
     * (64 rows, 2 threads), the column split (200 rows), a u8 A, no bias */
    qfmm_case(3, D(2, 32, 40), 70, F32, I8, 1, 1, "none", 1, 14);
    qfmm_case(2, D(17, 100), 70, F32, I8, 0, 1, "gelu", 1, 15);
    qfmm_case(2, D(200, 96), 33, F32, U8, 1, 0, "relu", 1, 16);
    qfmm_case(2, D(6, 31), 45, U8, I8, 1, 1, "none", 1, 17);
}

/* The dynamic quantization's edge inputs (dq_pattern) through
 * FusedQMatMul on every instance, bit for bit: a small A (vector body
 * and tail) and one of 16680 elements (three chunks, split over the
 * threads). */
static void test_fusedqmatmul_edges(void **state)
{
    (void)state;
    static const int64_t shapes[2][2] = {{7, 19}, {40, 417}};
    for (int sh = 0; sh < 2; sh++)
        for (int c = 0; c < 8; c++) {
            int64_t M = shapes[sh][0], K = shapes[sh][1];
            sm_tensor *in[5] = {ck_rand(2, D(M, K), (unsigned)c + 20),
                                q_rand(I8, 2, D(K, 9), (unsigned)c + 30),
                                f_scalar(0.05), NULL,
                                ck_rand(1, D(9), (unsigned)c + 40)};
            dq_pattern(in[0], c);
            CK_CHECK(SM_OP_FusedQMatMul, 5, in, 1, NO_ATTRS, Q8_ENTRIES(qfmm),
                     2u, 0, 0);
        }
}

/* A negative or NaN B scale: the kernel and the reference refuse it,
 * naming the op. */
static void test_fusedqmatmul_bad_scale(void **state)
{
    (void)state;
    static const double bad[] = {-0.1, NAN, INFINITY};
    for (int c = 0; c < 3; c++) {
        sm_tensor *in[3] = {ck_rand(2, D(3, 5), 1), q_rand(I8, 2, D(5, 4), 2),
                            f_scalar(bad[c])};
        const sm_op_info *info = sm_op_info_get(SM_OP_FusedQMatMul);
        sm_attrs at = {NULL, 0, info->spec, info->n_spec};
        sm_tensor *out[1] = {nn_tensor(F32, 2, D(3, 4), NULL)};
        const char *names[] = {"qfmm_i8_avx512vnni", "qfmm_i8_avxvnni",
                               "qfmm_i8_avx2", "qfmm_i8_scalar"};
        for (int e = 0; e < 4; e++) {
            const sm_cpu_kernel *k = ck_kernel(names[e]);
            if (!ck_have(k))
                continue;
            sm_kernel_operand ins[8], outs[1];
            sm_kernel_desc d;
            ck_desc(SM_OP_FusedQMatMul, 3, in, 1, out, &at, 0, 1, ins, outs,
                    &d);
            sm_cpu_config cfg;
            sm_cpu_kernel_configure(k, &d, &cfg);
            void *ws = aligned_alloc(64, (cfg.ws_bytes + 63) & ~(size_t)63);
            smelt_ctx_t *ctx = smelt_ctx_init();
            sm_kargs ka = {.op_name = "FusedQMatMul",
                           .attrs = at,
                           .n_in = 3,
                           .in = in,
                           .n_out = 1,
                           .out = out,
                           .ctx = ctx,
                           .workspace = ws,
                           .workspace_bytes = cfg.ws_bytes};
            assert_int_equal(sm_cpu_kernel_run(k, &ka, &cfg, NULL, NULL),
                             SMELT_ERR_INVALID_ARG);
            assert_non_null(
                strstr(smelt_ctx_error(ctx), "FusedQMatMul: scale"));
            if (e == 3) {
                assert_int_equal(sm_ref_fusedqmatmul(&ka),
                                 SMELT_ERR_INVALID_ARG);
                assert_non_null(
                    strstr(smelt_ctx_error(ctx), "a scale must be positive"));
            }
            smelt_ctx_free(ctx);
            free(ws);
        }
        for (int i = 0; i < 3; i++)
            sm_tensor_free(in[i]);
        sm_tensor_free(out[0]);
    }
}

/* A residual not of the result's shape: refused by every instance's
 * analysis, an error naming the op in the reference kernel, and a shape
 * error when a graph states it. */
static void test_fusedqmatmul_bad_residual(void **state)
{
    (void)state;
    sm_tensor *in[8] = {ck_rand(2, D(3, 5), 1),
                        q_rand(I8, 2, D(5, 4), 2),
                        f_scalar(0.01),
                        NULL,
                        NULL,
                        NULL,
                        NULL,
                        ck_rand(2, D(1, 4), 3)};
    sm_tensor *out[1] = {nn_tensor(F32, 2, D(3, 4), NULL)};
    const sm_op_info *info = sm_op_info_get(SM_OP_FusedQMatMul);
    sm_attrs at = {NULL, 0, info->spec, info->n_spec};
    const char *names[] = {"qfmm_i8_avx512vnni", "qfmm_i8_avxvnni",
                           "qfmm_i8_avx2", "qfmm_i8_scalar"};
    for (int e = 0; e < 4; e++) {
        const sm_cpu_kernel *k = ck_kernel(names[e]);
        if (ck_have(k))
            assert_false(
                ck_supports(k, SM_OP_FusedQMatMul, 8, in, 1, out, NO_ATTRS));
    }
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_kargs ka = {.op_name = "FusedQMatMul",
                   .attrs = at,
                   .n_in = 8,
                   .in = in,
                   .n_out = 1,
                   .out = out,
                   .ctx = ctx};
    assert_int_equal(sm_ref_fusedqmatmul(&ka), SMELT_ERR_RUNTIME);
    assert_non_null(strstr(smelt_ctx_error(ctx), "FusedQMatMul: the residual"));
    const char *text = "graph t(%x: f32[3,5], %r: f32[1,4]) {\n"
                       "  %b: i8[5,4] = const [1, -2, 3, -4, 5, -6, 7, -8, "
                       "9, -10, 11, -12, 13, -14, 15, -16, 17, -18, 19, -20]\n"
                       "  %s: f32[] = const 0.01\n"
                       "  %y = FusedQMatMul(%x, %b, %s, _, _, _, _, %r)\n"
                       "  return %y\n"
                       "}\n";
    smelt_graph_t *g = NULL;
    smelt_status st = smelt_graph_parse(ctx, text, strlen(text), "t.ir", &g);
    if (st == SMELT_OK) {
        st = smelt_graph_infer(ctx, g);
        smelt_graph_free(g);
    }
    assert_int_equal(st, SMELT_ERR_SHAPE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "the residual (input 7)"));
    smelt_ctx_free(ctx);
    for (int i = 0; i < 8; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

/* The int8 kernel a plan of a FusedQMatMul compiled for isa level
 * `level` (SMELT_ISA) chose, into name. */
static void planned_kernel(const char *level, char *name, size_t size)
{
    const char *text = "graph t(%x: f32[3,5]) {\n"
                       "  %b: i8[5,4] = const [1, -2, 3, -4, 5, -6, 7, -8, "
                       "9, -10, 11, -12, 13, -14, 15, -16, 17, -18, 19, -20]\n"
                       "  %s: f32[] = const 0.01\n"
                       "  %y: f32[3,4] = FusedQMatMul(%x, %b, %s)\n"
                       "  return %y\n"
                       "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text), "t.ir", &g),
                     SMELT_OK);
    setenv("SMELT_ISA", level, 1);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    smelt_plan_t *p = NULL;
    smelt_status st = smelt_plan_compile(ctx, g, &o, &p);
    unsetenv("SMELT_ISA");
    if (st != SMELT_OK)
        fail_msg("compile for %s: %s", level, smelt_ctx_error(ctx));
    name[0] = 0;
    for (int i = 0; i < smelt_plan_num_steps(p); i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
        if (!strcmp(si.op, "FusedQMatMul"))
            snprintf(name, size, "%s", si.kernel);
    }
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The plan picks the widest int8 kernel of each ISA level the CPU has:
 * avx512 the zmm VNNI one, else the ymm one; avx2 the ymm VNNI one
 * (AVX-VNNI) where the CPU has it, else vpmaddubsw; scalar the C one.
 * The int8 ISAs this CPU lacks are named as skipped (the tests above run
 * every instance the CPU has, and skip the others silently). */
static void test_isa_selection(void **state)
{
    (void)state;
    unsigned f = sm_cpu_detect();
    for (size_t s = 0; s < N_OF(isas); s++)
        if ((f & isa_need[s]) != isa_need[s])
            print_message("int8 kernel %s: skipped, this CPU lacks it\n",
                          isas[s]->name);
        else
            print_message("int8 kernel %s: tested\n", isas[s]->name);
    int vnni512 = (f & isa_need[0]) == isa_need[0];
    int vnni256 = (f & isa_need[1]) == isa_need[1];
    int avx2 = (f & isa_need[2]) == isa_need[2];
    const char *want2 = vnni256 ? "qfmm_i8_avxvnni"
                        : avx2  ? "qfmm_i8_avx2"
                                : "qfmm_i8_scalar";
    const char *want512 = vnni512 ? "qfmm_i8_avx512vnni" : want2;
    const struct {
        const char *level, *want;
    } cases[] = {
        {"scalar", "qfmm_i8_scalar"}, {"avx2", want2}, {"avx512", want512}};
    for (size_t i = 0; i < N_OF(cases); i++) {
        char got[64];
        planned_kernel(cases[i].level, got, sizeof got);
        print_message("--isa %s plans %s\n", cases[i].level, got);
        if (strcmp(got, cases[i].want))
            fail_msg("--isa %s planned %s, expected %s", cases[i].level, got,
                     cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_q8_gemm_exact),
        cmocka_unit_test(test_q8_gemm_saturating),
        cmocka_unit_test(test_q8_gemm_epilogues),
        cmocka_unit_test(test_matmulinteger),
        cmocka_unit_test(test_qlinearmatmul),
        cmocka_unit_test(test_convinteger),
        cmocka_unit_test(test_qlinearconv),
        cmocka_unit_test(test_dynamicquantizelinear),
        cmocka_unit_test(test_cast_i32),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_bad_scales),
        cmocka_unit_test(test_fusedqmatmul),
        cmocka_unit_test(test_fusedqmatmul_edges),
        cmocka_unit_test(test_fusedqmatmul_bad_scale),
        cmocka_unit_test(test_fusedqmatmul_bad_residual),
        cmocka_unit_test(test_isa_selection),
    };
    sm_q8_set_parallel_threshold(0);
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
