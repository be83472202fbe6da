/*
 * test_grad_roialign.c - the gradient rule of RoiAlign
 * (src/autograd/rules_roialign.c) against float64 central differences,
 * the gradients of X and of the ROIs: avg and max modes, half_pixel and
 * output_half_pixel, sampling_ratio 1, 2, 3 and 0 (adaptive, per-ROI sample
 * counts), spatial_scale, ROIs of either image, partly or wholly outside the
 * map, malformed (x2 < x1); X's with the ROIs a graph input known only at run
 * time; the declined case (sampling_ratio 0 with such ROIs); and the joint
 * graph as a plan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

static const char *const wrt_x[] = {"x"};

/* X [2,3,5,6] of distinct values and `rois` (a constant, or the graph's
 * input when rois is NULL), bins of attrs, the output squared. */
static char *roi_text(const double *rois, int n_rois, const char *bidx,
                      const char *attrs)
{
    size_t cap = 16384, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    if (rois)
        len += (size_t)snprintf(t + len, cap - len, "graph t() {\n");
    else
        len += (size_t)snprintf(t + len, cap - len,
                                "graph t(%%rois: f64[%d,4]) {\n", n_rois);
    len +=
        (size_t)snprintf(t + len, cap - len, "  %%x: f64[2,3,5,6] = const [");
    for (int i = 0; i < 180; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%.17g", i ? ", " : "",
                                sin(0.77 * i + 0.1) + 0.002 * i);
    len += (size_t)snprintf(t + len, cap - len, "]\n");
    if (rois) {
        len += (size_t)snprintf(t + len, cap - len,
                                "  %%rois: f64[%d,4] = const [", n_rois);
        for (int i = 0; i < 4 * n_rois; i++)
            len += (size_t)snprintf(t + len, cap - len, "%s%.17g",
                                    i ? ", " : "", rois[i]);
        len += (size_t)snprintf(t + len, cap - len, "]\n");
    }
    len += (size_t)snprintf(t + len, cap - len,
                            "  %%b: i64[%d] = const [%s]\n"
                            "  %%y = RoiAlign(%%x, %%rois, %%b) {%s}\n"
                            "  %%z = Mul(%%y, %%y)\n  return %%z\n}\n",
                            n_rois, bidx, attrs);
    assert_true(len < cap - 1);
    return t;
}

/* Boxes: inside image 0, reaching past the map of image 1, wholly
 * outside, malformed (x2 < x1), and a large one. */
static const double boxes[20] = {0.31, 0.63,  3.71,  2.93,  1.23,  0.41, 7.13,
                                 6.37, -4.07, -3.53, -1.61, -1.27, 4.23, 3.13,
                                 2.51, 3.97,  0.17,  0.29,  5.63,  4.77};
#define BIDX "0, 1, 0, 1, 1"

static const char *const wrt_both[] = {"x", "rois"};

static void check_roi(const char *attrs)
{
    char *t = roi_text(boxes, 5, BIDX, attrs);
    int got = check_graph(t, wrt_both, 2, NULL, 0);
    if (got != 200)
        fail_msg("checked %d elements of 200 in\n%s", got, t);
    free(t);
}

static void test_roialign_attrs(void **state)
{
    (void)state;
    const char *modes[] = {"avg", "max"};
    const char *coords[] = {"half_pixel", "output_half_pixel"};
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 2; c++)
            for (int ratio = 0; ratio <= 3; ratio++) {
                char attrs[256];
                snprintf(attrs, sizeof attrs,
                         "mode = \"%s\", coordinate_transformation_mode = "
                         "\"%s\", sampling_ratio = %d, output_height = 3, "
                         "output_width = 2",
                         modes[m], coords[c], ratio);
                check_roi(attrs);
            }
    check_roi("spatial_scale = 0.6, output_height = 2, output_width = 3");
    check_roi("spatial_scale = 1.7, sampling_ratio = 2, mode = \"max\"");
}

/* ROIs given at run time: sampling_ratio > 0 builds, 0 is declined. */
static void test_roialign_runtime_rois(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *r = NULL;
    int64_t dims[2] = {5, 4};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 2, dims, &r),
                     SMELT_OK);
    memcpy(smelt_tensor_data(r), boxes, sizeof boxes);
    char *t = roi_text(NULL, 5, BIDX,
                       "sampling_ratio = 2, output_height = 2, "
                       "output_width = 3");
    assert_int_equal(check_graph(t, wrt_x, 1, &r, 1), 180);
    free(t);
    t = roi_text(NULL, 5, BIDX, "output_height = 2");
    expect_declined(t, NULL, 0, "RoiAlign", "sampling_ratio 0");
    free(t);
    smelt_tensor_free(r);
    smelt_ctx_free(ctx);
}

/* The joint graph runs as a plan at -O0 and -O2 with the reference's
 * numbers, avg and max. */
static void test_roialign_plan(void **state)
{
    (void)state;
    char *t = roi_text(boxes, 5, BIDX, "output_height = 3, output_width = 2");
    assert_int_equal(check_plan(t, wrt_x, 1, 0, 1e-12), 3);
    assert_int_equal(check_plan(t, wrt_x, 1, 2, 1e-12), 3);
    free(t);
    t = roi_text(boxes, 5, BIDX, "mode = \"max\", sampling_ratio = 2");
    assert_int_equal(check_plan(t, wrt_x, 1, 2, 1e-12), 3);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roialign_attrs),
        cmocka_unit_test(test_roialign_runtime_rois),
        cmocka_unit_test(test_roialign_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
