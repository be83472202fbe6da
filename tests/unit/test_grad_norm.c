/*
 * test_grad_norm.c - the gradient rules of the normalizations, softmax,
 * the losses, Einsum and FusedElementwise, each checked against f64
 * central differences (gradutil.h) over odd shapes and every attribute
 * that changes the math; the unsupported cases fail with a message; and
 * one joint graph compiled into a plan gives the reference's numbers.
 *
 * Every graph weights its result by a constant before the loss (the sum
 * of the first output), so that no gradient is zero by symmetry (the sum
 * of a softmax is 1 whatever its input).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

/* ---- graph text -----------------------------------------------------------
 */

/* A literal of n values in [lo, lo + span), from a small LCG seeded by
 * seed (deterministic; never exactly 0). The caller frees it. */
static char *lit(int n, unsigned seed, double lo, double span)
{
    char *s = malloc((size_t)n * 24 + 4), *p = s;
    unsigned x = seed * 2654435761u + 12345u;
    *p++ = '[';
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        double v = lo + span * (double)((x >> 8) & 0xffff) / 65536.0;
        if (v > -1e-3 && v < 1e-3)
            v = 0.25;
        p += sprintf(p, "%s%.6f", i ? ", " : "", v);
    }
    *p++ = ']';
    *p = 0;
    return s;
}

/* Values in [-1.5, 1.5). */
static char *lv(int n, unsigned seed)
{
    return lit(n, seed, -1.5, 3.0);
}

/* printf into a buffer the caller frees. */
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

/* check_text on a graph text built by fmt, freed after; returns the
 * number of gradient elements checked. */
static int check_owned(char *text)
{
    int n = check_text(text);
    free(text);
    return n;
}

/* One op on %x (type xt, n elements), weighted by %r: `op_line` is the
 * node's text with "%x" as its input. */
static int check_unary(const char *xt, int n, const char *op_line,
                       unsigned seed)
{
    char *x = lv(n, seed), *r = lv(n, seed + 7);
    char *t = fmt("graph u() {\n"
                  "  %%x: %s = const %s\n"
                  "  %%r: %s = const %s\n"
                  "  %%y = %s\n"
                  "  %%z = Mul(%%y, %%r)\n"
                  "  return %%z\n}\n",
                  xt, x, xt, r, op_line);
    free(x);
    free(r);
    return check_owned(t);
}

/* ---- softmax ---------------------------------------------------------------
 */

static void test_softmax(void **state)
{
    (void)state;
    const char *sm[] = {"Softmax", "LogSoftmax"};
    for (int k = 0; k < 2; k++) {
        int axes[] = {0, 1, 2, -1, -2};
        for (int i = 0; i < 5; i++) {
            char line[96];
            snprintf(line, sizeof line, "%s(%%x) {axis = %d}", sm[k], axes[i]);
            assert_int_equal(check_unary("f64[3,4,5]", 60, line, 11u + i), 120);
        }
        char line[64];
        snprintf(line, sizeof line, "%s(%%x)", sm[k]); /* default -1 */
        assert_int_equal(check_unary("f64[7]", 7, line, 3), 14);
    }
    /* large inputs stay finite: the rules use y, not exp(x) */
    const char *big = "graph b() {\n"
                      "  %x: f64[2,3] = const [800, 801, 799, -700, -702, "
                      "-699]\n"
                      "  %r: f64[2,3] = const [0.5, -1, 2, 1.5, 0.25, -0.75]\n"
                      "  %y = Softmax(%x) {axis = 1}\n"
                      "  %l = LogSoftmax(%y) {axis = 0}\n"
                      "  %z = Mul(%l, %r)\n  return %z\n}\n";
    assert_int_equal(check_text(big), 12);
}

/* ---- layer, batch and instance normalization ----------------------------- */

/* The transformer case: LayerNorm over the last axis of [2,5,7]. */
static void test_layernorm_transformer(void **state)
{
    (void)state;
    char *x = lv(70, 1), *s = lit(7, 2, 0.5, 1.0), *b = lv(7, 3);
    char *r = lv(70, 4);
    assert_int_equal(
        check_owned(
            fmt("graph ln() {\n"
                "  %%x: f64[2,5,7] = const %s\n"
                "  %%s: f64[7] = const %s\n  %%b: f64[7] = const %s\n"
                "  %%r: f64[2,5,7] = const %s\n"
                "  %%y = LayerNormalization(%%x, %%s, %%b) {axis = -1}\n"
                "  %%z = Mul(%%y, %%r)\n  return %%z\n}\n",
                x, s, b, r)),
        70 + 7 + 7 + 70);
    free(x);
    free(s);
    free(b);
    free(r);
}

/* axis 1 of [2,3,4] with a scale that broadcasts ([4] over [3,4]), no
 * bias, another epsilon; then the Mean and InvStdDev outputs (stashed in
 * f64) reaching the loss too. */
