/*
 * test_grad_conv.c - gradient rules of the contractions, convolutions,
 * pooling and fused ops (Gemm, Conv, ConvTranspose, MaxPool, AveragePool,
 * LpPool, their global forms, FusedConv, FusedGemm) against float64
 * central differences: odd sizes, every attribute that changes the math
 * (strides, pads, auto_pad, dilations, groups incl. depthwise, ceil_mode,
 * count_include_pad, storage_order, output_padding / output_shape,
 * alpha / beta / transA / transB, C's broadcasts, each activation), each
 * input that can need a gradient; the errors of what is not supported;
 * and a small CNN's joint graph compiled to plans, whose outputs match
 * the reference interpreter's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

#define TEXT_MAX (1 << 17)

/*
 * Appends to text (at *n) one constant line per entry of consts,
 * "name:d0,d1,..." (a bare "name:" is a scalar; "name=v" a scalar of
 * value v), of dtype dt; returns their element count. The values are
 * distinct (a permutation scaled into (-1, 1), at least 5e-4 apart), so
 * no max is ever tied and no |x| sits on its kink.
 */
static int64_t emit_consts(char *text, size_t *n, const char *consts,
                           const char *dt)
{
    int64_t total = 0;
    unsigned seed = 17;
    const char *p = consts;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char name[32], dims[64];
        int i = 0, j = 0;
        while (*p && *p != ':' && *p != '=')
            name[i++] = *p++;
        name[i] = 0;
        if (*p++ == '=') {
            *n += (size_t)snprintf(text + *n, TEXT_MAX - *n,
                                   "  %%%s: %s[] = const %.*s\n", name, dt,
                                   (int)strcspn(p, " "), p);
            p += strcspn(p, " ");
            total++;
            continue;
        }
        int64_t numel = 1, v = 0;
        int any = 0;
        while (*p && *p != ' ') {
            dims[j++] = *p;
            if (*p == ',') {
                numel *= v;
                v = 0;
            } else {
                v = v * 10 + (*p - '0');
                any = 1;
            }
            p++;
        }
        dims[j] = 0;
        if (any)
            numel *= v;
        *n += (size_t)snprintf(text + *n, TEXT_MAX - *n,
                               "  %%%s: %s[%s] = const %s", name, dt, dims,
                               any ? "[" : "");
        const int64_t m = 4001; /* prime: (k * step + off) mod m is 1:1 */
        int64_t step = 37 + 4 * (int64_t)seed, off = 101 * (int64_t)seed;
        assert_true(numel < m);
        for (int64_t k = 0; k < numel; k++) {
            int64_t q = (k * step + off) % m;
            *n += (size_t)snprintf(text + *n, TEXT_MAX - *n, "%s%.6f",
                                   k ? ", " : "",
                                   (double)(2 * q - m + 1) / (double)m);
        }
        *n +=
            (size_t)snprintf(text + *n, TEXT_MAX - *n, "%s\n", any ? "]" : "");
        total += numel;
        seed += 13;
    }
    return total;
}

/*
 * Checks the gradients of a graph of f64 constants (emit_consts) and
 * body lines whose result %y enters the loss sum(y * y) (so dY = 2y, not
 * all ones). Every element of every constant must get a checked gradient.
 */
static void check(const char *consts, const char *body)
{
    static char text[TEXT_MAX];
    size_t n = (size_t)snprintf(text, TEXT_MAX, "graph t() {\n");
    int64_t total = emit_consts(text, &n, consts, "f64");
    n += (size_t)snprintf(text + n, TEXT_MAX - n,
                          "%s\n  %%l = Mul(%%y, %%y)\n  return %%l\n}\n", body);
    assert_true(n < TEXT_MAX);
    /* a NaN or infinite loss would make every comparison vacuous */
    smelt_graph_t *g = tu_parse(NULL, text);
    double loss = run_sum_in(g, NULL, 0);
    smelt_graph_free(g);
    if (!isfinite(loss))
        fail_msg("the loss is %g in\n%s", loss, text);
    int got = check_text(text);
    if (got != total)
        fail_msg("%d gradient elements checked, expected %lld, in\n%s", got,
                 (long long)total, text);
}

/* ---- Gemm ------------------------------------------------------------ */

