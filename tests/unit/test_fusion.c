/*
 * test_fusion.c - the fused ops and the fusion passes, numerically.
 *
 * Each fused kernel (FusedConv with every activation, FusedGemm on the
 * MatMul and the Gemm paths, Gelu, FusedElementwise) is run against the
 * unfused graph it stands for, by the reference interpreter on seeded
 * random inputs: the largest error must stay within 1e-5 (relative above
 * 1). The passes are checked the same way (conv + BatchNormalization
 * folding, zero Pads folded into Conv and AveragePool pads, recognition,
 * the whole -O3 pipeline), their near misses are
 * checked in the --why-not-fused log, bad attributes and signatures are
 * checked for the right status and message, and every pass runs under
 * allocation failure at each point.
 */
#include "fusion_util.h"

#include "core/alloc.h"
#include "core/act.h"

#define TOL 1e-5

/* Parses both graphs and compares them on three seeds. */
static void expect_same(const char *a_text, const char *b_text)
{
    sm_graph *a = fu_parse(a_text), *b = fu_parse(b_text);
    for (unsigned seed = 1; seed <= 3; seed++) {
        double e = fu_compare(a, b, seed);
        if (!(e <= TOL))
            fail_msg("error %g\n--- unfused ---\n%s--- fused ---\n%s", e,
                     a_text, b_text);
    }
    sm_graph_free(a);
    sm_graph_free(b);
}

/* An activation: its attributes on the fused op, and the unfused nodes
 * turning %s into %out. */
typedef struct act_case {
    const char *attrs;
    const char *tail;
} act_case;

static const act_case acts[] = {
    {"", "  %out = Identity(%s)\n"},
    {", activation = \"relu\"", "  %out = Relu(%s)\n"},
    {", activation = \"relu6\"",
     "  %lo: f32[] = const 0.0\n  %hi: f32[] = const 6.0\n"
     "  %out = Clip(%s, %lo, %hi)\n"},
    {", activation = \"clip\", activation_alpha = -0.5, activation_beta = 0.75",
     "  %lo: f32[] = const -0.5\n  %hi: f32[] = const 0.75\n"
     "  %out = Clip(%s, %lo, %hi)\n"},
    {", activation = \"clip\", activation_beta = 0.5",
     "  %hi: f32[] = const 0.5\n  %out = Clip(%s, _, %hi)\n"},
    {", activation = \"sigmoid\"", "  %out = Sigmoid(%s)\n"},
    {", activation = \"silu\"", "  %g = Sigmoid(%s)\n  %out = Mul(%s, %g)\n"},
    {", activation = \"gelu\"", "  %out = Gelu(%s)\n"},
    {", activation = \"gelu_tanh\"",
     "  %out = Gelu(%s) {approximate = \"tanh\"}\n"},
    {", activation = \"leakyrelu\", activation_alpha = 0.1",
     "  %out = LeakyRelu(%s) {alpha = 0.1}\n"},
    {", activation = \"leakyrelu\"", "  %out = LeakyRelu(%s)\n"},
    {", activation = \"tanh\"", "  %out = Tanh(%s)\n"},
};

#define N_ACTS ((int)(sizeof acts / sizeof *acts))

/* FusedConv(X, W, B, R) = act(Conv + R), grouped, strided, padded. */
static void test_fusedconv_kernel(void **state)
{
    (void)state;
    static const char *conv_attrs =
        "group = 2, pads = [1, 1, 1, 1], strides = [2, 2]";
    char a[4096], b[4096];
    for (int i = 0; i < N_ACTS; i++) {
        snprintf(a, sizeof a,
                 "graph u(%%x: f32[2,4,6,6], %%w: f32[6,2,3,3], %%b: f32[6], "
                 "%%r: f32[2,6,3,3]) {\n"
                 "  %%y = Conv(%%x, %%w, %%b) {%s}\n"
                 "  %%s = Add(%%y, %%r)\n%s  return %%out\n}\n",
                 conv_attrs, acts[i].tail);
        snprintf(b, sizeof b,
                 "graph f(%%x: f32[2,4,6,6], %%w: f32[6,2,3,3], %%b: f32[6], "
                 "%%r: f32[2,6,3,3]) {\n"
                 "  %%out = FusedConv(%%x, %%w, %%b, %%r) {%s%s}\n"
                 "  return %%out\n}\n",
                 conv_attrs, acts[i].attrs);
        expect_same(a, b);
    }
    /* no bias with a residual that broadcasts per channel; no residual */
    expect_same(
        "graph u(%x: f32[1,2,5,5], %w: f32[3,2,3,3], %r: f32[3,1,1]) {\n"
        "  %y = Conv(%x, %w)\n  %s = Add(%y, %r)\n"
        "  %out = Relu(%s)\n  return %out\n}\n",
        "graph f(%x: f32[1,2,5,5], %w: f32[3,2,3,3], %r: f32[3,1,1]) {\n"
        "  %out = FusedConv(%x, %w, _, %r) {activation = \"relu\"}\n"
        "  return %out\n}\n");
    expect_same("graph u(%x: f32[1,2,5,5], %w: f32[3,2,1,1]) {\n"
                "  %y = Conv(%x, %w)\n  %out = Sigmoid(%y)\n  return %out\n}\n",
                "graph f(%x: f32[1,2,5,5], %w: f32[3,2,1,1]) {\n"
                "  %out = FusedConv(%x, %w) {activation = \"sigmoid\"}\n"
                "  return %out\n}\n");
}

