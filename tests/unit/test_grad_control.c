/*
 * test_grad_control.c - gradients through If and Loop (rules_control.c,
 * rules_loop.c): every gradient of small f64 graphs against central
 * differences — If taking either branch, branches reading different
 * outer values, a nested If, Loops with a trip count, a condition, scan
 * outputs, an outer weight (an RNN), a Loop nested in a Loop and in an
 * If; a joint graph with a Loop run as a compiled plan; and a script
 * function's for loop.
 */
#include <stdio.h>

#include "gradutil.h"

/* text with each "$1" replaced by a and each "$2" by b, into out. */
static const char *subst(char *out, size_t size, const char *text,
                         const char *a, const char *b)
{
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < size; p++) {
        const char *r = NULL;
        if (p[0] == '$' && (p[1] == '1' || p[1] == '2'))
            r = p[1] == '1' ? a : b;
        if (!r) {
            out[o++] = *p;
            continue;
        }
        size_t n = strlen(r);
        assert_true(o + n < size);
        memcpy(out + o, r, n);
        o += n;
        p++;
    }
    assert_true(o + 1 < size);
    out[o] = 0;
    return out;
}

/* If on a constant condition, with cond true and false: then multiplies
 * by w and adds b, else squares a (a value each branch reads
 * differently: w and b in one, a in the other, x in both). */
static const char *if_text = "graph f() {\n"
                             "  %c: bool[] = const $1\n"
                             "  %x: f64[2,3] = const [0.5, -1.0, 2.0, 0.3, "
                             "1.5, -0.2]\n"
                             "  %w: f64[3] = const [0.7, -1.2, 0.4]\n"
                             "  %b: f64[2,1] = const [0.1, -0.3]\n"
                             "  %a: f64[2,3] = const [1.1, 0.9, -0.6, 0.2, "
                             "0.8, 1.3]\n"
                             "  %h: f64[2,3] = Tanh(%x)\n"
                             "  %r: f64[2,3] = If(%c) then_branch() {\n"
                             "    %m: f64[2,3] = Mul(%h, %w)\n"
                             "    %t: f64[2,3] = Add(%m, %b)\n"
                             "    return %t\n"
                             "  } else_branch() {\n"
                             "    %aa: f64[2,3] = Mul(%a, %a)\n"
                             "    %s: f64[2,3] = Sub(%aa, %h)\n"
                             "    return %s\n"
                             "  }\n"
                             "  %y: f64[2,3] = Mul(%r, %h)\n"
                             "  return %y\n"
                             "}\n";

static void test_if_branches(void **state)
{
    (void)state;
    char t[2048];
    /* every wrt value gets a gradient (zeros where the branch taken does
     * not read it), checked numerically: x, w, b, a */
    assert_int_equal(check_text(subst(t, sizeof t, if_text, "true", NULL)),
                     6 + 3 + 2 + 6);
    assert_int_equal(check_text(subst(t, sizeof t, if_text, "false", NULL)),
                     6 + 3 + 2 + 6);
}

/* An If whose then branch holds another If; the inner branches read a
 * value of the outer branch and an outer weight; one branch returns an
 * outer value as it is, and two results come from one value. */
static const char *nested_text =
    "graph n() {\n"
    "  %c: bool[] = const $1\n"
    "  %d: bool[] = const $2\n"
    "  %x: f64[3] = const [0.5, -1.0, 2.0]\n"
    "  %w: f64[3] = const [0.7, -1.2, 0.4]\n"
    "  %r: f64[3], %q: f64[3] = If(%c) then_branch() {\n"
    "    %e: f64[3] = Exp(%x)\n"
    "    %i: f64[3] = If(%d) then_branch() {\n"
    "      %m: f64[3] = Mul(%e, %w)\n"
    "      return %m\n"
    "    } else_branch() {\n"
    "      %s: f64[3] = Sigmoid(%e)\n"
    "      return %s\n"
    "    }\n"
    "    %o: f64[3] = Mul(%i, %x)\n"
    "    return %o, %o\n"
    "  } else_branch() {\n"
    "    %n: f64[3] = Neg(%w)\n"
    "    return %x, %n\n"
    "  }\n"
    "  %y: f64[3] = Mul(%r, %q)\n"
    "  %z: f64[3] = Add(%y, %r)\n"
    "  return %z\n"
    "}\n";

