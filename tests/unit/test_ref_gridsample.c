/*
 * test_ref_gridsample.c - GridSample:
 * what tests/ops' generated cases do not reach: error paths of the shape
 * functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, a few hand-computed values.
 */
#include "ref_harness.h"

#define NO_DATA NULL

static void test_gridsample(void **state)
{
    (void)state;
    sm_op op = SM_OP_GridSample;
    /* a 2x2 map [[0,1],[2,3]] at its center (0, 0) with align_corners:
     * the mean 1.5; at (1, -1), the top-right corner, 1 */
    expect(run1(op, ATTRS(a_int("align_corners", 1)),
                INS(iota(4, D(1, 1, 2, 2)),
                    tf(F32, 4, D(1, 1, 2, 2), V(0, 0, 1, -1)))),
           F32, 4, D(1, 1, 1, 2), V(1.5, 1), 1e-6);
    /* far outside with zeros padding reads zeros; NaN stays in range */
    sm_tensor *t = run1(op, ATTRS(a_str("mode", "bicubic")),
                        INS(iota(4, D(1, 1, 2, 2)),
                            tf(F32, 4, D(1, 1, 2, 2), V(1e30, -1e30, NAN, 0))));
    assert_true(((float *)t->data)[0] == 0);
    sm_tensor_free(t);
    run_fail(op, ATTRS(a_str("mode", "area")),
             INS(iota(4, D(1, 1, 2, 2)), zeros(F32, 4, D(1, 1, 1, 2))), 1,
             SMELT_ERR_INVALID_ARG, "unknown mode 'area'");
    run_fail(op, ATTRS(a_str("padding_mode", "wrap")),
             INS(iota(4, D(1, 1, 2, 2)), zeros(F32, 4, D(1, 1, 1, 2))), 1,
             SMELT_ERR_INVALID_ARG, "padding_mode 'wrap'");
    run_fail(op, NO_ATTRS,
             INS(iota(5, D(1, 1, 2, 2, 2)), zeros(F32, 5, D(1, 1, 1, 1, 3))), 1,
             SMELT_ERR_UNSUPPORTED, "rank 5|only 4-D");
    run_fail(op, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), zeros(F32, 4, D(1, 1, 1, 3))), 1,
             SMELT_ERR_SHAPE, "last dim of grid is 3");
    run_fail(op, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), zeros(I64, 4, D(1, 1, 1, 2))), 1,
             SMELT_ERR_TYPE, "grid must be a float tensor");
    infer(op, NO_ATTRS, 2, TYPES("f32[n,c,h,w]", "f32[n,5,6,2]"), NO_DATA, 1,
          "f32[n,c,5,6]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gridsample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
