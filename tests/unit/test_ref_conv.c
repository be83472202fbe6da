/*
 * test_ref_conv.c - shape functions, reference kernels and costs of Conv
 * and ConvTranspose. Small cases are computed by hand; larger 2-D ones are
 * checked against naive loops written out here (a direct 2-D convolution,
 * and a scatter-then-crop transposed convolution), independent of the
 * N-D window code under test.
 */
#include "nn_harness.h"

#include "core/alloc.h"

#define CONV(x, w, b, ...)                                                     \
    nn_ok(SM_OP_Conv, 3, (sm_tensor *[]){x, w, b}, 1, ATTRS(__VA_ARGS__))
#define CONVT(x, w, b, ...)                                                    \
    nn_ok(SM_OP_ConvTranspose, 3, (sm_tensor *[]){x, w, b}, 1,                 \
          ATTRS(__VA_ARGS__))
#define NOGROUP A_INT("group", 1)

/* 2-D geometry shared by the naive references. */
typedef struct geom {
    int64_t n, c, h, w, m, kh, kw, group;
    int64_t sh, sw, dh, dw, pt, pl, pb, pr, oph, opw;
} geom;

/* Direct 2-D convolution: X [n,c,h,w], W [m,c/group,kh,kw], B [m]. */
static double *naive_conv2d(const geom *g, const sm_tensor *x,
                            const sm_tensor *w, const sm_tensor *b, int64_t *oh,
                            int64_t *ow)
{
    *oh = (g->h + g->pt + g->pb - ((g->kh - 1) * g->dh + 1)) / g->sh + 1;
    *ow = (g->w + g->pl + g->pr - ((g->kw - 1) * g->dw + 1)) / g->sw + 1;
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    double *y = calloc((size_t)(g->n * g->m * *oh * *ow), sizeof *y);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t m = 0; m < g->m; m++)
            for (int64_t i = 0; i < *oh; i++)
                for (int64_t j = 0; j < *ow; j++) {
                    double acc = b ? nn_at(b, m) : 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t ki = 0; ki < g->kh; ki++)
                            for (int64_t kj = 0; kj < g->kw; kj++) {
                                int64_t r = i * g->sh - g->pt + ki * g->dh;
                                int64_t q = j * g->sw - g->pl + kj * g->dw;
                                if (r < 0 || r >= g->h || q < 0 || q >= g->w)
                                    continue;
                                int64_t ic = (m / mg) * cg + c;
                                acc += nn_at(x, ((n * g->c + ic) * g->h + r) *
                                                        g->w +
                                                    q) *
                                       nn_at(w, ((m * cg + c) * g->kh + ki) *
                                                        g->kw +
                                                    kj);
                            }
                    y[((n * g->m + m) * *oh + i) * *ow + j] = acc;
                }
    return y;
}

/* Transposed 2-D convolution by scattering every input element into an
 * uncropped output, then cropping the pads: X [n,c,h,w],
 * W [c,m/group,kh,kw]. */
static double *naive_convt2d(const geom *g, const sm_tensor *x,
                             const sm_tensor *w, const sm_tensor *b,
                             int64_t *oh, int64_t *ow)
{
    int64_t fh = g->sh * (g->h - 1) + (g->kh - 1) * g->dh + 1 + g->oph;
    int64_t fw = g->sw * (g->w - 1) + (g->kw - 1) * g->dw + 1 + g->opw;
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    double *full = calloc((size_t)(g->n * g->m * fh * fw), sizeof *full);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t ic = 0; ic < g->c; ic++)
            for (int64_t i = 0; i < g->h; i++)
                for (int64_t j = 0; j < g->w; j++)
                    for (int64_t m = 0; m < mg; m++)
                        for (int64_t ki = 0; ki < g->kh; ki++)
                            for (int64_t kj = 0; kj < g->kw; kj++) {
                                int64_t oc = (ic / cg) * mg + m;
                                int64_t r = i * g->sh + ki * g->dh;
                                int64_t q = j * g->sw + kj * g->dw;
                                full[((n * g->m + oc) * fh + r) * fw + q] +=
                                    nn_at(x,
                                          ((n * g->c + ic) * g->h + i) * g->w +
                                              j) *
                                    nn_at(w,
                                          ((ic * mg + m) * g->kh + ki) * g->kw +
                                              kj);
                            }
    *oh = fh - g->pt - g->pb;
    *ow = fw - g->pl - g->pr;
    double *y = calloc((size_t)(g->n * g->m * *oh * *ow), sizeof *y);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t m = 0; m < g->m; m++)
            for (int64_t i = 0; i < *oh; i++)
                for (int64_t j = 0; j < *ow; j++)
                    y[((n * g->m + m) * *oh + i) * *ow + j] =
                        full[((n * g->m + m) * fh + i + g->pt) * fw + j +
                             g->pl] +
                        (b ? nn_at(b, m) : 0);
    free(full);
    return y;
}