static void test_if_nested(void **state)
{
    (void)state;
    const char *cs[4][2] = {{"true", "true"},
                            {"true", "false"},
                            {"false", "true"},
                            {"false", "false"}};
    for (int i = 0; i < 4; i++) {
        char t[2048];
        subst(t, sizeof t, nested_text, cs[i][0], cs[i][1]);
        assert_int_equal(check_text(t), 3 + 3);
    }
}

/* A Loop with trip count M computing x *= w, M times: d/dw and d/dx of
 * x * w^M; M = 0 runs no iteration (x passes through). */
static const char *pow_text = "graph p() {\n"
                              "  %M: i64[] = const $1\n"
                              "  %x: f64[2,2] = const [0.5, -1.0, 2.0, 0.3]\n"
                              "  %w: f64[2,2] = const [0.9, -1.1, 0.8, 1.2]\n"
                              "  %y: f64[2,2] = Loop(%M, _, %x) body(%i: "
                              "i64[], %c: bool[], %h: f64[2,2]) {\n"
                              "    %h2: f64[2,2] = Mul(%h, %w)\n"
                              "    return %c, %h2\n"
                              "  }\n"
                              "  return %y\n"
                              "}\n";

static void test_loop_pow(void **state)
{
    (void)state;
    const char *trips[3] = {"4", "1", "0"};
    for (int i = 0; i < 3; i++) {
        char t[2048];
        subst(t, sizeof t, pow_text, trips[i], NULL);
        assert_int_equal(check_text(t), 4 + 4);
    }
}

/* An RNN: h = tanh(h W + x_t U) over the rows of an outer X (row i
 * picked by a one-hot of the iteration number), each h a scan output;
 * the loss weighs every step's h and the final one. */
static const char *rnn_text =
    "graph rnn() {\n"
    "  %M: i64[] = const 4\n"
    "  %rows: i64[4] = const [0, 1, 2, 3]\n"
    "  %X: f64[4,3] = const [0.5, -1.0, 2.0, 0.3, 1.5, -0.2, 0.7, 0.1,"
    " -0.9, 1.2, -0.4, 0.6]\n"
    "  %W: f64[2,2] = const [0.4, -0.6, 0.3, 0.5]\n"
    "  %U: f64[3,2] = const [0.2, -0.1, 0.5, 0.3, -0.4, 0.25]\n"
    "  %h0: f64[2] = const [0.1, -0.2]\n"
    "  %k: f64[4,2] = const [1.0, 0.5, -0.7, 0.9, 0.3, 1.1, -1.2, 0.8]\n"
    "  %h: f64[2], %hs: f64[4,2] = Loop(%M, _, %h0) body(%i: i64[],"
    " %c: bool[], %hp: f64[2]) {\n"
    "    %is: bool[4] = Equal(%rows, %i)\n"
    "    %oh: f64[4] = Cast(%is) {to = 11}\n"
    "    %xt: f64[3] = MatMul(%oh, %X)\n"
    "    %a: f64[2] = MatMul(%hp, %W)\n"
    "    %b: f64[2] = MatMul(%xt, %U)\n"
    "    %s: f64[2] = Add(%a, %b)\n"
    "    %hn: f64[2] = Tanh(%s)\n"
    "    return %c, %hn, %hn\n"
    "  }\n"
    "  %y: f64[4,2] = Mul(%hs, %k)\n"
    "  %z: f64[4,2] = Add(%y, %h)\n"
    "  return %z\n"
    "}\n";

static void test_loop_rnn(void **state)
{
    (void)state;
    /* X, W, U, h0, k */
    assert_int_equal(check_text(rnn_text), 12 + 4 + 6 + 2 + 8);
}

