/*
 * test_ref_space.c - the rearranging and masking ops (DepthToSpace,
 * SpaceToDepth, CumSum, Trilu, EyeLike, ReverseSequence):
 * what tests/ops' generated cases do not reach: error paths of the shape
 * functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, a few hand-computed values.
 */
#include "ref_harness.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

static void test_space(void **state)
{
    (void)state;
    run_fail(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 2)),
             INS(iota(4, D(1, 6, 1, 1))), 1, SMELT_ERR_SHAPE,
             "dim 1 of size 6|multiple of 4");
    run_fail(SM_OP_DepthToSpace,
             ATTRS(a_int("blocksize", 2), a_str("mode", "RDC")),
             INS(iota(4, D(1, 4, 1, 1))), 1, SMELT_ERR_INVALID_ARG,
             "unknown mode 'RDC'");
    run_fail(SM_OP_DepthToSpace, NO_ATTRS, INS(iota(4, D(1, 4, 1, 1))), 1,
             SMELT_ERR_INVALID_ARG, "blocksize is required");
    run_fail(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 0)),
             INS(iota(4, D(1, 4, 1, 1))), 1, SMELT_ERR_INVALID_ARG,
             "blocksize 0");
    run_fail(SM_OP_SpaceToDepth, ATTRS(a_int("blocksize", 2)),
             INS(iota(4, D(1, 1, 3, 2))), 1, SMELT_ERR_SHAPE,
             "dim 2 of size 3|multiple of 2");
    run_fail(SM_OP_SpaceToDepth, ATTRS(a_int("blocksize", 2)),
             INS(iota(3, D(1, 4, 4))), 1, SMELT_ERR_SHAPE, "rank 4");
    infer(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 2)), 1,
          TYPES("f32[n,8,h,3]"), NO_DATA, 1, "f32[n,2,?,6]");
    infer(SM_OP_SpaceToDepth, ATTRS(a_int("blocksize", 2)), 1,
          TYPES("f32[n,c,4,6]"), NO_DATA, 1, "f32[n,?,2,3]");
    /* the kernel refuses an output that does not fit */
    sm_tensor *x = iota(4, D(1, 4, 1, 1)), *y = iota(4, D(1, 4, 1, 1));
    kernel_fail(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 2)), 1, &x, 1, &y,
                SMELT_ERR_RUNTIME, "does not match");
    sm_tensor_free(x);
    sm_tensor_free(y);
}

static void test_cumsum_trilu_eyelike(void **state)
{
    (void)state;
    /* exclusive reverse of [1,2,3]: [5,3,0]; int64 exact near 2^62 */
    expect(run1(SM_OP_CumSum, ATTRS(a_int("exclusive", 1), a_int("reverse", 1)),
                INS(F(3, 1, 2, 3), ti(I32, 0, NULL, D(0)))),
           F32, 1, D(3), V(5, 3, 0), 0);
    expect_i(run1(SM_OP_CumSum, NO_ATTRS,
                  INS(ti(I64, 1, D(2), D((1LL << 62) + 1, 1)),
                      ti(I64, 0, NULL, D(-1)))),
             I64, 1, D(2), D((1LL << 62) + 1, (1LL << 62) + 2));
    run_fail(SM_OP_CumSum, NO_ATTRS, INS(F(3, 1, 2, 3), L(1, 1)), 1,
             SMELT_ERR_SHAPE, "axis 1");
    run_fail(SM_OP_CumSum, NO_ATTRS, INS(F(3, 1, 2, 3), F(1, 0)), 1,
             SMELT_ERR_TYPE, "axis must be i32 or i64");
    run_fail(SM_OP_CumSum, NO_ATTRS, INS(ti(BOOL, 1, D(2), D(1, 1)), L(1, 0)),
             1, SMELT_ERR_TYPE, "not bool");
    run_fail(SM_OP_Trilu, NO_ATTRS, INS(F(3, 1, 2, 3)), 1, SMELT_ERR_SHAPE,
             "rank 2 or more");
    run_fail(SM_OP_Trilu, NO_ATTRS, INS(iota(2, D(2, 2)), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "k must hold one element");
    /* k far past the matrix: everything (lower) or nothing (upper) */
    expect(run1(SM_OP_Trilu, ATTRS(a_int("upper", 0)),
                INS(iota(2, D(2, 2)), L(1, INT64_MAX))),
           F32, 2, D(2, 2), V(0, 1, 2, 3), 0);
    expect(run1(SM_OP_Trilu, NO_ATTRS, INS(iota(2, D(2, 2)), L(1, INT64_MAX))),
           F32, 2, D(2, 2), V(0, 0, 0, 0), 0);
    infer(SM_OP_Trilu, NO_ATTRS, 1, TYPES("f32[b,n,n]"), NO_DATA, 1,
          "f32[b,n,n]");
    run_fail(SM_OP_EyeLike, NO_ATTRS, INS(iota(3, D(1, 2, 2))), 1,
             SMELT_ERR_SHAPE, "rank 2");
    run_fail(SM_OP_EyeLike, ATTRS(a_int("dtype", 8)), INS(iota(2, D(2, 2))), 1,
             SMELT_ERR_UNSUPPORTED, "dtype 8");
    expect_i(run1(SM_OP_EyeLike, ATTRS(a_int("dtype", 7), a_int("k", -1)),
                  INS(iota(2, D(3, 2)))),
             I64, 2, D(3, 2), D(0, 0, 1, 0, 0, 1));
    infer(SM_OP_EyeLike, ATTRS(a_int("dtype", 9)), 1, TYPES("f32[n,m]"),
          NO_DATA, 1, "bool[n,m]");
    expect_i(run1(SM_OP_Size, NO_ATTRS, INS(iota(3, D(2, 3, 4)))), I64, 0, NULL,
             D(24));
    infer(SM_OP_Size, NO_ATTRS, 1, TYPES("f32[*]"), NO_DATA, 1, "i64[]");
}

static void test_reversesequence(void **state)
{
    (void)state;
    sm_op op = SM_OP_ReverseSequence;
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(2, 4, 1)), 1,
             SMELT_ERR_INVALID_ARG, "length 4 of batch 0|[0, 3]");
    run_fail(op, ATTRS(a_int("batch_axis", 0)),
             INS(iota(2, D(3, 2)), L(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "batch_axis 0 and time_axis 0");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(3, 1, 1, 1)), 1,
             SMELT_ERR_SHAPE, "sequence_lens is 3|batch dim is 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), F(2, 1, 1)), 1, SMELT_ERR_TYPE,
             "sequence_lens must be i32 or i64");
    sm_tensor *in[2] = {iota(2, D(3, 2)), L(2, -1, 1)};
    sm_tensor *y = iota(2, D(3, 2));
    kernel_fail(op, NO_ATTRS, 2, in, 1, &y, SMELT_ERR_RUNTIME,
                "length -1 of batch 0");
    free_all(2, in);
    sm_tensor_free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space),
        cmocka_unit_test(test_cumsum_trilu_eyelike),
        cmocka_unit_test(test_reversesequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