/* 1-D by hand: x = 1..5, w = [1, 0, -1]: y[o] = x[o'] - x[o'+2d]. */
static void test_conv1d(void **state)
{
    (void)state;
#define X5 nn_tensor(F32, 3, D(1, 1, 5), V(1, 2, 3, 4, 5))
#define W3 nn_tensor(F32, 3, D(1, 1, 3), V(1, 0, -1))
    nn_result r = CONV(X5, W3, NULL, NOGROUP);
    nn_expect(r.out[0], 3, D(1, 1, 3), V(-2, -2, -2), 0);
    nn_free(&r);
    r = CONV(X5, W3, NULL, A_INTS("pads", 1, 1));
    nn_expect(r.out[0], 3, D(1, 1, 5), V(-2, -2, -2, -2, 4), 0);
    nn_free(&r);
    r = CONV(X5, W3, NULL, A_INTS("pads", 1, 1), A_INTS("strides", 2));
    nn_expect(r.out[0], 3, D(1, 1, 3), V(-2, -2, 4), 0);
    nn_free(&r);
    r = CONV(X5, W3, NULL, A_INTS("dilations", 2));
    nn_expect(r.out[0], 3, D(1, 1, 1), V(-4), 0);
    nn_free(&r);
    r = CONV(X5, W3, nn_tensor(F32, 1, D(1), V(10)), A_INTS("pads", 0, 2),
             A_INTS("kernel_shape", 3));
    nn_expect(r.out[0], 3, D(1, 1, 5), V(8, 8, 8, 14, 15), 0);
    nn_free(&r);
}

