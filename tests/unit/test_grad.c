/*
 * test_grad.c - smelt_graph_grad on small f64 graphs: every gradient the
 * joint graph returns matches central differences of the forward graph
 * (eps 1e-6, PyTorch's gradcheck tolerances), with broadcasting, values
 * used twice, 1-D matmul operands and frozen paths; the joint graph's
 * signature; and the errors of bad requests.
 */
#include "gradutil.h"

#include "autograd/grad.h"

/* A two-layer perceptron: matmul, broadcast bias, relu, tanh, sigmoid. */
static void test_mlp(void **state)
{
    (void)state;
    const char *t =
        "graph mlp() {\n"
        "  %x: f64[3,4] = const [0.5, -1.0, 2.0, 0.3, 1.5, 0.2, -0.7, 0.9,"
        " -0.4, 0.8, 0.1, -1.2]\n"
        "  %w1: f64[4,2] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8]\n"
        "  %b1: f64[2] = const [0.05, -0.15]\n"
        "  %w2: f64[2,1] = const [0.9, -1.1]\n"
        "  %h: f64[3,2] = MatMul(%x, %w1)\n"
        "  %hb: f64[3,2] = Add(%h, %b1)\n"
        "  %r: f64[3,2] = Tanh(%hb)\n"
        "  %s: f64[3,2] = Sigmoid(%r)\n"
        "  %y: f64[3,1] = MatMul(%s, %w2)\n"
        "  return %y\n"
        "}\n";
    assert_true(check_text(t) == 12 + 8 + 2 + 2);
}

/* A value read twice (y = x*x + x/exp(x) - log(x)), broadcasting on
 * both sides of Mul and Div, a 1-D matmul operand. */
static void test_reuse_broadcast(void **state)
{
    (void)state;
    const char *t = "graph reuse() {\n"
                    "  %a: f64[2,1,3] = const [0.5, 1.0, 2.0, 0.3, 1.5, 0.2]\n"
                    "  %b: f64[4,1] = const [0.7, 1.2, 0.4, 2.5]\n"
                    "  %v: f64[3] = const [0.2, -0.6, 1.3]\n"
                    "  %m: f64[2,4,3] = Mul(%a, %b)\n"
                    "  %d: f64[2,4,3] = Div(%m, %b)\n"
                    "  %e: f64[2,1,3] = Exp(%a)\n"
                    "  %q: f64[2,4,3] = Div(%d, %e)\n"
                    "  %l: f64[2,1,3] = Log(%a)\n"
                    "  %s: f64[2,4,3] = Sub(%q, %l)\n"
                    "  %aa: f64[2,1,3] = Mul(%a, %a)\n"
                    "  %t: f64[2,4,3] = Add(%s, %aa)\n"
                    "  %n: f64[2,4,3] = Neg(%t)\n"
                    "  %p: f64[2,4] = MatMul(%n, %v)\n"
                    "  %r: f64[2,4] = Relu(%p)\n"
                    "  return %r\n"
                    "}\n";
    assert_true(check_text(t) == 6 + 4 + 3);
}

/* A [2,3,2,4] batch by a [4,3] matrix (a linear layer on sequences):
 * the rule folds the batch into the rows of one Gemm per gradient, dW
 * = A^T dY K = 12 rows deep; checked against central differences and on
 * the compiled plan at -O3. */
