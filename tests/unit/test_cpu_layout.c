/*
 * test_cpu_layout.c - channels-last operands (kernel.h SM_NHWC_*): the
 * convolution kernel run with an NHWC input, output and residual, on
 * every ISA and pool, against the reference on the NCHW tensors; which
 * layers allow what; and plans that pass values channels-last between
 * convolutions (plan/layout.c) against the reference interpreter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_harness.h"
#include "testutil.h"

/* Memory formats of a 4-D operand. */
enum { NCHW, NHWC, B16 };

/* Where element (n, c, i) of [N, C, H * W = I] lies in format f. */
static int64_t at_fmt(int f, const int64_t *d, int64_t n, int64_t c, int64_t i)
{
    int64_t I = d[2] * d[3];
    if (f == NHWC)
        return (n * I + i) * d[1] + c;
    if (f == B16)
        return ((n * (d[1] / 16) + c / 16) * I + i) * 16 + c % 16;
    return (n * d[1] + c) * I + i;
}

/* A copy of the f32 tensor t [N, C, H, W] (its dims either way) from
 * format `from` to format `to`. */
static sm_tensor *relayout(const sm_tensor *t, int from, int to)
{
    const int64_t *d = t->dims;
    sm_tensor *o = nn_tensor(F32, 4, t->dims, NULL);
    const float *s = t->data;
    float *p = o->data;
    for (int64_t n = 0; n < d[0]; n++)
        for (int64_t c = 0; c < d[1]; c++)
            for (int64_t i = 0; i < d[2] * d[3]; i++)
                p[at_fmt(to, d, n, c, i)] = s[at_fmt(from, d, n, c, i)];
    return o;
}

/* The formats of input 0 and output 0 that SM_* bits give. */
static int in_fmt(unsigned bits)
{
    return bits & SM_NHWC_IN ? NHWC : bits & SM_B16_IN ? B16 : NCHW;
}

static int out_fmt(unsigned bits)
{
    return bits & SM_NHWC_OUT ? NHWC : bits & SM_B16_OUT ? B16 : NCHW;
}

/* Runs FusedConv on in[] (weights constant) with the given channels-last
 * bits on every ISA entry and pool, and compares with the reference. */
static void check_nhwc(sm_tensor **in, const sm_attr *al, int n_al,
                       unsigned bits, double tol)
{
    const sm_op_info *info = sm_op_info_get(SM_OP_FusedConv);
    sm_attrs at = {al, n_al, info->spec, info->n_spec};
    sm_tensor *want[1] = {NULL};
    ck_reference(SM_OP_FusedConv, 4, in, 1, &at, want);
    sm_tensor *args[4] = {in[0], in[1], in[2], in[3]};
    if (in_fmt(bits) != NCHW)
        args[0] = relayout(in[0], NCHW, in_fmt(bits));
    if (out_fmt(bits) != NCHW && in[3])
        args[3] = relayout(in[3], NCHW, out_fmt(bits));
    for (int e = 0; e < 3; e++) {
        const sm_cpu_kernel *k = CK_ENTRIES(conv)[e];
        if (!ck_have(k))
            continue;
        for (int p = 0; p < 3; p++) {
            int threads = sm_threadpool_size(ck_pools[p]);
            sm_kernel_operand ins[4], outs[1];
            sm_kernel_desc d;
            ck_desc(SM_OP_FusedConv, 4, in, 1, want, &at, 2, threads, ins, outs,
                    &d);
            if ((k->layouts(&d) & bits) != bits)
                fail_msg("%s does not allow channels-last bits %u", k->name,
                         bits);
            d.nhwc = bits;
            sm_cpu_config cfg;
            sm_cpu_kernel_configure(k, &d, &cfg);
            const sm_tensor *ci[4] = {NULL, in[1], NULL, NULL};
            void *packed = NULL;
            if (cfg.packs)
                assert_int_equal(
                    sm_cpu_kernel_prepack(k, NULL, &d, &cfg, ci, &packed),
                    SMELT_OK);
            size_t wsb = cfg.ws_bytes;
            void *ws = aligned_alloc(64, (wsb + 63) & ~(size_t)63);
            sm_tensor *got = nn_tensor(F32, 4, want[0]->dims, NULL);
            for (int64_t i = 0; i < got->numel; i++)
                ((float *)got->data)[i] = NAN;
            smelt_ctx_t *ctx = smelt_ctx_init();
            sm_tensor *outs_t[1] = {got};
            sm_kargs ka = {.op_name = "FusedConv",
                           .attrs = at,
                           .n_in = 4,
                           .in = args,
                           .n_out = 1,
                           .out = outs_t,
                           .ctx = ctx,
                           .workspace = ws,
                           .workspace_bytes = wsb,
                           .nhwc = bits};
            if (sm_cpu_kernel_run(k, &ka, &cfg, packed, ck_pools[p]) !=
                SMELT_OK)
                fail_msg("%s: %s", k->name, smelt_ctx_error(ctx));
            sm_tensor *nchw = out_fmt(bits) != NCHW
                                  ? relayout(got, out_fmt(bits), NCHW)
                                  : got;
            char what[96];
            snprintf(what, sizeof what, "%s nhwc %u (%d threads)", k->name,
                     bits, threads);
            ck_compare(what, nchw, want[0], tol, 1e-5);
            if (nchw != got)
                sm_tensor_free(nchw);
            sm_tensor_free(got);
            smelt_ctx_free(ctx);
            free(ws);
            sm_free(packed);
        }
    }
    if (args[0] != in[0])
        sm_tensor_free(args[0]);
    if (args[3] != in[3])
        sm_tensor_free(args[3]);
    sm_tensor_free(want[0]);
}