/* FusedGemm: the batched MatMul path (alpha applied in the epilogue) and
 * the Gemm path (transposes, alpha, beta). */
static void test_fusedgemm_kernel(void **state)
{
    (void)state;
    char a[4096], b[4096];
    for (int i = 0; i < N_ACTS; i++) {
        snprintf(a, sizeof a,
                 "graph u(%%a: f32[2,3,4], %%w: f32[4,5], %%c: f32[5], "
                 "%%r: f32[2,3,5]) {\n"
                 "  %%y = MatMul(%%a, %%w)\n  %%z = Add(%%y, %%c)\n"
                 "  %%s = Add(%%z, %%r)\n%s  return %%out\n}\n",
                 acts[i].tail);
        snprintf(b, sizeof b,
                 "graph f(%%a: f32[2,3,4], %%w: f32[4,5], %%c: f32[5], "
                 "%%r: f32[2,3,5]) {\n"
                 "  %%out = FusedGemm(%%a, %%w, %%c, %%r) {alpha = 1.0%s}\n"
                 "  return %%out\n}\n",
                 acts[i].attrs);
        expect_same(a, b);
        snprintf(a, sizeof a,
                 "graph u(%%a: f32[4,3], %%w: f32[5,4], %%c: f32[3,1]) {\n"
                 "  %%s = Gemm(%%a, %%w, %%c) {transA = 1, transB = 1, alpha "
                 "= 0.75, beta = -1.5}\n%s  return %%out\n}\n",
                 acts[i].tail);
        snprintf(b, sizeof b,
                 "graph f(%%a: f32[4,3], %%w: f32[5,4], %%c: f32[3,1]) {\n"
                 "  %%out = FusedGemm(%%a, %%w, %%c) {transA = 1, transB = 1, "
                 "alpha = 0.75, beta = -1.5%s}\n  return %%out\n}\n",
                 acts[i].attrs);
        expect_same(a, b);
    }
    /* alpha on the MatMul path, 2-D, a bias that is a full matrix */
    expect_same("graph u(%a: f32[3,4], %w: f32[4,2], %c: f32[3,2]) {\n"
                "  %s = Gemm(%a, %w, %c) {alpha = 2.0, beta = 0.5}\n"
                "  %out = Relu(%s)\n  return %out\n}\n",
                "graph f(%a: f32[3,4], %w: f32[4,2], %c: f32[3,2]) {\n"
                "  %out = FusedGemm(%a, %w, %c) {alpha = 2.0, beta = 0.5, "
                "activation = \"relu\"}\n  return %out\n}\n");
}

/* Gelu against both formulas written out with primitive ops, in f32 and
 * f64, and the scalar formulas against known values. */