static void test_layernorm_attrs(void **state)
{
    (void)state;
    char *x = lv(24, 5), *s = lit(4, 6, 0.5, 1.0), *r = lv(24, 7);
    assert_int_equal(
        check_owned(fmt("graph ln() {\n"
                        "  %%x: f64[2,3,4] = const %s\n"
                        "  %%s: f64[4] = const %s\n"
                        "  %%r: f64[2,3,4] = const %s\n"
                        "  %%y = LayerNormalization(%%x, %%s) {axis = 1, "
                        "epsilon = 0.01}\n"
                        "  %%z = Mul(%%y, %%r)\n  return %%z\n}\n",
                        x, s, r)),
        24 + 4 + 24);
    char *s2 = lit(12, 8, 0.5, 1.0), *b2 = lv(12, 9), *r1 = lv(2, 10),
         *r2 = lv(2, 11);
    assert_int_equal(
        check_owned(fmt(
            "graph ln() {\n"
            "  %%x: f64[2,3,4] = const %s\n"
            "  %%s: f64[3,4] = const %s\n  %%b: f64[3,4] = const %s\n"
            "  %%r: f64[2,3,4] = const %s\n"
            "  %%r1: f64[2,1,1] = const %s\n  %%r2: f64[2,1,1] = const %s\n"
            "  %%y, %%m, %%v = LayerNormalization(%%x, %%s, %%b) {axis = -2, "
            "stash_type = 11}\n"
            "  %%a = Mul(%%y, %%r)\n  %%am = Mul(%%m, %%r1)\n"
            "  %%av = Mul(%%v, %%r2)\n  %%t = Add(%%a, %%am)\n"
            "  %%z = Add(%%t, %%av)\n  return %%z\n}\n",
            x, s2, b2, r, r1, r2)),
        24 + 12 + 12 + 24 + 2 + 2);
    free(x);
    free(s);
    free(r);
    free(s2);
    free(b2);
    free(r1);
    free(r2);
}

/* BatchNormalization in inference form over ranks 1, 2, 3 and 4, every
 * input differentiated (the statistics are initializers). */
static void test_batchnorm_inference(void **state)
{
    (void)state;
    const char *shapes[] = {"f64[5]", "f64[4,3]", "f64[2,3,5]", "f64[2,3,2,2]"};
    int numel[] = {5, 12, 30, 24}, chans[] = {1, 3, 3, 3};
    for (int i = 0; i < 4; i++) {
        int c = chans[i];
        char *x = lv(numel[i], 20u + i), *s = lit(c, 21, 0.5, 1.0);
        char *b = lv(c, 22), *m = lv(c, 23), *v = lit(c, 24, 0.3, 1.0);
        char *r = lv(numel[i], 25);
        int got = check_owned(
            fmt("graph bn() {\n"
                "  %%x: %s = const %s\n  %%r: %s = const %s\n"
                "  %%s: f64[%d] = const %s\n  %%b: f64[%d] = const %s\n"
                "  %%m: f64[%d] = const %s\n  %%v: f64[%d] = const %s\n"
                "  %%y = BatchNormalization(%%x, %%s, %%b, %%m, %%v) "
                "{epsilon = 0.001}\n"
                "  %%z = Mul(%%y, %%r)\n  return %%z\n}\n",
                shapes[i], x, shapes[i], r, c, s, c, b, c, m, c, v));
        assert_int_equal(got, 2 * numel[i] + 4 * c);
        free(x);
        free(s);
        free(b);
        free(m);
        free(v);
        free(r);
    }
}

/* BatchNormalization in training form: batch statistics, and the running
 * statistics (outputs 1 and 2, momentum 0.8) reaching the loss too. */
static void test_batchnorm_training(void **state)
{
    (void)state;
    char *x = lv(18, 30), *s = lit(2, 31, 0.5, 1.0), *b = lv(2, 32);
    char *m = lv(2, 33), *v = lit(2, 34, 0.3, 1.0), *r = lv(18, 35);
    char *r1 = lv(2, 36), *r2 = lv(2, 37);
    int got = check_owned(
        fmt("graph bn() {\n"
            "  %%x: f64[3,2,3] = const %s\n  %%r: f64[3,2,3] = const %s\n"
            "  %%s: f64[2] = const %s\n  %%b: f64[2] = const %s\n"
            "  %%m: f64[2] = const %s\n  %%v: f64[2] = const %s\n"
            "  %%r1: f64[2] = const %s\n  %%r2: f64[2] = const %s\n"
            "  %%y, %%rm, %%rv = BatchNormalization(%%x, %%s, %%b, %%m, %%v) "
            "{training_mode = 1, momentum = 0.8}\n"
            "  %%a = Mul(%%y, %%r)\n  %%sa = ReduceSum(%%a) {keepdims = 0}\n"
            "  %%am = Mul(%%rm, %%r1)\n  %%av = Mul(%%rv, %%r2)\n"
            "  %%t = Add(%%am, %%av)\n  %%st = ReduceSum(%%t) {keepdims = 0}\n"
            "  %%z = Add(%%sa, %%st)\n  return %%z\n}\n",
            x, r, s, b, m, v, r1, r2));
    assert_int_equal(got, 18 + 18 + 4 * 2 + 2 + 2);
    /* output 0 alone, over a rank-4 input */
    char *x4 = lv(48, 38), *r4 = lv(48, 39);
    got = check_owned(
        fmt("graph bn() {\n"
            "  %%x: f64[2,2,3,4] = const %s\n  %%r: f64[2,2,3,4] = const %s\n"
            "  %%s: f64[2] = const %s\n  %%b: f64[2] = const %s\n"
            "  %%m: f64[2] = const %s\n  %%v: f64[2] = const %s\n"
            "  %%y = BatchNormalization(%%x, %%s, %%b, %%m, %%v) "
            "{training_mode = 1}\n"
            "  %%z = Mul(%%y, %%r)\n  return %%z\n}\n",
            x4, r4, s, b, m, v));
    assert_int_equal(got, 48 + 48 + 4 * 2);
    free(x);
    free(s);
    free(b);
    free(m);
    free(v);
    free(r);
    free(r1);
    free(r2);
    free(x4);
    free(r4);
}

