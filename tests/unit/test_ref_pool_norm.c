/*
 * test_ref_pool_norm.c - shape functions, reference kernels and costs of
 * the pooling ops (MaxPool with Indices, AveragePool, the global pools)
 * and the normalizations (BatchNormalization, LayerNormalization, Softmax,
 * LogSoftmax). Expected values are computed by hand or from the defining
 * formula written out here.
 */
#include "nn_harness.h"

#define RUN(op, n_out, x, ...)                                                 \
    nn_ok(op, 1, (sm_tensor *[]){x}, n_out, ATTRS(__VA_ARGS__))
#define RUN0(op, x) nn_ok(op, 1, (sm_tensor *[]){x}, 1, NO_ATTRS)
#define KS(...) A_INTS("kernel_shape", __VA_ARGS__)
#define STRIDES(...) A_INTS("strides", __VA_ARGS__)
#define PADS(...) A_INTS("pads", __VA_ARGS__)

/* MaxPool 2x2 stride 2 over two images: values and flat Indices, which
 * count the batch and channel (ONNX, storage_order 0). */
static void test_maxpool_indices(void **state)
{
    (void)state;
    double v[32];
    for (int i = 0; i < 16; i++) {
        v[i] = (i * 7) % 16; /* a permutation of 0..15 */
        v[16 + i] = -v[i];
    }
    nn_result r = RUN(SM_OP_MaxPool, 2, nn_tensor(F32, 4, D(2, 1, 4, 4), v),
                      KS(2, 2), STRIDES(2, 2));
    nn_expect(r.out[0], 4, D(2, 1, 2, 2), V(12, 14, 15, 13, 0, -1, -4, -2), 0);
    assert_int_equal(r.out[1]->dtype, I64);
    nn_expect(r.out[1], 4, D(2, 1, 2, 2), V(4, 2, 9, 11, 16, 23, 28, 30), 0);
    /* 4 window elements for each of 8 outputs; Indices are written too */
    assert_true(r.cost.flops == 8 * 4);
    assert_true(r.cost.bytes_read == 32 * 4);
    assert_true(r.cost.bytes_write == 8 * 4 + 8 * 8);
    nn_free(&r);
}

/* 1-D MaxPool: ceil_mode, dilations, padding that never wins. */
static void test_maxpool_1d(void **state)
{
    (void)state;
#define X5 nn_tensor(F32, 3, D(1, 1, 5), V(1, 3, 2, 5, 4))
    nn_result r = RUN(SM_OP_MaxPool, 2, X5, KS(2), STRIDES(2));
    nn_expect(r.out[0], 3, D(1, 1, 2), V(3, 5), 0);
    nn_expect(r.out[1], 3, D(1, 1, 2), V(1, 3), 0);
    nn_free(&r);
    /* ceil_mode adds the partial window starting at 4 */
    r = RUN(SM_OP_MaxPool, 2, X5, KS(2), STRIDES(2), A_INT("ceil_mode", 1));
    nn_expect(r.out[0], 3, D(1, 1, 3), V(3, 5, 4), 0);
    nn_expect(r.out[1], 3, D(1, 1, 3), V(1, 3, 4), 0);
    nn_free(&r);
    /* ceil_mode's extra window would start in the end padding: dropped */
    r = RUN(SM_OP_MaxPool, 1, X5, KS(2), STRIDES(3), PADS(0, 1),
            A_INT("ceil_mode", 1));
    nn_expect(r.out[0], 3, D(1, 1, 2), V(3, 5), 0);
    nn_free(&r);
    r = RUN(SM_OP_MaxPool, 2,
            nn_tensor(F32, 3, D(1, 1, 7), V(1, 2, 3, 4, 5, 6, 7)), KS(2),
            A_INTS("dilations", 3));
    nn_expect(r.out[0], 3, D(1, 1, 4), V(4, 5, 6, 7), 0);
    nn_expect(r.out[1], 3, D(1, 1, 4), V(3, 4, 5, 6), 0);
    nn_free(&r);
    /* padding is -inf, not 0: negative inputs still win */
    r = RUN(SM_OP_MaxPool, 2, nn_tensor(F64, 3, D(1, 1, 3), V(-5, -3, -4)),
            KS(2), PADS(1, 1));
    nn_expect(r.out[0], 3, D(1, 1, 4), V(-5, -3, -3, -4), 0);
    nn_expect(r.out[1], 3, D(1, 1, 4), V(0, 1, 1, 2), 0);
    nn_free(&r);
    r = RUN(SM_OP_MaxPool, 1, nn_tensor(I8, 3, D(1, 1, 4), V(-100, 50, 3, -7)),
            KS(2), STRIDES(2));
    assert_int_equal(r.out[0]->dtype, I8);
    nn_expect(r.out[0], 3, D(1, 1, 2), V(50, 3), 0);
    nn_free(&r);
    /* NaN propagates (as in PyTorch) */
    r = RUN(SM_OP_MaxPool, 2, nn_tensor(F32, 3, D(1, 1, 3), V(1, NAN, 3)),
            KS(3));
    assert_true(isnan(nn_at(r.out[0], 0)));
    assert_true(nn_at(r.out[1], 0) == 1);
    nn_free(&r);
}