static void test_gelu(void **state)
{
    (void)state;
    static const char *erf_form =
        "  %sq: $[] = const 1.4142135623730951\n  %one: $[] = const 1.0\n"
        "  %half: $[] = const 0.5\n  %a = Div(%x, %sq)\n  %e = Erf(%a)\n"
        "  %u = Add(%e, %one)\n  %m = Mul(%x, %u)\n  %out = Mul(%m, %half)\n";
    static const char *tanh_form =
        "  %one: $[] = const 1.0\n  %half: $[] = const 0.5\n"
        "  %three: $[] = const 3.0\n  %k: $[] = const 0.044715\n"
        "  %c: $[] = const 0.7978845608028654\n  %p = Pow(%x, %three)\n"
        "  %t1 = Mul(%p, %k)\n  %t2 = Add(%x, %t1)\n  %t3 = Mul(%t2, %c)\n"
        "  %t4 = Tanh(%t3)\n  %t5 = Add(%t4, %one)\n  %t6 = Mul(%x, %t5)\n"
        "  %out = Mul(%t6, %half)\n";
    static const char *dts[] = {"f32", "f64"};
    char a[2048], b[1024], body[1024];
    for (int d = 0; d < 2; d++)
        for (int form = 0; form < 2; form++) {
            const char *src = form ? tanh_form : erf_form;
            size_t k = 0;
            for (const char *p = src; *p; p++) /* $ -> the dtype */
                k += (size_t)snprintf(body + k, sizeof body - k, "%s",
                                      *p == '$' ? dts[d] : (char[2]){*p, 0});
            snprintf(a, sizeof a,
                     "graph u(%%x: %s[3,7]) {\n%s  return %%out\n}\n", dts[d],
                     body);
            snprintf(b, sizeof b,
                     "graph f(%%x: %s[3,7]) {\n  %%out = Gelu(%%x)%s\n"
                     "  return %%out\n}\n",
                     dts[d], form ? " {approximate = \"tanh\"}" : "");
            expect_same(a, b);
        }
    assert_true(fabs(sm_gelu_erf(1.0) - 0.8413447460685429) < 1e-15);
    assert_true(fabs(sm_gelu_erf(-2.0) - -0.04550026389635842) < 1e-15);
    assert_true(fabs(sm_gelu_tanh(1.0) - 0.8411919906082768) < 1e-15);
    assert_true(sm_gelu_erf(0.0) == 0.0);
}

/* FusedElementwise runs its body: one output from a chain with
 * broadcasting, and two outputs. */
static void test_fusedelementwise_kernel(void **state)
{
    (void)state;
    expect_same("graph u(%x: f32[2,3], %y: f32[3]) {\n"
                "  %k: f32[] = const 0.5\n  %a = Add(%x, %y)\n"
                "  %b = Mul(%a, %k)\n  %c = Sigmoid(%b)\n  %d = Mul(%b, %c)\n"
                "  return %d\n}\n",
                "graph f(%x: f32[2,3], %y: f32[3]) {\n"
                "  %k: f32[] = const 0.5\n"
                "  %d = FusedElementwise(%x, %y, %k) body(%p: f32[2,3], %q: "
                "f32[3], %r: f32[]) {\n"
                "    %a = Add(%p, %q)\n    %b = Mul(%a, %r)\n"
                "    %c = Sigmoid(%b)\n    %e = Mul(%b, %c)\n    return %e\n"
                "  }\n  return %d\n}\n");
    const char *two = "graph f(%x: f32[4]) {\n"
                      "  %u, %v = FusedElementwise(%x) body(%p: f32[4]) {\n"
                      "    %a = Exp(%p)\n    %b = Neg(%a)\n    return %a, %b\n"
                      "  }\n  return %u, %v\n}\n";
    expect_same("graph u(%x: f32[4]) {\n  %a = Exp(%x)\n  %b = Neg(%a)\n"
                "  return %a, %b\n}\n",
                two);
    sm_graph *g = fu_parse(two);
    assert_int_equal(g->top->nodes[0]->out[1]->type.dims[0].size, 4);
    sm_graph_free(g);
}

