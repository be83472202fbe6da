/*
 * test_grad_rnn.c - the gradient rules of RNN, GRU and LSTM
 * (src/autograd/rules_rnn.c) against float64 central differences: every
 * direction and layout, clip, activations with alpha and beta,
 * sequence_lens (a row of length 0 among them), initial states,
 * peepholes, input_forget, linear_before_reset; each float input, with
 * the loss reading Y, Y_h, Y_c together or one alone. A sequence length
 * not known before running is declined by name; an LSTM's joint graph
 * runs as a plan; and allocation failures while building the rules that
 * rebuild their node (these, GridSample, RoiAlign) and Det's leak
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

#include "core/alloc.h"

typedef grad_leaf leaf;

/* The graph: the leaves (values in about [-0.8, 0.8]), then body, which
 * defines the scalar %loss. */
static char *graph_text(const leaf *l, int n_leaf, const char *body)
{
    return leaf_graph_text(l, n_leaf, 0.7, 0.9, 0.003, body,
                           "  return %loss\n");
}

/* Checks the gradient of every leaf; all their elements are checked. */
static void check(const leaf *l, int n_leaf, const char *body)
{
    char *t = graph_text(l, n_leaf, body);
    check_leaves(t, l, n_leaf);
    free(t);
}

/* Loss lines: the sum of squares of the named outputs. */
#define SQ(v)                                                                  \
    "  %" v "2 = Mul(%" v ", %" v ")\n  %" v "s = ReduceSum(%" v               \
    "2) {keepdims = 0}\n"
#define LOSS_YH SQ("y") SQ("yh") "  %loss = Add(%ys, %yhs)\n"
#define LOSS_ALL                                                               \
    SQ("y")                                                                    \
    SQ("yh") SQ("yc") "  %l1 = Add(%ys, %yhs)\n  %loss = Add(%l1, %ycs)\n"

static void test_rnn(void **state)
{
    (void)state;
    /* seq 3, batch 2, input 3, hidden 2, forward, defaults */
    leaf a[] = {{"x", "f64[3,2,3]", 18},
                {"w", "f64[1,2,3]", 6},
                {"r", "f64[1,2,2]", 4},
                {"b", "f64[1,4]", 4},
                {"h0", "f64[1,2,2]", 4}};
    check(a, 5,
          "  %lens: i32[2] = const [3, 2]\n"
          "  %y, %yh = RNN(%x, %w, %r, %b, %lens, %h0) {hidden_size = "
          "2}\n" LOSS_YH);
    /* bidirectional, layout 1, clip, activations with alpha and beta,
     * a row of length 0; the loss reads Y_h alone */
    leaf c[] = {{"x", "f64[2,3,3]", 18},
                {"w", "f64[2,2,3]", 12},
                {"r", "f64[2,2,2]", 8},
                {"b", "f64[2,4]", 8},
                {"h0", "f64[2,2,2]", 8}};
    check(c, 5,
          "  %lens: i64[2] = const [0, 3]\n"
          "  %y, %yh = RNN(%x, %w, %r, %b, %lens, %h0) {direction = "
          "\"bidirectional\", layout = 1, clip = 0.9, activations = "
          "[\"ScaledTanh\", \"Softsign\"], activation_alpha = [1.3], "
          "activation_beta = [0.7]}\n" SQ("yh") "  %loss = Identity(%yhs)\n");
    /* reverse, no bias, no initial state, Affine then Elu */
    leaf d[] = {{"x", "f64[4,1,3]", 12},
                {"w", "f64[1,3,3]", 9},
                {"r", "f64[1,3,3]", 9}};
    check(d, 3,
          "  %y, %yh = RNN(%x, %w, %r) {direction = \"reverse\"}\n"
          "  %y2 = Elu(%y)\n" SQ("y2") "  %loss = Identity(%y2s)\n");
}

static void test_gru(void **state)
{
    (void)state;
    leaf a[] = {{"x", "f64[3,2,3]", 18},
                {"w", "f64[1,6,3]", 18},
                {"r", "f64[1,6,2]", 12},
                {"b", "f64[1,12]", 12},
                {"h0", "f64[1,2,2]", 4}};
    /* linear_before_reset, reverse with lengths */
    check(a, 5,
          "  %lens: i32[2] = const [2, 3]\n"
          "  %y, %yh = GRU(%x, %w, %r, %b, %lens, %h0) {direction = "
          "\"reverse\", linear_before_reset = 1}\n" LOSS_YH);
    /* the default form, then bidirectional layout 1 with clip and
     * HardSigmoid / Affine */
    check(a, 5,
          "  %lens: i32[2] = const [3, 1]\n"
          "  %y, %yh = GRU(%x, %w, %r, %b, %lens, %h0)\n" LOSS_YH);
    leaf c[] = {{"x", "f64[2,3,3]", 18},
                {"w", "f64[2,6,3]", 36},
                {"r", "f64[2,6,2]", 24},
                {"b", "f64[2,12]", 24},
                {"h0", "f64[2,2,2]", 8}};
    check(c, 5,
          "  %y, %yh = GRU(%x, %w, %r, %b, _, %h0) {direction = "
          "\"bidirectional\", layout = 1, clip = 1.1, activations = "
          "[\"HardSigmoid\", \"Affine\", \"Sigmoid\", \"Tanh\"], "
          "activation_alpha = [0.3, 0.8], activation_beta = [0.45, "
          "0.1]}\n" LOSS_YH);
}