/* A while loop: a condition input and a condition the body computes
 * from a float value (stops after a data-dependent number of steps, five
 * here), without a trip count or with one that stops it first (3); an
 * integer counter carried beside, and a carried value the body never
 * reads (overwritten each step). */
static void test_loop_while(void **state)
{
    (void)state;
    const char *t =
        "graph w() {\n"
        "  %M: i64[] = const 3\n"
        "  %c0: bool[] = const true\n"
        "  %lim: f64[] = const 6.0\n"
        "  %x: f64[3] = const [0.5, 1.0, 0.8]\n"
        "  %w: f64[3] = const [1.3, 1.1, 1.2]\n"
        "  %v: f64[3] = const [0.2, -0.3, 0.1]\n"
        "  %n0: i64[] = const 0\n"
        "  %one: i64[] = const 1\n"
        "  %h: f64[3], %n: i64[], %p: f64[3] = Loop($1, %c0, %x, %n0, %v)"
        " body(%i: i64[], %c: bool[], %hp: f64[3], %np: i64[],"
        " %pp: f64[3]) {\n"
        "    %m: f64[3] = Mul(%hp, %w)\n"
        "    %h2: f64[3] = Add(%m, %v)\n"
        "    %p2: f64[3] = Mul(%hp, %hp)\n"
        "    %n2: i64[] = Add(%np, %one)\n"
        "    %s: f64[] = ReduceSum(%h2) {keepdims = 0}\n"
        "    %go: bool[] = Less(%s, %lim)\n"
        "    return %go, %h2, %n2, %p2\n"
        "  }\n"
        "  %y: f64[3] = Mul(%h, %p)\n"
        "  return %y\n"
        "}\n";
    /* x, w, v, lim (no path: zeros, numerically zero too) */
    char buf[2048];
    assert_int_equal(check_text(subst(buf, sizeof buf, t, "_", NULL)),
                     3 + 3 + 3 + 1);
    assert_int_equal(check_text(subst(buf, sizeof buf, t, "%M", NULL)),
                     3 + 3 + 3 + 1);
}

/* A Loop in a Loop body, an If in a Loop body (on the iteration
 * number), and a Loop in an If branch. */
static void test_loop_nested(void **state)
{
    (void)state;
    const char *t =
        "graph nl() {\n"
        "  %M: i64[] = const 3\n"
        "  %N: i64[] = const 2\n"
        "  %two: i64[] = const 2\n"
        "  %x: f64[2] = const [0.5, -0.4]\n"
        "  %w: f64[2] = const [0.9, 1.1]\n"
        "  %v: f64[2] = const [0.2, -0.3]\n"
        "  %h: f64[2] = Loop(%M, _, %x) body(%i: i64[], %c: bool[],"
        " %hp: f64[2]) {\n"
        "    %q: f64[2] = Loop(%N, _, %hp) body(%j: i64[], %d: bool[],"
        " %qp: f64[2]) {\n"
        "      %m: f64[2] = Mul(%qp, %w)\n"
        "      %q2: f64[2] = Tanh(%m)\n"
        "      return %d, %q2\n"
        "    }\n"
        "    %early: bool[] = Less(%i, %two)\n"
        "    %r: f64[2] = If(%early) then_branch() {\n"
        "      %a: f64[2] = Add(%q, %v)\n"
        "      return %a\n"
        "    } else_branch() {\n"
        "      %b: f64[2] = Mul(%q, %hp)\n"
        "      return %b\n"
        "    }\n"
        "    return %c, %r\n"
        "  }\n"
        "  %cond: bool[] = const true\n"
        "  %z: f64[2] = If(%cond) then_branch() {\n"
        "    %u: f64[2] = Loop(%N, _, %h) body(%k: i64[], %e: bool[],"
        " %up: f64[2]) {\n"
        "      %u2: f64[2] = Mul(%up, %v)\n"
        "      %u3: f64[2] = Add(%u2, %w)\n"
        "      return %e, %u3\n"
        "    }\n"
        "    return %u\n"
        "  } else_branch() {\n"
        "    return %h\n"
        "  }\n"
        "  return %z\n"
        "}\n";
    assert_int_equal(check_text(t), 2 + 2 + 2);
}