/* A graph of Conv + BatchNormalization pairs with random constants. */
static char *conv_bn_graph(void)
{
    char *w1 = fu_lit(6 * 4 * 9, 1, 0.5, 0), *w2 = fu_lit(6 * 6, 2, 0.5, 0);
    char *b1 = fu_lit(6, 3, 0.5, 0), *sc = fu_lit(6, 4, 1.5, 0);
    char *sh = fu_lit(6, 5, 1.0, 0), *mu = fu_lit(6, 6, 0.5, 0);
    char *va = fu_lit(6, 7, 2.0, 1);
    char *t = malloc(16384);
    assert_non_null(t);
    snprintf(t, 16384,
             "graph cbn(%%x: f32[2,4,5,5]) {\n"
             "  %%w1: f32[6,4,3,3] = const %s\n  %%b1: f32[6] = const %s\n"
             "  %%w2: f32[6,6,1,1] = const %s\n  %%sc: f32[6] = const %s\n"
             "  %%sh: f32[6] = const %s\n  %%mu: f32[6] = const %s\n"
             "  %%va: f32[6] = const %s\n"
             "  %%y1 = Conv(%%x, %%w1, %%b1) {strides = [2, 2]} @conv1\n"
             "  %%n1 = BatchNormalization(%%y1, %%sc, %%sh, %%mu, %%va) "
             "{epsilon = 0.01} @bn1\n"
             "  %%y2 = Conv(%%n1, %%w2) @conv2\n"
             "  %%n2 = BatchNormalization(%%y2, %%va, %%mu, %%sh, %%va) @bn2\n"
             "  %%r = Relu(%%n2)\n  return %%r\n}\n",
             w1, b1, w2, sc, sh, mu, va);
    free(w1), free(w2), free(b1), free(sc), free(sh), free(mu), free(va);
    return t;
}

/* Folding BatchNormalization into the Conv's weights keeps the results. */
static void test_fold_conv_bn(void **state)
{
    (void)state;
    char *text = conv_bn_graph();
    sm_graph *a = fu_parse(text), *b = fu_parse(text);
    fu_passes(b, "fold_conv_bn", 0, NULL);
    assert_int_equal(fu_count(b->top, SM_OP_BatchNormalization), 0);
    assert_int_equal(fu_count(b->top, SM_OP_Conv), 2);
    for (unsigned seed = 1; seed <= 3; seed++)
        assert_true(fu_compare(a, b, seed) <= TOL);
    /* and the whole -O3 pipeline: one FusedConv with relu at the end */
    fu_passes(a,
              "fold_conv_bn,decompose,recognize,cancel_transposes,"
              "split_matmul,fuse_epilogue,fuse_elementwise",
              0, NULL);
    assert_int_equal(fu_count(a->top, SM_OP_FusedConv), 1);
    assert_int_equal(fu_count(a->top, SM_OP_Relu), 0);
    for (unsigned seed = 1; seed <= 3; seed++)
        assert_true(fu_compare(b, a, seed) <= TOL);
    sm_graph_free(a);
    sm_graph_free(b);
    free(text);
}

/* Zero Pads with asymmetric pads, before a Conv with a bias and Relu,
 * a strided Conv with pads of its own and AveragePools of both
 * count_include_pad kinds. */
static const char fold_pad_text[] =
    "graph fp(%x: f32[2,3,7,6], %w: f32[4,3,3,2], %b: f32[4]) {\n"
    "  %p: i64[8] = const [0, 0, 2, 0, 0, 0, 1, 3]\n"
    "  %q: i64[8] = const [0, 0, 0, 1, 0, 0, 2, 1]\n"
    "  %xp = Pad(%x, %p)\n"
    "  %y = Conv(%xp, %w, %b)\n  %r = Relu(%y)\n"
    "  %y2 = Conv(%xp, %w) {pads = [1, 0, 0, 1], strides = [2, 3]}\n"
    "  %xq = Pad(%x, %q)\n"
    "  %a = AveragePool(%xq) {kernel_shape = [3, 2], strides = [2, 1]}\n"
    "  %xs = Pad(%x, %q)\n"
    "  %a2 = AveragePool(%xs) {kernel_shape = [3, 3], pads = [1, 1, 0, 1], "
    "count_include_pad = 1}\n"
    "  return %r, %y2, %a, %a2\n}\n";

/* fold_pad keeps the results, and the folded Conv still fuses. */
static void test_fold_pad(void **state)
{
    (void)state;
    sm_graph *a = fu_parse(fold_pad_text), *b = fu_parse(fold_pad_text);
    fu_passes(b, "fold_pad", 0, NULL);
    assert_int_equal(fu_count(b->top, SM_OP_Pad), 0);
    for (unsigned seed = 1; seed <= 3; seed++)
        assert_true(fu_compare(a, b, seed) <= TOL);
    fu_passes(b, "fuse_epilogue", 0, NULL);
    assert_int_equal(fu_count(b->top, SM_OP_FusedConv), 1);
    assert_int_equal(fu_count(b->top, SM_OP_Relu), 0);
    for (unsigned seed = 1; seed <= 3; seed++)
        assert_true(fu_compare(a, b, seed) <= TOL);
    sm_graph_free(a);
    sm_graph_free(b);
}

