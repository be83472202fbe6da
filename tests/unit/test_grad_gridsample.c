/*
 * test_grad_gridsample.c - the gradient rule of GridSample
 * (src/autograd/rules_gridsample.c) against float64 central differences:
 * every mode (bilinear, nearest, bicubic) with every padding mode (zeros,
 * border, reflection) and align_corners 0 and 1, grid points inside and
 * past [-1, 1], odd sizes, a 1-pixel axis; the gradients of X and of the
 * grid (zero for nearest); and the joint graph compiled into a plan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

/* X [2,3,4,5] and a grid [2,2,3,2] (points in about [-1.3, 1.3]; `wide`
 * reaches past 2 so that reflection folds more than once), sampled with
 * attrs, the output squared. */
static char *gs_text(const char *xtype, int nx, const char *attrs, double span)
{
    size_t cap = 16384, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t + len, cap - len,
                            "graph t() {\n  %%x: %s = const [", xtype);
    for (int i = 0; i < nx; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%.17g", i ? ", " : "",
                                sin(0.9 * i + 0.2) + 0.01 * i);
    len += (size_t)snprintf(t + len, cap - len,
                            "]\n  %%grid: f64[2,2,3,2] = const [");
    for (int i = 0; i < 24; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%.17g", i ? ", " : "",
                                span * sin(2.3 * i + 0.5));
    len += (size_t)snprintf(t + len, cap - len,
                            "]\n  %%y = GridSample(%%x, %%grid) {%s}\n"
                            "  %%z = Mul(%%y, %%y)\n  return %%z\n}\n",
                            attrs);
    assert_true(len < cap - 1);
    return t;
}

static const char *const wrt[] = {"x", "grid"};

static void check_gs(const char *xtype, int nx, const char *mode,
                     const char *pad, int align, double span)
{
    char attrs[160];
    snprintf(attrs, sizeof attrs,
             "mode = \"%s\", padding_mode = \"%s\", align_corners = %d", mode,
             pad, align);
    char *t = gs_text(xtype, nx, attrs, span);
    int got = check_graph(t, wrt, 2, NULL, 0);
    if (got != nx + 24)
        fail_msg("checked %d elements of %d in\n%s", got, nx + 24, t);
    free(t);
}

/* Every mode, padding and align_corners on X [2,3,4,5]. */
static void test_gridsample_modes(void **state)
{
    (void)state;
    const char *modes[] = {"bilinear", "nearest", "bicubic"};
    const char *pads[] = {"zeros", "border", "reflection"};
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int a = 0; a < 2; a++)
                check_gs("f64[2,3,4,5]", 120, modes[m], pads[p], a, 1.3);
}

/* Points far outside (reflection folds several times), and a map one
 * pixel high (reflection's span is 0 with align_corners). */
static void test_gridsample_edges(void **state)
{
    (void)state;
    check_gs("f64[2,1,3,2]", 12, "bilinear", "reflection", 0, 3.7);
    check_gs("f64[2,1,3,2]", 12, "bicubic", "reflection", 1, 3.7);
    check_gs("f64[2,2,1,3]", 12, "bilinear", "reflection", 1, 1.3);
    check_gs("f64[2,2,1,3]", 12, "bicubic", "border", 0, 1.3);
}

/* The joint graph runs as a plan at -O0 and -O2 with the reference's
 * numbers. */
static void test_gridsample_plan(void **state)
{
    (void)state;
    char *t = gs_text("f64[2,3,4,5]", 120,
                      "mode = \"bicubic\", padding_mode = \"reflection\"", 1.3);
    assert_int_equal(check_plan(t, wrt, 2, 0, 1e-12), 4);
    assert_int_equal(check_plan(t, wrt, 2, 2, 1e-12), 4);
    free(t);
    t = gs_text("f64[2,3,4,5]", 120, "align_corners = 1", 1.3);
    assert_int_equal(check_plan(t, wrt, 2, 2, 1e-12), 4);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gridsample_modes),
        cmocka_unit_test(test_gridsample_edges),
        cmocka_unit_test(test_gridsample_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