/* Depthwise layers: channel counts below, at and off the vector width
 * (the last block partial), stride 1 and 2, two images, odd planes, every
 * combination of channels-last input and output, and a channel-blocked
 * input (whole blocks of 16) with either output. */
static void test_depthwise_nhwc(void **state)
{
    (void)state;
    struct {
        int64_t n, c, h, w, s;
    } cs[] = {{1, 16, 14, 14, 1}, {2, 5, 9, 11, 2}, {1, 40, 13, 7, 1},
              {1, 24, 28, 28, 2}, {1, 96, 7, 7, 1}, {2, 33, 6, 10, 2},
              {2, 32, 11, 9, 2}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t c = cs[i].c, s = cs[i].s;
        sm_attr al[4] = {A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", s, s),
                         A_INT("group", c),
                         A_STR("activation", i & 1 ? "relu6" : "none")};
        sm_tensor *in[4] = {ck_rand(4, D(cs[i].n, c, cs[i].h, cs[i].w), 1),
                            ck_rand(4, D(c, 1, 3, 3), 2), ck_rand(1, D(c), 3),
                            NULL};
        for (unsigned bits = 1; bits <= 3; bits++)
            check_nhwc(in, al, 4, bits, 2e-5);
        if (c % 16 == 0) {
            check_nhwc(in, al, 4, SM_B16_IN, 2e-5);
            check_nhwc(in, al, 4, SM_B16_IN | SM_NHWC_OUT, 2e-5);
        }
        for (int j = 0; j < 3; j++)
            sm_tensor_free(in[j]);
    }
}

/* Depthwise layers on channel-blocked input read it in place, except
 * for the outputs whose taps reach into the padding: planes tall enough
 * for several bands, kernels of 3 and 5 taps, dilation, asymmetric and
 * zero padding, and planes whose interior is empty or too small to take
 * that path. */