/* A transformer block's tail as PyTorch exports it (LayerNorm below
 * opset 17, erf GELU): recognize, then -O2 fusion, keep the results. */
static void test_recognize_transformer(void **state)
{
    (void)state;
    char *w1 = fu_lit(8 * 16, 11, 0.5, 0), *w2 = fu_lit(16 * 8, 12, 0.5, 0);
    char *b1 = fu_lit(16, 13, 0.5, 0), *gm = fu_lit(8, 14, 1.0, 0);
    char text[16384];
    snprintf(
        text, sizeof text,
        "graph mlp(%%x: f32[2,3,8]) {\n"
        "  %%w1: f32[8,16] = const %s\n  %%b1: f32[16] = const %s\n"
        "  %%w2: f32[16,8] = const %s\n  %%gm: f32[8] = const %s\n"
        "  %%two: f32[] = const 2.0\n  %%eps: f32[] = const 1e-05\n"
        "  %%sq: f32[] = const 1.41421354\n  %%one: f32[] = const 1.0\n"
        "  %%half: f32[] = const 0.5\n"
        "  %%m = ReduceMean(%%x) {axes = [-1]}\n  %%d = Sub(%%x, %%m)\n"
        "  %%p = Pow(%%d, %%two)\n  %%v = ReduceMean(%%p) {axes = [-1]}\n"
        "  %%ve = Add(%%v, %%eps)\n  %%s = Sqrt(%%ve)\n"
        "  %%n = Div(%%d, %%s)\n  %%g = Mul(%%n, %%gm)\n"
        "  %%h = MatMul(%%g, %%w1)\n  %%hb = Add(%%h, %%b1)\n"
        "  %%a = Div(%%hb, %%sq)\n  %%e = Erf(%%a)\n  %%u = Add(%%e, %%one)\n"
        "  %%mm = Mul(%%hb, %%u)\n  %%ge = Mul(%%mm, %%half)\n"
        "  %%o = MatMul(%%ge, %%w2)\n  %%r = Add(%%o, %%x)\n"
        "  return %%r\n}\n",
        w1, b1, w2, gm);
    free(w1), free(w2), free(b1), free(gm);
    sm_graph *a = fu_parse(text), *b = fu_parse(text);
    fu_passes(b, "recognize", 0, NULL);
    assert_int_equal(fu_count(b->top, SM_OP_LayerNormalization), 1);
    assert_int_equal(fu_count(b->top, SM_OP_Gelu), 1);
    assert_int_equal(fu_count(b->top, SM_OP_Erf), 0);
    assert_int_equal(fu_count(b->top, SM_OP_ReduceMean), 0);
    assert_true(fu_compare(a, b, 7) <= TOL);
    fu_passes(b, "fuse_epilogue,fuse_elementwise", 0, NULL);
    assert_int_equal(fu_count(b->top, SM_OP_FusedGemm), 2);
    assert_int_equal(fu_count(b->top, SM_OP_MatMul), 0);
    assert_int_equal(fu_count(b->top, SM_OP_Add), 0);
    for (unsigned seed = 1; seed <= 3; seed++)
        assert_true(fu_compare(a, b, seed) <= TOL);
    sm_graph_free(a);
    sm_graph_free(b);
}

/* Whether some step's log holds fragment. */
static int log_has(const sm_pass_report *rep, const char *fragment)
{
    for (int i = 0; i < rep->n; i++)
        if (rep->steps[i].stats.log &&
            strstr(rep->steps[i].stats.log, fragment))
            return 1;
    return 0;
}

/* --why-not-fused: each rule that matched in part says why it stopped;
 * without the option nothing is logged. */