/* storage_order 1 gives column-major indices within each plane. */
static void test_maxpool_storage_order(void **state)
{
    (void)state;
#define X23 nn_tensor(F32, 4, D(1, 1, 2, 3), V(1, 6, 9, 3, 4, 2))
    nn_result r = RUN(SM_OP_MaxPool, 2, X23, KS(2, 2));
    nn_expect(r.out[0], 4, D(1, 1, 1, 2), V(6, 9), 0);
    nn_expect(r.out[1], 4, D(1, 1, 1, 2), V(1, 2), 0);
    nn_free(&r);
    r = RUN(SM_OP_MaxPool, 2, X23, KS(2, 2), A_INT("storage_order", 1));
    nn_expect(r.out[1], 4, D(1, 1, 1, 2), V(2, 4), 0);
    nn_free(&r);
}

/* AveragePool: padding counts toward the divisor only with
 * count_include_pad; positions past the padded extent never do. */
static void test_averagepool(void **state)
{
    (void)state;
#define X4 nn_tensor(F32, 3, D(1, 1, 4), V(1, 2, 3, 4))
    nn_result r = RUN(SM_OP_AveragePool, 1, X4, KS(3), PADS(1, 1));
    nn_expect(r.out[0], 3, D(1, 1, 4), V(1.5, 2, 3, 3.5), 1e-7);
    nn_free(&r);
    r = RUN(SM_OP_AveragePool, 1, X4, KS(3), PADS(1, 1),
            A_INT("count_include_pad", 1));
    nn_expect(r.out[0], 3, D(1, 1, 4), V(1, 2, 3, 7.0 / 3), 1e-7);
    nn_free(&r);
    /* in 6, k 3, stride 2, pads 1, ceil_mode: 4 windows, the last starting
     * at 5 covers 5 (input), 6 (end pad) and 7 (beyond: never counted) */
#define X6 nn_tensor(F64, 3, D(1, 1, 6), V(1, 2, 3, 4, 5, 6))
    r = RUN(SM_OP_AveragePool, 1, X6, KS(3), STRIDES(2), PADS(1, 1),
            A_INT("ceil_mode", 1), A_INT("count_include_pad", 1));
    nn_expect(r.out[0], 3, D(1, 1, 4), V(1, 3, 5, 3), 1e-12);
    nn_free(&r);
    r = RUN(SM_OP_AveragePool, 1, X6, KS(3), STRIDES(2), PADS(1, 1),
            A_INT("ceil_mode", 1));
    nn_expect(r.out[0], 3, D(1, 1, 4), V(1.5, 3, 5, 6), 1e-12);
    nn_free(&r);
    r = RUN(SM_OP_AveragePool, 1,
            nn_tensor(F32, 3, D(1, 1, 7), V(1, 2, 3, 4, 5, 6, 7)), KS(2),
            STRIDES(3), A_INT("ceil_mode", 1), A_INT("count_include_pad", 1));
    nn_expect(r.out[0], 3, D(1, 1, 3), V(1.5, 4.5, 7), 1e-7);
    nn_free(&r);
}