static void test_depthwise_b16_in_place(void **state)
{
    (void)state;
    struct {
        int64_t c, h, w, k, s, d, pt, pl, pb, pr;
    } cs[] = {
        {16, 48, 45, 3, 1, 1, 1, 1, 1, 1},   {32, 30, 33, 5, 2, 1, 2, 1, 1, 2},
        {16, 40, 40, 3, 1, 2, 2, 2, 2, 2},   {16, 12, 12, 3, 1, 1, 0, 0, 0, 0},
        {32, 5, 5, 5, 1, 1, 0, 0, 0, 0},     {16, 9, 2, 3, 1, 1, 1, 1, 1, 1},
        {16, 112, 112, 3, 2, 1, 1, 1, 1, 1}, {48, 7, 7, 3, 1, 1, 1, 1, 1, 1}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t c = cs[i].c, k = cs[i].k, s = cs[i].s, d = cs[i].d;
        sm_attr al[5] = {A_INTS("pads", cs[i].pt, cs[i].pl, cs[i].pb, cs[i].pr),
                         A_INTS("strides", s, s), A_INTS("dilations", d, d),
                         A_INT("group", c),
                         A_STR("activation", i & 1 ? "relu6" : "none")};
        sm_tensor *in[4] = {ck_rand(4, D(1, c, cs[i].h, cs[i].w), 1),
                            ck_rand(4, D(c, 1, k, k), 2), ck_rand(1, D(c), 3),
                            NULL};
        check_nhwc(in, al, 5, SM_B16_IN, 4e-5);
        check_nhwc(in, al, 5, SM_B16_IN | SM_NHWC_OUT, 4e-5);
        for (int j = 0; j < 3; j++)
            sm_tensor_free(in[j]);
    }
}

/* Single-group layers through the position-major product: 1x1 with
 * channels-last input and/or output, a full residual, channel counts of
 * one vector (16) and off the panel width (48, 144), a channel-blocked
 * output (no residual) from either input; a 3x3 stride-2 stem (3 input
 * channels) writing channels-last or blocked. */
static void test_pointwise_nhwc(void **state)
{
    (void)state;
    double old = sm_gemm_set_parallel_threshold(0);
    struct {
        int64_t n, c, h, m;
        int res;
    } cs[] = {{1, 32, 14, 16, 0}, {2, 24, 9, 48, 1}, {1, 16, 28, 144, 0},
              {1, 96, 7, 32, 1},  {1, 7, 5, 64, 1},  {2, 16, 6, 32, 0}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t n = cs[i].n, h = cs[i].h, m = cs[i].m;
        sm_attr al[1] = {A_STR("activation", i & 1 ? "relu6" : "none")};
        sm_tensor *in[4] = {ck_rand(4, D(n, cs[i].c, h, h), 1),
                            ck_rand(4, D(m, cs[i].c, 1, 1), 2),
                            ck_rand(1, D(m), 3),
                            cs[i].res ? ck_rand(4, D(n, m, h, h), 4) : NULL};
        for (unsigned bits = 1; bits <= 3; bits++)
            check_nhwc(in, al, 1, bits, 2e-6 * (double)(cs[i].c + 1));
        if (!cs[i].res) {
            check_nhwc(in, al, 1, SM_B16_OUT, 2e-6 * (double)(cs[i].c + 1));
            check_nhwc(in, al, 1, SM_NHWC_IN | SM_B16_OUT,
                       2e-6 * (double)(cs[i].c + 1));
        }
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
    /* a stem with few positions: 3 -> 32 channels, 3x3 stride 2, output
     * only */
    sm_attr al[3] = {A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", 2, 2),
                     A_STR("activation", "relu6")};
    sm_tensor *in[4] = {ck_rand(4, D(1, 3, 13, 13), 1),
                        ck_rand(4, D(32, 3, 3, 3), 2), ck_rand(1, D(32), 3),
                        NULL};
    check_nhwc(in, al, 3, SM_NHWC_OUT, 2e-6 * 28);
    check_nhwc(in, al, 3, SM_B16_OUT, 2e-6 * 28);
    for (int j = 0; j < 3; j++)
        sm_tensor_free(in[j]);
    sm_gemm_set_parallel_threshold(old);
}

/* What the kernel allows: nothing for Winograd's layers, grouped ones,
 * im2col layers with many positions, depthwise with a residual, or
 * channel counts off 16; input only from 1x1 layers; blocked outputs
 * without a residual, blocked inputs for depthwise layers of whole
 * blocks. */
static void test_layouts_allowed(void **state)
{
    (void)state;
    const sm_op_info *info = sm_op_info_get(SM_OP_FusedConv);
    struct {
        int64_t c, h, m, k, g, s;
        int res;
        unsigned want;
    } cs[] = {
        {32, 28, 64, 1, 1, 1, 0,
         SM_NHWC_IN | SM_NHWC_OUT | SM_B16_OUT | SM_NHWC_TIED},
        {32, 7, 64, 1, 1, 1, 0, SM_NHWC_IN | SM_NHWC_OUT | SM_B16_OUT},
        {32, 28, 24, 1, 1, 1, 0, 0},          /* 24 channels out */
        {32, 28, 64, 3, 1, 1, 0, 0},          /* Winograd */
        {32, 56, 64, 3, 1, 2, 0, 0},          /* im2col, many positions */
        {32, 7, 64, 3, 1, 1, 1, SM_NHWC_OUT}, /* 3x3, residual: NHWC */
        {32, 7, 64, 3, 1, 1, 0, SM_NHWC_OUT | SM_B16_OUT},
        {64, 7, 64, 3, 2, 1, 0, 0}, /* two groups */
        {32, 14, 32, 3, 32, 1, 0, SM_NHWC_IN | SM_NHWC_OUT | SM_B16_IN},
        {24, 14, 24, 3, 24, 1, 0, SM_NHWC_IN | SM_NHWC_OUT}, /* 24: no B16 */
        {32, 14, 32, 3, 32, 1, 1, 0}, /* depthwise with a residual */
    };
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t p = cs[i].k / 2, s = cs[i].s;
        int64_t o = (cs[i].h + 2 * p - cs[i].k) / s + 1;
        sm_attr al[3] = {A_INTS("pads", p, p, p, p), A_INTS("strides", s, s),
                         A_INT("group", cs[i].g)};
        sm_attrs at = {al, 3, info->spec, info->n_spec};
        sm_tensor *in[4] = {
            nn_tensor(F32, 4, D(1, cs[i].c, cs[i].h, cs[i].h), NULL),
            nn_tensor(F32, 4, D(cs[i].m, cs[i].c / cs[i].g, cs[i].k, cs[i].k),
                      NULL),
            NULL,
            cs[i].res ? nn_tensor(F32, 4, D(1, cs[i].m, o, o), NULL) : NULL};
        sm_tensor *y = nn_tensor(F32, 4, D(1, cs[i].m, o, o), NULL);
        sm_kernel_operand ins[4], outs[1];
        sm_kernel_desc d;
        ck_desc(SM_OP_FusedConv, 4, in, 1, &y, &at, 2, 1, ins, outs, &d);
        unsigned got = CK_K(conv, scalar)->layouts(&d);
        if (got != cs[i].want)
            fail_msg("case %zu: allowed %u, expected %u", i, got, cs[i].want);
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
        sm_tensor_free(y);
    }
}

