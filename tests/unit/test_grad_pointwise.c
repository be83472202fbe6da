/*
 * test_grad_pointwise.c - the gradient rules of the reductions beyond
 * ReduceSum/ReduceMean, each checked against f64 central differences
 * with every attribute that changes the math (axes as attribute and as
 * input, negative axes, keepdims, the no-op), groups with zeros, the tie
 * rule (where differences say nothing) checked against its definition,
 * and the refusal of axes computed at run time.
 */
#include <stdio.h>

#include "gradutil.h"

#define A3 "0.5, 1.2, 2.0, 0.8, 1.7, 3.0"

/* A reduction of x: f64[2,3,4] = xs by `call`, squared so that the
 * output gradient differs per element. */
static void reduce(const char *call, const char *xs)
{
    char t[2048];
    snprintf(t, sizeof t,
             "graph r() {\n"
             "  %%x: f64[2,3,4] = const [%s]\n"
             "  %%neg: i64[1] = const [-1]\n"
             "  %%mid: i64[2] = const [1, -3]\n"
             "  %%none: i64[0] = const []\n"
             "  %%y = %s\n"
             "  %%z = Mul(%%y, %%y)\n"
             "  return %%z\n"
             "}\n",
             xs, call);
    int n = check_text(t);
    if (n != 24)
        fail_msg("%s: %d checked", call, n);
}

/* 24 distinct values of mixed sign; and positive ones. */
#define RX                                                                     \
    "0.31, -0.72, 1.13, 0.54, -1.25, 0.86, -0.17, 1.48, -0.99, 0.21, 0.62,"    \
    " -0.43, 1.04, -1.35, 0.76, 0.17, -0.58, 1.29, -0.9, 0.41, -0.12, 0.93,"   \
    " -1.44, 0.65"
#define RP                                                                     \
    "0.31, 0.72, 1.13, 0.54, 1.25, 0.86, 0.17, 1.48, 0.99, 0.21, 0.62,"        \
    " 0.43, 1.04, 1.35, 0.76, 0.17, 0.58, 1.29, 0.9, 0.41, 0.12, 0.93,"        \
    " 1.44, 0.65"

/* Every reduction with: all axes kept; axes [0, 2] dropped; axis -1 as an
 * input; axes [1, -3] as an input, kept; empty axes as a no-op. */
static void test_reductions(void **state)
{
    (void)state;
    static const char *ops[] = {
        "ReduceSum",       "ReduceMean",   "ReduceMax", "ReduceMin",
        "ReduceProd",      "ReduceL1",     "ReduceL2",  "ReduceLogSumExp",
        "ReduceSumSquare", "ReduceLogSum",
    };
    static const char *forms[] = {
        "%s(%%x)",
        "%s(%%x) {axes = [0, 2], keepdims = 0}",
        "%s(%%x, %%neg) {keepdims = 0}",
        "%s(%%x, %%mid)",
        "%s(%%x, %%none) {noop_with_empty_axes = 1}",
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
            char call[128];
            snprintf(call, sizeof call, forms[f], ops[i]);
            reduce(call, strcmp(ops[i], "ReduceLogSum") ? RX : RP);
        }
}

/* ReduceProd over groups with one zero and with two (exact gradients
 * where y / x cannot give them), ReduceL2 over a group of zeros. */
static void test_reduce_zeros(void **state)
{
    (void)state;
    assert_int_equal(check_text("graph z() {\n"
                                "  %x: f64[3,4] = const [0.5, 0, -1.5, 2.0,"
                                " 0, 1.2, 0, 0.7, -0.6, 1.1, 0.9, -1.3]\n"
                                "  %y = ReduceProd(%x) {axes = [1],"
                                " keepdims = 0}\n"
                                "  %w: f64[3] = const [0.7, -1.3, 0.4]\n"
                                "  %z = Mul(%y, %w)\n"
                                "  return %z\n"
                                "}\n"),
                     12 + 3);
    assert_int_equal(check_text("graph z() {\n"
                                "  %x: f64[2,3] = const [0, 0, 0, 0.5, -1.2,"
                                " 0.8]\n"
                                "  %y = ReduceL2(%x) {axes = [1]}\n"
                                "  %w: f64[2,1] = const [0.7, -1.3]\n"
                                "  %z = Mul(%y, %w)\n"
                                "  return %z\n"
                                "}\n"),
                     6 + 2);
}