static void test_gemm(void **state)
{
    (void)state;
    check("a:3,4 b:4,5 c:5",
          "  %y = Gemm(%a, %b, %c) {alpha = 0.7, beta = 1.3}");
    check("a:4,3 b:4,5 c:1,5", "  %y = Gemm(%a, %b, %c) {transA = 1}");
    check("a:3,4 b:5,4 c:3,1",
          "  %y = Gemm(%a, %b, %c) {transB = 1, alpha = -0.5}");
    check("a:4,3 b:5,4 c:",
          "  %y = Gemm(%a, %b, %c) {transA = 1, transB = 1, beta = 0.25}");
    check("a:3,4 b:4,5 c:3,5",
          "  %y = Gemm(%a, %b, %c) {transA = 0, transB = 0, beta = -2.0}");
    check("a:2,3 b:3,1", "  %y = Gemm(%a, %b) {alpha = 1.5}");
}

/* ---- Conv ------------------------------------------------------------ */

static void test_conv_2d(void **state)
{
    (void)state;
    /* pads on every side, stride 2 one way */
    check("x:1,2,5,7 w:3,2,3,3 b:3",
          "  %y = Conv(%x, %w, %b) {pads = [1, 0, 1, 2], strides = [2, 1]}");
    /* dilations, no bias, a stride that leaves trailing input unread */
    check("x:2,2,5,7 w:2,2,2,2",
          "  %y = Conv(%x, %w) {dilations = [2, 1], strides = [1, 3]}");
    /* kernel_shape given, a 1x1 kernel */
    check("x:1,3,3,5 w:2,3,1,1 b:2",
          "  %y = Conv(%x, %w, %b) {kernel_shape = [1, 1]}");
}

static void test_conv_groups(void **state)
{
    (void)state;
    /* two groups, batch 2, strides and asymmetric pads */
    check("x:2,4,5,7 w:4,2,2,3 b:4",
          "  %y = Conv(%x, %w, %b) {group = 2, strides = [2, 2], "
          "pads = [0, 1, 1, 0]}");
    /* depthwise with channel multiplier 2 and dilations */
    check("x:1,3,5,7 w:6,1,3,2 b:6",
          "  %y = Conv(%x, %w, %b) {group = 3, dilations = [1, 2], "
          "pads = [1, 1, 1, 1]}");
    /* two groups, unit strides (dX by a Conv with the kernel reversed),
     * pads as large as the kernel */
    check("x:1,4,5,7 w:6,2,2,3 b:6",
          "  %y = Conv(%x, %w, %b) {group = 2, pads = [2, 0, 0, 3], "
          "dilations = [1, 2]}");
    /* depthwise, multiplier 1, stride 2 */
    check("x:2,3,5,5 w:3,1,3,3",
          "  %y = Conv(%x, %w) {group = 3, strides = [2, 2], "
          "pads = [1, 1, 1, 1]}");
}

static void test_conv_auto_pad(void **state)
{
    (void)state;
    check("x:1,2,5,7 w:2,2,3,2 b:2",
          "  %y = Conv(%x, %w, %b) {auto_pad = \"SAME_UPPER\", "
          "strides = [2, 2]}");
    check(
        "x:1,2,5,6 w:2,2,2,3",
        "  %y = Conv(%x, %w) {auto_pad = \"SAME_LOWER\", dilations = [2, 1]}");
    check("x:1,2,5,7 w:3,2,3,3",
          "  %y = Conv(%x, %w) {auto_pad = \"VALID\", strides = [1, 2]}");
}

static void test_conv_1d_3d_4d(void **state)
{
    (void)state;
    check("x:2,3,7 w:2,3,3 b:2",
          "  %y = Conv(%x, %w, %b) {strides = [2], pads = [1, 1], "
          "dilations = [2]}");
    check("x:1,2,4,5,3 w:4,1,2,3,2 b:4",
          "  %y = Conv(%x, %w, %b) {group = 2, strides = [1, 2, 1], "
          "pads = [1, 0, 1, 0, 1, 0]}");
    /* a kernel of more taps than the columns form takes: the kernel
     * gradient is one Conv with dY as its kernel */
    check("x:1,2,137 w:3,2,131 b:3", "  %y = Conv(%x, %w, %b) {strides = [2]}");
    /* 4-D and strided: dY spread out would pass the rank limit, so dX
     * is a ConvTranspose */
    check("x:1,2,3,4,3,3 w:2,2,2,2,1,2 b:2",
          "  %y = Conv(%x, %w, %b) {strides = [2, 1, 1, 2], "
          "pads = [0, 1, 0, 0, 1, 0, 0, 1]}");
}