static void test_instancenorm(void **state)
{
    (void)state;
    const char *shapes[] = {"f64[2,3,4]", "f64[2,2,2,3]", "f64[3,2,1]"};
    int numel[] = {24, 24, 6}, chans[] = {3, 2, 2};
    for (int i = 0; i < 3; i++) {
        int c = chans[i];
        char *x = lv(numel[i], 40u + i), *s = lit(c, 41, 0.5, 1.0);
        char *b = lv(c, 42), *r = lv(numel[i], 43);
        int got = check_owned(
            fmt("graph in() {\n"
                "  %%x: %s = const %s\n  %%r: %s = const %s\n"
                "  %%s: f64[%d] = const %s\n  %%b: f64[%d] = const %s\n"
                "  %%y = InstanceNormalization(%%x, %%s, %%b) "
                "{epsilon = 0.001}\n"
                "  %%z = Mul(%%y, %%r)\n  return %%z\n}\n",
                shapes[i], x, shapes[i], r, c, s, c, b));
        assert_int_equal(got, 2 * numel[i] + 2 * c);
        free(x);
        free(s);
        free(b);
        free(r);
    }
}

/* ---- normalizations without parameters ----------------------------------- */

static void test_mvn_lp_lrn(void **state)
{
    (void)state;
    assert_int_equal(
        check_unary("f64[2,3,2,2]", 24, "MeanVarianceNormalization(%x)", 50),
        48);
    assert_int_equal(check_unary("f64[2,3,4]", 24,
                                 "MeanVarianceNormalization(%x) "
                                 "{axes = [1, -1]}",
                                 51),
                     48);
    assert_int_equal(
        check_unary("f64[3,4]", 12, "LpNormalization(%x) {axis = 1}", 52), 24);
    assert_int_equal(check_unary("f64[3,4,2]", 24,
                                 "LpNormalization(%x) {axis = 0, p = 2}", 53),
                     48);
    assert_int_equal(check_unary("f64[3,5]", 15,
                                 "LpNormalization(%x) {axis = -1, p = 1}", 54),
                     30);
    assert_int_equal(check_unary("f64[2,5,2,2]", 40,
                                 "LRN(%x) {size = 3, alpha = 0.5, beta = 0.6, "
                                 "bias = 1.5}",
                                 55),
                     80);
    /* an even size (window [c, c + 1]) and one wider than C */
    assert_int_equal(check_unary("f64[1,4,3]", 12,
                                 "LRN(%x) {size = 2, alpha = 0.7, beta = 0.75}",
                                 56),
                     24);
    assert_int_equal(check_unary("f64[2,3]", 6,
                                 "LRN(%x) {size = 9, alpha = 0.9, beta = 0.5, "
                                 "bias = 2}",
                                 57),
                     12);
}

/* ---- losses ---------------------------------------------------------------
 */

/* NegativeLogLikelihoodLoss with every reduction, with and without
 * weights and ignore_index, over [N, C] and [N, C, d]. */
static void test_nll(void **state)
{
    (void)state;
    const char *reds[] = {"none", "sum", "mean"};
    char *lp = lv(12, 60), *w = lit(4, 61, 0.5, 1.0), *r = lv(3, 62);
    char *lp3 = lv(12, 63), *r3 = lv(4, 64);
    for (int k = 0; k < 3; k++) {
        /* none: the loss is [N]; weighted so every position counts */
        const char *tail =
            k == 0 ? "  %z = Mul(%l, %r)\n  return %z\n" : "  return %l\n";
        int got = check_owned(fmt(
            "graph nll() {\n"
            "  %%p: f64[3,4] = const %s\n  %%t: i64[3] = const [2, 0, 3]\n"
            "  %%r: f64[3] = const %s\n"
            "  %%l = NegativeLogLikelihoodLoss(%%p, %%t) {reduction = \"%s\"}\n"
            "%s}\n",
            lp, r, reds[k], tail));
        assert_int_equal(got, 12 + 3); /* %r unused: zeros */
        got = check_owned(
            fmt("graph nll() {\n"
                "  %%p: f64[3,4] = const %s\n  %%t: i32[3] = const [1, 3, 1]\n"
                "  %%w: f64[4] = const %s\n  %%r: f64[3] = const %s\n"
                "  %%l = NegativeLogLikelihoodLoss(%%p, %%t, %%w) "
                "{reduction = \"%s\", ignore_index = 3}\n"
                "%s}\n",
                lp, w, r, reds[k], tail));
        assert_int_equal(got, 12 + 4 + 3);
    }
    /* spatial [N, C, d], ignore_index outside the classes */
    int got =
        check_owned(fmt("graph nll() {\n"
                        "  %%p: f64[2,3,2] = const %s\n"
                        "  %%t: i64[2,2] = const [2, -1, 0, 1]\n"
                        "  %%w: f64[3] = const [0.7, 1.3, 0.9]\n"
                        "  %%l = NegativeLogLikelihoodLoss(%%p, %%t, %%w) "
                        "{ignore_index = -1}\n"
                        "  return %%l\n}\n",
                        lp3));
    assert_int_equal(got, 12 + 3);
    free(lp);
    free(w);
    free(r);
    free(lp3);
    free(r3);
}

