/*
 * test_grad_pointwise.c - the gradient rules of the pointwise ops (unary
 * math, activations, casts, Dropout, the broadcasting binary and n-ary
 * ops) and of the reductions beyond ReduceSum/ReduceMean, each checked
 * against f64 central differences on inputs away from the kinks, with
 * broadcasting and every attribute that changes the math; the tie rules
 * (where differences say nothing) checked against their definition; and
 * a joint graph of many of them compiled to a plan, whose numbers must
 * match the reference interpreter's.
 */
#include <stdio.h>

#include "gradutil.h"

/* Inputs for the unary ops: general, positive, inside (-1, 1), above 1. */
#define GEN "-1.7, -0.6, -0.2, 0.3, 0.9, 2.1"
#define POS "0.3, 0.8, 1.4, 2.2, 0.5, 3.1"
#define UNIT "-0.8, -0.4, -0.1, 0.2, 0.5, 0.7"
#define GT1 "1.2, 1.5, 2.0, 3.3, 1.1, 4.0"

/* Checks OP(x) {attrs} on x: f64[2,3] = xs, the result weighted
 * elementwise so that each element's output gradient differs. */
static void unary(const char *op, const char *attrs, const char *xs)
{
    char t[1024];
    snprintf(t, sizeof t,
             "graph u() {\n"
             "  %%x: f64[2,3] = const [%s]\n"
             "  %%w: f64[2,3] = const [0.7, -1.3, 0.4, 1.9, -0.8, 1.1]\n"
             "  %%y = %s(%%x) %s\n"
             "  %%z = Mul(%%y, %%w)\n"
             "  return %%z\n"
             "}\n",
             xs, op, attrs ? attrs : "");
    int n = check_text(t);
    if (n != 12)
        fail_msg("%s: %d gradient elements checked, expected 12", op, n);
}

static void test_math(void **state)
{
    (void)state;
    unary("Abs", NULL, GEN);
    unary("Sqrt", NULL, POS);
    unary("Erf", NULL, GEN);
    unary("Reciprocal", NULL, GEN);
    unary("Sin", NULL, GEN);
    unary("Cos", NULL, GEN);
    unary("Tan", NULL, "-1.2, -0.6, -0.2, 0.3, 0.9, 1.3");
    unary("Asin", NULL, UNIT);
    unary("Acos", NULL, UNIT);
    unary("Atan", NULL, GEN);
    unary("Sinh", NULL, GEN);
    unary("Cosh", NULL, GEN);
    unary("Asinh", NULL, GEN);
    unary("Acosh", NULL, GT1);
    unary("Atanh", NULL, UNIT);
    unary("Cast", "{to = 11}", GEN); /* f64 to f64 */
}

static void test_activations(void **state)
{
    (void)state;
    unary("Softplus", NULL, GEN);
    unary("LeakyRelu", NULL, GEN);
    unary("LeakyRelu", "{alpha = 0.3}", GEN);
    unary("Elu", NULL, GEN);
    unary("Elu", "{alpha = 0.7}", GEN);
    unary("Selu", NULL, GEN);
    unary("Selu", "{alpha = 1.2, gamma = 0.9}", GEN);
    unary("Celu", NULL, GEN);
    unary("Celu", "{alpha = 1.5}", GEN);
    unary("ThresholdedRelu", NULL, GEN);
    unary("ThresholdedRelu", "{alpha = 0.1}", GEN);
    unary("HardSigmoid", NULL, "-3.6, -2.1, -0.4, 0.8, 2.6, 3.5");
    unary("HardSigmoid", "{alpha = 0.4, beta = 0.3}", GEN);
    unary("HardSwish", NULL, "-3.6, -2.1, -0.4, 0.8, 2.6, 3.5");
    unary("Softsign", NULL, GEN);
    unary("Mish", NULL, GEN);
    unary("Shrink", NULL, "-1.3, -0.3, 0.1, 0.45, 0.7, 2.0");
    unary("Shrink", "{lambd = 0.8, bias = 0.3}", GEN);
    unary("Gelu", NULL, GEN);
    unary("Gelu", "{approximate = \"none\"}", GEN);
    unary("Gelu", "{approximate = \"tanh\"}", GEN);
}