/* Carried values that trade places each step, (a, b) -> (b * w, a), the
 * second starting from a value no gradient reaches (a cast of an
 * integer): it needs a gradient from the first step's w on, which only
 * the fixed point over the carried values finds. And an If whose
 * branches return constants of their own beside computed values. */
static void test_carried_swap(void **state)
{
    (void)state;
    const char *t =
        "graph s() {\n"
        "  %M: i64[] = const 3\n"
        "  %a0: f64[2] = const [0.5, -1.5]\n"
        "  %bi: i64[2] = const [2, -1]\n"
        "  %w: f64[2] = const [0.9, 1.3]\n"
        "  %b0: f64[2] = Cast(%bi) {to = 11}\n"
        "  %a: f64[2], %b: f64[2] = Loop(%M, _, %a0, %b0) body(%i: i64[],"
        " %c: bool[], %ap: f64[2], %bp: f64[2]) {\n"
        "    %bw: f64[2] = Mul(%bp, %w)\n"
        "    return %c, %bw, %ap\n"
        "  }\n"
        "  %k: bool[] = const $1\n"
        "  %r: f64[2], %q: f64[2] = If(%k) then_branch() {\n"
        "    %one: f64[2] = const [1.0, 2.0]\n"
        "    %m: f64[2] = Mul(%a, %b)\n"
        "    return %m, %one\n"
        "  } else_branch() {\n"
        "    %two: f64[2] = const [3.0, -1.0]\n"
        "    return %two, %a\n"
        "  }\n"
        "  %y: f64[2] = Mul(%r, %q)\n"
        "  %z: f64[2] = Add(%y, %b)\n"
        "  return %z\n"
        "}\n";
    char buf[2048];
    assert_int_equal(check_text(subst(buf, sizeof buf, t, "true", NULL)),
                     2 + 2);
    assert_int_equal(check_text(subst(buf, sizeof buf, t, "false", NULL)),
                     2 + 2);
}

/* The RNN's joint graph, weights fed as inputs, compiled into a plan at
 * every level: each output (forward, loss, gradients) matches the
 * reference interpreter's run of the same joint graph. */