/* A small classifier: logits = x W + b, SoftmaxCrossEntropyLoss (mean,
 * one target ignored): the gradients of W and b train it. */
static void test_classifier(void **state)
{
    (void)state;
    char *x = lv(12, 70), *w = lv(15, 71), *b = lv(5, 72);
    assert_int_equal(
        check_owned(fmt("graph clf() {\n"
                        "  %%x: f64[4,3] = const %s\n"
                        "  %%w: f64[3,5] = const %s\n  %%b: f64[5] = const %s\n"
                        "  %%t: i64[4] = const [4, 1, 0, 1]\n"
                        "  %%h = MatMul(%%x, %%w)\n  %%s = Add(%%h, %%b)\n"
                        "  %%l = SoftmaxCrossEntropyLoss(%%s, %%t) "
                        "{reduction = \"mean\", ignore_index = 0}\n"
                        "  return %%l\n}\n",
                        x, w, b)),
        12 + 15 + 5);
    free(x);
    free(w);
    free(b);
}

/* SoftmaxCrossEntropyLoss with weights, each reduction, spatial scores
 * and the log_prob output reaching the loss. */
static void test_softmax_cross_entropy(void **state)
{
    (void)state;
    const char *reds[] = {"none", "sum", "mean"};
    char *s = lv(12, 73), *w = lit(3, 74, 0.5, 1.0), *r = lv(4, 75);
    char *rp = lv(12, 76);
    for (int k = 0; k < 3; k++) {
        const char *use = k == 0 ? "  %a = Mul(%l, %r)\n"
                                   "  %sa = ReduceSum(%a) {keepdims = 0}\n"
                                 : "  %sa = Identity(%l)\n";
        int got = check_owned(fmt(
            "graph sce() {\n"
            "  %%s: f64[2,3,2] = const %s\n"
            "  %%t: i64[2,2] = const [2, 1, 1, 0]\n"
            "  %%w: f64[3] = const %s\n  %%r: f64[2,2] = const %s\n"
            "  %%rp: f64[2,3,2] = const %s\n"
            "  %%l, %%lp = SoftmaxCrossEntropyLoss(%%s, %%t, %%w) "
            "{reduction = \"%s\", ignore_index = 1}\n"
            "%s"
            "  %%b = Mul(%%lp, %%rp)\n  %%sb = ReduceSum(%%b) {keepdims = 0}\n"
            "  %%z = Add(%%sa, %%sb)\n  return %%z\n}\n",
            s, w, r, rp, reds[k], use));
        assert_int_equal(got, 12 + 3 + 4 + 12);
    }
    free(s);
    free(w);
    free(r);
    free(rp);
}

/* ---- einsum ----------------------------------------------------------------
 */

/* einsum over operands of the given types; each operand and the weight
 * %r (of the output's type rt) differentiated. */
static int check_einsum(const char *eq, int n_ops, const char *const *types,
                        const int *numel, const char *rt, int rnumel)
{
    char body[2048] = "", args[64] = "", *p = body;
    int total = rnumel;
    for (int k = 0; k < n_ops; k++) {
        char *v = lv(numel[k], 80u + (unsigned)k * 3);
        p += sprintf(p, "  %%a%d: %s = const %s\n", k, types[k], v);
        free(v);
        sprintf(args + strlen(args), "%s%%a%d", k ? ", " : "", k);
        total += numel[k];
    }
    char *r = lv(rnumel, 99);
    int got = check_owned(fmt("graph e() {\n%s  %%r: %s = const %s\n"
                              "  %%y = Einsum(%s) {equation = \"%s\"}\n"
                              "  %%z = Mul(%%y, %%r)\n  return %%z\n}\n",
                              body, rt, r, args, eq));
    free(r);
    assert_int_equal(got, total);
    return got;
}

static void test_einsum(void **state)
{
    (void)state;
    check_einsum("ij,jk->ik", 2, (const char *[]){"f64[2,3]", "f64[3,4]"},
                 (int[]){6, 12}, "f64[2,4]", 8);
    check_einsum("bij,bjk->bik", 2,
                 (const char *[]){"f64[2,2,3]", "f64[2,3,2]"}, (int[]){12, 12},
                 "f64[2,2,2]", 8);
    check_einsum("ij,jk", 2, (const char *[]){"f64[2,3]", "f64[3,4]"},
                 (int[]){6, 12}, "f64[2,4]", 8); /* implicit output */
    check_einsum("ij->ji", 1, (const char *[]){"f64[2,3]"}, (int[]){6},
                 "f64[3,2]", 6);
    check_einsum("ijk->j", 1, (const char *[]){"f64[2,3,2]"}, (int[]){12},
                 "f64[3]", 3);
    check_einsum("ij->", 1, (const char *[]){"f64[2,3]"}, (int[]){6}, "f64[]",
                 1);
    check_einsum("i,j->ij", 2, (const char *[]){"f64[3]", "f64[2]"},
                 (int[]){3, 2}, "f64[3,2]", 6);
    check_einsum("ij,jk,kl->il", 3,
                 (const char *[]){"f64[2,3]", "f64[3,2]", "f64[2,3]"},
                 (int[]){6, 6, 6}, "f64[2,3]", 6);
    check_einsum("...ij,jk->...ik", 2,
                 (const char *[]){"f64[2,2,3]", "f64[3,2]"}, (int[]){12, 6},
                 "f64[2,2,2]", 8);
    /* diagonals: a repeated label, a trace, a repeat in the other operand */
    check_einsum("ii->i", 1, (const char *[]){"f64[3,3]"}, (int[]){9}, "f64[3]",
                 3);
    check_einsum("ii->", 1, (const char *[]){"f64[3,3]"}, (int[]){9}, "f64[]",
                 1);
    check_einsum("iji,j->ij", 2, (const char *[]){"f64[2,3,2]", "f64[3]"},
                 (int[]){12, 3}, "f64[2,3]", 6);
    check_einsum("ijj,jk->ik", 2, (const char *[]){"f64[2,3,3]", "f64[3,2]"},
                 (int[]){18, 6}, "f64[2,2]", 4);
    check_einsum("ij,ik->j", 2, (const char *[]){"f64[3,2]", "f64[3,4]"},
                 (int[]){6, 12}, "f64[2]", 2);
}

