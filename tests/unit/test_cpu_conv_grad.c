/*
 * test_cpu_conv_grad.c - the CPU kernels of Conv's backward forms against
 * the reference on every ISA and pool: ConvGradWeight, the kernel
 * gradient (kernels/cpu/conv_grad_weight.c), and ConvTranspose, the input
 * gradient (kernels/cpu/conv_transpose.c). 1-D, 2-D and 3-D windows, odd
 * sizes, strides that leave the input's end unread, asymmetric pads,
 * dilations, output_padding and output_shape, groups, depthwise, a batch
 * split over several chunks; and what they refuse.
 */
#include "cpu_harness.h"

/* Sums of up to `terms` products of values in [-1, 1). */
#define GRAD_TOL(terms) 2e-6 * (double)((terms) + 1), 1e-5

/* Conv's output size along one dim. */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p0,
                        int64_t p1, int64_t dil)
{
    return (in + p0 + p1 - (k - 1) * dil - 1) / s + 1;
}

/*
 * One ConvGradWeight node over X [n, c, sp...] (nsp spatial dims, sizes
 * in[]), dY [n, m, out...] for kernel k[], strides s[], dilations dil[],
 * pads p[] (begin then end) and group.
 */
static void grad_case(int nsp, int64_t n, int64_t c, int64_t m,
                      const int64_t *in, const int64_t *k, const int64_t *s,
                      const int64_t *dil, const int64_t *p, int64_t group)
{
    int64_t xd[5] = {n, c}, yd[5] = {n, m}, o = 1;
    for (int d = 0; d < nsp; d++) {
        xd[d + 2] = in[d];
        yd[d + 2] = out_size(in[d], k[d], s[d], p[d], p[d + nsp], dil[d]);
        o *= yd[d + 2];
    }
    sm_attr al[5] = {{.name = "kernel_shape",
                      .kind = SM_ATTR_INTS,
                      .v.ints = (int64_t *)k,
                      .n = nsp},
                     {.name = "strides",
                      .kind = SM_ATTR_INTS,
                      .v.ints = (int64_t *)s,
                      .n = nsp},
                     {.name = "dilations",
                      .kind = SM_ATTR_INTS,
                      .v.ints = (int64_t *)dil,
                      .n = nsp},
                     {.name = "pads",
                      .kind = SM_ATTR_INTS,
                      .v.ints = (int64_t *)p,
                      .n = 2 * nsp},
                     {.name = "group", .kind = SM_ATTR_INT, .v.i = group}};
    sm_tensor *x[2] = {ck_rand(nsp + 2, xd, (unsigned)(c * 3 + in[0])),
                       ck_rand(nsp + 2, yd, (unsigned)(m + 11))};
    ck_check(SM_OP_ConvGradWeight, 2, x, 1, al, 5, CK_ENTRIES(convgradweight),
             0, GRAD_TOL(n * o));
    sm_tensor_free(x[0]);
    sm_tensor_free(x[1]);
}

static void test_convgradweight(void **state)
{
    (void)state;
    /* 3x3 pad 1 (a CNN's layer), odd sizes and channel counts */
    grad_case(2, 3, 5, 7, D(9, 11), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
    /* stride 2 leaving the last row and column unread, no pads */
    grad_case(2, 2, 4, 6, D(10, 9), D(3, 3), D(2, 2), D(1, 1), D(0, 0, 0, 0),
              1);
    /* asymmetric pads, stride (1, 3), dilations */
    grad_case(2, 2, 3, 4, D(12, 13), D(3, 2), D(1, 3), D(2, 2), D(2, 0, 1, 3),
              1);
    /* 7x7 stride 2 pad 3 (ResNet's stem) and 1x1 stride 2 (its shortcut) */
    grad_case(2, 2, 3, 8, D(23, 21), D(7, 7), D(2, 2), D(1, 1), D(3, 3, 3, 3),
              1);
    grad_case(2, 3, 12, 10, D(9, 9), D(1, 1), D(2, 2), D(1, 1), D(0, 0, 0, 0),
              1);
    /* groups 2 and 3, depthwise */
    grad_case(2, 2, 6, 4, D(8, 9), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1), 2);
    grad_case(2, 1, 9, 12, D(7, 7), D(1, 3), D(1, 1), D(1, 1), D(0, 1, 0, 1),
              3);
    grad_case(2, 2, 5, 5, D(6, 7), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1), 5);
    /* a depth past the GEMM's KC block: 5 images of 11x13 */
    grad_case(2, 5, 3, 17, D(11, 13), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
    /* 1-D and 3-D */
    grad_case(1, 3, 4, 5, D(17), D(4), D(3), D(1), D(2, 1), 1);
    grad_case(3, 2, 3, 4, D(5, 6, 4), D(2, 3, 2), D(1, 2, 1), D(1, 1, 2),
              D(1, 0, 1, 0, 1, 1), 1);
}