/* ---- ConvTranspose ------------------------------------------------------ */

static void test_conv_transpose(void **state)
{
    (void)state;
    check("x:1,2,3,4 w:2,3,3,3 b:3",
          "  %y = ConvTranspose(%x, %w, %b) {strides = [2, 1], "
          "pads = [1, 0, 0, 1], output_padding = [1, 0]}");
    /* groups and dilations */
    check("x:2,4,3,3 w:4,1,2,3 b:2",
          "  %y = ConvTranspose(%x, %w, %b) {group = 2, dilations = [2, 1]}");
    /* output_shape past the natural size: negative pads */
    check("x:1,1,3,3 w:1,2,3,3",
          "  %y = ConvTranspose(%x, %w) {strides = [2, 2], "
          "output_shape = [8, 9]}");
    check("x:1,2,3,4 w:2,2,3,2",
          "  %y = ConvTranspose(%x, %w) {auto_pad = \"SAME_UPPER\", "
          "strides = [2, 2]}");
    /* 1-D; output_padding below the dilation but not the stride */
    check("x:2,2,4 w:2,3,2 b:3",
          "  %y = ConvTranspose(%x, %w, %b) {strides = [1], "
          "dilations = [3], output_padding = [2]}");
}

/* ---- pooling --------------------------------------------------------------
 */

static void test_maxpool(void **state)
{
    (void)state;
    check("x:1,2,5,7",
          "  %y = MaxPool(%x) {kernel_shape = [3, 2], strides = [2, 2], "
          "pads = [1, 0, 1, 1]}");
    check("x:2,1,5,7",
          "  %y = MaxPool(%x) {kernel_shape = [2, 3], strides = [2, 2], "
          "ceil_mode = 1}");
    check("x:1,2,5,7",
          "  %y = MaxPool(%x) {kernel_shape = [2, 2], dilations = [2, 1], "
          "auto_pad = \"SAME_UPPER\"}");
    /* overlapping windows share maxima; the forward's own Indices */
    check("x:1,2,5,6",
          "  %y, %i = MaxPool(%x) {kernel_shape = [3, 3], strides = [1, 1]}");
    /* column-major Indices: the rule makes its own */
    check("x:1,2,5,6",
          "  %y, %i = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 1], "
          "storage_order = 1}");
    check("x:2,3,7", "  %y = MaxPool(%x) {kernel_shape = [3], strides = [2]}");
    check("x:1,1,3,4,5",
          "  %y = MaxPool(%x) {kernel_shape = [2, 2, 3], strides = [1, 2, 2],"
          " pads = [0, 1, 1, 1, 0, 1]}");
}

/* A window wholly in the padding (SAME_LOWER, dilation 3 over 2 rows)
 * has max -inf and Indices -1. Through a finite loss (exp) its gradient
 * is 0 and the rest checks out; with dY infinite there (the loss y * y)
 * the rule masks it instead of sending it to X's last element. */