/* The gradients of the joint graph of text, in output order (the caller
 * frees them); returns their count. */
static int grads_of(const char *text, smelt_tensor_t **d, int max)
{
    smelt_graph_t *g = parse(text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (smelt_graph_grad(ctx, g, NULL, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    int n_out = smelt_graph_num_outputs(j), n = smelt_graph_num_grads(j);
    smelt_tensor_t *out[16] = {0};
    assert_true(n_out <= 16 && n <= max);
    if (smelt_graph_run_reference(ctx, j, NULL, 0, out, n_out) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    for (int k = 0; k < n; k++) {
        int o = smelt_graph_grad_output(j, k);
        d[k] = out[o];
        out[o] = NULL;
    }
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return n;
}

/* Checks t's n values against want, within tol. */
static void expect_values(smelt_tensor_t *t, const double *want, int n,
                          double tol)
{
    assert_int_equal(smelt_tensor_numel(t), n);
    for (int i = 0; i < n; i++) {
        double v = smelt_tensor_get_f64(t, i);
        if (fabs(v - want[i]) > tol)
            fail_msg("element %d: %.9g, expected %.9g", i, v, want[i]);
    }
}

/* Ties in a reduction: ReduceMax/ReduceMin split a group's dy evenly
 * among its arg-max elements (PyTorch's amax). */
static void test_reduce_ties(void **state)
{
    (void)state;
    smelt_tensor_t *d[4];
    int n;
    n = grads_of("graph t() {\n"
                 "  %x: f64[2,4] = const [1, 3, 3, 2, 5, 5, 5, -1]\n"
                 "  %y = ReduceMax(%x) {axes = [1], keepdims = 0}\n"
                 "  %w: f64[2] = const [2, 3]\n"
                 "  %z = Mul(%y, %w)\n"
                 "  return %z\n"
                 "}\n",
                 d, 4);
    expect_values(d[0], (double[]){0, 1, 1, 0, 1, 1, 1, 0}, 8, 1e-12);
    for (int i = 0; i < n; i++)
        smelt_tensor_free(d[i]);
    n = grads_of("graph t() {\n"
                 "  %x: f64[2,2] = const [-1, 4, -1, -1]\n"
                 "  %y = ReduceMin(%x)\n"
                 "  return %y\n"
                 "}\n",
                 d, 4);
    expect_values(d[0], (double[]){1.0 / 3, 0, 1.0 / 3, 1.0 / 3}, 4, 1e-12);
    for (int i = 0; i < n; i++)
        smelt_tensor_free(d[i]);
}

/* Axes known only at run time: the reductions refuse, naming the node. */
static void test_errors(void **state)
{
    (void)state;
    static const char *ops[] = {"ReduceMax", "ReduceProd", "ReduceL2",
                                "ReduceMean"};
    for (int i = 0; i < 4; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "graph e(%%ax: i64[1]) {\n"
                 "  %%x: f64[2,3] = const [" A3 "]\n"
                 "  %%y = %s(%%x, %%ax)\n"
                 "  return %%y\n"
                 "}\n",
                 ops[i]);
        smelt_graph_t *g = parse(t), *j = NULL;
        smelt_ctx_t *ctx = smelt_ctx_init();
        assert_int_equal(smelt_graph_grad(ctx, g, NULL, &j),
                         SMELT_ERR_UNSUPPORTED);
        assert_null(j);
        const char *msg = smelt_ctx_error(ctx);
        if (!strstr(msg, "computed at run time") || !strstr(msg, ops[i]))
            fail_msg("%s: error '%s'", ops[i], msg);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_reduce_zeros),
        cmocka_unit_test(test_reduce_ties),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