static void test_loop_plan(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, rnn_text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.params_as_inputs = 1;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    int n_in = smelt_graph_num_inputs(j), n_out = smelt_graph_num_outputs(j);
    assert_int_equal(n_in, 5); /* X, W, U, h0, k */
    assert_true(n_out <= 16);
    smelt_tensor_t *in[16] = {0}, *ref[16] = {0};
    for (int i = 0; i < n_in; i++) {
        sm_value *c = sm_graph_find_value(g, smelt_graph_input_name(j, i));
        assert_non_null(c);
        assert_int_equal(sm_tensor_clone(ctx, c->data, &in[i]), SMELT_OK);
    }
    if (smelt_graph_run_reference(ctx, j, in, n_in, ref, n_out) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    for (int level = 0; level <= 3; level++) {
        smelt_plan_options po;
        smelt_plan_options_default(&po);
        po.level = level;
        smelt_plan_t *p = NULL;
        if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
            fail_msg("compile -O%d: %s", level, smelt_ctx_error(ctx));
        smelt_tensor_t *out[16] = {0};
        if (smelt_plan_run(ctx, p, in, n_in, out, n_out) != SMELT_OK)
            fail_msg("plan run -O%d: %s", level, smelt_ctx_error(ctx));
        for (int k = 0; k < n_out; k++) {
            assert_int_equal(smelt_tensor_numel(out[k]),
                             smelt_tensor_numel(ref[k]));
            for (int64_t i = 0; i < smelt_tensor_numel(ref[k]); i++) {
                double a = smelt_tensor_get_f64(out[k], i);
                double b = smelt_tensor_get_f64(ref[k], i);
                if (fabs(a - b) > 1e-12 + 1e-9 * fabs(b))
                    fail_msg("-O%d output %s[%lld]: plan %.17g, reference "
                             "%.17g",
                             level, smelt_graph_output_name(j, k), (long long)i,
                             a, b);
            }
            smelt_tensor_free(out[k]);
        }
        smelt_plan_free(p);
    }
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    for (int k = 0; k < n_out; k++)
        smelt_tensor_free(ref[k]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A script function whose for loop has a run-time bound (a Loop with a
 * computed trip count): the gradients with respect to its tensor inputs
 * match central differences, for several trip counts. */
static void test_script_loop(void **state)
{
    (void)state;
    const char *src = "def f(x: Tensor[f64, 3], w: Tensor[f64, 3], n: int):\n"
                      "    for i in range(n):\n"
                      "        x = tanh(x * w + 0.1) + x * 0.5\n"
                      "    return (x * x).sum()\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    if (smelt_script_compile(ctx, src, strlen(src), "f.py", "f", &g) !=
        SMELT_OK)
        fail_msg("script: %s", smelt_ctx_error(ctx));
    int loops = 0;
    for (int i = 0; i < g->top->n_nodes; i++)
        loops += g->top->nodes[i]->op == SM_OP_Loop;
    assert_int_equal(loops, 1);
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    const char *wrt[2] = {"x", "w"};
    o.wrt = wrt;
    o.n_wrt = 2;
    smelt_graph_t *j = NULL;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_inputs(g), 3);
    double xs[3] = {0.5, -1.0, 0.8}, ws[3] = {0.9, -0.7, 1.3};
    int64_t d3[1] = {3};
    smelt_tensor_t *in[3];
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 1, d3, &in[0]),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 1, d3, &in[1]),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 0, NULL, &in[2]),
                     SMELT_OK);
    memcpy(smelt_tensor_data(in[0]), xs, sizeof xs);
    memcpy(smelt_tensor_data(in[1]), ws, sizeof ws);
    int64_t trips[3] = {3, 1, 0};
    for (int t = 0; t < 3; t++) {
        *(int64_t *)smelt_tensor_data(in[2]) = trips[t];
        int n_out = smelt_graph_num_outputs(j);
        smelt_tensor_t *out[8] = {0};
        assert_true(n_out <= 8);
        if (smelt_graph_run_reference(ctx, j, in, 3, out, n_out) != SMELT_OK)
            fail_msg("run joint: %s", smelt_ctx_error(ctx));
        for (int k = 0; k < 2; k++) {
            smelt_tensor_t *d = out[smelt_graph_grad_output(j, k)];
            double *v = smelt_tensor_data(in[k]);
            for (int i = 0; i < 3; i++) {
                double keep = v[i];
                v[i] = keep + EPS;
                double up = run_sum_in(g, in, 3);
                v[i] = keep - EPS;
                double dn = run_sum_in(g, in, 3);
                v[i] = keep;
                double num = (up - dn) / (2 * EPS);
                double ana = smelt_tensor_get_f64(d, i);
                if (fabs(ana - num) > ATOL + RTOL * fabs(num))
                    fail_msg("n=%lld d/d%s[%d]: analytic %.9g, numeric %.9g",
                             (long long)trips[t], wrt[k], i, ana, num);
            }
        }
        for (int k = 0; k < n_out; k++)
            smelt_tensor_free(out[k]);
    }
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(in[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_if_branches),  cmocka_unit_test(test_if_nested),
        cmocka_unit_test(test_loop_pow),     cmocka_unit_test(test_loop_rnn),
        cmocka_unit_test(test_loop_while),   cmocka_unit_test(test_loop_nested),
        cmocka_unit_test(test_carried_swap), cmocka_unit_test(test_loop_plan),
        cmocka_unit_test(test_script_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
