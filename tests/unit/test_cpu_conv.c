/*
 * test_cpu_conv.c - the optimized Conv and FusedConv kernels
 * (kernels/cpu/conv*.c) through their registry entries against the
 * reference: strides, pads, dilations, groups, depthwise, 1x1, fused
 * bias, residual and activation; which algorithm each layer gets
 * (Winograd, position-major, direct) and what they refuse.
 */
#include "cpu_harness.h"

#include "kernels/cpu/conv_winograd.h"
#include "core/act.h"

/* ---- Conv and FusedConv ------------------------------------------------ */

#define CONV_TOL(k) 2e-6 * (double)((k) + 1), 1e-5

/* One Conv node: X [n,c,h,w], W [m,c/g,kh,kw], bias; weights constant. */
static void conv_case(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m,
                      int64_t kh, int64_t kw, const sm_attr *al, int n_al,
                      int64_t group, int bias)
{
    sm_tensor *in[3] = {ck_rand(4, D(n, c, h, w), (unsigned)(c * 7 + h)),
                        ck_rand(4, D(m, c / group, kh, kw), (unsigned)m),
                        bias ? ck_rand(1, D(m), 5) : NULL};
    ck_check(SM_OP_Conv, 3, in, 1, al, n_al, CK_ENTRIES(conv), 2,
             CONV_TOL(c / group * kh * kw));
    for (int i = 0; i < 3; i++)
        sm_tensor_free(in[i]);
}