static void test_averagepool_2d(void **state)
{
    (void)state;
#define X9 nn_tensor(F16, 4, D(1, 1, 3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9))
    nn_result r = RUN(SM_OP_AveragePool, 1, X9, KS(2, 2));
    assert_int_equal(r.out[0]->dtype, F16);
    nn_expect(r.out[0], 4, D(1, 1, 2, 2), V(3, 4, 6, 7), 0);
    nn_free(&r);
    r = RUN(SM_OP_AveragePool, 1, X9, KS(2, 2), A_INTS("dilations", 2, 2));
    nn_expect(r.out[0], 4, D(1, 1, 1, 1), V(5), 0);
    nn_free(&r);
    /* SAME_UPPER, stride 2 on 3x3: out 2x2, pads 0 before and 1 after */
    r = RUN(SM_OP_AveragePool, 1, X9, KS(2, 2), STRIDES(2, 2),
            A_STR("auto_pad", "SAME_UPPER"));
    nn_expect(r.out[0], 4, D(1, 1, 2, 2), V(3, 4.5, 7.5, 9), 0);
    nn_free(&r);
}

static void test_global_pools(void **state)
{
    (void)state;
#define XG nn_tensor(F32, 4, D(1, 2, 2, 2), V(1, 2, 3, 4, -1, -5, 0, 2))
    nn_result r = RUN0(SM_OP_GlobalAveragePool, XG);
    nn_expect(r.out[0], 4, D(1, 2, 1, 1), V(2.5, -1), 0);
    assert_true(r.cost.flops == 2 * 4);
    nn_free(&r);
    r = RUN0(SM_OP_GlobalMaxPool, XG);
    nn_expect(r.out[0], 4, D(1, 2, 1, 1), V(4, 2), 0);
    nn_free(&r);
    r = RUN0(SM_OP_GlobalMaxPool,
             nn_tensor(F64, 3, D(2, 1, 3), V(1, 7, 2, -3, -2, -9)));
    nn_expect(r.out[0], 3, D(2, 1, 1), V(7, -2), 0);
    nn_free(&r);
}

static void test_pool_errors(void **state)
{
    (void)state;
#define POOL_FAIL(op, x, st, words, ...)                                       \
    nn_fail(op, 1, (sm_tensor *[]){x}, 1, ATTRS(__VA_ARGS__), st, words)
    POOL_FAIL(SM_OP_MaxPool, X5, SMELT_ERR_SHAPE, "MaxPool|kernel_shape",
              STRIDES(1));
    POOL_FAIL(SM_OP_MaxPool, X9, SMELT_ERR_SHAPE, "MaxPool|rank 4|1 values",
              KS(2));
    POOL_FAIL(SM_OP_MaxPool, X5, SMELT_ERR_SHAPE,
              "MaxPool|pads 2 and 0|kernel_shape[0] = 2", KS(2), PADS(2, 0));
    POOL_FAIL(SM_OP_MaxPool, X5, SMELT_ERR_SHAPE, "MaxPool|strides|2 values",
              KS(2), STRIDES(1, 1));
    POOL_FAIL(SM_OP_MaxPool, X5, SMELT_ERR_SHAPE, "MaxPool|input size 5|6",
              KS(6));
    POOL_FAIL(SM_OP_MaxPool, X5, SMELT_ERR_INVALID_ARG,
              "MaxPool|storage_order = 2", KS(2), A_INT("storage_order", 2));
    POOL_FAIL(SM_OP_AveragePool, nn_tensor(I8, 3, D(1, 1, 4), NULL),
              SMELT_ERR_TYPE, "AveragePool|i8", KS(2));
    POOL_FAIL(SM_OP_MaxPool, nn_tensor(I32, 3, D(1, 1, 4), NULL),
              SMELT_ERR_TYPE, "MaxPool|i32", KS(2));
    nn_fail(SM_OP_GlobalAveragePool, 1,
            (sm_tensor *[]){nn_tensor(F32, 1, D(4), NULL)}, 1, NO_ATTRS,
            SMELT_ERR_SHAPE, "GlobalAveragePool|rank");
}

