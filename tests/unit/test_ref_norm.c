/*
 * test_ref_norm.c - shape functions, reference kernels and costs of the
 * normalizations (BatchNormalization, LayerNormalization, Softmax,
 * LogSoftmax). Expected values are computed by hand or from the defining
 * formula written out here.
 */
#include "nn_harness.h"

#define RUN(op, n_out, x, ...)                                                 \
    nn_ok(op, 1, (sm_tensor *[]){x}, n_out, ATTRS(__VA_ARGS__))
#define RUN0(op, x) nn_ok(op, 1, (sm_tensor *[]){x}, 1, NO_ATTRS)

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