/* ---- plans ---------------------------------------------------------------
 */

/* A MobileNet-style block and a tail the NHWC chain must leave: stem ->
 * depthwise -> 1x1 -> 1x1 -> depthwise -> 1x1 with %y2 as residual, a
 * Relu reading that result, and a depthwise result that is returned.
 * Not y5 (a Relu reads it), hence neither its residual y2 nor, as the 16
 * channel 1x1 layers take an NHWC input only with an NHWC output, their
 * inputs y4 and y1; not y7 (an output). Held otherwise: y0 and y3, both
 * channel-blocked, as only depthwise layers read them. */
static const char *block_body =
    "  %y0: f32[1,32,10,10] = FusedConv(%x, %w0, %b0) {pads=[1,1,1,1], "
    "strides=[2,2], activation=\"relu6\"}\n"
    "  %y1: f32[1,32,10,10] = FusedConv(%y0, %w1, %b1) {pads=[1,1,1,1], "
    "group=32, activation=\"relu6\"}\n"
    "  %y2: f32[1,16,10,10] = FusedConv(%y1, %w2, %b2)\n"
    "  %y3: f32[1,64,10,10] = FusedConv(%y2, %w3, %b3) "
    "{activation=\"relu6\"}\n"
    "  %y4: f32[1,64,10,10] = FusedConv(%y3, %w4, %b4) {pads=[1,1,1,1], "
    "group=64, activation=\"relu6\"}\n"
    "  %y5: f32[1,16,10,10] = FusedConv(%y4, %w5, %b5, %y2)\n"
    "  %y6: f32[1,16,10,10] = Relu(%y5)\n"
    "  %y7: f32[1,64,10,10] = FusedConv(%y3, %w6, %b6) {pads=[1,1,1,1], "
    "group=64}\n"
    "  return %y6, %y7\n"
    "}\n";

