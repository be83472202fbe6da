/*
 * test_quantize_report.c - smelt_quantize_report
 * (src/passes/quantize_report.c): one row per layer with its error
 * against f32, the tolerance keeping layers f32 (none, all, one), the
 * options' exclude carried into the result, refusals of bad arguments
 * (no inputs, a wrong count, NaN tolerance), and every allocation
 * failure walked without a leak.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"

/* Three layers of different sizes (odd shapes), two outputs. */
static const char *model =
    "graph q(%x: f32[3,5]) {\n"
    "  %w: f32[5,3] = const [0.5, -1, 0.25, 2, 1.5, 0.75, -0.5, -2, 0.1, "
    "0.2, 0.3, -0.4, 0.9, -0.7, 0.05]\n"
    "  %v: f32[2,3] = const [1, -1, 0.5, 0.25, -0.75, 2]\n"
    "  %c: f32[2] = const [0.1, -0.2]\n"
    "  %u: f32[2,7] = const [3, -0.01, 0.02, 1.7, -2.5, 0.3, 0.001, 0.4, "
    "-0.6, 2.2, -1.1, 0.07, 0.8, -3]\n"
    "  %h = MatMul(%x, %w) @fc1\n"
    "  %y = Gemm(%h, %v, %c) {transB = 1} @fc2\n"
    "  %z = MatMul(%y, %u) @fc3\n"
    "  return %y, %z\n"
    "}\n";

/* A [3,5] input of varied values. */
static smelt_tensor_t *input(void)
{
    int64_t dims[2] = {3, 5};
    smelt_tensor_t *x = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &x),
                     SMELT_OK);
    float *p = smelt_tensor_data(x);
    for (int i = 0; i < 15; i++)
        p[i] = (float)sin(1.3 * i + 0.2) * (1 + i % 4);
    smelt_ctx_free(ctx);
    return x;
}

static smelt_quantize_report_t *report(smelt_graph_t *g, smelt_tensor_t *x,
                                       const char *exclude, double tol)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    o.exclude = exclude;
    smelt_quantize_report_t *r = NULL;
    smelt_status st = smelt_quantize_report(ctx, g, &o, &x, 1, tol, &r);
    if (st != SMELT_OK)
        fail_msg("report: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return r;
}

static void test_rows(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, model);
    smelt_tensor_t *x = input();
    smelt_quantize_report_t *r = report(g, x, NULL, -1);
    assert_int_equal(smelt_quantize_report_num_layers(r), 3);
    const char *names[] = {"fc1", "fc2", "fc3"};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(smelt_quantize_report_layer(r, i), names[i]);
        double mse = smelt_quantize_report_mse(r, i);
        double cos = smelt_quantize_report_cosine(r, i);
        if (!(mse > 0 && mse < 1e-1))
            fail_msg("%s: mse %g", names[i], mse);
        assert_true(cos > 0.999 && cos <= 1 + 1e-12);
        assert_false(smelt_quantize_report_kept_f32(r, i));
    }
    /* all three together add more error than any one alone */
    assert_true(smelt_quantize_report_mse(r, -1) >
                smelt_quantize_report_mse(r, 0));
    assert_string_equal(smelt_quantize_report_exclude(r), "");
    /* out of range */
    assert_null(smelt_quantize_report_layer(r, 3));
    assert_true(isnan(smelt_quantize_report_mse(r, 3)));
    assert_true(isnan(smelt_quantize_report_cosine(r, -2)));
    assert_int_equal(smelt_quantize_report_kept_f32(r, 7), 0);
    assert_int_equal(smelt_quantize_report_num_layers(NULL), 0);
    assert_string_equal(smelt_quantize_report_exclude(NULL), "");
    smelt_quantize_report_free(r);
    smelt_quantize_report_free(NULL);
    smelt_tensor_free(x);
    smelt_graph_free(g);
}

/* Tolerance 0 keeps every layer f32; one just under the largest error
 * keeps exactly that layer; the options' exclude comes first. */