static void test_lstm(void **state)
{
    (void)state;
    /* peepholes, both initial states, lengths, bidirectional */
    leaf a[] = {{"x", "f64[3,2,3]", 18}, {"w", "f64[2,8,3]", 48},
                {"r", "f64[2,8,2]", 32}, {"b", "f64[2,16]", 32},
                {"h0", "f64[2,2,2]", 8}, {"c0", "f64[2,2,2]", 8},
                {"p", "f64[2,6]", 12}};
    check(a, 7,
          "  %lens: i32[2] = const [3, 2]\n"
          "  %y, %yh, %yc = LSTM(%x, %w, %r, %b, %lens, %h0, %c0, %p) "
          "{direction = \"bidirectional\"}\n" LOSS_ALL);
    /* input_forget, clip, layout 1, reverse; the loss reads Y_c alone */
    leaf c[] = {{"x", "f64[2,3,3]", 18}, {"w", "f64[1,8,3]", 24},
                {"r", "f64[1,8,2]", 16}, {"b", "f64[1,16]", 16},
                {"h0", "f64[2,1,2]", 4}, {"c0", "f64[2,1,2]", 4},
                {"p", "f64[1,6]", 6}};
    check(c, 7,
          "  %lens: i32[2] = const [1, 3]\n"
          "  %y, %yh, %yc = LSTM(%x, %w, %r, %b, %lens, %h0, %c0, %p) "
          "{direction = \"reverse\", layout = 1, input_forget = 1, clip = "
          "0.9}\n" SQ("yc") "  %loss = Identity(%ycs)\n");
    /* other activations, no bias and no states; Y alone */
    leaf d[] = {{"x", "f64[3,1,2]", 6},
                {"w", "f64[1,12,2]", 24},
                {"r", "f64[1,12,3]", 36}};
    check(d, 3,
          "  %y, %yh, %yc = LSTM(%x, %w, %r) {activations = [\"Softsign\", "
          "\"Softplus\", \"Elu\"], activation_alpha = [0.6]}\n" SQ(
              "y") "  %loss = Identity(%ys)\n");
}

/* A sequence length not known before running is declined by name. */
static void test_rnn_symbolic(void **state)
{
    (void)state;
    expect_declined("graph t(%x: f64[seq,1,2]) {\n"
                    "  %w: f64[1,1,2] = const [0.5, -0.3]\n"
                    "  %r: f64[1,1,1] = const [0.2]\n"
                    "  %y, %yh = RNN(%x, %w, %r)\n"
                    "  return %y\n}\n",
                    NULL, 0, "RNN", "known before running");
}

/* An LSTM's joint graph compiled into plans at -O0 and -O2 gives the
 * reference interpreter's numbers. */
static void test_rnn_plan(void **state)
{
    (void)state;
    leaf a[] = {{"x", "f64[3,2,3]", 18}, {"w", "f64[2,8,3]", 48},
                {"r", "f64[2,8,2]", 32}, {"b", "f64[2,16]", 32},
                {"h0", "f64[2,2,2]", 8}, {"c0", "f64[2,2,2]", 8},
                {"p", "f64[2,6]", 12}};
    char *t = graph_text(a, 7,
                         "  %lens: i32[2] = const [3, 2]\n"
                         "  %y, %yh, %yc = LSTM(%x, %w, %r, %b, %lens, %h0, "
                         "%c0, %p) {direction = \"bidirectional\"}\n" LOSS_ALL);
    const char *names[] = {"x", "w", "r", "b", "h0", "c0", "p"};
    assert_int_equal(check_plan(t, names, 7, 0, 1e-12), 9);
    assert_int_equal(check_plan(t, names, 7, 2, 1e-12), 9);
    free(t);
}

/* Allocation failures at every point of building the joint graph of the
 * rules that rebuild their node (a GRU, then GridSample, RoiAlign and
 * Det on its output) give SMELT_ERR_NOMEM and leak nothing (ASan), until
 * the build goes through. */
static void test_rebuild_alloc_failures(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(
        NULL,
        "graph t() {\n"
        "  %x: f64[2,1,2] = const [0.3, -0.2, 0.5, 0.1]\n"
        "  %w: f64[1,3,2] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6]\n"
        "  %r: f64[1,3,1] = const [0.2, -0.1, 0.3]\n"
        "  %lens: i32[1] = const [2]\n"
        "  %y, %yh = GRU(%x, %w, %r, _, %lens) {direction = "
        "\"reverse\", clip = 0.7}\n"
        "  %grid: f64[2,1,2,2] = const [0.1, -0.3, 0.7, 0.2, -0.5, "
        "0.4, 0.3, 0.9]\n"
        "  %s = GridSample(%y, %grid) {mode = \"bicubic\"}\n"
        "  %rois: f64[1,4] = const [0.1, 0.2, 1.3, 0.9]\n"
        "  %b: i64[1] = const [1]\n"
        "  %a = RoiAlign(%s, %rois, %b) {output_height = 2, output_width = 2}\n"
        "  %d = Det(%a)\n"
        "  return %d\n}\n");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    int done = 0;
    long k = 0;
    for (; k < 1000000 && !done; k++) {
        smelt_graph_t *j = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_graph_grad(ctx, g, &o, &j);
        sm_alloc_fail_after(-1);
        done = st == SMELT_OK;
        if (!done) {
            if (st != SMELT_ERR_NOMEM)
                fail_msg("allocation %ld: %s", k, smelt_ctx_error(ctx));
            assert_null(j);
        }
        smelt_graph_free(j);
    }
    assert_true(done);
    assert_true(k > 100); /* failures were injected */
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rnn),
        cmocka_unit_test(test_gru),
        cmocka_unit_test(test_lstm),
        cmocka_unit_test(test_rnn_symbolic),
        cmocka_unit_test(test_rnn_plan),
        cmocka_unit_test(test_rebuild_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