static const int64_t block_w[7][4] = {
    {32, 3, 3, 3}, {32, 1, 3, 3},  {16, 32, 1, 1}, {64, 16, 1, 1},
    {64, 1, 3, 3}, {16, 64, 1, 1}, {64, 1, 3, 3}};

/* A chain that stays off NCHW from the stem to the last layer, which
 * reads it and writes the NCHW output: y0 to y4, y0 channel-blocked (a
 * depthwise layer reads it), the others NHWC (y4's residual y2 with
 * it). */
static const char *chain_body =
    "  %y0: f32[1,32,10,10] = FusedConv(%x, %w0, %b0) {pads=[1,1,1,1], "
    "strides=[2,2], activation=\"relu6\"}\n"
    "  %y1: f32[1,32,10,10] = FusedConv(%y0, %w1, %b1) {pads=[1,1,1,1], "
    "group=32, activation=\"relu6\"}\n"
    "  %y2: f32[1,32,10,10] = FusedConv(%y1, %w2, %b2)\n"
    "  %y3: f32[1,32,10,10] = FusedConv(%y2, %w3, %b3) {pads=[1,1,1,1], "
    "group=32, activation=\"relu\"}\n"
    "  %y4: f32[1,32,10,10] = FusedConv(%y3, %w4, %b4, %y2)\n"
    "  %y5: f32[1,64,10,10] = FusedConv(%y4, %w5, %b5)\n"
    "  return %y5\n"
    "}\n";

static const int64_t chain_w[6][4] = {{32, 3, 3, 3},  {32, 1, 3, 3},
                                      {32, 32, 1, 1}, {32, 1, 3, 3},
                                      {32, 32, 1, 1}, {64, 32, 1, 1}};

/* graph blk(%x: f32[1,3,20,20]) with random weights %w<i> of shapes
 * w[i] and biases %b<i> as constants, then body. */
static smelt_graph_t *block_graph(smelt_ctx_t *ctx, const char *body,
                                  const int64_t (*w)[4], int nw)
{
    size_t cap = (size_t)1 << 20, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    unsigned x = 12345u;
    n += (size_t)snprintf(text + n, cap - n,
                          "graph blk(%%x: f32[1,3,20,20]) {\n");
    for (int c = 0; c < nw; c++) {
        for (int b = 0; b < 2; b++) {
            int64_t cnt = b ? w[c][0] : w[c][0] * w[c][1] * w[c][2] * w[c][3];
            if (b)
                n += (size_t)snprintf(text + n, cap - n,
                                      "  %%b%d: f32[%lld] = const [", c,
                                      (long long)w[c][0]);
            else
                n += (size_t)snprintf(
                    text + n, cap - n,
                    "  %%w%d: f32[%lld,%lld,%lld,%lld] = const [", c,
                    (long long)w[c][0], (long long)w[c][1], (long long)w[c][2],
                    (long long)w[c][3]);
            for (int64_t i = 0; i < cnt; i++) {
                x = x * 1103515245u + 12345u;
                n += (size_t)snprintf(
                    text + n, cap - n, "%s%.4f", i ? ", " : "",
                    (double)((x >> 8) & 0xffff) / 65536.0 - 0.5);
            }
            n += (size_t)snprintf(text + n, cap - n, "]\n");
        }
    }
    n += (size_t)snprintf(text + n, cap - n, "%s", body);
    assert_true(n < cap);
    smelt_graph_t *g = NULL;
    smelt_status st = smelt_graph_parse(ctx, text, n, "blk.ir", &g);
    free(text);
    if (st != SMELT_OK)
        fail_msg("parse: %s", smelt_ctx_error(ctx));
    return g;
}

/* Compiles the graph at -O0 with 1 and 2 threads, checks the counts of
 * channels-last and channel-blocked values, that each of the n_want
 * strings is in the plan's text and none of the n_not ones, and the
 * outputs against the reference interpreter; a reference plan passes
 * nothing channels-last or blocked. */