static void test_pool_symbolic(void **state)
{
    (void)state;
    sm_type x = nn_type(F32, "batch,3,?,8"), y[2];
    const sm_type *in[1] = {&x};
    assert_int_equal(nn_shape(SM_OP_MaxPool, 1, in, 2, y,
                              ATTRS(KS(2, 2), STRIDES(2, 2)), NULL),
                     SMELT_OK);
    nn_type_is(&y[0], "f32[batch,3,?,4]");
    nn_type_is(&y[1], "i64[batch,3,?,4]");
    x = nn_type(F32, "*");
    assert_int_equal(
        nn_shape(SM_OP_AveragePool, 1, in, 1, y, ATTRS(KS(2, 2)), NULL),
        SMELT_OK);
    nn_type_is(&y[0], "f32[?,?,?,?]");
    x = nn_type(F32, "b,c,h,w");
    assert_int_equal(nn_shape(SM_OP_GlobalMaxPool, 1, in, 1, y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y[0], "f32[b,c,1,1]");
    assert_int_equal(nn_shape(SM_OP_MaxPool, 1, in, 1, y,
                              ATTRS(KS(3, 3), A_STR("auto_pad", "SAME_LOWER")),
                              NULL),
                     SMELT_OK);
    nn_type_is(&y[0], "f32[b,c,h,w]");
}

/* ---- normalization ------------------------------------------------------ */

#define BN(x, sc, b, m, v, ...)                                                \
    nn_ok(SM_OP_BatchNormalization, 5, (sm_tensor *[]){x, sc, b, m, v}, 1,     \
          ATTRS(__VA_ARGS__))
#define P2(a, b) nn_tensor(F32, 1, D(2), V(a, b))

static void test_batchnorm(void **state)
{
    (void)state;
    /* x [1, 2, 2]: channel 0 holds 1, 2; channel 1 holds 3, 4 */
    nn_result r = BN(nn_tensor(F32, 3, D(1, 2, 2), V(1, 2, 3, 4)), P2(2, 0.5),
                     P2(1, -1), P2(1.5, 3), P2(0.25, 4), A_FLOAT("epsilon", 0));
    nn_expect(r.out[0], 3, D(1, 2, 2), V(-1, 3, -1, -0.75), 1e-7);
    nn_free(&r);
    const double eps = 1e-5; /* the default */
    r = BN(nn_tensor(F64, 2, D(2, 2), V(1, 2, 3, 4)), P2(1, 1), P2(0, 0),
           P2(0, 0), P2(1, 1), A_INT("training_mode", 0));
    double s = 1 / sqrt(1 + eps);
    nn_expect(r.out[0], 2, D(2, 2), V(s, 2 * s, 3 * s, 4 * s), 1e-12);
    assert_true(r.cost.flops == 5 * 4);
    nn_free(&r);
    /* a 1-D input is one channel */
    r = nn_ok(SM_OP_BatchNormalization, 5,
              (sm_tensor *[]){
                  nn_tensor(F32, 1, D(3), V(1, 2, 3)),
                  nn_tensor(F32, 1, D(1), V(2)), nn_tensor(F32, 1, D(1), V(1)),
                  nn_tensor(F32, 1, D(1), V(2)), nn_tensor(F32, 1, D(1), V(1))},
              1, ATTRS(A_FLOAT("epsilon", 0)));
    nn_expect(r.out[0], 1, D(3), V(-1, 1, 3), 0);
    nn_free(&r);
}

/* Training mode (ONNX conformance test_batchnorm_*_training_mode): the
 * batch's own mean and population variance normalize, and the running
 * statistics move towards them by 1 - momentum. */
static void test_batchnorm_training(void **state)
{
    (void)state;
    /* x [N=2, C=2]: channel 0 holds 1, 3 (mean 2, var 1); channel 1 holds
     * 2, 6 (mean 4, var 4) */
#define BN_TRAIN_X nn_tensor(F32, 2, D(2, 2), V(1, 2, 3, 6))
    nn_result r = nn_ok(
        SM_OP_BatchNormalization, 5,
        (sm_tensor *[]){BN_TRAIN_X, P2(1, 0.5), P2(0, 1), P2(0, 10), P2(1, 2)},
        3,
        ATTRS(A_INT("training_mode", 1), A_FLOAT("epsilon", 0),
              A_FLOAT("momentum", 0.5)));
    nn_expect(r.out[0], 2, D(2, 2), V(-1, 0.5, 1, 1.5), 1e-7);
    nn_expect(r.out[1], 1, D(2), V(1, 7), 1e-7);
    nn_expect(r.out[2], 1, D(2), V(1, 3), 1e-7);
    nn_free(&r);
    /* default momentum 0.9; Y alone */
    r = nn_ok(
        SM_OP_BatchNormalization, 5,
        (sm_tensor *[]){BN_TRAIN_X, P2(1, 1), P2(0, 0), P2(0, 10), P2(1, 2)}, 2,
        ATTRS(A_INT("training_mode", 1), A_FLOAT("epsilon", 0)));
    nn_expect(r.out[0], 2, D(2, 2), V(-1, -1, 1, 1), 1e-7);
    nn_expect(r.out[1], 1, D(2), V(0.2, 9.4), 1e-6);
    nn_free(&r);
    r = nn_ok(
        SM_OP_BatchNormalization, 5,
        (sm_tensor *[]){BN_TRAIN_X, P2(1, 1), P2(0, 0), P2(0, 10), P2(1, 2)}, 1,
        ATTRS(A_INT("training_mode", 1), A_FLOAT("epsilon", 0)));
    nn_expect(r.out[0], 2, D(2, 2), V(-1, -1, 1, 1), 1e-7);
    nn_free(&r);
}

static void test_batchnorm_errors(void **state)
{
    (void)state;
#define BN_IN                                                                  \
    (sm_tensor *[]){nn_tensor(F32, 3, D(1, 2, 2), NULL), P2(1, 1), P2(0, 0),   \
                    P2(0, 0), P2(1, 1)}
    nn_fail(SM_OP_BatchNormalization, 5, BN_IN, 3, NO_ATTRS,
            SMELT_ERR_INVALID_ARG, "BatchNormalization|running_mean|3");
    nn_fail(SM_OP_BatchNormalization, 5,
            (sm_tensor *[]){nn_tensor(F32, 3, D(1, 2, 2), NULL),
                            nn_tensor(F32, 1, D(3), NULL), P2(0, 0), P2(0, 0),
                            P2(1, 1)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "BatchNormalization|input 1|C = 2|3");
    nn_fail(SM_OP_BatchNormalization, 5,
            (sm_tensor *[]){nn_tensor(I32, 3, D(1, 2, 2), NULL), P2(1, 1),
                            P2(0, 0), P2(0, 0), P2(1, 1)},
            1, NO_ATTRS, SMELT_ERR_TYPE, "BatchNormalization|i32");
}

/* LayerNorm over the last dim, with B and both statistics outputs. */
static void test_layernorm_last(void **state)
{
    (void)state;
    const double x[6] = {1, 2, 3, 4, 6, 8}, sc[3] = {1, 2, 0.5};
    const double b[3] = {0, 1, -1};
    const double mean[2] = {2, 6}, var[2] = {2.0 / 3, 8.0 / 3}, eps = 1e-5;
    double want[6], inv[2];
    for (int r = 0; r < 2; r++) {
        inv[r] = 1 / sqrt(var[r] + eps);
        for (int j = 0; j < 3; j++)
            want[r * 3 + j] = (x[r * 3 + j] - mean[r]) * inv[r] * sc[j] + b[j];
    }
    nn_result r = nn_ok(SM_OP_LayerNormalization, 3,
                        (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), x),
                                        nn_tensor(F32, 1, D(3), sc),
                                        nn_tensor(F32, 1, D(3), b)},
                        3, NO_ATTRS);
    nn_expect(r.out[0], 2, D(2, 3), want, 1e-6);
    assert_int_equal(r.out[1]->dtype, F32);
    nn_expect(r.out[1], 2, D(2, 1), mean, 1e-7);
    nn_expect(r.out[2], 2, D(2, 1), inv, 1e-6);
    assert_true(r.cost.flops == 5 * 6);
    assert_true(r.cost.bytes_read == (6 + 3 + 3) * 4);
    assert_true(r.cost.bytes_write == (6 + 2 + 2) * 4);
    nn_free(&r);
}

