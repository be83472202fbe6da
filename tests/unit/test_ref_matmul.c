/*
 * test_ref_matmul.c - shape functions, reference kernels and costs of
 * MatMul and Gemm. Expected values are computed by hand, or for larger
 * cases by a naive loop written out here with explicit indices.
 */
#include "nn_harness.h"

#define MM(a, b) nn_ok(SM_OP_MatMul, 2, (sm_tensor *[]){a, b}, 1, NO_ATTRS)

static void test_matmul_2d(void **state)
{
    (void)state;
    nn_result r = MM(nn_tensor(F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
                     nn_tensor(F32, 2, D(3, 2), V(7, 8, 9, 10, 11, 12)));
    nn_expect(r.out[0], 2, D(2, 2), V(58, 64, 139, 154), 0);
    /* flops 2*M*N*K, bytes of A and B read, Y written */
    assert_true(r.cost.flops == 2 * 2 * 2 * 3);
    assert_true(r.cost.bytes_read == (6 + 6) * 4);
    assert_true(r.cost.bytes_write == 4 * 4);
    nn_free(&r);
}

/* 1-D operands are promoted (row for A, column for B) and the added dim
 * dropped. */
static void test_matmul_1d(void **state)
{
    (void)state;
    nn_result r = MM(nn_tensor(F64, 1, D(3), V(1, 2, 3)),
                     nn_tensor(F64, 2, D(3, 2), V(7, 8, 9, 10, 11, 12)));
    nn_expect(r.out[0], 1, D(2), V(58, 64), 0);
    nn_free(&r);
    r = MM(nn_tensor(F64, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
           nn_tensor(F64, 1, D(3), V(1, 1, 1)));
    nn_expect(r.out[0], 1, D(2), V(6, 15), 0);
    nn_free(&r);
    r = MM(nn_tensor(F64, 1, D(3), V(1, 2, 3)),
           nn_tensor(F64, 1, D(3), V(4, 5, 6)));
    nn_expect(r.out[0], 0, NULL, V(32), 0);
    nn_free(&r);
    /* [3] x [2, 3, 2]: the vector multiplies each batch matrix */
    r = MM(
        nn_tensor(F32, 1, D(3), V(1, 0, -1)),
        nn_tensor(F32, 3, D(2, 3, 2), V(1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 9, 7)));
    nn_expect(r.out[0], 2, D(2, 2), V(-4, -4, -9, -6), 0);
    nn_free(&r);
}

/* [2,1,3,4] x [5,4,2] -> [2,5,3,2], checked against explicit loops. */
static void test_matmul_batch_broadcast(void **state)
{
    (void)state;
    sm_tensor *a = nn_pattern(F32, 4, D(2, 1, 3, 4), 1);
    sm_tensor *b = nn_pattern(F32, 3, D(5, 4, 2), 2);
    double want[2 * 5 * 3 * 2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 5; j++)
            for (int m = 0; m < 3; m++)
                for (int n = 0; n < 2; n++) {
                    double acc = 0;
                    for (int k = 0; k < 4; k++)
                        acc += nn_at(a, (i * 3 + m) * 4 + k) *
                               nn_at(b, (j * 4 + k) * 2 + n);
                    want[((i * 5 + j) * 3 + m) * 2 + n] = acc;
                }
    nn_result r = MM(a, b);
    nn_expect(r.out[0], 4, D(2, 5, 3, 2), want, 1e-6);
    assert_true(r.cost.flops == 2.0 * 60 * 4);
    nn_free(&r);
}

/* Integers accumulate exactly in int64, beyond what a double holds. */
static void test_matmul_int(void **state)
{
    (void)state;
    sm_tensor *a = nn_tensor(I64, 2, D(1, 2), NULL);
    sm_tensor *b = nn_tensor(I64, 2, D(2, 1), NULL);
    ((int64_t *)a->data)[0] = 3000000000;
    ((int64_t *)a->data)[1] = 1;
    ((int64_t *)b->data)[0] = 3000000000;
    ((int64_t *)b->data)[1] = 7;
    nn_result r = MM(a, b);
    assert_int_equal(r.out[0]->dtype, I64);
    assert_true(((int64_t *)r.out[0]->data)[0] == 9000000000000000007LL);
    nn_free(&r);
    r = MM(nn_tensor(I32, 2, D(2, 2), V(1, -2, 3, 4)),
           nn_tensor(I32, 2, D(2, 2), V(5, 6, 7, -8)));
    assert_int_equal(r.out[0]->dtype, I32);
    nn_expect(r.out[0], 2, D(2, 2), V(-9, 22, 43, -14), 0);
    nn_free(&r);
}

/* Half precisions compute in double and round once on store. */
static void test_matmul_half(void **state)
{
    (void)state;
    smelt_dtype dts[2] = {F16, BF16};
    for (int i = 0; i < 2; i++) {
        nn_result r = MM(nn_tensor(dts[i], 2, D(1, 3), V(0.5, 1.5, -2)),
                         nn_tensor(dts[i], 2, D(3, 1), V(4, 2, 0.25)));
        assert_int_equal(r.out[0]->dtype, dts[i]);
        nn_expect(r.out[0], 2, D(1, 1), V(4.5), 0);
        nn_free(&r);
    }
}

static void test_matmul_errors(void **state)
{
    (void)state;
    nn_fail(SM_OP_MatMul, 2,
            (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), NULL),
                            nn_tensor(F32, 2, D(4, 5), NULL)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "MatMul|inner|f32[2,3]|f32[4,5]|3|4");
    nn_fail(SM_OP_MatMul, 2,
            (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), NULL),
                            nn_tensor(F64, 2, D(3, 5), NULL)},
            1, NO_ATTRS, SMELT_ERR_TYPE, "MatMul|f32|f64");
    nn_fail(SM_OP_MatMul, 2,
            (sm_tensor *[]){nn_tensor(BOOL, 2, D(2, 3), NULL),
                            nn_tensor(BOOL, 2, D(3, 5), NULL)},
            1, NO_ATTRS, SMELT_ERR_TYPE, "MatMul|bool");
    nn_fail(SM_OP_MatMul, 2,
            (sm_tensor *[]){nn_tensor(F32, 0, NULL, NULL),
                            nn_tensor(F32, 1, D(3), NULL)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "MatMul|rank");
    nn_fail(SM_OP_MatMul, 2,
            (sm_tensor *[]){nn_tensor(F32, 3, D(2, 3, 4), NULL),
                            nn_tensor(F32, 3, D(3, 4, 5), NULL)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "MatMul|broadcast|2|3");
}

/* Symbolic and unknown dims during graph inference. */
static void test_matmul_symbolic(void **state)
{
    (void)state;
    sm_type a = nn_type(F32, "batch,?,4"), b = nn_type(F32, "4,5"), y;
    assert_int_equal(nn_shape(SM_OP_MatMul, 2, (const sm_type *[]){&a, &b}, 1,
                              &y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[batch,?,5]");
    a = nn_type(F32, "batch,1,3,k");
    b = nn_type(F32, "7,k,2");
    assert_int_equal(nn_shape(SM_OP_MatMul, 2, (const sm_type *[]){&a, &b}, 1,
                              &y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[batch,7,3,2]");
    a = nn_type(F32, "*");
    assert_int_equal(nn_shape(SM_OP_MatMul, 2, (const sm_type *[]){&a, &b}, 1,
                              &y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[*]");
    a = nn_type(SMELT_DTYPE_UNDEFINED, "n,3");
    b = nn_type(F16, "3");
    assert_int_equal(nn_shape(SM_OP_MatMul, 2, (const sm_type *[]){&a, &b}, 1,
                              &y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y, "f16[n]");
    char msg[SM_ERR_MSG_MAX];
    a = nn_type(F32, "batch,3");
    b = nn_type(F32, "batch,4,2");
    assert_int_equal(nn_shape(SM_OP_MatMul, 2, (const sm_type *[]){&a, &b}, 1,
                              &y, NO_ATTRS, msg),
                     SMELT_ERR_SHAPE);
    nn_has_words(msg, "MatMul|inner|3|4");
}

#define GEMM(a, b, c, ...)                                                     \
    nn_ok(SM_OP_Gemm, 3, (sm_tensor *[]){a, b, c}, 1, ATTRS(__VA_ARGS__))

static void test_gemm_basic(void **state)
{
    (void)state;
    /* A [2,3], B [3,2], no C */
    nn_result r = nn_ok(
        SM_OP_Gemm, 2,
        (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
                        nn_tensor(F32, 2, D(3, 2), V(7, 8, 9, 10, 11, 12))},
        1, NO_ATTRS);
    nn_expect(r.out[0], 2, D(2, 2), V(58, 64, 139, 154), 0);
    assert_true(r.cost.flops == 2 * 2 * 2 * 3);
    nn_free(&r);
    /* transA: A given as [3,2] = A^T; transB: B given as [2,3] = B^T */
    r = GEMM(nn_tensor(F32, 2, D(3, 2), V(1, 4, 2, 5, 3, 6)),
             nn_tensor(F32, 2, D(2, 3), V(7, 9, 11, 8, 10, 12)), NULL,
             A_INT("transA", 1), A_INT("transB", 1));
    nn_expect(r.out[0], 2, D(2, 2), V(58, 64, 139, 154), 0);
    nn_free(&r);
}

/* alpha, beta and C of shape [N], scalar, [M,1] and [M,N]. */
static void test_gemm_c_broadcast(void **state)
{
    (void)state;
    /* A*B = [[58,64],[139,154]]; Y = 2*AB + 0.5*C */
    const double ab[4] = {58, 64, 139, 154};
    struct {
        int ndim;
        const int64_t *dims;
        const double *c;
        double want_c[4];
    } cases[] = {
        {1, D(2), V(10, 20), {10, 20, 10, 20}},
        {0, NULL, V(10), {10, 10, 10, 10}},
        {2, D(2, 1), V(10, 20), {10, 10, 20, 20}},
        {2, D(1, 2), V(10, 20), {10, 20, 10, 20}},
        {2, D(2, 2), V(1, 2, 3, 4), {1, 2, 3, 4}},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        nn_result r =
            GEMM(nn_tensor(F64, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
                 nn_tensor(F64, 2, D(3, 2), V(7, 8, 9, 10, 11, 12)),
                 nn_tensor(F64, cases[i].ndim, cases[i].dims, cases[i].c),
                 A_FLOAT("alpha", 2), A_FLOAT("beta", 0.5));
        double want[4];
        for (int k = 0; k < 4; k++)
            want[k] = 2 * ab[k] + 0.5 * cases[i].want_c[k];
        nn_expect(r.out[0], 2, D(2, 2), want, 0);
        nn_free(&r);
    }
}

/* Integer Gemm is exact with whole alpha and beta. */
static void test_gemm_int(void **state)
{
    (void)state;
    nn_result r = GEMM(nn_tensor(I64, 2, D(1, 2), V(3, 4)),
                       nn_tensor(I64, 2, D(2, 1), V(5, 6)),
                       nn_tensor(I64, 1, D(1), V(100)), A_FLOAT("alpha", 3),
                       A_FLOAT("beta", -2));
    nn_expect(r.out[0], 2, D(1, 1), V(3 * 39 - 200), 0);
    nn_free(&r);
}

static void test_gemm_errors(void **state)
{
    (void)state;
    nn_fail(SM_OP_Gemm, 3,
            (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), NULL),
                            nn_tensor(F32, 2, D(3, 2), NULL),
                            nn_tensor(F32, 1, D(3), NULL)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "Gemm|C|f32[3]|3");
    nn_fail(SM_OP_Gemm, 2,
            (sm_tensor *[]){nn_tensor(F32, 3, D(1, 2, 3), NULL),
                            nn_tensor(F32, 2, D(3, 2), NULL)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "Gemm|A|2-D|3");
    nn_fail(SM_OP_Gemm, 2,
            (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), NULL),
                            nn_tensor(F32, 2, D(3, 2), NULL)},
            1, ATTRS(A_INT("transB", 1)), SMELT_ERR_SHAPE, "Gemm|inner|3|2");
    nn_fail(SM_OP_Gemm, 3,
            (sm_tensor *[]){nn_tensor(F32, 2, D(2, 3), NULL),
                            nn_tensor(F32, 2, D(3, 2), NULL),
                            nn_tensor(I32, 1, D(2), NULL)},
            1, NO_ATTRS, SMELT_ERR_TYPE, "Gemm|f32|i32");
}

static void test_gemm_symbolic(void **state)
{
    (void)state;
    sm_type a = nn_type(F32, "batch,?"), b = nn_type(F32, "?,?");
    sm_type c = nn_type(F32, "1,16"), y;
    assert_int_equal(nn_shape(SM_OP_Gemm, 3, (const sm_type *[]){&a, &b, &c}, 1,
                              &y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[batch,16]"); /* N learnt from C */
    assert_int_equal(nn_shape(SM_OP_Gemm, 2, (const sm_type *[]){&a, &b}, 1, &y,
                              ATTRS(A_INT("transA", 1)), NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[?,?]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_2d),
        cmocka_unit_test(test_matmul_1d),
        cmocka_unit_test(test_matmul_batch_broadcast),
        cmocka_unit_test(test_matmul_int),
        cmocka_unit_test(test_matmul_half),
        cmocka_unit_test(test_matmul_errors),
        cmocka_unit_test(test_matmul_symbolic),
        cmocka_unit_test(test_gemm_basic),
        cmocka_unit_test(test_gemm_c_broadcast),
        cmocka_unit_test(test_gemm_int),
        cmocka_unit_test(test_gemm_errors),
        cmocka_unit_test(test_gemm_symbolic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