/* Other ranks: a scalar, and a shape with ones in it. */
static void test_unary_shapes(void **state)
{
    (void)state;
    assert_int_equal(check_text("graph s() {\n"
                                "  %x: f64[] = const 0.4\n"
                                "  %e = Erf(%x)\n"
                                "  %y = Mul(%e, %e)\n"
                                "  return %y\n"
                                "}\n"),
                     1);
    assert_int_equal(check_text("graph s() {\n"
                                "  %x: f64[3,1,2] = const [0.3, -1.1, 2.0,"
                                " -0.4, 0.8, -2.2]\n"
                                "  %m = Mish(%x)\n"
                                "  %a = Atan(%m)\n"
                                "  %y = Mul(%a, %x)\n"
                                "  return %y\n"
                                "}\n"),
                     6);
}

/* The binary and n-ary ops with three broadcast shapes: a f64[2,3],
 * b f64[3], c f64[2,1]; `body` computes %y from them. */
static int broadcast3(const char *body, const char *as, const char *bs,
                      const char *cs)
{
    char t[2048];
    snprintf(t, sizeof t,
             "graph b() {\n"
             "  %%a: f64[2,3] = const [%s]\n"
             "  %%b: f64[3] = const [%s]\n"
             "  %%c: f64[2,1] = const [%s]\n"
             "  %%w: f64[2,3] = const [0.7, -1.3, 0.4, 1.9, -0.8, 1.1]\n"
             "%s"
             "  %%z = Mul(%%y, %%w)\n"
             "  return %%z\n"
             "}\n",
             as, bs, cs, body);
    return check_text(t);
}

#define A3 "0.5, 1.2, 2.0, 0.8, 1.7, 3.0"
#define B3 "2.0, -0.5, 1.3"
#define C3 "0.9, 1.45"

static void test_binary(void **state)
{
    (void)state;
    /* pow: base and exponent both broadcast */
    assert_int_equal(broadcast3("  %p = Pow(%a, %b)\n"
                                "  %y = Pow(%c, %p)\n",
                                A3, B3, C3),
                     6 + 3 + 2 + 6);
    /* min / max over three inputs, distinct values, and of one */
    const char *mn = "-0.3, 1.2, 2.5, 0.85, -1.7, 3.0";
    const char *mb = "0.1, 1.0, -0.6";
    const char *mc = "0.4, -0.2";
    assert_int_equal(broadcast3("  %y = Max(%a, %b, %c)\n", mn, mb, mc),
                     6 + 3 + 2 + 6);
    assert_int_equal(broadcast3("  %y = Min(%a, %b, %c)\n", mn, mb, mc),
                     6 + 3 + 2 + 6);
    assert_int_equal(broadcast3("  %m = Max(%b)\n"
                                "  %y = Mul(%m, %a)\n",
                                mn, mb, mc),
                     6 + 3 + 2 + 6);
    assert_int_equal(broadcast3("  %m = Max(%b, %c)\n"
                                "  %y = Min(%m, %a)\n",
                                mn, mb, mc),
                     6 + 3 + 2 + 6);
    /* sum and mean */
    assert_int_equal(broadcast3("  %s = Sum(%a, %b, %c)\n"
                                "  %m = Mean(%c, %s, %b)\n"
                                "  %y = Mul(%m, %s)\n",
                                A3, B3, C3),
                     6 + 3 + 2 + 6);
    /* where: a broadcast condition, both branches broadcast */
    assert_int_equal(broadcast3("  %k: bool[2,3] = const [true, false, true,"
                                " false, false, true]\n"
                                "  %e = Where(%k, %b, %c)\n"
                                "  %y = Mul(%e, %a)\n",
                                A3, B3, C3),
                     6 + 3 + 2 + 6);
    /* mod, fmod = 1: quotients away from integers, negative operands */
    assert_int_equal(broadcast3("  %y = Mod(%a, %b) {fmod = 1}\n",
                                "5.3, -4.1, 2.7, -7.9, 3.3, 1.2",
                                "2.0, 1.5, -0.7", C3),
                     6 + 3 + 2 + 6); /* c unused: zeros */
}

/* pow with an integer exponent (only the base gets a gradient) and with
 * a scalar one, prelu with a per-channel slope and with one slope. */
