/*
 * test_ref_topk.c - the sorting ops (TopK, Unique):
 * what tests/ops' generated cases do not reach: error paths of the shape
 * functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, outputs sized from values, a few
 * hand-computed values, and allocation failures.
 */
#include "ref_harness.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

static void test_topk(void **state)
{
    (void)state;
    sm_op op = SM_OP_TopK;
    sm_tensor *out[2];
    smelt_ctx_t *ctx = smelt_ctx_init();
    /* NaN sorts above every number; ties keep the lower index first */
    assert_int_equal(
        run(ctx, op, NO_ATTRS, INS(F(5, 1, NAN, 3, 3, -1), L(1, 3)), 2, out),
        SMELT_OK);
    assert_true(isnan(((float *)out[0]->data)[0]));
    assert_true(((float *)out[0]->data)[1] == 3 &&
                ((float *)out[0]->data)[2] == 3);
    sm_tensor_free(out[0]);
    expect_i(out[1], I64, 1, D(3), D(1, 2, 3));
    smelt_ctx_free(ctx);
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(1, -1)), 2,
             SMELT_ERR_INVALID_ARG, "k -1 is negative");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(1, 4)), 2,
             SMELT_ERR_INVALID_ARG, "k 4 exceeds|size 3 of axis 1");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, 1, 1)), 2,
             SMELT_ERR_SHAPE, "K must hold one element|has 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), F(1, 1)), 2, SMELT_ERR_TYPE,
             "K must be i32 or i64");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3))), 2, SMELT_ERR_INVALID_ARG,
             "K is required");
    run_fail(op, ATTRS(a_int("axis", 2)), INS(iota(2, D(2, 3)), L(1, 1)), 2,
             SMELT_ERR_SHAPE, "axis 2");
    run_fail(op, NO_ATTRS, INS(tf(F32, 0, NULL, V(1)), L(1, 1)), 2,
             SMELT_ERR_SHAPE, "rank 1 or more");
    /* a kernel given outputs larger than the input */
    sm_tensor *in[2] = {iota(1, D(2)), L(1, 2)};
    sm_tensor *o2[2] = {iota(1, D(3)), zeros(I64, 1, D(3))};
    kernel_fail(op, NO_ATTRS, 2, in, 2, o2, SMELT_ERR_RUNTIME,
                "outputs do not match");
    free_all(2, in);
    free_all(2, o2);
    infer(op, NO_ATTRS, 2, TYPES("f32[n,10]", "i64[1]"), NO_DATA, 2,
          "f32[n,?]|i64[n,?]");
    infer(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[n,10]", "i64[1]"),
          DATA(NULL, L(1, 3)), 2, "f32[3,10]|i64[3,10]");
}

static void test_unique(void **state)
{
    (void)state;
    sm_op op = SM_OP_Unique;
    sm_tensor *out[4];
    smelt_ctx_t *ctx = smelt_ctx_init();
    /* [2, nan, 1, 2, nan]: NaNs are one value, sorted last */
    assert_int_equal(
        run(ctx, op, NO_ATTRS, INS(F(5, 2, NAN, 1, 2, NAN)), 4, out), SMELT_OK);
    assert_int_equal(out[0]->numel, 3);
    assert_true(((float *)out[0]->data)[0] == 1 &&
                ((float *)out[0]->data)[1] == 2 &&
                isnan(((float *)out[0]->data)[2]));
    sm_tensor_free(out[0]);
    expect_i(out[1], I64, 1, D(3), D(2, 0, 1));
    expect_i(out[2], I64, 1, D(5), D(1, 2, 0, 1, 2));
    expect_i(out[3], I64, 1, D(3), D(1, 2, 2));
    smelt_ctx_free(ctx);
    run_fail(op, ATTRS(a_int("axis", 2)), INS(iota(2, D(2, 2))), 1,
             SMELT_ERR_SHAPE, "axis 2");
    infer(op, NO_ATTRS, 1, TYPES("f32[2,3]"), NO_DATA, 4,
          "f32[?]|i64[?]|i64[6]|i64[?]");
    infer(op, ATTRS(a_int("axis", 1)), 1, TYPES("f32[n,k]"), NO_DATA, 3,
          "f32[n,?]|i64[?]|i64[k]");
    infer(op, ATTRS(a_int("axis", 0)), 1, TYPES("i64[3,2]"),
          DATA(ti(I64, 2, D(3, 2), D(1, 2, 3, 4, 1, 2))), 2, "i64[2,2]|i64[2]");
}

static sm_tensor *make_unique(int i)
{
    (void)i;
    return F(6, 3, 1, 3, 2, 1, 0);
}

static sm_tensor *make_topk(int i)
{
    return i == 0 ? iota(2, D(2, 5)) : L(1, 2);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_walk(SM_OP_Unique, ATTRS(a_int("sorted", 0)), 4, make_unique, 1);
    alloc_walk(SM_OP_TopK, NO_ATTRS, 2, make_topk, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_unique),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