static void test_maxpool_empty_window(void **state)
{
    (void)state;
    const char *pool = "  %p = MaxPool(%x) {kernel_shape = [2, 2], "
                       "dilations = [3, 1], auto_pad = \"SAME_LOWER\"}\n";
    char body[256];
    snprintf(body, sizeof body, "%s  %%y = Exp(%%p)", pool);
    check("x:1,1,2,5", body);
    char text[1024];
    snprintf(text, sizeof text,
             "graph t() {\n  %%x: f64[1,1,2,5] = const [0.3, -0.2, 0.9, 0.1, "
             "-0.7, 0.5, 0.8, -0.4, 0.2, 0.6]\n%s  %%l = Mul(%%p, %%p)\n"
             "  return %%l\n}\n",
             pool);
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(smelt_graph_grad(ctx, g, NULL, &j), SMELT_OK);
    smelt_tensor_t *out[3] = {0};
    assert_int_equal(smelt_graph_num_outputs(j), 3);
    assert_int_equal(smelt_graph_run_reference(ctx, j, NULL, 0, out, 3),
                     SMELT_OK);
    smelt_tensor_t *dx = out[smelt_graph_grad_output(j, 0)];
    int inf_windows = 0;
    for (int64_t i = 0; i < smelt_tensor_numel(out[0]); i++)
        inf_windows += isinf(smelt_tensor_get_f64(out[0], i));
    assert_true(inf_windows > 0);
    for (int64_t i = 0; i < smelt_tensor_numel(dx); i++)
        assert_true(isfinite(smelt_tensor_get_f64(dx, i)));
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(out[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Ties: the gradient of a max goes to the first maximum of its window
 * in row-major order, as PyTorch does (central differences cannot see
 * this: a tie has no derivative). */
static void test_max_ties(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "  %y = MaxPool(%x) {kernel_shape = [2, 3]}",
        "  %y = GlobalMaxPool(%x)",
        "  %y, %i = MaxPool(%x) {kernel_shape = [2, 3], storage_order = 1}",
    };
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "graph t() {\n"
                 "  %%x: f64[1,1,2,3] = const [1.0, 5.0, 2.0, 5.0, 0.5, 5.0]\n"
                 "%s\n  return %%y\n}\n",
                 ops[k]);
        smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
        smelt_ctx_t *ctx = smelt_ctx_init();
        assert_int_equal(smelt_graph_grad(ctx, g, NULL, &j), SMELT_OK);
        int n_out = smelt_graph_num_outputs(j);
        smelt_tensor_t *out[4] = {0};
        assert_true(n_out <= 4);
        assert_int_equal(smelt_graph_run_reference(ctx, j, NULL, 0, out, n_out),
                         SMELT_OK);
        smelt_tensor_t *dx = out[smelt_graph_grad_output(j, 0)];
        for (int64_t i = 0; i < 6; i++)
            assert_true(smelt_tensor_get_f64(dx, i) == (i == 1 ? 1.0 : 0.0));
        for (int i = 0; i < n_out; i++)
            smelt_tensor_free(out[i]);
        smelt_graph_free(j);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

static void test_averagepool(void **state)
{
    (void)state;
    check("x:1,2,5,7",
          "  %y = AveragePool(%x) {kernel_shape = [3, 2], strides = [2, 2], "
          "pads = [1, 0, 1, 1]}");
    check("x:1,2,5,7",
          "  %y = AveragePool(%x) {kernel_shape = [3, 2], strides = [2, 2], "
          "pads = [1, 0, 1, 1], count_include_pad = 1}");
    check("x:2,1,5,7",
          "  %y = AveragePool(%x) {kernel_shape = [2, 3], strides = [2, 2], "
          "ceil_mode = 1}");
    check("x:2,1,5,7",
          "  %y = AveragePool(%x) {kernel_shape = [2, 3], strides = [2, 2], "
          "ceil_mode = 1, count_include_pad = 1, pads = [1, 1, 0, 0]}");
    check("x:1,2,5,6", "  %y = AveragePool(%x) {kernel_shape = [3, 3], "
                       "auto_pad = \"SAME_LOWER\"}");
    check("x:1,2,5,7",
          "  %y = AveragePool(%x) {kernel_shape = [2, 2], dilations = [2, 2]}");
    check("x:2,2,7",
          "  %y = AveragePool(%x) {kernel_shape = [3], strides = [3]}");
}

static void test_lppool(void **state)
{
    (void)state;
    check("x:1,2,5,7",
          "  %y = LpPool(%x) {kernel_shape = [3, 2], strides = [2, 2], "
          "pads = [1, 0, 1, 1]}");
    check("x:1,2,5,7", "  %y = LpPool(%x) {kernel_shape = [2, 2], p = 1}");
    check("x:1,2,5,6",
          "  %y = LpPool(%x) {kernel_shape = [2, 3], p = 3, strides = [1, 2]}");
    check("x:2,3,5,7", "  %y = GlobalLpPool(%x)");
    check("x:2,3,5,7", "  %y = GlobalLpPool(%x) {p = 3}");
    check("x:2,3,5", "  %y = GlobalLpPool(%x) {p = 1}");
}

static void test_global_pool(void **state)
{
    (void)state;
    check("x:2,3,5,7", "  %y = GlobalAveragePool(%x)");
    check("x:2,3,5,7", "  %y = GlobalMaxPool(%x)");
    check("x:2,3,7", "  %y = GlobalMaxPool(%x)");
    check("x:1,2,3,4,5", "  %y = GlobalAveragePool(%x)");
}

/* ---- fused ------------------------------------------------------------------
 */

static void test_fused_conv(void **state)
{
    (void)state;
    static const char *const acts[] = {
        "",
        "activation = \"relu\", ",
        "activation = \"relu6\", ",
        "activation = \"clip\", activation_alpha = -0.5, "
        "activation_beta = 0.75, ",
        "activation = \"sigmoid\", ",
        "activation = \"silu\", ",
        "activation = \"gelu\", ",
        "activation = \"gelu_tanh\", ",
        "activation = \"leakyrelu\", activation_alpha = 0.2, ",
        "activation = \"leakyrelu\", activation_alpha = -0.3, ",
        "activation = \"tanh\", ",
    };
    char body[512];
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
        /* x scaled by 4 so relu6 is seen past 6 too */
        snprintf(body, sizeof body,
                 "  %%x3 = Mul(%%x, %%k)\n"
                 "  %%y = FusedConv(%%x3, %%w, %%b, %%r) {%sgroup = 2, "
                 "pads = [1, 0, 1, 1], strides = [2, 1]}",
                 acts[i]);
        check("x:1,4,5,7 w:4,2,3,2 b:4 r:1,4,3,7 k=4.0", body);
    }
    /* no bias, a residual broadcast over channels */
    check("x:1,2,5,5 w:3,2,3,3 r:1,1,3,3",
          "  %y = FusedConv(%x, %w, _, %r) {activation = \"tanh\"}");
}

static void test_fused_gemm(void **state)
{
    (void)state;
    check("a:3,4 b:5,4 c:5 r:3,5",
          "  %y = FusedGemm(%a, %b, %c, %r) {transB = 1, alpha = 0.5, "
          "beta = 2.0, activation = \"gelu\"}");
    check("a:4,3 b:4,5 c:3,1",
          "  %y = FusedGemm(%a, %b, %c) {transA = 1, activation = \"relu\"}");
    /* no transposition: MatMul semantics, batched and broadcast */
    check("a:2,3,4 b:4,5 c:5 r:3,1",
          "  %y = FusedGemm(%a, %b, %c, %r) {alpha = -0.7, beta = 0.3, "
          "activation = \"leakyrelu\", activation_alpha = 0.1}");
    check("a:3,4 b:4,2", "  %y = FusedGemm(%a, %b) {activation = \"sigmoid\"}");
}

/* x's gradient through graph text, optimized at -O`level` first; the
 * optimized graph's text into *printed (free it) when asked. */
static smelt_tensor_t *input_grad(const char *text, int level, char **printed)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.level = level;
    if (smelt_graph_optimize(ctx, g, &oo, NULL) != SMELT_OK)
        fail_msg("optimize: %s", smelt_ctx_error(ctx));
    if (printed)
        assert_int_equal(smelt_graph_print(ctx, g, printed), SMELT_OK);
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    const char *wrt[1] = {"x"};
    o.wrt = wrt;
    o.n_wrt = 1;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad -O%d: %s", level, smelt_ctx_error(ctx));
    int64_t dims[4] = {2, 3, 5, 7};
    smelt_tensor_t *x = NULL, *out[3] = {0};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 4, dims, &x),
                     SMELT_OK);
    for (int64_t i = 0; i < smelt_tensor_numel(x); i++)
        ((double *)smelt_tensor_data(x))[i] =
            (double)((i * 53) % 97) / 48.0 - 1.0;
    assert_int_equal(smelt_graph_num_outputs(j), 3);
    if (smelt_graph_run_reference(ctx, j, &x, 1, out, 3) != SMELT_OK)
        fail_msg("run -O%d: %s", level, smelt_ctx_error(ctx));
    smelt_tensor_t *d = out[smelt_graph_grad_output(j, 0)];
    for (int i = 0; i < 3; i++)
        if (out[i] != d)
            smelt_tensor_free(out[i]);
    smelt_tensor_free(x);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return d;
}