/* Expects smelt_graph_grad of text to fail naming want. */
static void expect_grad_error(const char *text, const char *want)
{
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_not_equal(smelt_graph_grad(ctx, g, NULL, &j), SMELT_OK);
    assert_null(j);
    if (!strstr(smelt_ctx_error(ctx), want))
        fail_msg("error '%s' lacks '%s'", smelt_ctx_error(ctx), want);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_unsupported(void **state)
{
    (void)state;
    expect_grad_error("graph e() {\n"
                      "  %a: f64[1,3] = const [1, 2, 3]\n"
                      "  %b: f64[2,3] = const [1, 2, 3, 4, 5, 6]\n"
                      "  %y = Einsum(%a, %b) {equation = \"...j,...j->...\"}\n"
                      "  return %y\n}\n",
                      "'...'");
    /* sizes only known at run time, where the rule needs them */
    expect_grad_error("graph e(%x: f64[n,n]) {\n"
                      "  %w: f64[1] = const [2]\n  %a = Mul(%x, %w)\n"
                      "  %y = Einsum(%a) {equation = \"ii->i\"}\n"
                      "  return %y\n}\n",
                      "repeated label");
    expect_grad_error("graph l(%x: f64[2,c], %t: i64[2]) {\n"
                      "  %w: f64[1] = const [2]\n  %a = Mul(%x, %w)\n"
                      "  %y = SoftmaxCrossEntropyLoss(%a, %t)\n"
                      "  return %y\n}\n",
                      "class count");
    expect_grad_error("graph r(%x: f64[2,c,3]) {\n"
                      "  %w: f64[1] = const [2]\n  %a = Mul(%x, %w)\n"
                      "  %y = LRN(%a) {size = 3}\n"
                      "  return %y\n}\n",
                      "channel count");
    expect_grad_error("graph m(%x: f64[2,k]) {\n"
                      "  %w: f64[1] = const [2]\n  %s: f64[1] = const [1]\n"
                      "  %a = Mul(%x, %w)\n"
                      "  %y, %mu = LayerNormalization(%a, %s) "
                      "{stash_type = 11}\n"
                      "  return %mu\n}\n",
                      "Mean or InvStdDev");
}

/* ---- FusedElementwise ------------------------------------------------------
 */

/* The body is differentiated as the ops it holds: broadcasting, a
 * parameter read twice, a constant inside, two outputs. */
static void test_fused_elementwise(void **state)
{
    (void)state;
    char *x = lv(6, 90), *y = lv(3, 91), *r = lv(6, 92), *r2 = lv(6, 93);
    int got = check_owned(
        fmt("graph f() {\n"
            "  %%x: f64[2,3] = const %s\n  %%y: f64[3] = const %s\n"
            "  %%k: f64[] = const 0.5\n  %%r: f64[2,3] = const %s\n"
            "  %%r2: f64[2,3] = const %s\n"
            "  %%d, %%e = FusedElementwise(%%x, %%y, %%k) body(%%p: f64[2,3], "
            "%%q: f64[3], %%s: f64[]) {\n"
            "    %%a = Add(%%p, %%q)\n    %%b = Mul(%%a, %%s)\n"
            "    %%c = Sigmoid(%%b)\n    %%m = Mul(%%b, %%c)\n"
            "    %%t = Tanh(%%p)\n    %%u = Mul(%%t, %%p)\n"
            "    return %%m, %%u\n  }\n"
            "  %%v = Mul(%%d, %%r)\n  %%w = Mul(%%e, %%r2)\n"
            "  %%z = Add(%%v, %%w)\n  return %%z\n}\n",
            x, y, r, r2));
    assert_int_equal(got, 6 + 3 + 1 + 6 + 6);
    free(x);
    free(y);
    free(r);
    free(r2);
}

/* A region the fusion pass made (not written by hand) differentiates
 * the same as the ops it replaced. */
static void test_fused_by_pass(void **state)
{
    (void)state;
    char *x = lv(12, 94), *y = lv(4, 95), *r = lv(12, 96);
    char *text = fmt("graph f() {\n"
                     "  %%x: f64[3,4] = const %s\n  %%y: f64[4] = const %s\n"
                     "  %%r: f64[3,4] = const %s\n"
                     "  %%a = Add(%%x, %%y)\n  %%b = Tanh(%%a)\n"
                     "  %%c = Mul(%%b, %%x)\n  %%d = Sigmoid(%%c)\n"
                     "  %%e = Sub(%%d, %%y)\n"
                     "  %%z = Mul(%%c, %%r)\n  %%w = Add(%%z, %%e)\n"
                     "  return %%w\n}\n",
                     x, y, r);
    int plain = check_text(text);
    smelt_graph_t *g = tu_parse(NULL, text);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.passes = "fuse_elementwise";
    if (smelt_graph_optimize(ctx, g, &o, NULL) != SMELT_OK)
        fail_msg("optimize: %s", smelt_ctx_error(ctx));
    char *fused = NULL;
    assert_int_equal(smelt_graph_print(ctx, g, &fused), SMELT_OK);
    if (!strstr(fused, "FusedElementwise"))
        fail_msg("nothing fused:\n%s", fused);
    assert_int_equal(check_text(fused), plain);
    smelt_string_free(fused);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    free(text);
    free(x);
    free(y);
    free(r);
}

/* ---- the compiled plan ------------------------------------------------------
 */

/* A tensor of dtype dt holding constant c's values (an f64 tensor). */
static smelt_tensor_t *tensor_of(const sm_value *c, smelt_dtype dt)
{
    smelt_tensor_t *t = NULL;
    const sm_tensor *d = c->data;
    assert_int_equal(smelt_tensor_init(NULL, dt, d->ndim, d->dims, &t),
                     SMELT_OK);
    for (int64_t i = 0; i < d->numel; i++) {
        double v = ((const double *)d->data)[i];
        if (dt == SMELT_DTYPE_F32)
            ((float *)smelt_tensor_data(t))[i] = (float)v;
        else
            ((double *)smelt_tensor_data(t))[i] = v;
    }
    return t;
}

/* Differentiates `text` (its initializers lifted to inputs, fed from the
 * f64 constants of the same names in `vals`), compiles the joint graph
 * at -O0 and -O3 and checks that the plan's outputs match the reference
 * interpreter's within tol. */
static void plan_check(const char *text, const char *vals, smelt_dtype dt,
                       double tol)
{
    smelt_graph_t *g = tu_parse(NULL, text), *vg = tu_parse(NULL, vals),
                  *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.params_as_inputs = 1;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    int n_in = smelt_graph_num_inputs(j), n_out = smelt_graph_num_outputs(j);
    assert_true(n_in <= 16 && n_out <= 16);
    smelt_tensor_t *in[16], *want[16] = {0}, *got[16] = {0};
    for (int i = 0; i < n_in; i++) {
        sm_value *v = sm_graph_find_value(vg, smelt_graph_input_name(j, i));
        assert_non_null(v);
        in[i] = tensor_of(v, dt);
    }
    if (smelt_graph_run_reference(ctx, j, in, n_in, want, n_out) != SMELT_OK)
        fail_msg("reference: %s", smelt_ctx_error(ctx));
    for (int level = 0; level <= 3; level += 3) {
        smelt_plan_options po;
        smelt_plan_options_default(&po);
        po.level = level;
        smelt_plan_t *p = NULL;
        if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
            fail_msg("compile -O%d: %s", level, smelt_ctx_error(ctx));
        if (smelt_plan_run(ctx, p, in, n_in, got, n_out) != SMELT_OK)
            fail_msg("plan run -O%d: %s", level, smelt_ctx_error(ctx));
        for (int k = 0; k < n_out; k++) {
            assert_int_equal(smelt_tensor_numel(got[k]),
                             smelt_tensor_numel(want[k]));
            for (int64_t i = 0; i < smelt_tensor_numel(want[k]); i++) {
                double a = smelt_tensor_get_f64(got[k], i);
                double e = smelt_tensor_get_f64(want[k], i);
                if (!(fabs(a - e) <= tol * (1 + fabs(e))))
                    fail_msg("%s -O%d output %s[%lld]: plan %.9g, "
                             "reference %.9g",
                             smelt_dtype_name(dt), level,
                             smelt_graph_output_name(j, k), (long long)i, a, e);
            }
            smelt_tensor_free(got[k]);
            got[k] = NULL;
        }
        smelt_plan_free(p);
    }
    /* the gradients are not all zero (the check compares something) */
    double mag = 0;
    for (int k = 0; k < smelt_graph_num_grads(j); k++) {
        const smelt_tensor_t *d = want[smelt_graph_grad_output(j, k)];
        for (int64_t i = 0; i < smelt_tensor_numel(d); i++)
            mag += fabs(smelt_tensor_get_f64(d, i));
    }
    assert_true(mag > 0.1);
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    for (int k = 0; k < n_out; k++)
        smelt_tensor_free(want[k]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_graph_free(vg);
    smelt_ctx_free(ctx);
}

/* Two heads, compiled into plans in f32 and f64: a classifier
 * (LayerNorm, Einsum, SoftmaxCrossEntropyLoss with ignore_index, plus a
 * Softmax term) and a normalization stack (BatchNorm in training mode,
 * InstanceNorm, LRN, MVN, LpNorm, LogSoftmax, NLL with weights). Fusion
 * runs over the backward graphs at -O3. */
static void test_plan_matches_reference(void **state)
{
    (void)state;
    static const char *stack_nodes =
        "  %y = BatchNormalization(%x, %s, %b, %b, %v) {training_mode = 1}\n"
        "  %i = InstanceNormalization(%y, %v, %b)\n"
        "  %lr = LRN(%i) {size = 3, alpha = 0.5}\n"
        "  %mv = MeanVarianceNormalization(%lr) {axes = [0, 2]}\n"
        "  %lp = LpNormalization(%mv) {axis = 1}\n"
        "  %ls = LogSoftmax(%lp) {axis = 1}\n"
        "  %l = NegativeLogLikelihoodLoss(%ls, %t, %cw) {reduction = \"sum\"}\n"
        "  return %l\n}\n";
    char *x = lv(28, 100), *s = lit(7, 101, 0.5, 1.0), *b = lv(7, 102);
    char *w = lv(35, 103), *c = lv(5, 104), *r = lv(20, 105);
    char *x2 = lv(36, 106), *s2 = lit(3, 107, 0.5, 1.0), *b2 = lv(3, 108);
    char *v2 = lit(3, 109, 0.3, 1.0), *cw = lit(3, 120, 0.5, 1.0);
    const char *dts[2] = {"f32", "f64"};
    for (int k = 0; k < 2; k++) {
        const char *T = dts[k];
        smelt_dtype dt = k ? SMELT_DTYPE_F64 : SMELT_DTYPE_F32;
        double tol = k ? 1e-10 : 2e-5;
        char *text = fmt(
            "graph head(%%x: %s[4,7]) {\n"
            "  %%s: %s[7] = const %s\n  %%b: %s[7] = const %s\n"
            "  %%w: %s[7,5] = const %s\n  %%c: %s[5] = const %s\n"
            "  %%r: %s[4,5] = const %s\n  %%t: i64[4] = const [4, 1, 0, 2]\n"
            "  %%n = LayerNormalization(%%x, %%s, %%b) {axis = -1}\n"
            "  %%h = Einsum(%%n, %%w) {equation = \"nk,kc->nc\"}\n"
            "  %%hb = Add(%%h, %%c)\n"
            "  %%l = SoftmaxCrossEntropyLoss(%%hb, %%t) {ignore_index = 0}\n"
            "  %%p = Softmax(%%hb) {axis = 0}\n  %%pr = Mul(%%p, %%r)\n"
            "  %%q = ReduceSum(%%pr) {keepdims = 0}\n"
            "  %%z = Add(%%l, %%q)\n  return %%z\n}\n",
            T, T, s, T, b, T, w, T, c, T, r);
        char *vals =
            fmt("graph v() {\n  %%x: f64[4,7] = const %s\n"
                "  %%s: f64[7] = const %s\n  %%b: f64[7] = const %s\n"
                "  %%w: f64[7,5] = const %s\n  %%c: f64[5] = const %s\n"
                "  %%r: f64[4,5] = const %s\n  return %%x\n}\n",
                x, s, b, w, c, r);
        plan_check(text, vals, dt, tol);
        free(text);
        free(vals);
        text =
            fmt("graph stack(%%x: %s[3,3,4]) {\n"
                "  %%s: %s[3] = const %s\n  %%b: %s[3] = const %s\n"
                "  %%v: %s[3] = const %s\n  %%cw: %s[3] = const %s\n"
                "  %%t: i64[3,4] = const [0, 1, 2, 1, 2, 2, 0, 0, 1, 0, 2, 1]\n"
                "%s",
                T, T, s2, T, b2, T, v2, T, cw, stack_nodes);
        vals = fmt("graph v() {\n  %%x: f64[3,3,4] = const %s\n"
                   "  %%s: f64[3] = const %s\n  %%b: f64[3] = const %s\n"
                   "  %%v: f64[3] = const %s\n  %%cw: f64[3] = const %s\n"
                   "  return %%x\n}\n",
                   x2, s2, b2, v2, cw);
        plan_check(text, vals, dt, tol);
        free(text);
        free(vals);
    }
    /* the stack's composed gradients against central differences too */
    char *cx = fmt("  %%x: f64[3,3,4] = const %s\n", x2);
    char *stack =
        fmt("graph stack() {\n%s"
            "  %%s: f64[3] = const %s\n  %%b: f64[3] = const %s\n"
            "  %%v: f64[3] = const %s\n  %%cw: f64[3] = const %s\n"
            "  %%t: i64[3,4] = const [0, 1, 2, 1, 2, 2, 0, 0, 1, 0, 2, 1]\n"
            "%s",
            cx, s2, b2, v2, cw, stack_nodes);
    assert_int_equal(check_owned(stack), 36 + 4 * 3);
    free(cx);
    free(x);
    free(s);
    free(b);
    free(w);
    free(c);
    free(r);
    free(x2);
    free(s2);
    free(b2);
    free(v2);
    free(cw);
}

/* Output name of j (a joint graph), or fails. */
static int output_named(smelt_graph_t *j, const char *name)
{
    for (int i = 0; i < smelt_graph_num_outputs(j); i++)
        if (strcmp(smelt_graph_output_name(j, i), name) == 0)
            return i;
    fail_msg("no output '%s'", name);
    return -1;
}

/* The rules build the same gradients when the batch dimension is a
 * symbol: a LayerNorm, BatchNorm, Einsum and SoftmaxCrossEntropyLoss
 * (mean) head on x: f64[batch, 6] and targets i64[batch], differentiated
 * with batch unknown, then run with batch = 3 (by the reference and as a
 * plan), gives the gradients of the same graph with x and the targets as
 * constants. */
static void test_symbolic_batch(void **state)
{
    (void)state;
    char *x = lv(18, 110), *s = lit(6, 111, 0.5, 1.0), *b = lv(6, 112);
    char *w = lv(24, 113), *v = lit(4, 114, 0.3, 1.0), *m = lv(4, 115);
    const char *head =
        "  %%s: f64[6] = const %s\n  %%b: f64[6] = const %s\n"
        "  %%w: f64[6,4] = const %s\n  %%v: f64[4] = const %s\n"
        "  %%m: f64[4] = const %s\n"
        "  %%n = LayerNormalization(%%x, %%s, %%b) {axis = 1}\n"
        "  %%h = Einsum(%%n, %%w) {equation = \"nk,kc->nc\"}\n"
        "  %%k = BatchNormalization(%%h, %%v, %%m, %%m, %%v)\n"
        "  %%l = SoftmaxCrossEntropyLoss(%%k, %%t) {ignore_index = 1}\n"
        "  return %%l\n}\n";
    char *body = fmt(head, s, b, w, v, m);
    char *stat_text = fmt("graph st() {\n  %%x: f64[3,6] = const %s\n"
                          "  %%t: i64[3] = const [2, 1, 3]\n%s",
                          x, body);
    char *dyn_text =
        fmt("graph dy(%%x: f64[batch,6], %%t: i64[batch]) {\n%s", body);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *gs = tu_parse(NULL, stat_text),
                  *gd = tu_parse(NULL, dyn_text);
    smelt_graph_t *js = NULL, *jd = NULL;
    if (smelt_graph_grad(ctx, gs, NULL, &js) != SMELT_OK ||
        smelt_graph_grad(ctx, gd, NULL, &jd) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_grads(jd), 5);
    smelt_tensor_t *want[8] = {0}, *got[8] = {0}, *in[2];
    int ns = smelt_graph_num_outputs(js), nd = smelt_graph_num_outputs(jd);
    if (smelt_graph_run_reference(ctx, js, NULL, 0, want, ns) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    int64_t xd[2] = {3, 6}, td[1] = {3};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 2, xd, &in[0]),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1, td, &in[1]),
                     SMELT_OK);
    memcpy(smelt_tensor_data(in[0]), sm_graph_find_value(gs, "x")->data->data,
           18 * sizeof(double));
    memcpy(smelt_tensor_data(in[1]), (int64_t[]){2, 1, 3}, 3 * sizeof(int64_t));
    for (int pass = 0; pass < 2; pass++) {
        smelt_plan_t *p = NULL;
        if (pass == 0) {
            if (smelt_graph_run_reference(ctx, jd, in, 2, got, nd) != SMELT_OK)
                fail_msg("run: %s", smelt_ctx_error(ctx));
        } else {
            smelt_plan_options po;
            smelt_plan_options_default(&po);
            po.inputs = in;
            po.n_inputs = 2;
            if (smelt_plan_compile(ctx, jd, &po, &p) != SMELT_OK ||
                smelt_plan_run(ctx, p, in, 2, got, nd) != SMELT_OK)
                fail_msg("plan: %s", smelt_ctx_error(ctx));
        }
        for (int k = 0; k < smelt_graph_num_grads(jd); k++) {
            const smelt_tensor_t *a = got[smelt_graph_grad_output(jd, k)];
            const smelt_tensor_t *e =
                want[output_named(js, smelt_graph_output_name(
                                          jd, smelt_graph_grad_output(jd, k)))];
            assert_int_equal(smelt_tensor_numel(a), smelt_tensor_numel(e));
            for (int64_t i = 0; i < smelt_tensor_numel(e); i++)
                if (fabs(smelt_tensor_get_f64(a, i) -
                         smelt_tensor_get_f64(e, i)) > 1e-12)
                    fail_msg("%s[%lld] (%s): %.12g, static %.12g",
                             smelt_graph_grad_wrt(jd, k), (long long)i,
                             pass ? "plan" : "reference",
                             smelt_tensor_get_f64(a, i),
                             smelt_tensor_get_f64(e, i));
        }
        for (int i = 0; i < nd; i++) {
            smelt_tensor_free(got[i]);
            got[i] = NULL;
        }
        smelt_plan_free(p);
    }
    for (int i = 0; i < ns; i++)
        smelt_tensor_free(want[i]);
    smelt_tensor_free(in[0]);
    smelt_tensor_free(in[1]);
    smelt_graph_free(js);
    smelt_graph_free(jd);
    smelt_graph_free(gs);
    smelt_graph_free(gd);
    smelt_ctx_free(ctx);
    free(body);
    free(stat_text);
    free(dyn_text);
    free(x);
    free(s);
    free(b);
    free(w);
    free(v);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_layernorm_transformer),
        cmocka_unit_test(test_layernorm_attrs),
        cmocka_unit_test(test_batchnorm_inference),
        cmocka_unit_test(test_batchnorm_training),
        cmocka_unit_test(test_instancenorm),
        cmocka_unit_test(test_mvn_lp_lrn),
        cmocka_unit_test(test_nll),
        cmocka_unit_test(test_classifier),
        cmocka_unit_test(test_softmax_cross_entropy),
        cmocka_unit_test(test_einsum),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_fused_elementwise),
        cmocka_unit_test(test_fused_by_pass),
        cmocka_unit_test(test_plan_matches_reference),
        cmocka_unit_test(test_symbolic_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
