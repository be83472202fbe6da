/*
 * test_grad_det.c - the gradient rule of Det (src/autograd/rules_det.c)
 * against float64 central differences: one matrix and batches of them,
 * sizes 1 to 5, singular matrices (where det(X) inv(X)^T does not exist
 * but the cofactors do), a symbolic size declined by name; and the joint
 * graph compiled into a plan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

/* A graph whose constant %x of `type` holds vals[0..n) (or generated
 * distinct values when vals is NULL) and whose output is Det(x) times a
 * constant weight per matrix, so that each determinant weighs
 * differently in the loss. */
static char *det_text(const char *type, const double *vals, int n,
                      const char *wtype, int nw)
{
    size_t cap = 16384, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t + len, cap - len,
                            "graph t() {\n  %%x: %s = const [", type);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%.17g", i ? ", " : "",
                                vals ? vals[i]
                                     : 1.3 * sin(1.7 * i + 0.3) + 0.05 * i);
    len +=
        (size_t)snprintf(t + len, cap - len, "]\n  %%w: %s = const [", wtype);
    for (int i = 0; i < nw; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? ", " : "",
                                1.0 + 0.5 * i);
    len += (size_t)snprintf(t + len, cap - len,
                            "]\n  %%d = Det(%%x)\n  %%y = Mul(%%d, %%w)\n"
                            "  return %%y\n}\n");
    assert_true(len < cap - 1);
    return t;
}

static const char *const wrt_x[] = {"x"};

static void check_det(const char *type, const double *vals, int n,
                      const char *wtype, int nw)
{
    char *t = det_text(type, vals, n, wtype, nw);
    int got = check_graph(t, wrt_x, 1, NULL, 0);
    if (got != n)
        fail_msg("checked %d elements of %d in\n%s", got, n, t);
    free(t);
}

static void test_det_sizes(void **state)
{
    (void)state;
    check_det("f64[1,1]", NULL, 1, "f64[]", 1);
    check_det("f64[2,2]", NULL, 4, "f64[]", 1);
    check_det("f64[3,3]", NULL, 9, "f64[]", 1);
    check_det("f64[5,5]", NULL, 25, "f64[]", 1);
    /* batches: [2] of 1x1, [2,3] of 3x3, [3,1] of 4x4 */
    check_det("f64[2,1,1]", NULL, 2, "f64[2]", 2);
    check_det("f64[2,3,3,3]", NULL, 54, "f64[2,3]", 6);
    check_det("f64[3,1,4,4]", NULL, 48, "f64[3,1]", 3);
}

/* Singular matrices: rank 2 of 3 (cofactors of rank 1, not zero), rank 1
 * (all cofactors zero) and a zero row; det(X) = 0 in each. */
static void test_det_singular(void **state)
{
    (void)state;
    const double rank2[9] = {1, 2, 3, -1, 0.5, 2, 0, 2.5, 5};
    const double rank1[9] = {1, 2, 3, 2, 4, 6, -1, -2, -3};
    const double zero_row[16] = {1, 2, 0, 1,  0,   0, 0, 0,
                                 3, 1, 2, -1, 0.5, 2, 1, 1};
    check_det("f64[3,3]", rank2, 9, "f64[]", 1);
    check_det("f64[3,3]", rank1, 9, "f64[]", 1);
    check_det("f64[4,4]", zero_row, 16, "f64[]", 1);
    double both[18];
    for (int i = 0; i < 9; i++) {
        both[i] = rank2[i];
        both[9 + i] = 0.3 * i - 1;
    }
    check_det("f64[2,3,3]", both, 18, "f64[2]", 2);
}

/* A matrix size not known before running is declined by name. */
static void test_det_symbolic(void **state)
{
    (void)state;
    expect_declined("graph t(%x: f64[n,n]) {\n"
                    "  %y = Det(%x)\n"
                    "  return %y\n}\n",
                    wrt_x, 1, "Det", "not known before running");
}

/* The joint graph of a batch of determinants runs as a plan, at -O0 and
 * -O2, giving the reference interpreter's numbers. */
static void test_det_plan(void **state)
{
    (void)state;
    char *t = det_text("f64[2,3,3]", NULL, 18, "f64[2]", 2);
    assert_int_equal(check_plan(t, wrt_x, 1, 0, 1e-12), 3);
    assert_int_equal(check_plan(t, wrt_x, 1, 2, 1e-12), 3);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det_sizes),
        cmocka_unit_test(test_det_singular),
        cmocka_unit_test(test_det_symbolic),
        cmocka_unit_test(test_det_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
