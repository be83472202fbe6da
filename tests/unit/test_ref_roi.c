/*
 * test_ref_roi.c - the box ops (NonMaxSuppression, RoiAlign):
 * what tests/ops' generated cases do not reach: error paths of the shape
 * functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, outputs sized from values, a few
 * hand-computed values, and allocation failures.
 */
#include "ref_harness.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

static void test_nms_roialign(void **state)
{
    (void)state;
    sm_op op = SM_OP_NonMaxSuppression;
    sm_tensor *boxes = tf(F32, 3, D(1, 2, 4), V(0, 0, 1, 1, 0, 0, 1, 1));
    sm_tensor *scores = tf(F32, 3, D(1, 1, 2), V(0.5, 0.7));
    /* identical boxes: the better second one suppresses the first */
    expect_i(
        run1(op, NO_ATTRS, INS(boxes, scores, L(1, 5), F(1, 0.5), F(1, 0))),
        I64, 2, D(1, 3), D(0, 0, 1));
    run_fail(op, ATTRS(a_int("center_point_box", 2)),
             INS(iota(3, D(1, 2, 4)), iota(3, D(1, 1, 2))), 1,
             SMELT_ERR_INVALID_ARG, "center_point_box 2");
    run_fail(op, NO_ATTRS, INS(iota(3, D(1, 2, 3)), iota(3, D(1, 1, 2))), 1,
             SMELT_ERR_SHAPE, "last dim of boxes is 3");
    run_fail(op, NO_ATTRS, INS(iota(3, D(1, 2, 4)), iota(3, D(1, 1, 3))), 1,
             SMELT_ERR_SHAPE, "box dim of boxes is 2|3");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(1, 2, 4)), iota(3, D(1, 1, 2)), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "max_output_boxes_per_class must hold one");
    infer(op, NO_ATTRS, 2, TYPES("f32[b,n,4]", "f32[b,c,n]"), NO_DATA, 1,
          "i64[?,3]");
    sm_op ra = SM_OP_RoiAlign;
    run_fail(ra, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(1, 4)), L(1, 1)), 1,
             SMELT_ERR_INVALID_ARG, "index 1|axis 0 of size 1");
    run_fail(ra, ATTRS(a_str("mode", "sum")),
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(1, 4)), L(1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "unknown mode 'sum'");
    run_fail(ra, ATTRS(a_int("output_height", 0)),
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(1, 4)), L(1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "output_height 0");
    run_fail(ra, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(2, 4)), L(1, 0)), 1,
             SMELT_ERR_SHAPE, "length of batch_indices is 1|2");
    /* a huge ROI with adaptive sampling is refused, not allocated */
    run_fail(ra, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)),
                 tf(F32, 2, D(1, 4), V(0, 0, 1e30, 1e30)), L(1, 0)),
             1, SMELT_ERR_LIMIT, "samples per bin");
    /* the whole 2x2 map [[0,1],[2,3]] as one bin, 2x2 samples at 0.5 and
     * 1.5 (output_half_pixel): 1.5, 2, 2.5 and 3 (1.5 clamps to the last
     * row or column), mean 2.25 */
    expect(
        run1(ra,
             ATTRS(a_str("coordinate_transformation_mode", "output_half_pixel"),
                   a_int("sampling_ratio", 2)),
             INS(iota(4, D(1, 1, 2, 2)), tf(F32, 2, D(1, 4), V(0, 0, 2, 2)),
                 L(1, 0))),
        F32, 4, D(1, 1, 1, 1), V(2.25), 1e-6);
    infer(ra, ATTRS(a_int("output_height", 2), a_int("output_width", 3)), 3,
          TYPES("f32[n,c,h,w]", "f32[r,4]", "i64[r]"), NO_DATA, 1,
          "f32[r,c,2,3]");
}

static sm_tensor *make_nms(int i)
{
    return i == 0   ? iota(3, D(1, 3, 4))
           : i == 1 ? iota(3, D(1, 2, 3))
                    : L(1, 2);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_walk(SM_OP_NonMaxSuppression, NO_ATTRS, 1, make_nms, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nms_roialign),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
