/*
 * test_ref_gather.c - the gathering ops (GatherElements, GatherND, NonZero,
 * Compress, OneHot): what tests/ops' generated cases do not reach: error paths
 * of the shape functions (right status, a message naming the op and the
 * values), the kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, outputs sized from
 * values, a few hand-computed values.
 */
#include "ref_harness.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

static void test_gatherelements(void **state)
{
    (void)state;
    sm_op op = SM_OP_GatherElements;
    /* [[1,2],[3,4]] along axis 1 with [[0,0],[1,0]]: [[1,1],[4,3]] */
    expect(run1(op, ATTRS(a_int("axis", 1)),
                INS(tf(F32, 2, D(2, 2), V(1, 2, 3, 4)),
                    ti(I64, 2, D(2, 2), D(0, 0, 1, 0)))),
           F32, 2, D(2, 2), V(1, 1, 4, 3), 0);
    run_fail(op, ATTRS(a_int("axis", 1)),
             INS(iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(0, 3))), 1,
             SMELT_ERR_INVALID_ARG, "index 3|element 1|axis 1 of size 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(-3, 0))),
             1, SMELT_ERR_INVALID_ARG, "index -3|axis 0 of size 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), ti(I64, 1, D(2), D(0, 1))), 1,
             SMELT_ERR_SHAPE, "rank 1|rank 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(I64, 2, D(1, 4))), 1,
             SMELT_ERR_SHAPE, "indices dim 1 is 4|data's 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(F32, 2, D(1, 3))), 1,
             SMELT_ERR_TYPE, "indices must be i32 or i64|f32");
    run_fail(op, ATTRS(a_int("axis", 2)),
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(1, 3))), 1, SMELT_ERR_SHAPE,
             "axis 2");
    /* the kernel re-checks what the shape function would have refused */
    sm_tensor *in[2] = {iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(0, 7))};
    sm_tensor *y = iota(2, D(1, 2));
    kernel_fail(op, ATTRS(a_int("axis", 1)), 2, in, 1, &y, SMELT_ERR_RUNTIME,
                "index 7|size 3");
    free_all(2, in);
    sm_tensor_free(y);
    infer(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[n,4]", "i64[n,2]"),
          NO_DATA, 1, "f32[n,2]");
    infer(op, NO_ATTRS, 2, TYPES("f32[*]", "i32[3,k]"), NO_DATA, 1, "f32[3,k]");
    infer_fail(op, NO_ATTRS, 2, TYPES("f32[*]", "i64[]"), NO_DATA,
               SMELT_ERR_SHAPE, "indices must have rank 1 or more");
}

static void test_gathernd(void **state)
{
    (void)state;
    sm_op op = SM_OP_GatherND;
    /* [[0,1],[2,3]] at (1,0) and (0,1): [2, 1] */
    expect(run1(op, NO_ATTRS,
                INS(tf(F32, 2, D(2, 2), V(0, 1, 2, 3)),
                    ti(I64, 2, D(2, 2), D(1, 0, 0, 1)))),
           F32, 1, D(2), V(2, 1), 0);
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(1, 3))),
             1, SMELT_ERR_INVALID_ARG, "index 3|element 1|axis 1 of size 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(I64, 2, D(1, 3))), 1,
             SMELT_ERR_SHAPE, "tuples of 3 values|rank 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(I32, 2, D(1, 2))), 1,
             SMELT_ERR_TYPE, "indices must be i64, got i32");
    run_fail(op, ATTRS(a_int("batch_dims", 2)),
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(2, 1))), 1,
             SMELT_ERR_INVALID_ARG, "batch_dims 2");
    run_fail(op, ATTRS(a_int("batch_dims", 1)),
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(3, 1))), 1, SMELT_ERR_SHAPE,
             "batch dim of indices is 3|2");
    /* batch index 1 picks row 1 of data: element (1, 2) = 5 */
    expect(run1(op, ATTRS(a_int("batch_dims", 1)),
                INS(iota(2, D(2, 3)), ti(I64, 2, D(2, 1), D(0, 2)))),
           F32, 1, D(2), V(0, 5), 0);
    sm_tensor *in[2] = {iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(2, 0))};
    sm_tensor *y = iota(1, D(1));
    kernel_fail(op, NO_ATTRS, 2, in, 1, &y, SMELT_ERR_RUNTIME,
                "index 2|axis 0 of size 2");
    free_all(2, in);
    sm_tensor_free(y);
    infer(op, ATTRS(a_int("batch_dims", 1)), 2,
          TYPES("f32[b,3,4]", "i64[b,5,2]"), NO_DATA, 1, "f32[b,5]");
    infer(op, NO_ATTRS, 2, TYPES("f32[b,3,4]", "i64[7,1]"), NO_DATA, 1,
          "f32[7,3,4]");
    infer(op, NO_ATTRS, 2, TYPES("f32[b,3,4]", "i64[7,m]"), NO_DATA, 1,
          "f32[*]");
}