static void test_conv_op(void **state)
{
    (void)state;
    /* 3x3 pad 1 stride 1 (odd sizes, odd channel counts) */
    conv_case(1, 3, 9, 11, 5, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
    conv_case(2, 16, 14, 14, 33, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
    /* stride 2, asymmetric pads, no bias */
    conv_case(1, 7, 13, 10, 12, 3, 3,
              ATTRS(A_INTS("pads", 0, 1, 2, 1), A_INTS("strides", 2, 2)), 1, 0);
    /* 7x7 stride 2 pad 3 (ResNet's stem, shrunk) */
    conv_case(1, 3, 23, 23, 8, 7, 7,
              ATTRS(A_INTS("pads", 3, 3, 3, 3), A_INTS("strides", 2, 2)), 1, 1);
    /* dilation 2, stride (1, 3) */
    conv_case(1, 4, 12, 15, 6, 3, 2,
              ATTRS(A_INTS("dilations", 2, 2), A_INTS("strides", 1, 3),
                    A_INTS("pads", 2, 1, 2, 0)),
              1, 1);
    /* groups 2 and 3 */
    conv_case(2, 6, 8, 9, 4, 3, 3,
              ATTRS(A_INT("group", 2), A_INTS("pads", 1, 1, 1, 1)), 2, 1);
    conv_case(1, 9, 7, 7, 12, 1, 3, ATTRS(A_INT("group", 3)), 3, 1);
    /* 1x1 as a plain GEMM, and 1x1 stride 2 through the implicit path */
    conv_case(2, 20, 9, 7, 17, 1, 1, NO_ATTRS, 1, 1);
    conv_case(1, 12, 9, 9, 24, 1, 1, ATTRS(A_INTS("strides", 2, 2)), 1, 1);
    /* SAME_UPPER */
    conv_case(1, 5, 10, 11, 7, 4, 3, ATTRS(A_STR("auto_pad", "SAME_UPPER")), 1,
              1);
    /* a K that crosses the GEMM's KC block: 32 * 3 * 3 = 288 */
    conv_case(1, 32, 6, 6, 13, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
    /* one image on a small plane with several row and column tiles (VGG's
     * late layers): the threads split the product both ways and read one
     * im2col B packed for all of them (gemm.c) */
    conv_case(1, 40, 8, 8, 45, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 1);
    conv_case(1, 36, 7, 9, 30, 3, 3, ATTRS(A_INTS("pads", 1, 1, 1, 1)), 1, 0);
}

static void test_conv_depthwise(void **state)
{
    (void)state;
    /* MobileNet's 3x3 depthwise, stride 1 and 2 */
    conv_case(2, 24, 15, 17, 24, 3, 3,
              ATTRS(A_INT("group", 24), A_INTS("pads", 1, 1, 1, 1)), 24, 1);
    conv_case(1, 19, 16, 33, 19, 3, 3,
              ATTRS(A_INT("group", 19), A_INTS("pads", 1, 1, 1, 1),
                    A_INTS("strides", 2, 2)),
              19, 0);
    /* 5x5, dilation 2, asymmetric pads; channel multiplier 2 */
    conv_case(1, 6, 12, 40, 6, 5, 5,
              ATTRS(A_INT("group", 6), A_INTS("pads", 2, 4, 3, 1),
                    A_INTS("dilations", 2, 1)),
              6, 1);
    conv_case(1, 5, 9, 9, 10, 3, 3,
              ATTRS(A_INT("group", 5), A_INTS("pads", 1, 1, 1, 1)), 5, 1);
    /* small planes (channel-interleaved): stride 2 with dilation 2 and
     * uneven pads, 5x3 taps, 35 channels (two full blocks and a part) */
    conv_case(2, 35, 13, 11, 35, 5, 3,
              ATTRS(A_INT("group", 35), A_INTS("pads", 3, 1, 2, 2),
                    A_INTS("dilations", 2, 1), A_INTS("strides", 2, 2)),
              35, 1);
    /* planes computed in several bands of rows, stride 1 and 2, and with
     * a residual that varies over the plane */
    conv_case(1, 20, 100, 90, 20, 3, 3,
              ATTRS(A_INT("group", 20), A_INTS("pads", 1, 1, 1, 1)), 20, 1);
    conv_case(1, 20, 101, 90, 20, 3, 3,
              ATTRS(A_INT("group", 20), A_INTS("pads", 1, 1, 1, 1),
                    A_INTS("strides", 2, 2)),
              20, 1);
    CK_CHECK(
        SM_OP_FusedConv, 4,
        ((sm_tensor *[]){ck_rand(4, D(1, 20, 100, 90), 1),
                         ck_rand(4, D(20, 1, 3, 3), 2), ck_rand(1, D(20), 3),
                         ck_rand(4, D(1, 20, 100, 90), 4)}),
        1,
        ATTRS(A_INT("group", 20), A_INTS("pads", 1, 1, 1, 1),
              A_STR("activation", "relu")),
        CK_ENTRIES(conv), 2, CONV_TOL(9));
}

/* FusedConv: bias, residual (full and per channel) and every activation,
 * on the GEMM path and the depthwise paths: planes channel-interleaved
 * (9 x 7, 9 x 37; 20 channels: a partial block of 16 too), and planes too
 * large for that (conv_depthwise_blocked.c), per plane: narrow ones as one flat
 * run (700 x 20), rows of 32 or more one by one (140 x 140; those two for the
 * first activations only, they are large). */
static void test_fusedconv_op(void **state)
{
    (void)state;
    for (int act = 0; act < SM_ACT_COUNT; act++) {
        for (int dw = 0; dw < 5; dw++) {
            if (dw >= 3 && act > SM_ACT_CLIP)
                continue;
            int64_t c = dw ? 20 : 10, m = dw ? 20 : 12, g = dw ? 20 : 1;
            int64_t w = dw == 2 ? 37 : dw == 3 ? 20 : dw == 4 ? 140 : 7;
            int64_t h = dw == 3 ? 700 : dw == 4 ? 140 : 9;
            sm_attr al[5] = {A_STR("activation", sm_act_name((sm_act_kind)act)),
                             A_INTS("pads", 1, 1, 1, 1), A_INT("group", g),
                             A_FLOAT("activation_alpha", -0.5),
                             A_FLOAT("activation_beta", 0.25)};
            const int64_t *rd = act & 1 ? D(1, m, 1, 1) : D(2, m, h, w);
            sm_tensor *in[4] = {ck_rand(4, D(2, c, h, w), 1),
                                ck_rand(4, D(m, c / g, 3, 3), 2),
                                ck_rand(1, D(m), 3), ck_rand(4, rd, 4)};
            ck_check(SM_OP_FusedConv, 4, in, 1, al,
                     act == SM_ACT_CLIP        ? 5
                     : act == SM_ACT_LEAKYRELU ? 4
                                               : 3,
                     CK_ENTRIES(conv), 2, CONV_TOL(c / g * 9));
            for (int i = 0; i < 4; i++)
                sm_tensor_free(in[i]);
        }
    }
    /* residual without bias, 1x1 */
    CK_CHECK(SM_OP_FusedConv, 4,
             ((sm_tensor *[]){ck_rand(4, D(1, 8, 5, 5), 1),
                              ck_rand(4, D(16, 8, 1, 1), 2), NULL,
                              ck_rand(4, D(1, 16, 5, 5), 4)}),
             1, ATTRS(A_STR("activation", "relu")), CK_ENTRIES(conv), 2,
             CONV_TOL(8));
}

/* The path the instance's configure chose for this FusedConv node with
 * constant weights, and whether it prepacks them. */
static sm_cpu_algo chosen(const sm_cpu_kernel *k, sm_tensor **in, int n_in,
                          sm_tensor *y, const sm_attr *al, int n_al, int *packs)
{
    const sm_op_info *info = sm_op_info_get(SM_OP_FusedConv);
    sm_attrs at = {al, n_al, info->spec, info->n_spec};
    sm_kernel_operand ins[4], outs[1];
    sm_kernel_desc d;
    ck_desc(SM_OP_FusedConv, n_in, in, 1, &y, &at, 2, 1, ins, outs, &d);
    sm_cpu_config c;
    sm_cpu_kernel_configure(k, &d, &c);
    *packs = c.packs;
    return c.algo;
}

static int chose_winograd(const sm_cpu_kernel *k, sm_tensor **in, int n_in,
                          sm_tensor *y, const sm_attr *al, int n_al)
{
    int packs;
    return chosen(k, in, n_in, y, al, n_al, &packs) == SM_CPU_ALGO_WINOGRAD &&
           packs;
}

static int chose_pm(const sm_cpu_kernel *k, sm_tensor **in, int n_in,
                    sm_tensor *y, const sm_attr *al, int n_al)
{
    int packs;
    return chosen(k, in, n_in, y, al, n_al, &packs) == SM_CPU_ALGO_POS_MAJOR &&
           packs;
}

/* Winograd F(4x4, 3x3) (above 32 input channels; fewer go direct):
 * output sizes that are not multiples of 4, pads
 * on one side only, two images, channel counts off the tile sizes, with
 * bias, residual and activation in the output transform's epilogue. */
static void test_conv_winograd(void **state)
{
    (void)state;
    struct {
        int64_t n, c, h, w, m, p0, p1;
    } cs[] = {{1, 33, 23, 29, 17, 1, 1},
              {2, 35, 18, 17, 24, 1, 0},
              {1, 64, 28, 28, 64, 1, 1},
              {1, 40, 30, 15, 33, 0, 2}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t oh = cs[i].h + cs[i].p0 + cs[i].p1 - 2;
        int64_t ow = cs[i].w + cs[i].p0 + cs[i].p1 - 2;
        sm_attr al[2] = {A_INTS("pads", cs[i].p0, cs[i].p0, cs[i].p1, cs[i].p1),
                         A_STR("activation", i & 1 ? "relu" : "silu")};
        sm_tensor *in[4] = {
            ck_rand(4, D(cs[i].n, cs[i].c, cs[i].h, cs[i].w), 1),
            ck_rand(4, D(cs[i].m, cs[i].c, 3, 3), 2), ck_rand(1, D(cs[i].m), 3),
            ck_rand(4, D(cs[i].n, cs[i].m, oh, ow), 4)};
        sm_tensor *y = nn_tensor(F32, 4, D(cs[i].n, cs[i].m, oh, ow), NULL);
        for (int e = 0; e < 3; e++)
            if (ck_have(CK_ENTRIES(conv)[e]))
                assert_true(
                    chose_winograd(CK_ENTRIES(conv)[e], in, 4, y, al, 2));
        sm_tensor_free(y);
        /* the transforms add a few ulps per stage: a K-scaled bound */
        ck_check(SM_OP_FusedConv, 4, in, 1, al, 2, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c * 9));
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
}

/* Position-major convolutions (few output positions, channels a multiple
 * of 32): 3x3 and 1x1, stride 2, two images, K across the KC block,
 * residual full and per channel, and enough channels that the threads
 * split only the columns and share one packed A (threshold 0 so that
 * these small products run threaded). */
static void test_conv_position_major(void **state)
{
    (void)state;
    double old = sm_gemm_set_parallel_threshold(0);
    struct {
        int64_t n, c, h, m, k, s, pad;
        int full_res;
    } cs[] = {{1, 40, 7, 64, 3, 1, 1, 1},   {2, 24, 14, 32, 3, 2, 1, 0},
              {1, 48, 7, 96, 1, 1, 0, 1},   {2, 20, 5, 64, 1, 1, 0, 0},
              {1, 72, 7, 64, 3, 1, 1, 0},   {1, 8, 7, 512, 3, 1, 1, 1},
              {1, 16, 13, 512, 3, 2, 1, 1}, {1, 9, 4, 32, 3, 1, 0, 1}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t o = (cs[i].h + 2 * cs[i].pad - cs[i].k) / cs[i].s + 1;
        int64_t n = cs[i].n, m = cs[i].m;
        sm_attr al[3] = {
            A_INTS("pads", cs[i].pad, cs[i].pad, cs[i].pad, cs[i].pad),
            A_INTS("strides", cs[i].s, cs[i].s),
            A_STR("activation", i & 1 ? "relu" : "none")};
        const int64_t *rd = cs[i].full_res ? D(n, m, o, o) : D(1, m, 1, 1);
        sm_tensor *in[4] = {ck_rand(4, D(n, cs[i].c, cs[i].h, cs[i].h), 1),
                            ck_rand(4, D(m, cs[i].c, cs[i].k, cs[i].k), 2),
                            ck_rand(1, D(m), 3), ck_rand(4, rd, 4)};
        sm_tensor *y = nn_tensor(F32, 4, D(n, m, o, o), NULL);
        for (int e = 0; e < 3; e++)
            if (ck_have(CK_ENTRIES(conv)[e]))
                assert_true(chose_pm(CK_ENTRIES(conv)[e], in, 4, y, al, 3));
        sm_tensor_free(y);
        ck_check(SM_OP_FusedConv, 4, in, 1, al, 3, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c * cs[i].k * cs[i].k));
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
    sm_gemm_set_parallel_threshold(old);
}

/* Direct convolution (few input channels, conv_direct.c): stems of 1
 * to 4 channels, 3x3 / 7x7 / 5x3 kernels, strides 1 and 2, one-sided and
 * uneven pads, dilation 2, channel counts off the block of 8, two images,
 * rows of outputs off the vector, activations in its store; constant
 * weights prepacked at configure time (ck_check also runs them as run-time
 * inputs, laid out per run). */
static void test_conv_direct(void **state)
{
    (void)state;
    struct {
        int64_t n, c, h, w, m, kh, kw, s, pt, pl, pb, pr, d;
    } cs[] = {{1, 3, 40, 40, 32, 3, 3, 2, 1, 1, 1, 1, 1},
              {2, 3, 37, 41, 13, 7, 7, 2, 3, 3, 3, 3, 1},
              {1, 1, 20, 35, 8, 3, 3, 1, 1, 1, 1, 1, 1},
              {1, 4, 19, 50, 24, 5, 3, 1, 0, 2, 1, 0, 1},
              {1, 2, 30, 44, 9, 3, 3, 1, 2, 2, 2, 2, 2},
              {1, 3, 64, 70, 64, 3, 3, 2, 0, 0, 1, 1, 1}};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t oh =
            (cs[i].h + cs[i].pt + cs[i].pb - cs[i].d * (cs[i].kh - 1) - 1) /
                cs[i].s +
            1;
        int64_t ow =
            (cs[i].w + cs[i].pl + cs[i].pr - cs[i].d * (cs[i].kw - 1) - 1) /
                cs[i].s +
            1;
        const char *act[] = {"relu6", "none", "silu"};
        sm_attr al[4] = {A_INTS("pads", cs[i].pt, cs[i].pl, cs[i].pb, cs[i].pr),
                         A_INTS("strides", cs[i].s, cs[i].s),
                         A_INTS("dilations", cs[i].d, cs[i].d),
                         A_STR("activation", act[i % 3])};
        sm_tensor *in[3] = {
            ck_rand(4, D(cs[i].n, cs[i].c, cs[i].h, cs[i].w), 1),
            ck_rand(4, D(cs[i].m, cs[i].c, cs[i].kh, cs[i].kw), 2),
            i == 2 ? NULL : ck_rand(1, D(cs[i].m), 3)};
        sm_tensor *y = nn_tensor(F32, 4, D(cs[i].n, cs[i].m, oh, ow), NULL);
        int packs;
        for (int e = 0; e < 3; e++) {
            if (!ck_have(CK_ENTRIES(conv)[e]))
                continue;
            assert_int_equal(
                chosen(CK_ENTRIES(conv)[e], in, 3, y, al, 4, &packs),
                SM_CPU_ALGO_DIRECT);
            assert_true(packs);
        }
        sm_tensor_free(y);
        ck_check(SM_OP_FusedConv, 3, in, 1, al, 4, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c * cs[i].kh * cs[i].kw));
        for (int j = 0; j < 3; j++)
            sm_tensor_free(in[j]);
    }
}

/* Direct convolution of wider layers (conv_direct.c): dilated 3x3 and
 * 3x2, 5x5 and 7x5 kernels, 3x3 on 32 channels or fewer, at stride 1
 * (flat bands: 16- to 40-wide planes, and row by row: 64 wide) and 2
 * (flat in sh * sw planes: rows of 60, 35, 32, 16, 15 and 14 outputs);
 * channel counts off the block of 8 and
 * off the vector, two images, uneven pads; the residual (full, per
 * channel, per image) added after the bias, before the activation;
 * groups of 8, 16 and 6 channels (Mg 5, 8 and 9: blocks of 8 cut).
 * Then layers it leaves to the others: 3x3 on 64 channels (Winograd),
 * 7 x 7 planes (too little of the flat run is real), a stride-2
 * dilated plane of 7 x 7 (49 of 64 computed), groups of 40 channels. */
static void test_conv_direct_wide(void **state)
{
    (void)state;
    double old = sm_gemm_set_parallel_threshold(0);
    struct {
        int64_t n, c, h, w, m, kh, kw, s, pt, pl, pb, pr, d, res, g;
    } cs[] = {{1, 20, 24, 40, 13, 3, 3, 1, 2, 2, 2, 2, 2, 0, 1},
              {2, 9, 19, 21, 16, 5, 5, 1, 2, 2, 2, 2, 1, 1, 1},
              {1, 17, 16, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1},
              {2, 32, 14, 18, 7, 3, 3, 1, 1, 0, 1, 2, 1, 3, 1},
              {1, 12, 30, 64, 19, 3, 2, 1, 4, 1, 4, 1, 4, 1, 1},
              {1, 6, 20, 119, 10, 5, 5, 2, 2, 2, 1, 2, 1, 0, 1},
              {1, 11, 21, 63, 9, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1},
              {2, 5, 25, 30, 8, 7, 5, 1, 3, 2, 3, 2, 1, 3, 1},
              {1, 24, 64, 64, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
              {2, 32, 16, 18, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 4},
              {1, 48, 14, 14, 24, 3, 3, 1, 1, 1, 1, 1, 1, 2, 3},
              {1, 12, 20, 40, 18, 5, 5, 1, 2, 2, 2, 2, 1, 0, 2},
              /* stride 2 in flat planes: a ResNet downsampling 3x3, a
               * grouped one (Mg 10) of an odd width, a dilated row of
               * 35 outputs, a 3x5 with uneven pads */
              {2, 16, 32, 32, 32, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1},
              {1, 32, 28, 27, 40, 3, 3, 2, 1, 1, 1, 1, 1, 3, 4},
              {1, 16, 71, 71, 16, 3, 3, 2, 1, 1, 1, 1, 2, 0, 1},
              {1, 7, 23, 30, 9, 3, 5, 2, 1, 2, 0, 1, 1, 2, 1},
              /* outputs of 8 x 8 (4/5 of the flat run real), up to 64
               * channels there: stride 1 with a residual (Mg 40), and
               * stride 2 from an odd width */
              {2, 64, 8, 8, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
              {3, 40, 16, 15, 64, 3, 3, 2, 1, 1, 1, 1, 1, 2, 1}};
    const char *act[] = {"relu", "silu", "none", "gelu", "leakyrelu"};
    for (size_t i = 0; i < N_OF(cs); i++) {
        int64_t n = cs[i].n, m = cs[i].m;
        int64_t oh =
            (cs[i].h + cs[i].pt + cs[i].pb - cs[i].d * (cs[i].kh - 1) - 1) /
                cs[i].s +
            1;
        int64_t ow =
            (cs[i].w + cs[i].pl + cs[i].pr - cs[i].d * (cs[i].kw - 1) - 1) /
                cs[i].s +
            1;
        int64_t g = cs[i].g ? cs[i].g : 1;
        sm_attr al[5] = {A_INTS("pads", cs[i].pt, cs[i].pl, cs[i].pb, cs[i].pr),
                         A_INTS("strides", cs[i].s, cs[i].s),
                         A_INTS("dilations", cs[i].d, cs[i].d),
                         A_STR("activation", act[i % 5]), A_INT("group", g)};
        /* residual: none, full, per channel [m, 1, 1], per image and
         * channel [n, m, 1, 1] */
        sm_tensor *r = NULL;
        if (cs[i].res == 1)
            r = ck_rand(4, D(n, m, oh, ow), 4);
        else if (cs[i].res == 2)
            r = ck_rand(3, D(m, 1, 1), 4);
        else if (cs[i].res == 3)
            r = ck_rand(4, D(n, m, 1, 1), 4);
        sm_tensor *in[4] = {
            ck_rand(4, D(n, cs[i].c, cs[i].h, cs[i].w), 1),
            ck_rand(4, D(m, cs[i].c / g, cs[i].kh, cs[i].kw), 2),
            ck_rand(1, D(m), 3), r};
        int n_in = r ? 4 : 3;
        sm_tensor *y = nn_tensor(F32, 4, D(n, m, oh, ow), NULL);
        int packs;
        for (int e = 0; e < 3; e++)
            if (ck_have(CK_ENTRIES(conv)[e]))
                assert_int_equal(
                    chosen(CK_ENTRIES(conv)[e], in, n_in, y, al, 5, &packs),
                    SM_CPU_ALGO_DIRECT);
        sm_tensor_free(y);
        ck_check(SM_OP_FusedConv, n_in, in, 1, al, 5, CK_ENTRIES(conv), 2,
                 CONV_TOL(cs[i].c / g * cs[i].kh * cs[i].kw));
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
    /* not direct: 64 channels (Winograd), a 7 x 7 plane, two groups */
    struct {
        int64_t c, hw, g; /* the 15 wide one at stride 2, dilation 2 */
    } no[] = {{64, 28, 1}, {16, 7, 1}, {80, 24, 2}, {16, 15, 1}};
    for (size_t i = 0; i < N_OF(no); i++) {
        int64_t s = no[i].hw == 15 ? 2 : 1, o = (no[i].hw - 1) / s + 1;
        if (s == 2)
            o = (no[i].hw + 2 - 4 - 1) / 2 + 1;
        sm_attr al[4] = {A_INTS("pads", 1, 1, 1, 1), A_INT("group", no[i].g),
                         A_INTS("strides", s, s), A_INTS("dilations", s, s)};
        sm_tensor *in[2] = {ck_rand(4, D(1, no[i].c, no[i].hw, no[i].hw), 1),
                            ck_rand(4, D(16, no[i].c / no[i].g, 3, 3), 2)};
        sm_tensor *y = nn_tensor(F32, 4, D(1, 16, o, o), NULL);
        int packs;
        for (int e = 0; e < 3; e++)
            if (ck_have(CK_ENTRIES(conv)[e]))
                assert_int_not_equal(
                    chosen(CK_ENTRIES(conv)[e], in, 2, y, al, 4, &packs),
                    SM_CPU_ALGO_DIRECT);
        sm_tensor_free(y);
        ck_check(SM_OP_Conv, 2, in, 1, al, 4, CK_ENTRIES(conv), 2,
                 CONV_TOL(no[i].c * 9));
        for (int j = 0; j < 2; j++)
            sm_tensor_free(in[j]);
    }
    sm_gemm_set_parallel_threshold(old);
}

static void test_conv_refusals(void **state)
{
    (void)state;
    /* 1-D convolution and f64 go to the reference */
    sm_tensor *in[2] = {nn_tensor(F32, 3, D(1, 2, 5), NULL),
                        nn_tensor(F32, 3, D(3, 2, 3), NULL)};
    sm_tensor *out[1] = {nn_tensor(F32, 3, D(1, 3, 3), NULL)};
    assert_false(
        ck_supports(CK_K(conv, scalar), SM_OP_Conv, 2, in, 1, out, NO_ATTRS));
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
    in[0] = nn_tensor(F64, 4, D(1, 2, 5, 5), NULL);
    in[1] = nn_tensor(F64, 4, D(3, 2, 3, 3), NULL);
    out[0] = nn_tensor(F64, 4, D(1, 3, 3, 3), NULL);
    assert_false(
        ck_supports(CK_K(conv, scalar), SM_OP_Conv, 2, in, 1, out, NO_ATTRS));
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

/* The path configure chose for a Conv (n_in <= 3) or FusedConv node
 * with run-time weights. */
static sm_cpu_algo chosen_runtime(const sm_cpu_kernel *k, sm_tensor **in,
                                  int n_in, sm_tensor *y, const sm_attr *al,
                                  int n_al)
{
    sm_op op = n_in > 3 ? SM_OP_FusedConv : SM_OP_Conv;
    const sm_op_info *info = sm_op_info_get(op);
    sm_attrs at = {al, n_al, info->spec, info->n_spec};
    sm_kernel_operand ins[4], outs[1];
    sm_kernel_desc d;
    ck_desc(op, n_in, in, 1, &y, &at, 0, 1, ins, outs, &d);
    sm_cpu_config c;
    sm_cpu_kernel_configure(k, &d, &c);
    return c.algo;
}

/* conv_batched.c with a residual (a training step's input gradients of
 * two convolutions, summed): added as Y' is copied out, the activation
 * after it. A full residual over three chunks (the last short) with relu
 * and with tanh (an activation the micro-kernel does not apply), one per
 * channel, one per position broadcast over the channels, a stride-2
 * layer without bias on 1x1 outputs. */
static void test_conv_batched_residual(void)
{
    static const struct {
        int64_t n, c, h, m, stride, rn, rm, rp; /* R [rn, rm, rp, rp] */
        const char *act;
        int bias;
    } cs[] = {
        {70, 9, 8, 64, 1, 70, 64, 8, "relu", 1},
        {11, 16, 4, 24, 1, 11, 24, 4, "tanh", 1},
        {5, 8, 4, 12, 1, 1, 12, 1, "none", 1},
        {6, 8, 3, 10, 1, 6, 1, 3, "relu", 1},
        {7, 13, 2, 5, 2, 7, 5, 1, "none", 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        int64_t n = cs[i].n, c = cs[i].c, m = cs[i].m, s = cs[i].stride;
        int64_t o = (cs[i].h + 2 - 3) / s + 1;
        sm_tensor *in[4] = {
            ck_rand(4, D(n, c, cs[i].h, cs[i].h), (unsigned)(i + 1)),
            ck_rand(4, D(m, c, 3, 3), (unsigned)(i + 20)),
            cs[i].bias ? ck_rand(1, D(m), 5) : NULL,
            ck_rand(4, D(cs[i].rn, cs[i].rm, cs[i].rp, cs[i].rp),
                    (unsigned)(i + 40))};
        const sm_attr al[] = {A_INTS("pads", 1, 1, 1, 1),
                              A_INTS("strides", s, s),
                              A_STR("activation", cs[i].act)};
        sm_tensor *y = nn_tensor(F32, 4, D(n, m, o, o), NULL);
        assert_int_equal(chosen_runtime(CK_ENTRIES(conv)[0], in, 4, y, al, 3),
                         SM_CPU_ALGO_IM2COL_BATCHED);
        sm_tensor_free(y);
        ck_check(SM_OP_FusedConv, 4, in, 1, al, 3, CK_ENTRIES(conv), 0,
                 CONV_TOL(c * 9));
        for (int j = 0; j < 4; j++)
            sm_tensor_free(in[j]);
    }
}

/* conv_batched.c: small planes by run-time weights as one GEMM over many
 * images' positions (a training step's convolutions): 1 to 32 input
 * channels, 1x1 to 8x8 planes, stride 2, uneven pads, no bias, a batch of
 * several chunks with a short last one, a FusedConv's activation; every
 * ISA against the reference, and the path asserted for run-time weights
 * (constant ones keep the prepacked paths). */
static void test_conv_batched(void **state)
{
    (void)state;
    static const struct {
        int64_t n, c, h, w, m, k, stride, pad0, pad1;
        int bias;
    } cs[] = {
        {256, 1, 8, 8, 16, 3, 1, 1, 1, 1}, /* the digits CNN's layers */
        {37, 16, 4, 4, 32, 3, 1, 1, 1, 1}, {5, 7, 5, 3, 9, 3, 2, 0, 1, 0},
        {3, 32, 2, 2, 13, 3, 1, 1, 1, 1},  {4, 3, 1, 1, 5, 1, 1, 0, 0, 1},
        {70, 9, 8, 8, 64, 3, 1, 1, 1, 1}, /* three chunks, the last short */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        int64_t n = cs[i].n, c = cs[i].c, m = cs[i].m, k = cs[i].k;
        sm_tensor *in[3] = {
            ck_rand(4, D(n, c, cs[i].h, cs[i].w), (unsigned)(i + 1)),
            ck_rand(4, D(m, c, k, k), (unsigned)(i + 20)),
            cs[i].bias ? ck_rand(1, D(m), 5) : NULL};
        int64_t p0 = cs[i].pad0, p1 = cs[i].pad1, s = cs[i].stride;
        const sm_attr al[] = {A_INTS("pads", p0, p0, p1, p1),
                              A_INTS("strides", s, s)};
        int64_t oh = (cs[i].h + p0 + p1 - k) / s + 1;
        int64_t ow = (cs[i].w + p0 + p1 - k) / s + 1;
        sm_tensor *y = nn_tensor(F32, 4, D(n, m, oh, ow), NULL);
        assert_int_equal(chosen_runtime(CK_ENTRIES(conv)[0], in, 3, y, al, 2),
                         SM_CPU_ALGO_IM2COL_BATCHED);
        sm_tensor_free(y);
        ck_check(SM_OP_Conv, 3, in, 1, al, 2, CK_ENTRIES(conv), 2,
                 CONV_TOL(c * k * k));
        for (int j = 0; j < 3; j++)
            sm_tensor_free(in[j]);
    }
    CK_CHECK(
        SM_OP_FusedConv, 3,
        ((sm_tensor *[]){ck_rand(4, D(9, 16, 4, 4), 1),
                         ck_rand(4, D(24, 16, 3, 3), 2), ck_rand(1, D(24), 3)}),
        1, ATTRS(A_INTS("pads", 1, 1, 1, 1), A_STR("activation", "relu")),
        CK_ENTRIES(conv), 0, CONV_TOL(144));
    test_conv_batched_residual();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_op),
        cmocka_unit_test(test_conv_depthwise),
        cmocka_unit_test(test_conv_position_major),
        cmocka_unit_test(test_conv_direct),
        cmocka_unit_test(test_conv_direct_wide),
        cmocka_unit_test(test_fusedconv_op),
        cmocka_unit_test(test_conv_winograd),
        cmocka_unit_test(test_conv_refusals),
        cmocka_unit_test(test_conv_batched),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
