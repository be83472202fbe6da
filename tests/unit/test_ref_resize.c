/*
 * test_ref_resize.c - Resize and Upsample:
 * what tests/ops' generated cases do not reach: error paths of the shape
 * functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, a few hand-computed values,
 * and allocation failures.
 */
#include "ref_harness.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

static void test_resize(void **state)
{
    (void)state;
    sm_op op = SM_OP_Resize;
    /* linear, half_pixel, [1,3] up 2x: (x+0.5)/2-0.5 = -.25 .25 .75 1.25 */
    expect(run1(op, ATTRS(a_str("mode", "linear")),
                INS(tf(F32, 2, D(1, 2), V(1, 3)), NULL, F(2, 1, 2))),
           F32, 2, D(1, 4), V(1, 1.5, 2.5, 3), 1e-6);
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "scale 0 of axis 1|positive");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, -1, 2)), 1,
             SMELT_ERR_INVALID_ARG, "scale -1 of axis 0");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, NAN)), 1,
             SMELT_ERR_INVALID_ARG, "scale nan");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, INFINITY)), 1,
             SMELT_ERR_INVALID_ARG, "scale inf");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(3, 1, 1, 2)), 1,
             SMELT_ERR_INVALID_ARG, "3 scales|rank 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, 2), L(2, 2, 4)),
             1, SMELT_ERR_INVALID_ARG, "scales or sizes, not both");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2))), 1, SMELT_ERR_INVALID_ARG,
             "needs scales or sizes");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, NULL, L(2, 2, -4)), 1,
             SMELT_ERR_INVALID_ARG, "size -4 of axis 1");
    run_fail(op, NO_ATTRS, INS(zeros(F32, 2, D(0, 2)), NULL, NULL, L(2, 3, 2)),
             1, SMELT_ERR_INVALID_ARG, "empty axis 0 to 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, NULL, F(2, 2, 2)), 1,
             SMELT_ERR_TYPE, "sizes must be i64");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, L(2, 1, 1)), 1,
             SMELT_ERR_TYPE, "scales must be a float tensor");
    run_fail(op, ATTRS(a_str("mode", "area")),
             INS(iota(2, D(2, 2)), NULL, F(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "unknown mode 'area'");
    run_fail(op, ATTRS(a_str("coordinate_transformation_mode", "corner")),
             INS(iota(2, D(2, 2)), NULL, F(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "coordinate_transformation_mode 'corner'");
    run_fail(op, ATTRS(a_str("nearest_mode", "round")),
             INS(iota(2, D(2, 2)), NULL, F(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "nearest_mode 'round'");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, 3e18)), 1,
             SMELT_ERR_LIMIT, "overflows");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 3e5, 3e5)), 1,
             SMELT_ERR_LIMIT, "output");
    run_fail(
        op,
        ATTRS(a_str("coordinate_transformation_mode", "tf_crop_and_resize")),
        INS(iota(2, D(2, 2)), F(2, 0, 1), NULL, L(2, 2, 2)), 1,
        SMELT_ERR_INVALID_ARG, "roi must hold 4 floats");
    infer(op, NO_ATTRS, 3, TYPES("f32[n,3,8,8]", NULL, "f32[4]"),
          DATA(NULL, NULL, F(4, 1, 1, 2, 0.5)), 1, "f32[n,3,16,4]");
    infer(op, NO_ATTRS, 4, TYPES("f32[n,3,8,8]", NULL, NULL, "i64[4]"),
          DATA(NULL, NULL, NULL, L(4, 1, 3, 5, 5)), 1, "f32[1,3,5,5]");
    infer(op, NO_ATTRS, 3, TYPES("f32[n,3,8,8]", NULL, "f32[4]"), NO_DATA, 1,
          "f32[?,?,?,?]");
    /* an empty scales input beside unknown sizes: sizes decide */
    infer(op, NO_ATTRS, 4, TYPES("f32[n,3,8,8]", NULL, "f32[0]", "i64[4]"),
          NO_DATA, 1, "f32[?,?,?,?]");
    sm_op up = SM_OP_Upsample;
    run_fail(up, ATTRS(a_str("mode", "cubic")),
             INS(iota(2, D(2, 2)), F(2, 1, 2)), 1, SMELT_ERR_INVALID_ARG,
             "unknown mode 'cubic'|nearest, linear");
    run_fail(up, NO_ATTRS, INS(iota(2, D(2, 2))), 1, SMELT_ERR_INVALID_ARG,
             "Upsample: needs scales");
    run_fail(up, ATTRS(a_floats("scales", 2, V(1, 0.0))), INS(iota(2, D(2, 2))),
             1, SMELT_ERR_INVALID_ARG, "scale 0 of axis 1");
    /* nearest, asymmetric, floor: [1,2] x1.5 reads 0 0 1 */
    expect(run1(up, NO_ATTRS, INS(F(2, 1, 2), F(1, 1.5))), F32, 1, D(3),
           V(1, 1, 2), 0);
    /* a kernel given scales that disagree with its output */
    sm_tensor *in[3] = {iota(2, D(2, 2)), NULL, F(2, 1, 2)};
    sm_tensor *y = iota(2, D(2, 2));
    kernel_fail(op, NO_ATTRS, 3, in, 1, &y, SMELT_ERR_RUNTIME,
                "does not match the resized input");
    sm_tensor_free(in[0]);
    sm_tensor_free(in[2]);
    sm_tensor_free(y);
}

static sm_tensor *make_resize(int i)
{
    return i == 0 ? iota(2, D(2, 3)) : i == 1 ? NULL : F(2, 2, 1.5);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_walk(SM_OP_Resize, ATTRS(a_str("mode", "cubic")), 1, make_resize, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