static void test_nonzero_compress(void **state)
{
    (void)state;
    /* [[0,2],[3,0]]: (0,1) and (1,0) */
    expect_i(
        run1(SM_OP_NonZero, NO_ATTRS, INS(tf(F32, 2, D(2, 2), V(0, 2, 3, 0)))),
        I64, 2, D(2, 2), D(0, 1, 1, 0));
    expect_i(run1(SM_OP_NonZero, NO_ATTRS, INS(tf(F32, 0, NULL, V(5)))), I64, 2,
             D(0, 1), NULL);
    infer(SM_OP_NonZero, NO_ATTRS, 1, TYPES("f32[n,3]"), NO_DATA, 1,
          "i64[2,?]");
    infer(SM_OP_NonZero, NO_ATTRS, 1, TYPES("bool[*]"), NO_DATA, 1, "i64[?,?]");
    sm_op op = SM_OP_Compress;
    run_fail(op, ATTRS(a_int("axis", 0)),
             INS(iota(2, D(2, 2)), ti(BOOL, 1, D(3), D(0, 0, 1))), 1,
             SMELT_ERR_INVALID_ARG, "entry 2 is true|only 2");
    run_fail(op, NO_ATTRS, INS(iota(1, D(2)), zeros(I64, 1, D(2))), 1,
             SMELT_ERR_TYPE, "condition must be bool");
    run_fail(op, ATTRS(a_int("axis", -3)),
             INS(iota(2, D(2, 2)), zeros(BOOL, 1, D(2))), 1, SMELT_ERR_SHAPE,
             "axis -3");
    /* trailing false entries past the axis are fine */
    expect(run1(op, ATTRS(a_int("axis", 1)),
                INS(iota(2, D(2, 2)), ti(BOOL, 1, D(4), D(0, 1, 0, 0)))),
           F32, 2, D(2, 1), V(1, 3), 0);
    infer(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[n,4]", "bool[4]"), NO_DATA,
          1, "f32[n,?]");
    infer(op, NO_ATTRS, 2, TYPES("f32[2,3]", "bool[4]"),
          DATA(NULL, ti(BOOL, 1, D(4), D(1, 0, 1, 1))), 1, "f32[3]");
}

static void test_onehot(void **state)
{
    (void)state;
    sm_op op = SM_OP_OneHot;
    run_fail(op, NO_ATTRS, INS(L(2, 0, 1), L(1, -2), F(2, 0, 1)), 1,
             SMELT_ERR_INVALID_ARG, "depth -2 is negative");
    run_fail(op, NO_ATTRS, INS(L(2, 0, 1), L(1, 2), F(3, 0, 1, 2)), 1,
             SMELT_ERR_SHAPE, "values must be [off, on]");
    run_fail(op, NO_ATTRS, INS(L(2, 0, 1), L(2, 2, 2), F(2, 0, 1)), 1,
             SMELT_ERR_SHAPE, "depth must hold one element");
    run_fail(op, ATTRS(a_int("axis", 2)), INS(L(2, 0, 1), L(1, 2), F(2, 0, 1)),
             1, SMELT_ERR_SHAPE, "axis 2");
    infer(op, ATTRS(a_int("axis", 1)), 3, TYPES("i64[n,3]", "i64[]", "f32[2]"),
          DATA(NULL, ti(I64, 0, NULL, D(5)), NULL), 1, "f32[n,5,3]");
    infer(op, NO_ATTRS, 3, TYPES("i64[n]", "i64[]", "i32[2]"), NO_DATA, 1,
          "i32[n,?]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gatherelements),
        cmocka_unit_test(test_gathernd),
        cmocka_unit_test(test_nonzero_compress),
        cmocka_unit_test(test_onehot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