/* Differentiating after fusion gives what differentiating before does:
 * -O2 turns conv + bias + relu and gemm + tanh into FusedConv and
 * FusedGemm, whose rules split them back. */
static void test_grad_after_fusion(void **state)
{
    (void)state;
    static char text[TEXT_MAX];
    size_t n =
        (size_t)snprintf(text, TEXT_MAX, "graph f(%%x: f64[2,3,5,7]) {\n");
    emit_consts(text, &n, "w:4,3,3,3 b:4 w2:6,4 c2:6", "f64");
    snprintf(text + n, TEXT_MAX - n,
             "  %%c = Conv(%%x, %%w, %%b) {pads = [1, 1, 1, 1], "
             "strides = [2, 1]}\n"
             "  %%r = Relu(%%c)\n"
             "  %%f = ReduceSum(%%r) {axes = [2, 3], keepdims = 0}\n"
             "  %%m = Gemm(%%f, %%w2, %%c2) {transB = 1, alpha = 0.5}\n"
             "  %%y = Tanh(%%m)\n"
             "  return %%y\n}\n");
    char *fused = NULL;
    smelt_tensor_t *a = input_grad(text, 0, NULL);
    smelt_tensor_t *b = input_grad(text, 2, &fused);
    if (!strstr(fused, "FusedConv(") || !strstr(fused, "FusedGemm("))
        fail_msg("-O2 did not fuse:\n%s", fused);
    smelt_string_free(fused);
    assert_int_equal(smelt_tensor_numel(a), smelt_tensor_numel(b));
    double big = 0;
    for (int64_t i = 0; i < smelt_tensor_numel(a); i++)
        big = fmax(big, fabs(smelt_tensor_get_f64(a, i)));
    assert_true(big > 0);
    for (int64_t i = 0; i < smelt_tensor_numel(a); i++)
        assert_true(fabs(smelt_tensor_get_f64(a, i) -
                         smelt_tensor_get_f64(b, i)) <= 1e-12 * big);
    smelt_tensor_free(a);
    smelt_tensor_free(b);
}