/* LayerNorm over the last two dims (axis = 1 of rank 3), no B. */
static void test_layernorm_last_two(void **state)
{
    (void)state;
    const double x[8] = {1, 2, 3, 4, 0, 0, 0, 8}, sc[4] = {1, -1, 2, 0};
    const double mean[2] = {2.5, 2}, var[2] = {1.25, 12}, eps = 1e-3;
    double want[8], means[2];
    for (int r = 0; r < 2; r++) {
        means[r] = mean[r];
        for (int j = 0; j < 4; j++)
            want[r * 4 + j] =
                (x[r * 4 + j] - mean[r]) / sqrt(var[r] + eps) * sc[j];
    }
    for (int axis = -2; axis <= 1; axis += 3) {
        nn_result r = nn_ok(SM_OP_LayerNormalization, 2,
                            (sm_tensor *[]){nn_tensor(F64, 3, D(2, 2, 2), x),
                                            nn_tensor(F64, 2, D(2, 2), sc)},
                            2,
                            ATTRS(A_INT("axis", axis), A_FLOAT("epsilon", eps),
                                  A_INT("stash_type", 11)));
        nn_expect(r.out[0], 3, D(2, 2, 2), want, 1e-12);
        assert_int_equal(r.out[1]->dtype, F64);
        nn_expect(r.out[1], 3, D(2, 1, 1), means, 1e-12);
        nn_free(&r);
    }
}