/* A batch whose columns take more than one chunk of scratch (about 9 MB
 * an image here): later chunks add their product into dW. */
static void test_convgradweight_chunks(void **state)
{
    (void)state;
    grad_case(2, 3, 64, 3, D(64, 64), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
    /* small planes, B packed from X through the tap table (the digits
     * CNN's layers): 70 images of 8x8 by 64 channels take two chunks of
     * dY's rows, the last short; 4x4 planes by 16 and 32 channels, and a
     * 2x2 plane with a 3x3 kernel that mostly reads padding */
    grad_case(2, 70, 5, 64, D(8, 8), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
    grad_case(2, 37, 16, 32, D(4, 4), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
    grad_case(2, 9, 7, 3, D(2, 2), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1), 1);
    /* the depth split on the 2- and 3-thread pools (a small dW over many
     * positions, each thread a slice of the images): 65 images in chunks
     * of 64 and 1 (the last chunk leaves threads without an image), and
     * 100 images of 4x4 in two groups */
    grad_case(2, 65, 5, 64, D(8, 8), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
    grad_case(2, 100, 8, 12, D(4, 4), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              2);
    /* a table over every column past 1 MiB (8x8 by 520 channels of 3x3):
     * the per-tap table */
    grad_case(2, 2, 520, 3, D(8, 8), D(3, 3), D(1, 1), D(1, 1), D(1, 1, 1, 1),
              1);
}

/* Not f32, or a dY that does not fit the window: the reference runs. */
static void test_convgradweight_refuses(void **state)
{
    (void)state;
    const sm_cpu_kernel *k = CK_K(convgradweight, scalar);
    sm_tensor *in[2] = {ck_rand(4, D(1, 2, 5, 5), 1),
                        ck_rand(4, D(1, 3, 4, 4), 2)};
    sm_tensor *out = nn_tensor(F32, 4, D(3, 2, 3, 3), NULL);
    assert_false(ck_supports(k, SM_OP_ConvGradWeight, 2, in, 1, &out,
                             ATTRS(A_INTS("kernel_shape", 3, 3))));
    assert_true(ck_supports(k, SM_OP_ConvGradWeight, 2, in, 1, &out,
                            ATTRS(A_INTS("kernel_shape", 2, 2))));
    sm_tensor *d64[2] = {nn_tensor(F64, 4, D(1, 2, 5, 5), NULL),
                         nn_tensor(F64, 4, D(1, 3, 4, 4), NULL)};
    assert_false(ck_supports(k, SM_OP_ConvGradWeight, 2, d64, 1, &out,
                             ATTRS(A_INTS("kernel_shape", 2, 2))));
    for (int i = 0; i < 2; i++) {
        sm_tensor_free(in[i]);
        sm_tensor_free(d64[i]);
    }
    sm_tensor_free(out);
}

/* One ConvTranspose node: X [n, c, in...], W [c, m/group, k...], bias;
 * al holds the window's attributes (the group too). */
static void convt_case(int nsp, int64_t n, int64_t c, int64_t m,
                       const int64_t *in, const int64_t *k, int64_t group,
                       int bias, const sm_attr *al, int n_al)
{
    int64_t xd[5] = {n, c}, wd[5] = {c, m / group}, terms = c / group;
    for (int d = 0; d < nsp; d++) {
        xd[d + 2] = in[d];
        wd[d + 2] = k[d];
        terms *= k[d];
    }
    sm_tensor *x[3] = {ck_rand(nsp + 2, xd, (unsigned)(c * 5 + in[0])),
                       ck_rand(nsp + 2, wd, (unsigned)(m + 3)),
                       bias ? ck_rand(1, D(m), 9) : NULL};
    ck_check(SM_OP_ConvTranspose, 3, x, 1, al, n_al, CK_ENTRIES(convtranspose),
             0, GRAD_TOL(terms));
    for (int i = 0; i < 3; i++)
        sm_tensor_free(x[i]);
}

static void test_convtranspose(void **state)
{
    (void)state;
    /* Conv 3x3 pad 1's input gradient, odd sizes */
    convt_case(2, 2, 5, 7, D(9, 11), D(3, 3), 1, 0,
               ATTRS(A_INTS("pads", 1, 1, 1, 1)));
    /* stride 2 with output_padding (a Conv whose input's end is unread),
     * bias */
    convt_case(2, 3, 6, 4, D(5, 4), D(3, 3), 1, 1,
               ATTRS(A_INTS("strides", 2, 2), A_INTS("pads", 1, 1, 1, 1),
                     A_INTS("output_padding", 1, 0)));
    /* 7x7 stride 2 pad 3 and 1x1 stride 2 (ResNet's stem and shortcut) */
    convt_case(2, 1, 8, 3, D(6, 7), D(7, 7), 1, 0,
               ATTRS(A_INTS("strides", 2, 2), A_INTS("pads", 3, 3, 3, 3),
                     A_INTS("output_padding", 1, 1)));
    convt_case(2, 2, 12, 10, D(5, 5), D(1, 1), 1, 0,
               ATTRS(A_INTS("strides", 2, 2)));
    /* asymmetric pads, stride (1, 3), dilations */
    convt_case(2, 2, 3, 4, D(8, 5), D(3, 2), 1, 1,
               ATTRS(A_INTS("strides", 1, 3), A_INTS("dilations", 2, 2),
                     A_INTS("pads", 2, 0, 1, 3)));
    /* output_shape, with the pads it implies */
    convt_case(2, 1, 3, 2, D(4, 5), D(3, 3), 1, 0,
               ATTRS(A_INTS("strides", 2, 2), A_INTS("output_shape", 8, 10)));
    /* groups 2 and depthwise */
    convt_case(2, 2, 6, 4, D(7, 6), D(3, 3), 2, 1,
               ATTRS(A_INT("group", 2), A_INTS("pads", 1, 1, 1, 1)));
    convt_case(2, 2, 5, 5, D(6, 7), D(3, 3), 5, 0,
               ATTRS(A_INT("group", 5), A_INTS("pads", 1, 1, 1, 1)));
    /* a depth past the GEMM's KC block */
    convt_case(2, 1, 600, 3, D(4, 5), D(3, 3), 1, 0,
               ATTRS(A_INTS("pads", 1, 1, 1, 1)));
    /* 1-D and 3-D */
    convt_case(1, 3, 4, 5, D(6), D(4), 1, 1,
               ATTRS(A_INTS("strides", 3), A_INTS("pads", 2, 1)));
    convt_case(3, 2, 3, 4, D(3, 4, 3), D(2, 3, 2), 1, 0,
               ATTRS(A_INTS("strides", 1, 2, 1), A_INTS("dilations", 1, 1, 2),
                     A_INTS("pads", 1, 0, 1, 0, 1, 1)));
    /* small planes, one GEMM over a chunk's positions: two chunks (the
     * last short) of 4 x 4 planes; a stride-2 2 x 2 one in two groups
     * (resnet18's layer4 input gradients, shrunk) */
    convt_case(2, 40, 33, 64, D(4, 4), D(3, 3), 1, 1,
               ATTRS(A_INTS("pads", 1, 1, 1, 1)));
    convt_case(2, 9, 48, 20, D(2, 2), D(3, 3), 2, 0,
               ATTRS(A_INT("group", 2), A_INTS("strides", 2, 2),
                     A_INTS("pads", 1, 1, 1, 1),
                     A_INTS("output_padding", 1, 1)));
    /* columns of several chunks: 1,600 x 64 x 64 floats an image */
    convt_case(2, 3, 4, 16, D(64, 64), D(10, 10), 1, 0,
               ATTRS(A_INTS("pads", 4, 4, 5, 5)));
}

/* Not f32, or a bias of another length: the reference runs. */
static void test_convtranspose_refuses(void **state)
{
    (void)state;
    const sm_cpu_kernel *k = CK_K(convtranspose, scalar);
    sm_tensor *in[3] = {nn_tensor(F64, 4, D(1, 2, 5, 5), NULL),
                        nn_tensor(F64, 4, D(2, 3, 3, 3), NULL), NULL};
    sm_tensor *out = nn_tensor(F64, 4, D(1, 3, 7, 7), NULL);
    assert_false(ck_supports(k, SM_OP_ConvTranspose, 2, in, 1, &out, NO_ATTRS));
    sm_tensor *f[3] = {ck_rand(4, D(1, 2, 5, 5), 1),
                       ck_rand(4, D(2, 3, 3, 3), 2), ck_rand(1, D(4), 3)};
    sm_tensor *fo = nn_tensor(F32, 4, D(1, 3, 7, 7), NULL);
    assert_true(ck_supports(k, SM_OP_ConvTranspose, 2, f, 1, &fo, NO_ATTRS));
    assert_false(ck_supports(k, SM_OP_ConvTranspose, 3, f, 1, &fo, NO_ATTRS));
    for (int i = 0; i < 3; i++) {
        sm_tensor_free(in[i]);
        sm_tensor_free(f[i]);
    }
    sm_tensor_free(out);
    sm_tensor_free(fo);
}

/* Malformed ConvGradWeight nodes in text IR: parsing or inferring the
 * types fails with one line naming the op and what is wrong. */
static void test_convgradweight_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *x, *dy, *attrs, *says;
    } bad[] = {
        {"f32[2,3,5,5]", "f32[2,4,3,3]", "", "kernel_shape"},
        {"f32[2,3,5,5]", "f32[2,4,3,3]", "kernel_shape = [3]", "kernel_shape"},
        {"f32[2,3,5,5]", "f32[2,4,4,4]", "kernel_shape = [3, 3]",
         "spatial dim 0"},
        {"f32[2,3,5,5]", "f32[3,4,3,3]", "kernel_shape = [3, 3]", "batch"},
        {"f32[2,3,5,5]", "f32[2,4,3,3]", "kernel_shape = [3, 3], group = 2",
         "group"},
        {"f32[2,3]", "f32[2,4]", "kernel_shape = [1]", "rank"},
        {"f32[2,3,5,5]", "f32[2,4,3,3]", "kernel_shape = [9, 3]",
         "smaller than the dilated kernel"},
        {"f32[2,3,5,5]", "i64[2,4,3,3]", "kernel_shape = [3, 3]", "dtype"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        char attrs[128] = "";
        if (bad[i].attrs[0])
            snprintf(attrs, sizeof attrs, " {%s}", bad[i].attrs);
        snprintf(text, sizeof text,
                 "graph g(%%x: %s, %%dy: %s) {\n  %%w = ConvGradWeight(%%x, "
                 "%%dy)%s\n  return %%w\n}\n",
                 bad[i].x, bad[i].dy, attrs);
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_graph_t *g = NULL;
        smelt_status st =
            smelt_graph_parse(ctx, text, strlen(text), "bad.ir", &g);
        if (st == SMELT_OK)
            st = smelt_graph_infer(ctx, g);
        const char *msg = smelt_ctx_error(ctx);
        if (st == SMELT_OK || !strstr(msg, "ConvGradWeight") ||
            !strstr(msg, bad[i].says) || strchr(msg, '\n'))
            fail_msg("case %zu: status %d, message '%s'", i, (int)st, msg);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convgradweight_malformed),
        cmocka_unit_test(test_convtranspose),
        cmocka_unit_test(test_convtranspose_refuses),
        cmocka_unit_test(test_convgradweight),
        cmocka_unit_test(test_convgradweight_chunks),
        cmocka_unit_test(test_convgradweight_refuses),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