static void test_pow_prelu(void **state)
{
    (void)state;
    assert_int_equal(check_text("graph p() {\n"
                                "  %a: f64[2,3] = const [" A3 "]\n"
                                "  %b: i64[3] = const [2, 3, -1]\n"
                                "  %y = Pow(%a, %b)\n"
                                "  %z = Mul(%y, %a)\n"
                                "  return %z\n"
                                "}\n"),
                     6);
    assert_int_equal(check_text("graph p() {\n"
                                "  %a: f64[2,3] = const [" A3 "]\n"
                                "  %e: f64[] = const 1.7\n"
                                "  %y = Pow(%a, %e)\n"
                                "  %s = Sum(%y, %e)\n"
                                "  %z = Mul(%s, %a)\n"
                                "  return %z\n"
                                "}\n"),
                     6 + 1);
    assert_int_equal(check_text("graph p() {\n"
                                "  %x: f64[2,3] = const [" GEN "]\n"
                                "  %s: f64[1] = const [0.25]\n"
                                "  %y = PRelu(%x, %s)\n"
                                "  %z = Mul(%y, %x)\n"
                                "  return %z\n"
                                "}\n"),
                     6 + 1);
    assert_int_equal(check_text("graph p() {\n"
                                "  %x: f64[2,3,2] = const [0.5, -1.2, 2.0,"
                                " -0.8, 1.7, -3.0, -0.4, 0.9, -1.1, 0.6,"
                                " -2.2, 1.3]\n"
                                "  %s: f64[3,1] = const [0.2, -0.5, 1.5]\n"
                                "  %y = PRelu(%x, %s)\n"
                                "  %z = Mul(%y, %y)\n"
                                "  return %z\n"
                                "}\n"),
                     12 + 3);
}

/* clip with both bounds, one, none, crossed bounds (hi wins) and a
 * bound of shape [1] */
static void test_clip(void **state)
{
    (void)state;
    static const char *calls[] = {
        "Clip(%x, %lo, %hi)", "Clip(%x, %lo)",      "Clip(%x, _, %hi)",
        "Clip(%x)",           "Clip(%x, %hi, %lo)",
    };
    for (int i = 0; i < 5; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "graph c() {\n"
                 "  %%x: f64[2,3] = const [" GEN "]\n"
                 "  %%lo: f64[] = const -0.5\n"
                 "  %%hi: f64[1] = const [1.0]\n"
                 "  %%w: f64[2,3] = const [0.7, -1.3, 0.4, 1.9, -0.8, 1.1]\n"
                 "  %%y = %s\n"
                 "  %%z = Mul(%%y, %%w)\n"
                 "  return %%z\n"
                 "}\n",
                 calls[i]);
        int n = check_text(t);
        if (n != 6 + 1 + 1 + 6)
            fail_msg("%s: %d checked", calls[i], n);
    }
}

/* dropout: inference mode (the identity, with and without the mask) and
 * training mode with a seed, where the ratio gets a gradient too */
static void test_dropout(void **state)
{
    (void)state;
    assert_int_equal(check_text("graph d() {\n"
                                "  %x: f64[2,3] = const [" GEN "]\n"
                                "  %y, %m = Dropout(%x)\n"
                                "  %z = Mul(%y, %x)\n"
                                "  return %z\n"
                                "}\n"),
                     6);
    assert_int_equal(check_text("graph d() {\n"
                                "  %x: f64[2,3] = const [" GEN "]\n"
                                "  %r: f64[] = const 0.4\n"
                                "  %f: bool[] = const false\n"
                                "  %y = Dropout(%x, %r, %f) {seed = 2}\n"
                                "  %z = Mul(%y, %x)\n"
                                "  return %z\n"
                                "}\n"),
                     7);
    assert_int_equal(check_text("graph d() {\n"
                                "  %x: f64[4,5] = const [-1.7, -0.6, -0.2, 0.3,"
                                " 0.9, 2.1, 0.3, 0.8, 1.4, 2.2, 0.5, 3.1, -0.8,"
                                " -0.4, -0.1, 0.2, 0.5, 0.7, 1.2, 1.5]\n"
                                "  %r: f64[] = const 0.3\n"
                                "  %t: bool[] = const true\n"
                                "  %y, %m = Dropout(%x, %r, %t) {seed = 5}\n"
                                "  %z = Mul(%y, %x)\n"
                                "  return %z\n"
                                "}\n"),
                     21);
}

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
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
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

/* Ties, where differences say nothing: Max/Min of inputs equal at some
 * elements split dy evenly among them (half each for two, as PyTorch's
 * maximum; a third each for three). */
