/*
 * test_ref_pool.c - shape functions, reference kernels and costs of the
 * pooling ops (MaxPool with Indices, AveragePool, the global pools).
 * Expected values are computed by hand or from the defining formula
 * written out here.
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