static void check_plan(const char *body, const int64_t (*w)[4], int nw,
                       int n_outputs, int want_cl, int want_b16,
                       const char *const *want, int n_want,
                       const char *const * not, int n_not)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = block_graph(ctx, body, w, nw);
    smelt_tensor_t *x = NULL;
    assert_int_equal(
        smelt_tensor_init(NULL, SMELT_DTYPE_F32, 4, D(1, 3, 20, 20), &x),
        SMELT_OK);
    float *xp = smelt_tensor_data(x);
    for (int64_t i = 0; i < smelt_tensor_numel(x); i++)
        xp[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    smelt_tensor_t *ref[2] = {NULL, NULL};
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, ref, n_outputs),
                     SMELT_OK);
    for (int threads = 1; threads <= 2; threads++) {
        smelt_plan_options o;
        smelt_plan_options_default(&o);
        o.level = 0;
        o.threads = threads;
        smelt_plan_t *p = NULL;
        if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
            fail_msg("compile: %s", smelt_ctx_error(ctx));
        smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
        assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
        char *text = NULL;
        assert_int_equal(smelt_plan_print(ctx, p, &text), SMELT_OK);
        if (s.channels_last != want_cl || s.channel_blocked != want_b16)
            fail_msg("%d values channels-last and %d blocked, expected %d "
                     "and %d:\n%s",
                     s.channels_last, s.channel_blocked, want_cl, want_b16,
                     text);
        for (int i = 0; i < n_want; i++)
            if (!strstr(text, want[i]))
                fail_msg("'%s' not in the plan:\n%s", want[i], text);
        for (int i = 0; i < n_not; i++)
            if (strstr(text, not [i]))
                fail_msg("'%s' in the plan:\n%s", not [i], text);
        smelt_string_free(text);
        smelt_tensor_t *got[2] = {NULL, NULL};
        assert_int_equal(smelt_plan_run(ctx, p, &x, 1, got, n_outputs),
                         SMELT_OK);
        for (int k = 0; k < n_outputs; k++) {
            const float *a = smelt_tensor_data(got[k]);
            const float *b = smelt_tensor_data(ref[k]);
            for (int64_t i = 0; i < smelt_tensor_numel(ref[k]); i++)
                if (fabsf(a[i] - b[i]) > 1e-4f + 1e-4f * fabsf(b[i]))
                    fail_msg("output %d element %lld: %g vs %g", k,
                             (long long)i, (double)a[i], (double)b[i]);
            smelt_tensor_free(got[k]);
        }
        smelt_plan_free(p);
    }
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.reference = 1;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_OK);
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.channels_last, 0);
    assert_int_equal(s.channel_blocked, 0);
    smelt_plan_free(p);
    for (int k = 0; k < n_outputs; k++)
        smelt_tensor_free(ref[k]);
    smelt_tensor_free(x);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_plan_chain(void **state)
{
    (void)state;
    /* with the kernels' decisions: the stem's few positions run
     * position-major, the depthwise layers channel-interleaved */
    const char *want[] = {
        "[position-major m=100 n=32 k=27 batch=1 packed] b16:out %y0:",
        "[depthwise-blocked taps=9] b16:in nhwc:out %y1:",
        "nhwc:in,out %y2:",
        "[depthwise-blocked taps=9] nhwc:in,out %y3:",
        "nhwc:in,out %y4:",
        "nhwc:in %y5:"};
    check_plan(chain_body, chain_w, 6, 1, 4, 1, want, 6, NULL, 0);
}

static void test_plan_block(void **state)
{
    (void)state;
    const char *want[] = {"b16:out %y0:", "b16:in %y1:", "b16:out %y3:",
                          "b16:in %y4:", "b16:in %y7:"};
    const char * not [] = {"nhwc:in %y2:", "nhwc:in %y5:", "nhwc:in,out"};
    check_plan(block_body, block_w, 7, 2, 0, 2, want, 5, not, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depthwise_nhwc),
        cmocka_unit_test(test_depthwise_b16_in_place),
        cmocka_unit_test(test_pointwise_nhwc),
        cmocka_unit_test(test_layouts_allowed),
        cmocka_unit_test(test_plan_chain),
        cmocka_unit_test(test_plan_block),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