static void test_ties(void **state)
{
    (void)state;
    smelt_tensor_t *d[4];
    int n = grads_of("graph t() {\n"
                     "  %a: f64[4] = const [1, 2, 3, 4]\n"
                     "  %b: f64[4] = const [1, 5, 3, 0]\n"
                     "  %c: f64[] = const 3\n"
                     "  %y = Max(%a, %b, %c)\n"
                     "  return %y\n"
                     "}\n",
                     d, 4);
    assert_int_equal(n, 3);
    /* y = [3, 5, 3, 4]: element 2 is a three-way tie */
    expect_values(d[0], (double[]){0, 0, 1.0 / 3, 1}, 4, 1e-12);
    expect_values(d[1], (double[]){0, 1, 1.0 / 3, 0}, 4, 1e-12);
    expect_values(d[2], (double[]){1 + 1.0 / 3}, 1, 1e-12);
    for (int i = 0; i < n; i++)
        smelt_tensor_free(d[i]);
    n = grads_of("graph t() {\n"
                 "  %a: f64[3] = const [1, 2, 3]\n"
                 "  %b: f64[3] = const [1, 0, 3]\n"
                 "  %y = Min(%a, %b)\n"
                 "  return %y\n"
                 "}\n",
                 d, 4);
    expect_values(d[0], (double[]){0.5, 0, 0.5}, 3, 1e-12);
    expect_values(d[1], (double[]){0.5, 1, 0.5}, 3, 1e-12);
    for (int i = 0; i < n; i++)
        smelt_tensor_free(d[i]);
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

/* Casts: through f32 the gradient comes back as f64 (2x, to f32
 * precision: differences would drown in f32 rounding); through an integer
 * none flows; CastLike's dtype donor gets zeros. */
static void test_casts(void **state)
{
    (void)state;
    smelt_tensor_t *d[4];
    int n = grads_of("graph c() {\n"
                     "  %x: f64[4] = const [0.3, -1.7, 2.25, 0.9]\n"
                     "  %like: f32[] = const 0\n"
                     "  %f = Cast(%x) {to = 1}\n"
                     "  %g = CastLike(%x, %like)\n"
                     "  %s = Mul(%f, %g)\n"
                     "  %i = Cast(%x) {to = 7}\n"
                     "  %fi = Cast(%i) {to = 11}\n"
                     "  %b = Cast(%s) {to = 11}\n"
                     "  %z = Add(%b, %fi)\n"
                     "  return %z\n"
                     "}\n",
                     d, 4);
    assert_int_equal(n, 2);
    assert_int_equal(smelt_tensor_dtype(d[0]), SMELT_DTYPE_F64);
    expect_values(d[0], (double[]){0.6, -3.4, 4.5, 1.8}, 4, 1e-6);
    assert_int_equal(smelt_tensor_dtype(d[1]), SMELT_DTYPE_F32);
    expect_values(d[1], (double[]){0}, 1, 0);
    for (int i = 0; i < n; i++)
        smelt_tensor_free(d[i]);
}

/* A joint graph of many of the rules, weights as inputs, compiled to a
 * plan at -O0 and -O3 (folding, fusion, generated kernels): every output
 * (forward, loss, gradients) matches the reference interpreter's run of
 * the same joint graph. */
static void test_plan(void **state)
{
    (void)state;
    const char *text =
        "graph p() {\n"
        "  %x: f32[3,4] = const [0.5, -1.2, 2.0, -0.8, 1.7, -3.0, -0.4, 0.9,"
        " -1.1, 0.6, -2.2, 1.3]\n"
        "  %w: f32[4] = const [0.7, -1.3, 0.4, 1.9]\n"
        "  %c: f32[3,1] = const [0.25, -0.5, 1.5]\n"
        "  %lo: f32[] = const 0.1\n"
        "  %hi: f32[] = const 1.25\n"
        "  %s: f32[4] = const [0.2, -0.3, 0.5, 0.1]\n"
        "  %k: bool[3,4] = const [true, false, true, true, false, false,"
        " true, false, true, true, false, true]\n"
        "  %a = Mul(%x, %w)\n"
        "  %g = Gelu(%a) {approximate = \"tanh\"}\n"
        "  %e = Elu(%a) {alpha = 0.5}\n"
        "  %m = Max(%g, %c, %e)\n"
        "  %cl = Clip(%m, %lo, %hi)\n"
        "  %sp = Softplus(%x)\n"
        "  %pw = Pow(%sp, %w)\n"
        "  %wh = Where(%k, %cl, %pw)\n"
        "  %sn = Sin(%wh)\n"
        "  %hs = HardSwish(%a)\n"
        "  %pr = PRelu(%hs, %s)\n"
        "  %dr: f32[] = const 0.25\n"
        "  %tr: bool[] = const true\n"
        "  %dp, %dm = Dropout(%sn, %dr, %tr) {seed = 9}\n"
        "  %l = ReduceLogSumExp(%dp) {axes = [1], keepdims = 0}\n"
        "  %mx = ReduceMin(%pr) {axes = [1]}\n"
        "  %neg: i64[1] = const [-1]\n"
        "  %q = ReduceL2(%x, %neg) {keepdims = 0}\n"
        "  %u = Sum(%l, %q)\n"
        "  %v = Mul(%u, %mx)\n"
        "  return %v\n"
        "}\n";
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.params_as_inputs = 1;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    int n_in = smelt_graph_num_inputs(j), n_out = smelt_graph_num_outputs(j);
    assert_int_equal(n_in, 7);
    assert_int_equal(n_out, 1 + 1 + 7);
    smelt_tensor_t *in[7], *ref[9] = {0}, *got[9] = {0};
    for (int i = 0; i < n_in; i++) {
        const sm_tensor *c =
            sm_graph_find_value(g, smelt_graph_input_name(j, i))->data;
        assert_non_null(c);
        assert_int_equal(
            smelt_tensor_init(ctx, c->dtype, c->ndim, c->dims, &in[i]),
            SMELT_OK);
        memcpy(smelt_tensor_data(in[i]), c->data, c->nbytes);
    }
    if (smelt_graph_run_reference(ctx, j, in, n_in, ref, n_out) != SMELT_OK)
        fail_msg("reference: %s", smelt_ctx_error(ctx));
    static const int levels[] = {0, 3};
    for (int l = 0; l < 2; l++) {
        smelt_plan_options po;
        smelt_plan_options_default(&po);
        po.level = levels[l];
        smelt_plan_t *p = NULL;
        if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
            fail_msg("compile -O%d: %s", levels[l], smelt_ctx_error(ctx));
        if (smelt_plan_run(ctx, p, in, n_in, got, n_out) != SMELT_OK)
            fail_msg("run -O%d: %s", levels[l], smelt_ctx_error(ctx));
        for (int k = 0; k < n_out; k++) {
            int64_t n = smelt_tensor_numel(ref[k]);
            assert_int_equal(smelt_tensor_numel(got[k]), n);
            for (int64_t i = 0; i < n; i++) {
                double a = smelt_tensor_get_f64(got[k], i);
                double b = smelt_tensor_get_f64(ref[k], i);
                if (!(fabs(a - b) <= 1e-5 + 1e-4 * fabs(b)))
                    fail_msg("-O%d output %s[%lld]: plan %.9g, reference "
                             "%.9g",
                             levels[l], smelt_graph_output_name(j, k),
                             (long long)i, a, b);
            }
            smelt_tensor_free(got[k]);
            got[k] = NULL;
        }
        smelt_plan_free(p);
    }
    /* the gradients are not all zero (the loss reaches every weight) */
    for (int k = 0; k < smelt_graph_num_grads(j); k++) {
        smelt_tensor_t *d = ref[smelt_graph_grad_output(j, k)];
        double s = 0;
        for (int64_t i = 0; i < smelt_tensor_numel(d); i++)
            s += fabs(smelt_tensor_get_f64(d, i));
        if (!(s > 0))
            fail_msg("gradient of %s is zero", smelt_graph_grad_wrt(j, k));
    }
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    for (int k = 0; k < n_out; k++)
        smelt_tensor_free(ref[k]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
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
        smelt_graph_t *g = tu_parse(NULL, t), *j = NULL;
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
        cmocka_unit_test(test_math),         cmocka_unit_test(test_activations),
        cmocka_unit_test(test_unary_shapes), cmocka_unit_test(test_binary),
        cmocka_unit_test(test_pow_prelu),    cmocka_unit_test(test_clip),
        cmocka_unit_test(test_dropout),      cmocka_unit_test(test_ties),
        cmocka_unit_test(test_casts),        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_reduce_zeros), cmocka_unit_test(test_reduce_ties),
        cmocka_unit_test(test_errors),       cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