static void test_tolerance(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, model);
    smelt_tensor_t *x = input();
    smelt_quantize_report_t *r = report(g, x, NULL, 0);
    for (int i = 0; i < 3; i++)
        assert_true(smelt_quantize_report_kept_f32(r, i));
    assert_string_equal(smelt_quantize_report_exclude(r), "fc1,fc2,fc3");
    assert_true(smelt_quantize_report_mse(r, -1) == 0);
    assert_true(smelt_quantize_report_cosine(r, -1) == 1);
    int worst = 0;
    for (int i = 1; i < 3; i++)
        if (smelt_quantize_report_mse(r, i) >
            smelt_quantize_report_mse(r, worst))
            worst = i;
    double tol = smelt_quantize_report_mse(r, worst) * 0.999;
    int over = 0;
    for (int i = 0; i < 3; i++)
        over += smelt_quantize_report_mse(r, i) > tol;
    char want[16];
    snprintf(want, sizeof want, "%s", smelt_quantize_report_layer(r, worst));
    smelt_quantize_report_free(r);
    r = report(g, x, NULL, tol);
    int kept = 0;
    for (int i = 0; i < 3; i++)
        kept += smelt_quantize_report_kept_f32(r, i);
    assert_int_equal(kept, over);
    assert_true(smelt_quantize_report_kept_f32(r, worst));
    if (over == 1)
        assert_string_equal(smelt_quantize_report_exclude(r), want);
    smelt_quantize_report_free(r);
    /* the options' exclude: fc2 is not measured, and stays excluded */
    r = report(g, x, "fc2", 0);
    assert_int_equal(smelt_quantize_report_num_layers(r), 2);
    assert_string_equal(smelt_quantize_report_layer(r, 0), "fc1");
    assert_string_equal(smelt_quantize_report_layer(r, 1), "fc3");
    assert_string_equal(smelt_quantize_report_exclude(r), "fc2,fc1,fc3");
    smelt_quantize_report_free(r);
    smelt_tensor_free(x);
    smelt_graph_free(g);
}

static void test_bad_args(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, model);
    smelt_tensor_t *x = input();
    smelt_tensor_t *two[2] = {x, x}, *none[1] = {NULL};
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_quantize_report_t *r = (smelt_quantize_report_t *)1;
    struct {
        const smelt_graph_t *g;
        smelt_tensor_t *const *in;
        int n;
        double tol;
        const char *msg;
    } cases[] = {
        {NULL, &x, 1, -1, "NULL graph"},
        {g, NULL, 1, -1, "0 calibration inputs for a graph of 1"},
        {g, &x, 0, -1, "0 calibration inputs for a graph of 1"},
        {g, two, 2, -1, "2 calibration inputs for a graph of 1"},
        {g, none, 1, -1, "input 0 is NULL"},
        {g, &x, 1, NAN, "tolerance is NaN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        r = (smelt_quantize_report_t *)1;
        assert_int_equal(smelt_quantize_report(ctx, cases[i].g, NULL,
                                               cases[i].in, cases[i].n,
                                               cases[i].tol, &r),
                         SMELT_ERR_INVALID_ARG);
        assert_null(r);
        if (!strstr(smelt_ctx_error(ctx), cases[i].msg))
            fail_msg("case %zu: %s", i, smelt_ctx_error(ctx));
    }
    assert_int_equal(smelt_quantize_report(ctx, g, NULL, &x, 1, -1, NULL),
                     SMELT_ERR_INVALID_ARG);
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    o.struct_size = 3;
    assert_int_equal(smelt_quantize_report(ctx, g, &o, &x, 1, -1, &r),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "smelt_quantize_options"));
    /* an input of the wrong shape: the interpreter's error */
    int64_t dims[2] = {2, 2};
    smelt_tensor_t *bad = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &bad),
                     SMELT_OK);
    assert_int_not_equal(smelt_quantize_report(ctx, g, NULL, &bad, 1, -1, &r),
                         SMELT_OK);
    assert_null(r);
    smelt_tensor_free(bad);
    smelt_ctx_free(ctx);
    smelt_tensor_free(x);
    smelt_graph_free(g);
}

/* Every allocation fails once: an error, no leak, until it succeeds. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, model);
    smelt_tensor_t *x = input();
    int done = 0;
    for (long k = 0; k < 200000 && !done; k++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_quantize_report_t *r = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_quantize_report(ctx, g, NULL, &x, 1, 1e-5, &r);
        sm_alloc_fail_after(-1);
        if (st == SMELT_OK)
            done = 1;
        else if (st != SMELT_ERR_NOMEM)
            fail_msg("k = %ld: status %d: %s", k, st, smelt_ctx_error(ctx));
        smelt_quantize_report_free(r);
        smelt_ctx_free(ctx);
    }
    assert_true(done);
    smelt_tensor_free(x);
    smelt_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