static void test_why_not_fused(void **state)
{
    (void)state;
    static const char *text =
        "graph nm(%x: f32[1,1,4,4], %mean: f32[2], %big: f32[3,2,2,2]) {\n"
        "  %w: f32[2,1,3,3] = const [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, "
        "1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]\n"
        "  %s: f32[2] = const [1.0, 2.0]\n  %t: f32[2] = const [0.0, 1.0]\n"
        "  %v: f32[2] = const [1.0, 1.0]\n"
        "  %y = Conv(%x, %w) @conv1\n  %r = Relu(%y)\n"
        "  %y2 = Conv(%x, %w) @conv2\n"
        "  %n = BatchNormalization(%y2, %s, %t, %mean, %v) @bn2\n"
        "  %y3 = Conv(%x, %w) @conv3\n  %a = Add(%y3, %big)\n"
        "  return %y, %r, %n, %a\n}\n";
    sm_graph *g = fu_parse(text);
    sm_pass_report rep;
    fu_passes(g, "fold_conv_bn,fuse_epilogue", 1, &rep);
    assert_true(log_has(&rep, "conv1: Relu consumer found but %y has 2 users"));
    assert_true(log_has(&rep, "bn2: BatchNormalization parameters are not "
                              "constants"));
    assert_true(log_has(&rep, "conv3: Add consumer found but its other "
                              "operand f32[3,2,2,2] does not broadcast"));
    sm_pass_report_free(&rep);
    sm_graph_free(g);
    g = fu_parse(text);
    fu_passes(g, "fold_conv_bn,fuse_epilogue", 0, &rep);
    assert_false(log_has(&rep, "consumer found"));
    sm_pass_report_free(&rep);
    sm_graph_free(g);
}

/* Bad attributes and signatures of the fused ops: the right status and a
 * message naming the op and the problem. */