/* ---- what is not supported ------------------------------------------------
 */

/* Spatial sizes not known before running: the rule fails, naming the
 * node and why, instead of building a wrong window. */
static void expect_unsupported(const char *op_line, const char *what)
{
    char text[512];
    snprintf(text, sizeof text,
             "graph t(%%x: f64[1,2,h,w]) {\n"
             "  %%w: f64[2,2,1,1] = const [0.1, -0.2, 0.3, 0.4]\n"
             "%s\n  return %%y\n}\n",
             op_line);
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    const char *wrt[1] = {"x"};
    o.wrt = wrt;
    o.n_wrt = 1;
    assert_int_equal(smelt_graph_grad(ctx, g, &o, &j), SMELT_ERR_UNSUPPORTED);
    const char *msg = smelt_ctx_error(ctx);
    if (!strstr(msg, what) || !strstr(msg, "not known before running"))
        fail_msg("unexpected message: %s", msg);
    assert_null(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_unsupported(void **state)
{
    (void)state;
    expect_unsupported("  %y = Conv(%x, %w)", "Conv");
    expect_unsupported("  %y = ConvTranspose(%x, %w)", "ConvTranspose");
    expect_unsupported("  %y = MaxPool(%x) {kernel_shape = [2, 2]}", "MaxPool");
    expect_unsupported("  %y = AveragePool(%x) {kernel_shape = [2, 2]}",
                       "AveragePool");
    expect_unsupported("  %y = GlobalAveragePool(%x)", "GlobalAveragePool");
}

/* The gradient of input x (f64[BATCH,4,5,7], values fixed) and of the
 * kernel through op_line, with BATCH as given; into dx and dw. */
static void grads_with_batch(const char *batch, const char *op_line, double *dx,
                             double *dw)
{
    static char text[TEXT_MAX];
    size_t n = (size_t)snprintf(text, TEXT_MAX,
                                "graph t(%%x: f64[%s,4,5,7]) {\n", batch);
    emit_consts(text, &n, "w:4,2,2,3", "f64");
    n += (size_t)snprintf(text + n, TEXT_MAX - n,
                          "%s\n  %%y = Tanh(%%p)\n  return %%y\n}\n", op_line);
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    const char *wrt[2] = {"x", "w"};
    o.wrt = wrt;
    o.n_wrt = 2;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad (batch %s): %s", batch, smelt_ctx_error(ctx));
    int64_t dims[4] = {3, 4, 5, 7};
    smelt_tensor_t *x = NULL, *out[4] = {0};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 4, dims, &x),
                     SMELT_OK);
    for (int64_t i = 0; i < smelt_tensor_numel(x); i++)
        ((double *)smelt_tensor_data(x))[i] =
            (double)((i * 37) % 101) / 50.0 - 1.0;
    assert_int_equal(smelt_graph_num_outputs(j), 4);
    if (smelt_graph_run_reference(ctx, j, &x, 1, out, 4) != SMELT_OK)
        fail_msg("run (batch %s): %s", batch, smelt_ctx_error(ctx));
    smelt_tensor_t *gx = out[smelt_graph_grad_output(j, 0)];
    smelt_tensor_t *gw = out[smelt_graph_grad_output(j, 1)];
    assert_int_equal(smelt_tensor_numel(gx), 3 * 4 * 5 * 7);
    assert_int_equal(smelt_tensor_numel(gw), 48);
    for (int64_t i = 0; i < 3 * 4 * 5 * 7; i++)
        dx[i] = smelt_tensor_get_f64(gx, i);
    for (int64_t i = 0; i < 48; i++)
        dw[i] = smelt_tensor_get_f64(gw, i);
    for (int i = 0; i < 4; i++)
        smelt_tensor_free(out[i]);
    smelt_tensor_free(x);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A symbolic batch needs no size: the rules reshape with 0 / -1 and
 * take X's shape at run time; the gradients equal the static ones. */
static void test_symbolic_batch(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "  %p = Conv(%x, %w) {group = 2, strides = [2, 1], "
        "pads = [1, 0, 0, 1]}",
        "  %p = ConvTranspose(%x, %w) {group = 2, strides = [2, 1]}",
        "  %p0 = Tanh(%x)\n  %p1 = MaxPool(%p0) {kernel_shape = [2, 3]}\n"
        "  %p = Conv(%p1, %w) {group = 2}",
        "  %p0 = AveragePool(%x) {kernel_shape = [2, 3], pads = [1, 1, 0, 0]}"
        "\n  %p = Conv(%p0, %w) {group = 2}",
        "  %p0 = GlobalMaxPool(%x)\n  %p = Conv(%p0, %w) {group = 2, "
        "pads = [1, 1, 1, 1]}",
    };
    static double ax[420], aw[48], bx[420], bw[48];
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        grads_with_batch("3", ops[k], ax, aw);
        grads_with_batch("batch", ops[k], bx, bw);
        for (int i = 0; i < 420; i++)
            assert_true(ax[i] == bx[i]);
        for (int i = 0; i < 48; i++)
            assert_true(aw[i] == bw[i]);
    }
}