static void test_layernorm_errors(void **state)
{
    (void)state;
#define LN_FAIL(x, sc, st, words, ...)                                         \
    nn_fail(SM_OP_LayerNormalization, 2, (sm_tensor *[]){x, sc}, 1,            \
            ATTRS(__VA_ARGS__), st, words)
    LN_FAIL(nn_tensor(F32, 2, D(2, 3), NULL), nn_tensor(F32, 1, D(3), NULL),
            SMELT_ERR_SHAPE, "LayerNormalization|axis 2|rank 2",
            A_INT("axis", 2));
    LN_FAIL(nn_tensor(F32, 2, D(2, 3), NULL), nn_tensor(F32, 1, D(4), NULL),
            SMELT_ERR_SHAPE, "LayerNormalization|input 1|f32[4]|f32[2,3]",
            A_INT("axis", -1));
    LN_FAIL(nn_tensor(F32, 2, D(2, 3), NULL), nn_tensor(F64, 1, D(3), NULL),
            SMELT_ERR_TYPE, "LayerNormalization|f32|f64", A_INT("axis", -1));
    LN_FAIL(nn_tensor(F32, 2, D(2, 3), NULL), nn_tensor(F32, 1, D(3), NULL),
            SMELT_ERR_INVALID_ARG, "LayerNormalization|stash_type 7",
            A_INT("stash_type", 7));
}