/* 2-D by hand: x = 1..9 (3x3), w = identity 2x2. */
static void test_conv2d_hand(void **state)
{
    (void)state;
#define X9 nn_tensor(F64, 4, D(1, 1, 3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9))
#define WI nn_tensor(F64, 4, D(1, 1, 2, 2), V(1, 0, 0, 1))
    nn_result r = CONV(X9, WI, NULL, NOGROUP);
    nn_expect(r.out[0], 4, D(1, 1, 2, 2), V(6, 8, 12, 14), 0);
    nn_free(&r);
    r = CONV(X9, WI, NULL, A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", 2, 2));
    nn_expect(r.out[0], 4, D(1, 1, 2, 2), V(1, 3, 7, 14), 0);
    nn_free(&r);
    /* two output channels, the second with a bias */
    r = CONV(X9, nn_tensor(F64, 4, D(2, 1, 2, 2), V(1, 0, 0, 1, 0, 1, 1, 0)),
             nn_tensor(F64, 1, D(2), V(0, 100)), NOGROUP);
    nn_expect(r.out[0], 4, D(1, 2, 2, 2), V(6, 8, 12, 14, 106, 108, 112, 114),
              0);
    nn_free(&r);
}

/* Runs Conv on pattern inputs of geometry g and compares with the naive
 * direct convolution. */
static void check_conv2d(const geom *g, smelt_dtype dt, int bias,
                         const sm_attr *at, int n_at, double tol)
{
    sm_tensor *x = nn_pattern(dt, 4, D(g->n, g->c, g->h, g->w), 3);
    sm_tensor *w = nn_pattern(dt, 4, D(g->m, g->c / g->group, g->kh, g->kw), 4);
    sm_tensor *b = bias ? nn_pattern(dt, 1, D(g->m), 5) : NULL;
    int64_t oh, ow;
    double *want = naive_conv2d(g, x, w, b, &oh, &ow);
    nn_result r = nn_ok(SM_OP_Conv, 3, (sm_tensor *[]){x, w, b}, 1, at, n_at);
    nn_expect(r.out[0], 4, D(g->n, g->m, oh, ow), want, tol);
    free(want);
    nn_free(&r);
}

/* Strides, asymmetric pads, dilations, groups and bias together. */
static void test_conv2d_general(void **state)
{
    (void)state;
    geom g = {.n = 2,
              .c = 4,
              .h = 7,
              .w = 6,
              .m = 6,
              .kh = 3,
              .kw = 2,
              .group = 2,
              .sh = 2,
              .sw = 1,
              .dh = 1,
              .dw = 2,
              .pt = 1,
              .pl = 0,
              .pb = 2,
              .pr = 1};
    check_conv2d(&g, F32, 1,
                 ATTRS(A_INT("group", 2), A_INTS("strides", 2, 1),
                       A_INTS("dilations", 1, 2), A_INTS("pads", 1, 0, 2, 1)),
                 1e-6);
    check_conv2d(&g, F64, 0,
                 ATTRS(A_INT("group", 2), A_INTS("strides", 2, 1),
                       A_INTS("dilations", 1, 2), A_INTS("pads", 1, 0, 2, 1)),
                 1e-12);
    /* f16 and bf16 round the result once: the tolerance is theirs */
    check_conv2d(&g, F16, 1,
                 ATTRS(A_INT("group", 2), A_INTS("strides", 2, 1),
                       A_INTS("dilations", 1, 2), A_INTS("pads", 1, 0, 2, 1)),
                 1e-3);
    check_conv2d(&g, BF16, 1,
                 ATTRS(A_INT("group", 2), A_INTS("strides", 2, 1),
                       A_INTS("dilations", 1, 2), A_INTS("pads", 1, 0, 2, 1)),
                 1e-2);
}

/* Depthwise: group = C = M, W [C, 1, k, k]. */
static void test_conv2d_depthwise(void **state)
{
    (void)state;
    geom g = {.n = 1,
              .c = 3,
              .h = 5,
              .w = 5,
              .m = 3,
              .kh = 3,
              .kw = 3,
              .group = 3,
              .sh = 1,
              .sw = 1,
              .dh = 1,
              .dw = 1,
              .pt = 1,
              .pl = 1,
              .pb = 1,
              .pr = 1};
    check_conv2d(&g, F32, 1,
                 ATTRS(A_INT("group", 3), A_INTS("pads", 1, 1, 1, 1)), 1e-6);
    /* by hand: channel c is scaled by c+1 (1x1 kernels) */
    nn_result r = CONV(nn_tensor(F32, 4, D(1, 3, 1, 2), V(1, 2, 3, 4, 5, 6)),
                       nn_tensor(F32, 4, D(3, 1, 1, 1), V(1, 2, 3)), NULL,
                       A_INT("group", 3));
    nn_expect(r.out[0], 4, D(1, 3, 1, 2), V(1, 2, 6, 8, 15, 18), 0);
    nn_free(&r);
}

/* auto_pad: SAME_UPPER puts the odd padding at the end, SAME_LOWER at
 * the start; VALID ignores padding. */
static void test_conv_auto_pad(void **state)
{
    (void)state;
#define W4 nn_tensor(F32, 3, D(1, 1, 4), V(1, 1, 1, 1))
    /* in 5, k 4, stride 2: out 3, total pad 3 */
    nn_result r = CONV(X5, W4, NULL, A_STR("auto_pad", "SAME_UPPER"),
                       A_INTS("strides", 2));
    nn_expect(r.out[0], 3, D(1, 1, 3), V(6, 14, 9), 0);
    nn_free(&r);
    r = CONV(X5, W4, NULL, A_STR("auto_pad", "SAME_LOWER"),
             A_INTS("strides", 2));
    nn_expect(r.out[0], 3, D(1, 1, 3), V(3, 10, 12), 0);
    nn_free(&r);
    r = CONV(X5, W4, NULL, A_STR("auto_pad", "VALID"));
    nn_expect(r.out[0], 3, D(1, 1, 2), V(10, 14), 0);
    nn_free(&r);
    /* 2-D SAME_UPPER, stride 1, 3x3 kernel: pads 1 each side */
    geom g = {.n = 1,
              .c = 2,
              .h = 4,
              .w = 5,
              .m = 2,
              .kh = 3,
              .kw = 3,
              .group = 1,
              .sh = 1,
              .sw = 1,
              .dh = 1,
              .dw = 1,
              .pt = 1,
              .pl = 1,
              .pb = 1,
              .pr = 1};
    check_conv2d(&g, F32, 1, ATTRS(A_STR("auto_pad", "SAME_UPPER")), 1e-6);
    /* stride 2, 2x2 kernel on 4x5: out 2x3, pads 0/0 rows, 0/1 cols */
    g = (geom){.n = 1,
               .c = 1,
               .h = 4,
               .w = 5,
               .m = 1,
               .kh = 2,
               .kw = 2,
               .group = 1,
               .sh = 2,
               .sw = 2,
               .dh = 1,
               .dw = 1,
               .pt = 0,
               .pl = 0,
               .pb = 0,
               .pr = 1};
    check_conv2d(
        &g, F32, 0,
        ATTRS(A_STR("auto_pad", "SAME_UPPER"), A_INTS("strides", 2, 2)), 1e-6);
}

/* 3-D: ones convolved with a 2x2x2 kernel of ones, padded by 1: each
 * output counts the window's elements inside the input. */
static void test_conv3d(void **state)
{
    (void)state;
    const double ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    nn_result r = CONV(nn_tensor(F32, 5, D(1, 1, 2, 2, 2), ones),
                       nn_tensor(F32, 5, D(1, 1, 2, 2, 2), ones), NULL,
                       A_INTS("pads", 1, 1, 1, 1, 1, 1));
    double want[27];
    for (int i = 0; i < 27; i++) {
        int a = i / 9, b = i / 3 % 3, c = i % 3;
        want[i] = (a == 1 ? 2 : 1) * (b == 1 ? 2 : 1) * (c == 1 ? 2 : 1);
    }
    nn_expect(r.out[0], 5, D(1, 1, 3, 3, 3), want, 0);
    assert_true(r.cost.flops == 2.0 * 27 * 1 * 8);
    nn_free(&r);
}

static void test_conv_errors(void **state)
{
    (void)state;
#define CONV_FAIL(x, w, b, st, words, ...)                                     \
    nn_fail(SM_OP_Conv, 3, (sm_tensor *[]){x, w, b}, 1, ATTRS(__VA_ARGS__),    \
            st, words)
    CONV_FAIL(nn_tensor(F32, 3, D(1, 3, 5), NULL),
              nn_tensor(F32, 3, D(2, 2, 3), NULL), NULL, SMELT_ERR_SHAPE,
              "Conv|3 channels|2", NOGROUP);
    CONV_FAIL(nn_tensor(F32, 3, D(1, 4, 5), NULL),
              nn_tensor(F32, 3, D(3, 2, 3), NULL), NULL, SMELT_ERR_SHAPE,
              "Conv|3|group 2", A_INT("group", 2));
    CONV_FAIL(nn_tensor(F32, 2, D(1, 5), NULL),
              nn_tensor(F32, 2, D(1, 1), NULL), NULL, SMELT_ERR_SHAPE,
              "Conv|rank", NOGROUP);
    CONV_FAIL(nn_tensor(F32, 4, D(1, 1, 5, 5), NULL),
              nn_tensor(F32, 3, D(1, 1, 3), NULL), NULL, SMELT_ERR_SHAPE,
              "Conv|ranks 4 and 3", NOGROUP);
    CONV_FAIL(nn_tensor(F32, 4, D(1, 1, 5, 5), NULL),
              nn_tensor(F32, 4, D(1, 1, 3, 3), NULL), NULL, SMELT_ERR_SHAPE,
              "Conv|strides|1 values|2", A_INTS("strides", 1));
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_SHAPE, "Conv|strides[0] = 0",
              A_INTS("strides", 0));
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_SHAPE, "Conv|pads[1] = -1",
              A_INTS("pads", 0, -1));
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_SHAPE, "Conv|dilations[0] = 0",
              A_INTS("dilations", 0));
    CONV_FAIL(nn_tensor(F32, 3, D(1, 1, 2), NULL), W3, NULL, SMELT_ERR_SHAPE,
              "Conv|input size 2|kernel 3", NOGROUP);
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_SHAPE, "Conv|input size 5|kernel 9",
              A_INTS("dilations", 4));
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_INVALID_ARG, "Conv|auto_pad|SAME",
              A_STR("auto_pad", "SAME"));
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_INVALID_ARG, "Conv|group = 0",
              A_INT("group", 0));
    CONV_FAIL(X5, W3, NULL, SMELT_ERR_SHAPE, "Conv|kernel_shape[0] = 2|3",
              A_INTS("kernel_shape", 2));
    CONV_FAIL(X5, W3, nn_tensor(F32, 1, D(3), NULL), SMELT_ERR_SHAPE,
              "Conv|B|M = 1|3", NOGROUP);
    CONV_FAIL(nn_tensor(I32, 3, D(1, 1, 5), NULL),
              nn_tensor(I32, 3, D(1, 1, 3), NULL), NULL, SMELT_ERR_TYPE,
              "Conv|i32|float", NOGROUP);
    CONV_FAIL(X5, nn_tensor(F64, 3, D(1, 1, 3), NULL), NULL, SMELT_ERR_TYPE,
              "Conv|f32|f64", NOGROUP);
}