/* ---- the compiled plan -----------------------------------------------------
 */

/* A small CNN: conv + relu, max pool (ceil_mode), grouped conv + tanh,
 * a transposed conv, average pool with padding, global average pool, a
 * channel sum and a Gemm head; the input %x is a graph input, so nothing
 * folds away. */
static const char *cnn_consts = "w1:4,3,3,3 b1:4 w2:4,2,3,2 wt:4,2,2,2 "
                                "w3:4,5 c3:5";
static const char *cnn_body =
    "  %c1 = Conv(%x, %w1, %b1) {pads = [1, 1, 1, 1]}\n"
    "  %r1 = Relu(%c1)\n"
    "  %p1 = MaxPool(%r1) {kernel_shape = [2, 2], strides = [2, 2], "
    "ceil_mode = 1}\n"
    "  %c2 = Conv(%p1, %w2) {group = 2, pads = [1, 0, 1, 0]}\n"
    "  %t2 = Tanh(%c2)\n"
    "  %u2 = ConvTranspose(%t2, %wt) {group = 2, strides = [2, 1]}\n"
    "  %a2 = AveragePool(%u2) {kernel_shape = [2, 2], pads = [0, 0, 1, 1]}\n"
    "  %g = GlobalAveragePool(%a2)\n"
    "  %f = ReduceSum(%g) {axes = [2, 3], keepdims = 0}\n"
    "  %y = Gemm(%f, %w3, %c3) {alpha = 0.5}\n"
    "  return %y\n}\n";

/* The joint graph of the CNN in dtype dt, compiled at -O`level` and run
 * on one input, against the reference interpreter on the same graph:
 * every output (forward, loss, each gradient) within tol (relative to
 * the output's largest magnitude). */