static void test_layernorm_symbolic(void **state)
{
    (void)state;
    sm_type x = nn_type(F16, "batch,seq,64"), sc = nn_type(F16, "64"), y[3];
    assert_int_equal(nn_shape(SM_OP_LayerNormalization, 2,
                              (const sm_type *[]){&x, &sc}, 3, y, NO_ATTRS,
                              NULL),
                     SMELT_OK);
    nn_type_is(&y[0], "f16[batch,seq,64]");
    nn_type_is(&y[1], "f32[batch,seq,1]");
    nn_type_is(&y[2], "f32[batch,seq,1]");
}

/* Softmax along the last axis of huge values: no overflow. */
static void test_softmax_large(void **state)
{
    (void)state;
    const double e1 = exp(-1), e2 = exp(-2), sum = 1 + e1 + e2;
    nn_result r =
        RUN(SM_OP_Softmax, 1,
            nn_tensor(F32, 2, D(2, 3), V(1000, 1001, 1002, -1000, 0, 1000)),
            A_INT("axis", -1));
    nn_expect(r.out[0], 2, D(2, 3), V(e2 / sum, e1 / sum, 1 / sum, 0, 0, 1),
              1e-6);
    nn_free(&r);
    r = RUN(SM_OP_LogSoftmax, 1,
            nn_tensor(F64, 2, D(1, 3), V(1000, 1001, 1002)), A_INT("axis", -1));
    nn_expect(r.out[0], 2, D(1, 3), V(-2 - log(sum), -1 - log(sum), -log(sum)),
              1e-12);
    nn_free(&r);
    /* the default axis is -1 */
    r = RUN0(SM_OP_Softmax, nn_tensor(F16, 1, D(2), V(3, 3)));
    nn_expect(r.out[0], 1, D(2), V(0.5, 0.5), 0);
    nn_free(&r);
}

/* Softmax along axis 0, and along the middle axis of a rank-3 tensor. */
static void test_softmax_axes(void **state)
{
    (void)state;
    const double e = exp(1);
    nn_result r =
        RUN(SM_OP_Softmax, 1, nn_tensor(F64, 2, D(2, 3), V(1, 2, 3, 1, 4, 1)),
            A_INT("axis", 0));
    double a = 1 / (1 + e * e), c = e * e / (1 + e * e);
    nn_expect(r.out[0], 2, D(2, 3), V(0.5, a, c, 0.5, 1 - a, 1 - c), 1e-12);
    nn_free(&r);
    /* x [2, 3, 2], axis 1: each (i, k) column of 3 values is normalized */
    double x[12], want[12];
    for (int i = 0; i < 12; i++)
        x[i] = (i * 5) % 7 - 3;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            double s = 0;
            for (int j = 0; j < 3; j++)
                s += exp(x[(i * 3 + j) * 2 + k]);
            for (int j = 0; j < 3; j++)
                want[(i * 3 + j) * 2 + k] =
                    log(exp(x[(i * 3 + j) * 2 + k]) / s);
        }
    r = RUN(SM_OP_LogSoftmax, 1, nn_tensor(F64, 3, D(2, 3, 2), x),
            A_INT("axis", 1));
    nn_expect(r.out[0], 3, D(2, 3, 2), want, 1e-12);
    nn_free(&r);
    nn_fail(SM_OP_Softmax, 1, (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), NULL)},
            1, ATTRS(A_INT("axis", 2)), SMELT_ERR_SHAPE, "Softmax|axis 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maxpool_indices),
        cmocka_unit_test(test_maxpool_1d),
        cmocka_unit_test(test_maxpool_storage_order),
        cmocka_unit_test(test_averagepool),
        cmocka_unit_test(test_averagepool_2d),
        cmocka_unit_test(test_global_pools),
        cmocka_unit_test(test_pool_errors),
        cmocka_unit_test(test_pool_symbolic),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_batchnorm_training),
        cmocka_unit_test(test_batchnorm_errors),
        cmocka_unit_test(test_layernorm_last),
        cmocka_unit_test(test_layernorm_last_two),
        cmocka_unit_test(test_layernorm_errors),
        cmocka_unit_test(test_layernorm_symbolic),
        cmocka_unit_test(test_softmax_large),
        cmocka_unit_test(test_softmax_axes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