static void test_conv_symbolic(void **state)
{
    (void)state;
    sm_type x = nn_type(F32, "batch,3,?,32"), w = nn_type(F32, "8,3,3,3"), y;
    const sm_type *in[2] = {&x, &w};
    assert_int_equal(nn_shape(SM_OP_Conv, 2, in, 1, &y,
                              ATTRS(A_INTS("pads", 1, 1, 1, 1)), NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[batch,8,?,32]");
    x = nn_type(F32, "batch,3,h,w");
    assert_int_equal(nn_shape(SM_OP_Conv, 2, in, 1, &y,
                              ATTRS(A_STR("auto_pad", "SAME_UPPER")), NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[batch,8,h,w]");
    x = nn_type(F32, "batch,3,h,33");
    assert_int_equal(nn_shape(SM_OP_Conv, 2, in, 1, &y,
                              ATTRS(A_STR("auto_pad", "SAME_LOWER"),
                                    A_INTS("strides", 2, 2)),
                              NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[batch,8,?,17]");
    x = nn_type(F32, "*");
    assert_int_equal(nn_shape(SM_OP_Conv, 2, in, 1, &y, NO_ATTRS, NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[?,8,?,?]");
    /* known channels that disagree fail even with other dims unknown */
    char msg[SM_ERR_MSG_MAX];
    x = nn_type(F32, "batch,4,?,?");
    assert_int_equal(nn_shape(SM_OP_Conv, 2, in, 1, &y, NO_ATTRS, msg),
                     SMELT_ERR_SHAPE);
    nn_has_words(msg, "Conv|4|3");
    /* ConvTranspose: M = W's dim 1 times group */
    x = nn_type(F32, "b,4,h,5");
    w = nn_type(F32, "4,3,2,2");
    assert_int_equal(nn_shape(SM_OP_ConvTranspose, 2, in, 1, &y,
                              ATTRS(A_INT("group", 2), A_INTS("strides", 2, 2)),
                              NULL),
                     SMELT_OK);
    nn_type_is(&y, "f32[b,6,?,10]");
}

/* ConvTranspose 1-D by hand: x = [1,2,3], w = [1,1,1], stride 2; the
 * uncropped output is [1,1,3,2,5,3,3]. */
static void test_convt1d(void **state)
{
    (void)state;
#define XT nn_tensor(F32, 3, D(1, 1, 3), V(1, 2, 3))
#define WT nn_tensor(F32, 3, D(1, 1, 3), V(1, 1, 1))
    nn_result r = CONVT(XT, WT, NULL, A_INTS("strides", 2));
    nn_expect(r.out[0], 3, D(1, 1, 7), V(1, 1, 3, 2, 5, 3, 3), 0);
    nn_free(&r);
    r = CONVT(XT, WT, NULL, A_INTS("strides", 2), A_INTS("output_padding", 1));
    nn_expect(r.out[0], 3, D(1, 1, 8), V(1, 1, 3, 2, 5, 3, 3, 0), 0);
    nn_free(&r);
    r = CONVT(XT, WT, nn_tensor(F32, 1, D(1), V(0.5)), A_INTS("strides", 2),
              A_INTS("pads", 1, 1));
    nn_expect(r.out[0], 3, D(1, 1, 5), V(1.5, 3.5, 2.5, 5.5, 3.5), 0);
    nn_free(&r);
    /* output_shape 6: total padding 1, the larger half at the start */
    r = CONVT(XT, WT, NULL, A_INTS("strides", 2), A_INTS("output_shape", 6));
    nn_expect(r.out[0], 3, D(1, 1, 6), V(1, 3, 2, 5, 3, 3), 0);
    nn_free(&r);
    /* the same given as the whole output shape */
    r = CONVT(XT, WT, NULL, A_INTS("strides", 2),
              A_INTS("output_shape", 1, 1, 6));
    nn_expect(r.out[0], 3, D(1, 1, 6), V(1, 3, 2, 5, 3, 3), 0);
    nn_free(&r);
    /* SAME_UPPER: out = in * stride = 6, the smaller half at the start */
    r = CONVT(XT, WT, NULL, A_INTS("strides", 2),
              A_STR("auto_pad", "SAME_UPPER"));
    nn_expect(r.out[0], 3, D(1, 1, 6), V(1, 1, 3, 2, 5, 3), 0);
    nn_free(&r);
    r = CONVT(XT, WT, NULL, A_INTS("strides", 2),
              A_STR("auto_pad", "SAME_LOWER"));
    nn_expect(r.out[0], 3, D(1, 1, 6), V(1, 3, 2, 5, 3, 3), 0);
    nn_free(&r);
    /* dilation 2, stride 1: y[i + 2k] += x[i] */
    r = CONVT(XT, nn_tensor(F32, 3, D(1, 1, 2), V(1, 10)), NULL,
              A_INTS("dilations", 2));
    nn_expect(r.out[0], 3, D(1, 1, 5), V(1, 2, 13, 20, 30), 0);
    nn_free(&r);
}

/* ConvTranspose 2-D with groups, strides, dilations, pads and
 * output_padding against the scatter reference. */
static void test_convt2d_general(void **state)
{
    (void)state;
    geom g = {.n = 2,
              .c = 4,
              .h = 3,
              .w = 4,
              .m = 6,
              .kh = 3,
              .kw = 2,
              .group = 2,
              .sh = 2,
              .sw = 3,
              .dh = 1,
              .dw = 2,
              .pt = 1,
              .pl = 0,
              .pb = 0,
              .pr = 2,
              .oph = 1,
              .opw = 0};
    sm_tensor *x = nn_pattern(F32, 4, D(g.n, g.c, g.h, g.w), 7);
    sm_tensor *w = nn_pattern(F32, 4, D(g.c, g.m / g.group, g.kh, g.kw), 8);
    sm_tensor *b = nn_pattern(F32, 1, D(g.m), 9);
    int64_t oh, ow;
    double *want = naive_convt2d(&g, x, w, b, &oh, &ow);
    nn_result r = CONVT(x, w, b, A_INT("group", 2), A_INTS("strides", 2, 3),
                        A_INTS("dilations", 1, 2), A_INTS("pads", 1, 0, 0, 2),
                        A_INTS("output_padding", 1, 0));
    nn_expect(r.out[0], 4, D(g.n, g.m, oh, ow), want, 1e-6);
    /* every input element feeds (M/group) * kernel volume products */
    assert_true(r.cost.flops ==
                2.0 * (2 * 4 * 3 * 4) * 3 * 6 + (double)r.out[0]->numel);
    free(want);
    nn_free(&r);
}

static void test_convt_errors(void **state)
{
    (void)state;
    nn_fail(SM_OP_ConvTranspose, 2, (sm_tensor *[]){XT, WT}, 1,
            ATTRS(A_INTS("strides", 2), A_INTS("output_padding", 2)),
            SMELT_ERR_SHAPE, "ConvTranspose|output_padding[0] = 2|stride");
    nn_fail(SM_OP_ConvTranspose, 2,
            (sm_tensor *[]){nn_tensor(F32, 3, D(1, 3, 3), NULL),
                            nn_tensor(F32, 3, D(2, 1, 3), NULL)},
            1, NO_ATTRS, SMELT_ERR_SHAPE, "ConvTranspose|3 channels|2");
    nn_fail(SM_OP_ConvTranspose, 2,
            (sm_tensor *[]){nn_tensor(F32, 3, D(1, 3, 3), NULL),
                            nn_tensor(F32, 3, D(3, 1, 3), NULL)},
            1, ATTRS(A_INT("group", 2)), SMELT_ERR_SHAPE,
            "ConvTranspose|3|group 2");
    nn_fail(SM_OP_ConvTranspose, 2, (sm_tensor *[]){XT, WT}, 1,
            ATTRS(A_INTS("pads", 4, 4)), SMELT_ERR_SHAPE,
            "ConvTranspose|below 1");
    nn_fail(SM_OP_ConvTranspose, 2, (sm_tensor *[]){XT, WT}, 1,
            ATTRS(A_INTS("output_shape", 6, 6)), SMELT_ERR_SHAPE,
            "ConvTranspose|output_shape|2 values");
}

static void test_conv_cost(void **state)
{
    (void)state;
    /* X [1,2,5,5], W [4,1,3,3], group 2: Y [1,4,3,3] */
    nn_result r = CONV(nn_tensor(F32, 4, D(1, 2, 5, 5), NULL),
                       nn_tensor(F32, 4, D(4, 1, 3, 3), NULL),
                       nn_tensor(F32, 1, D(4), NULL), A_INT("group", 2));
    assert_true(r.cost.flops == 2.0 * 36 * 1 * 9 + 36);
    assert_true(r.cost.bytes_read == (50 + 36 + 4) * 4.0);
    assert_true(r.cost.bytes_write == 36 * 4.0);
    nn_free(&r);
}

/* The kernel's one allocation (the tap offsets of an output position)
 * failing gives SMELT_ERR_NOMEM naming the op, and nothing leaks; with
 * memory it computes a hand-checked 1-D case: y = [1*1+2*2, 2*1+3*2]. */
static void test_conv_nomem(void **state)
{
    (void)state;
    sm_tensor *in[2] = {nn_tensor(F32, 3, D(1, 1, 3), V(1, 2, 3)),
                        nn_tensor(F32, 3, D(1, 1, 2), V(1, 2))};
    sm_tensor *out[1] = {nn_tensor(F32, 3, D(1, 1, 2), NULL)};
    const sm_op_info *info = sm_op_info_get(SM_OP_Conv);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_kargs k = {.op_name = "Conv",
                  .attrs = {NULL, 0, info->spec, info->n_spec},
                  .n_in = 2,
                  .in = in,
                  .n_out = 1,
                  .out = out,
                  .ctx = ctx};
    sm_alloc_fail_after(0);
    smelt_status st = sm_ref_conv(&k);
    sm_alloc_fail_after(-1);
    assert_int_equal(st, SMELT_ERR_NOMEM);
    nn_has_words(smelt_ctx_error(ctx), "Conv|out of memory|2 kernel taps");
    assert_int_equal(sm_ref_conv(&k), SMELT_OK);
    nn_expect(out[0], 3, D(1, 1, 2), V(5, 8), 0);
    smelt_ctx_free(ctx);
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv1d),
        cmocka_unit_test(test_conv2d_hand),
        cmocka_unit_test(test_conv2d_general),
        cmocka_unit_test(test_conv2d_depthwise),
        cmocka_unit_test(test_conv_auto_pad),
        cmocka_unit_test(test_conv3d),
        cmocka_unit_test(test_conv_errors),
        cmocka_unit_test(test_conv_symbolic),
        cmocka_unit_test(test_convt1d),
        cmocka_unit_test(test_convt2d_general),
        cmocka_unit_test(test_convt_errors),
        cmocka_unit_test(test_conv_cost),
        cmocka_unit_test(test_conv_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
