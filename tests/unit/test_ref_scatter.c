/*
 * test_ref_scatter.c - the scattering ops (ScatterElements, ScatterND,
 * MaxUnpool): what tests/ops' generated cases do not reach: error paths of the
 * shape functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, a few hand-computed values.
 */
#include "ref_harness.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

static void test_scatterelements(void **state)
{
    (void)state;
    sm_op op = SM_OP_ScatterElements;
    /* zeros[1,4], add 1 and 2 both at index 1, 5 at index 3 */
    expect(run1(op, ATTRS(a_int("axis", 1), a_str("reduction", "add")),
                INS(zeros(F32, 2, D(1, 4)), ti(I64, 2, D(1, 3), D(1, 1, 3)),
                    tf(F32, 2, D(1, 3), V(1, 2, 5)))),
           F32, 2, D(1, 4), V(0, 3, 0, 5), 0);
    /* int64 stays exact under mul */
    expect_i(run1(op, ATTRS(a_str("reduction", "mul")),
                  INS(ti(I64, 1, D(2), D(1LL << 40, 3)), ti(I64, 1, D(1), D(0)),
                      ti(I64, 1, D(1), D(1LL << 20)))),
             I64, 1, D(2), D(1LL << 60, 3));
    run_fail(op, ATTRS(a_int("axis", 1)),
             INS(iota(2, D(2, 2)), ti(I64, 2, D(1, 1), D(2)), iota(2, D(1, 1))),
             1, SMELT_ERR_INVALID_ARG, "index 2|axis 1 of size 2");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 2)), zeros(I64, 2, D(1, 2)), iota(2, D(2, 1))), 1,
             SMELT_ERR_SHAPE, "dim of updates is 2|1");
    run_fail(op, ATTRS(a_str("reduction", "sub")),
             INS(iota(1, D(2)), zeros(I64, 1, D(1)), iota(1, D(1))), 1,
             SMELT_ERR_INVALID_ARG, "unknown reduction 'sub'");
    run_fail(op, NO_ATTRS,
             INS(iota(1, D(2)), zeros(I64, 1, D(1)), zeros(I64, 1, D(1))), 1,
             SMELT_ERR_TYPE, "updates is i64|data is f32");
    run_fail(SM_OP_Scatter, NO_ATTRS,
             INS(iota(1, D(2)), ti(I64, 1, D(1), D(-3)), iota(1, D(1))), 1,
             SMELT_ERR_INVALID_ARG, "Scatter: index -3");
    sm_tensor *in[3] = {iota(1, D(2)), ti(I64, 1, D(1), D(5)), iota(1, D(1))};
    sm_tensor *y = iota(1, D(2));
    kernel_fail(op, NO_ATTRS, 3, in, 1, &y, SMELT_ERR_RUNTIME, "index 5");
    free_all(3, in);
    sm_tensor_free(y);
    infer(op, NO_ATTRS, 3, TYPES("f32[n,3]", "i64[k,3]", "f32[k,3]"), NO_DATA,
          1, "f32[n,3]");
}

static void test_scatternd(void **state)
{
    (void)state;
    sm_op op = SM_OP_ScatterND;
    /* [[0,1],[2,3]], (1,0) becomes 9 and (0,1) max'ed with 0 */
    expect(run1(op, ATTRS(a_str("reduction", "max")),
                INS(tf(F32, 2, D(2, 2), V(0, 1, 2, 3)),
                    ti(I64, 2, D(2, 2), D(1, 0, 0, 1)), F(2, 9, 0))),
           F32, 2, D(2, 2), V(0, 1, 9, 3), 0);
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 3)), ti(I64, 2, D(2, 2), D(0, 1, 1, -4)),
                 iota(1, D(2))),
             1, SMELT_ERR_INVALID_ARG, "index -4|element 3|axis 1 of size 3");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(2, 1)), iota(1, D(2))), 1,
             SMELT_ERR_SHAPE, "updates have rank 1|need 2");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(2, 1)), iota(2, D(2, 4))), 1,
             SMELT_ERR_SHAPE, "dim of updates is 4|3");
    run_fail(op, NO_ATTRS,
             INS(iota(1, D(3)), zeros(I64, 2, D(1, 2)), iota(1, D(1))), 1,
             SMELT_ERR_SHAPE, "tuples of 2 values|rank 1");
    sm_tensor *in[3] = {iota(1, D(3)), ti(I64, 2, D(1, 1), D(3)),
                        iota(1, D(1))};
    sm_tensor *y = iota(1, D(3));
    kernel_fail(op, NO_ATTRS, 3, in, 1, &y, SMELT_ERR_RUNTIME,
                "index 3|axis 0 of size 3");
    free_all(3, in);
    sm_tensor_free(y);
}

static void test_maxunpool(void **state)
{
    (void)state;
    sm_op op = SM_OP_MaxUnpool;
    const sm_attr k22[] = {a_ints("kernel_shape", 2, D(2, 2)),
                           a_ints("strides", 2, D(2, 2))};
    /* [1,2] at flat 3 and 0 of the 2x2 unpooled map, in a 2x3 output */
    expect(run1(op, k22, 2,
                INS(tf(F32, 4, D(1, 1, 1, 1), V(7)),
                    ti(I64, 4, D(1, 1, 1, 1), D(3)), L(4, 1, 1, 2, 3))),
           F32, 4, D(1, 1, 2, 3), V(0, 0, 0, 0, 7, 0), 0);
    run_fail(op, k22, 2,
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(4))), 1,
             SMELT_ERR_INVALID_ARG, "index 4|size 4");
    run_fail(op, k22, 2,
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(0)),
                 L(4, 1, 1, 1, 2)),
             1, SMELT_ERR_SHAPE, "output_shape dim 2 is 1|unpooled 2");
    run_fail(op, NO_ATTRS,
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(0))), 1,
             SMELT_ERR_INVALID_ARG, "kernel_shape must have");
    run_fail(op, ATTRS(a_ints("kernel_shape", 1, D(2))),
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(0))), 1,
             SMELT_ERR_SHAPE, "X must have rank 3");
    run_fail(op,
             ATTRS(a_ints("kernel_shape", 1, D(1)), a_ints("pads", 2, D(1, 1))),
             INS(iota(3, D(1, 1, 1)), ti(I64, 3, D(1, 1, 1), D(0))), 1,
             SMELT_ERR_INVALID_ARG, "leave nothing");
    infer(op, k22, 2, 2, TYPES("f32[n,c,3,4]", "i64[n,c,3,4]"), NO_DATA, 1,
          "f32[n,c,6,8]");
    /* the kernel alone: an index past the unpooled shape */
    sm_tensor *in[2] = {iota(4, D(1, 1, 1, 1)),
                        ti(I64, 4, D(1, 1, 1, 1), D(9))};
    sm_tensor *y = iota(4, D(1, 1, 4, 4));
    kernel_fail(op, k22, 2, 2, in, 1, &y, SMELT_ERR_RUNTIME, "index 9|size 4");
    free_all(2, in);
    sm_tensor_free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scatterelements),
        cmocka_unit_test(test_scatternd),
        cmocka_unit_test(test_maxunpool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