static void test_matmul_rows(void **state)
{
    (void)state;
    const char *t =
        "graph rows() {\n"
        "  %a: f64[2,3,2,4] = const [0.5, -1.0, 2.0, 0.3, 1.5, 0.2, -0.7,"
        " 0.9, -0.4, 0.8, 0.1, -1.2, 0.6, 0.25, -0.35, 1.1, -0.9, 0.45,"
        " 0.05, -0.6, 1.3, -0.15, 0.7, 0.4, -1.4, 0.35, 0.95, -0.05, 0.55,"
        " -0.75, 0.15, 1.25, -0.45, 0.65, -0.25, 0.85, 1.05, -0.55, 0.2,"
        " -0.3, 0.75, -0.65, 0.1, 0.9, -1.1, 0.3, 0.6, -0.2]\n"
        "  %w: f64[4,3] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8,"
        " 0.9, -0.35, 0.45, 0.25]\n"
        "  %y: f64[2,3,2,3] = MatMul(%a, %w)\n"
        "  %s: f64[2,3,2,3] = Sigmoid(%y)\n"
        "  return %s\n"
        "}\n";
    assert_true(check_text(t) == 48 + 12);
    assert_true(check_plan(t, NULL, 0, 3, 1e-5) > 0);
    /* the form itself: two Gemms, no batched MatMul summed by a
     * ReduceSum, no Transpose (the one MatMul left is the forward's, the
     * one ReduceSum the loss) */
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(NULL, t);
    smelt_graph_t *j = joint_of(ctx, g, NULL, 0);
    const sm_block *b = ((sm_graph *)j)->top;
    int n[4] = {0};
    static const sm_op ops[4] = {SM_OP_Gemm, SM_OP_MatMul, SM_OP_ReduceSum,
                                 SM_OP_Transpose};
    for (int i = 0; i < b->n_nodes; i++)
        for (int k = 0; k < 4; k++)
            n[k] += b->nodes[i]->op == ops[k];
    assert_int_equal(n[0], 2);
    assert_int_equal(n[1], 1);
    assert_int_equal(n[2], 1);
    assert_int_equal(n[3], 0);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The joint graph: outputs are the forward ones, the loss, then the
 * gradients named <wrt>.grad; with params_as_inputs the initializers are
 * inputs the gradient outputs point back to. */
static void test_signature(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, "graph s(%x: f32[2,2]) {\n"
                                      "  %w: f32[2,2] = const [1, 2, 3, 4]\n"
                                      "  %k: i64[1] = const [1]\n"
                                      "  %y: f32[2,2] = MatMul(%x, %w)\n"
                                      "  return %y\n"
                                      "}\n");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    assert_int_equal(smelt_grad_options_default(&o), SMELT_OK);
    o.params_as_inputs = 1;
    o.loss_reduce = SMELT_LOSS_MEAN;
    smelt_graph_t *j = NULL;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_grads(j), 1); /* %k is not float */
    assert_int_equal(smelt_graph_num_outputs(j), 3);
    assert_int_equal(smelt_graph_loss_output(j), 1);
    assert_string_equal(smelt_graph_output_name(j, 1), "loss");
    assert_int_equal(smelt_graph_grad_output(j, 0), 2);
    assert_string_equal(smelt_graph_output_name(j, 2), "w.grad");
    assert_string_equal(smelt_graph_grad_wrt(j, 0), "w");
    assert_int_equal(smelt_graph_grad_input(j, 0), 1);
    assert_string_equal(smelt_graph_input_name(j, 1), "w");
    assert_int_equal(smelt_graph_num_grads(g), 0);
    assert_int_equal(smelt_graph_loss_output(g), -1);
    /* a copy keeps the roles */
    smelt_graph_t *c = NULL;
    assert_int_equal(smelt_graph_clone(ctx, j, &c), SMELT_OK);
    assert_int_equal(smelt_graph_grad_input(c, 0), 1);
    assert_string_equal(smelt_graph_grad_wrt(c, 0), "w");
    /* mean loss over 4 elements: d/dw of mean(x w) = x^T 1 / 4 */
    smelt_tensor_t *in[2], *out[3] = {0};
    int64_t dims[2] = {2, 2};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &in[0]),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &in[1]),
                     SMELT_OK);
    float xs[4] = {1, 2, 3, 4}, ws[4] = {0.5f, 1, -1, 2};
    memcpy(smelt_tensor_data(in[0]), xs, sizeof xs);
    memcpy(smelt_tensor_data(in[1]), ws, sizeof ws);
    if (smelt_graph_run_reference(ctx, c, in, 2, out, 3) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    const float *dw = smelt_tensor_data(out[2]);
    /* dw[k][n] = sum_m x[m][k] / 4 */
    assert_true(fabsf(dw[0] - 1.0f) < 1e-6f && fabsf(dw[1] - 1.0f) < 1e-6f);
    assert_true(fabsf(dw[2] - 1.5f) < 1e-6f && fabsf(dw[3] - 1.5f) < 1e-6f);
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(out[i]);
    smelt_tensor_free(in[0]);
    smelt_tensor_free(in[1]);
    smelt_graph_free(c);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Expects smelt_graph_grad on text with options o to fail with a message
 * containing want. */
static void expect_error(const char *text, const smelt_grad_options *o,
                         const char *want)
{
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_not_equal(smelt_graph_grad(ctx, g, o, &j), SMELT_OK);
    assert_null(j);
    if (!strstr(smelt_ctx_error(ctx), want))
        fail_msg("error '%s' lacks '%s'", smelt_ctx_error(ctx), want);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_errors(void **state)
{
    (void)state;
    const char *argmax = "graph a(%x: f32[2,3]) {\n"
                         "  %w: f32[2,3] = const [1, 2, 3, 4, 5, 6]\n"
                         "  %m: f32[2,3] = Mul(%x, %w)\n"
                         "  %i: i64[2,1] = ArgMax(%m) {axis = 1}\n"
                         "  %f: f32[2,1] = Cast(%i) {to = 1}\n"
                         "  return %f\n"
                         "}\n";
    expect_error(argmax, NULL, "path stops at");
    expect_error(argmax, NULL, "ArgMax");
    const char *noinit = "graph n(%x: f32[2]) {\n"
                         "  %y: f32[2] = Relu(%x)\n"
                         "  return %y\n"
                         "}\n";
    expect_error(noinit, NULL, "no floating-point initializers");
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    const char *names[] = {"nope"};
    o.wrt = names;
    o.n_wrt = 1;
    expect_error(noinit, &o, "'nope'");
    o.loss = "zzz";
    names[0] = "x";
    expect_error(noinit, &o, "no value named 'zzz'");
    o.loss = NULL;
    o.loss_reduce = 7;
    expect_error(noinit, &o, "loss_reduce");
    const char *intloss = "graph i(%x: f32[2]) {\n"
                          "  %s: i64[1] = Shape(%x)\n"
                          "  return %s\n"
                          "}\n";
    smelt_grad_options_default(&o);
    o.wrt = names;
    o.n_wrt = 1;
    expect_error(intloss, &o, "must be floating-point");
}

/* Ops of the table marked sm_grad_todo (a rule not written yet): none;
 * every op has its rule or a marker (sm_grad_none, sm_grad_zero). */
#define TODO_CEILING 0

static void test_rule_column(void **state)
{
    (void)state;
    int todo = 0;
    for (int op = 0; op < SM_OP_COUNT; op++) {
        sm_grad_fn r = sm_grad_rule((sm_op)op);
        assert_non_null(r);
        if (r == sm_grad_todo) {
            print_message("no gradient rule yet: %s\n",
                          sm_op_info_get((sm_op)op)->name);
            todo++;
        }
    }
    print_message("%d ops without a gradient rule\n", todo);
    assert_true(todo <= TODO_CEILING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_reuse_broadcast),
        cmocka_unit_test(test_matmul_rows),
        cmocka_unit_test(test_signature),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_rule_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