static void plan_matches(const char *dt, smelt_dtype dtype, int level,
                         double tol)
{
    static char text[TEXT_MAX];
    size_t n =
        (size_t)snprintf(text, TEXT_MAX, "graph cnn(%%x: %s[2,3,7,6]) {\n", dt);
    emit_consts(text, &n, cnn_consts, dt);
    n += (size_t)snprintf(text + n, TEXT_MAX - n, "%s", cnn_body);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    if (smelt_graph_grad(ctx, g, NULL, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_grads(j), 6);
    int64_t dims[4] = {2, 3, 7, 6};
    smelt_tensor_t *x = NULL;
    assert_int_equal(smelt_tensor_init(ctx, dtype, 4, dims, &x), SMELT_OK);
    for (int64_t i = 0; i < smelt_tensor_numel(x); i++) {
        double v = (double)((i * 29) % 83) / 41.0 - 1.0;
        if (dtype == SMELT_DTYPE_F64)
            ((double *)smelt_tensor_data(x))[i] = v;
        else
            ((float *)smelt_tensor_data(x))[i] = (float)v;
    }
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = level;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, j, &o, &p) != SMELT_OK)
        fail_msg("compile -O%d %s: %s", level, dt, smelt_ctx_error(ctx));
    int n_out = smelt_graph_num_outputs(j);
    smelt_tensor_t *ref[8] = {0}, *got[8] = {0};
    assert_true(n_out == 8);
    if (smelt_graph_run_reference(ctx, j, &x, 1, ref, n_out) != SMELT_OK)
        fail_msg("reference: %s", smelt_ctx_error(ctx));
    if (smelt_plan_run(ctx, p, &x, 1, got, n_out) != SMELT_OK)
        fail_msg("plan -O%d %s: %s", level, dt, smelt_ctx_error(ctx));
    for (int k = 0; k < n_out; k++) {
        int64_t cnt = smelt_tensor_numel(ref[k]);
        assert_int_equal(smelt_tensor_numel(got[k]), cnt);
        double big = 0;
        for (int64_t i = 0; i < cnt; i++)
            big = fmax(big, fabs(smelt_tensor_get_f64(ref[k], i)));
        assert_true(big > 0); /* every gradient reaches its weights */
        for (int64_t i = 0; i < cnt; i++) {
            double a = smelt_tensor_get_f64(ref[k], i);
            double b = smelt_tensor_get_f64(got[k], i);
            if (!(fabs(a - b) <= tol * big))
                fail_msg("-O%d %s output %d [%lld]: plan %.9g, reference "
                         "%.9g",
                         level, dt, k, (long long)i, b, a);
        }
        smelt_tensor_free(ref[k]);
        smelt_tensor_free(got[k]);
    }
    smelt_tensor_free(x);
    smelt_plan_free(p);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The CNN's gradients themselves, in f64 against central differences
 * (its input a constant here). */
static void test_cnn_grad(void **state)
{
    (void)state;
    char consts[256], body[1024];
    snprintf(consts, sizeof consts, "x:1,3,7,6 %s", cnn_consts);
    snprintf(body, sizeof body, "%s", cnn_body);
    body[strlen(body) - strlen("  return %y\n}\n")] = 0;
    check(consts, body);
}

static void test_cnn_plan(void **state)
{
    (void)state;
    for (int level = 0; level <= 2; level += 2) {
        plan_matches("f64", SMELT_DTYPE_F64, level, 1e-9);
        plan_matches("f32", SMELT_DTYPE_F32, level, 1e-4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_conv_2d),
        cmocka_unit_test(test_conv_groups),
        cmocka_unit_test(test_conv_auto_pad),
        cmocka_unit_test(test_conv_1d_3d_4d),
        cmocka_unit_test(test_conv_transpose),
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_maxpool_empty_window),
        cmocka_unit_test(test_max_ties),
        cmocka_unit_test(test_averagepool),
        cmocka_unit_test(test_lppool),
        cmocka_unit_test(test_global_pool),
        cmocka_unit_test(test_fused_conv),
        cmocka_unit_test(test_fused_gemm),
        cmocka_unit_test(test_grad_after_fusion),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_symbolic_batch),
        cmocka_unit_test(test_cnn_grad),
        cmocka_unit_test(test_cnn_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