static void expect_invalid(const char *text, smelt_status code,
                           const char *fragment)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL;
    smelt_status st = smelt_graph_parse(ctx, text, strlen(text), "t", &g);
    if (st == SMELT_OK)
        st = sm_graph_infer(ctx, g);
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, g);
    if (st != code || !strstr(smelt_ctx_error(ctx), fragment))
        fail_msg("status %d (want %d), error '%s' (want '%s')", st, code,
                 smelt_ctx_error(ctx), fragment);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_bad_fused_ops(void **state)
{
    (void)state;
    expect_invalid("graph b(%x: f32[1,1,3,3], %w: f32[1,1,1,1]) {\n"
                   "  %y = FusedConv(%x, %w) {activation = \"swish\"}\n"
                   "  return %y\n}\n",
                   SMELT_ERR_INVALID_ARG, "FusedConv: activation 'swish'");
    expect_invalid("graph b(%x: f32[1,1,3,3], %w: f32[2,1,1,1], %r: "
                   "f32[1,3,3,3]) {\n  %y = FusedConv(%x, %w, _, %r)\n"
                   "  return %y\n}\n",
                   SMELT_ERR_SHAPE, "FusedConv: the residual R f32[1,3,3,3]");
    expect_invalid("graph b(%x: f32[1,1,3,3], %w: f32[1,1,1,1]) {\n"
                   "  %y = FusedConv(%x, %w) {activation = \"clip\", "
                   "activation_alpha = 1.0, activation_beta = 0.0}\n"
                   "  return %y\n}\n",
                   SMELT_ERR_INVALID_ARG, "are not ordered");
    expect_invalid("graph b(%a: i32[2,2], %b: i32[2,2]) {\n"
                   "  %y = FusedGemm(%a, %b)\n  return %y\n}\n",
                   SMELT_ERR_TYPE, "FusedGemm: input 0 has dtype i32");
    expect_invalid("graph b(%a: f32[2,2,2], %b: f32[2,2]) {\n"
                   "  %y = FusedGemm(%a, %b) {transA = 1}\n  return %y\n}\n",
                   SMELT_ERR_SHAPE, "FusedGemm: transA / transB need 2-D");
    expect_invalid("graph b(%a: f32[2,3], %b: f32[3,4], %c: f32[3]) {\n"
                   "  %y = FusedGemm(%a, %b, %c)\n  return %y\n}\n",
                   SMELT_ERR_SHAPE, "FusedGemm: the bias C f32[3]");
    expect_invalid("graph b(%x: f32[3]) {\n"
                   "  %y = Gelu(%x) {approximate = \"fast\"}\n  return %y\n}\n",
                   SMELT_ERR_INVALID_ARG, "Gelu: approximate is 'fast'");
    expect_invalid("graph b(%x: i64[3]) {\n  %y = Gelu(%x)\n  return %y\n}\n",
                   SMELT_ERR_TYPE, "Gelu: input 0 has dtype i64");
    expect_invalid("graph b(%x: f32[3]) {\n"
                   "  %y = FusedElementwise(%x) body(%p: f32[3], %q: f32[3]) "
                   "{\n    return %p\n  }\n  return %y\n}\n",
                   SMELT_ERR_VERIFY, "body must take 1 parameters");
    expect_invalid("graph b(%x: f32[3]) {\n"
                   "  %y = FusedElementwise(%x) body(%p: i32[3]) {\n"
                   "    return %p\n  }\n  return %y\n}\n",
                   SMELT_ERR_TYPE, "input 0 is f32 but body parameter %p");
    /* the kernel without the executor's sub-block runner */
    sm_tensor *x;
    int64_t n = 2;
    assert_int_equal(sm_tensor_new(NULL, SMELT_DTYPE_F32, 1, &n, &x), 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out[1] = {NULL};
    sm_kargs a = {.op_name = "FusedElementwise",
                  .n_in = 1,
                  .in = &x,
                  .n_out = 1,
                  .out = out,
                  .ctx = ctx};
    assert_int_equal(sm_ref_fusedelementwise(&a), SMELT_ERR_RUNTIME);
    assert_non_null(strstr(smelt_ctx_error(ctx), "sub-block runner"));
    smelt_ctx_free(ctx);
    sm_tensor_free(x);
}

/* Every pass under allocation failure at each point: a clean NOMEM, no
 * crash, no leak (ASan), and the graph can still be freed. */
static void test_alloc_failures(void **state)
{
    (void)state;
    char *cbn = conv_bn_graph();
    static const char *other =
        "graph o(%x: f32[2,3,4], %w: f32[4,4], %b: f32[4]) {\n"
        "  %two: f32[] = const 2.0\n  %eps: f32[] = const 1e-05\n"
        "  %sq: f32[] = const 1.41421354\n  %one: f32[] = const 1.0\n"
        "  %half: f32[] = const 0.5\n"
        "  %m = ReduceMean(%x) {axes = [-1]}\n  %d = Sub(%x, %m)\n"
        "  %p = Pow(%d, %two)\n  %v = ReduceMean(%p) {axes = [-1]}\n"
        "  %ve = Add(%v, %eps)\n  %s = Sqrt(%ve)\n  %n = Div(%d, %s)\n"
        "  %h = MatMul(%n, %w)\n  %hb = Add(%h, %b)\n"
        "  %a = Div(%hb, %sq)\n  %e = Erf(%a)\n  %u = Add(%e, %one)\n"
        "  %mm = Mul(%hb, %u)\n  %ge = Mul(%mm, %half)\n"
        "  %t = Transpose(%ge) {perm = [0, 2, 1]}\n  %q = Exp(%t)\n"
        "  %z = Mul(%q, %half)\n  %t2 = Transpose(%z) {perm = [0, 2, 1]}\n"
        "  %k = Sum(%t2, %x, %x)\n  %r = Relu(%k)\n  return %r\n}\n";
    const char *texts[3] = {cbn, other, fold_pad_text};
    const char *passes = "fold_conv_bn,fold_pad,decompose,recognize,"
                         "cancel_transposes,fuse_epilogue,fuse_elementwise";
    sm_pass_options opt;
    sm_pass_options_default(&opt);
    opt.why_not_fused = 1;
    for (int t = 0; t < 3; t++) {
        int done = 0;
        for (long k = 0; k < 100000 && !done; k++) {
            sm_graph *g = fu_parse(texts[t]);
            smelt_ctx_t *ctx = smelt_ctx_init();
            const sm_pass_info **list;
            int n;
            assert_int_equal(sm_pipeline_resolve(ctx, 0, passes, &list, &n),
                             SMELT_OK);
            sm_pass_report rep;
            sm_alloc_fail_after(k);
            smelt_status st = sm_pass_run(ctx, g, &opt, list, n, &rep);
            sm_alloc_fail_after(-1);
            if (st == SMELT_OK)
                done = 1;
            else if (st != SMELT_ERR_NOMEM)
                fail_msg("k = %ld: status %d: %s", k, st, smelt_ctx_error(ctx));
            sm_pass_report_free(&rep);
            sm_free(list);
            sm_graph_free(g);
            smelt_ctx_free(ctx);
        }
        assert_true(done);
    }
    free(cbn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fusedconv_kernel),
        cmocka_unit_test(test_fusedgemm_kernel),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_fusedelementwise_kernel),
        cmocka_unit_test(test_fold_conv_bn),
        cmocka_unit_test(test_fold_pad),
        cmocka_unit_test(test_recognize_transformer),
        cmocka_unit_test(test_why_not_fused),
        cmocka_unit_test(test_bad_fused_ops),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
