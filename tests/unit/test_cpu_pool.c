/*
 * test_cpu_pool.c - the optimized pooling kernels (kernels/cpu/pool.c,
 * pool_indices.c) against
 * the reference kernels, for every ISA entry this machine can run, on odd sizes
 * whose rows end in partial vectors, with 1, 2 and 3 threads.
 */
#include "cpu_harness.h"

#include "core/act.h"

#define TOL 1e-6, 2e-6

static void test_maxpool(void **state)
{
    (void)state;
    /* ResNet's 3x3 stride 2 pad 1, on an odd plane */
    CK_CHECK(SM_OP_MaxPool, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 3, 17, 21), 1)}), 1,
             ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
                   A_INTS("pads", 1, 1, 1, 1)),
             CK_ENTRIES(maxpool), 0, 0, 0);
    /* ceil_mode, dilations, asymmetric pads, stride 1 */
    CK_CHECK(SM_OP_MaxPool, 1,
             ((sm_tensor *[]){ck_rand(4, D(1, 2, 11, 40), 2)}), 1,
             ATTRS(A_INTS("kernel_shape", 2, 3), A_INT("ceil_mode", 1),
                   A_INTS("dilations", 2, 1), A_INTS("pads", 0, 1, 1, 2),
                   A_INTS("strides", 2, 1)),
             CK_ENTRIES(maxpool), 0, 0, 0);
    /* rows of several vector pairs; a 9x9 window (81 taps: the
     * tap-by-tap path) */
    CK_CHECK(SM_OP_MaxPool, 1, ((sm_tensor *[]){ck_rand(4, D(1, 2, 9, 77), 7)}),
             1, ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("pads", 1, 1, 1, 1)),
             CK_ENTRIES(maxpool), 0, 0, 0);
    CK_CHECK(SM_OP_MaxPool, 1,
             ((sm_tensor *[]){ck_rand(4, D(1, 2, 20, 21), 8)}), 1,
             ATTRS(A_INTS("kernel_shape", 9, 9), A_INTS("pads", 4, 4, 4, 4)),
             CK_ENTRIES(maxpool), 0, 0, 0);
}

/* pool_indices.c: MaxPool with its Indices output, exact against the
 * reference: odd windows, ceil_mode and dilations, ties (values rounded
 * to a few levels: the first maximum wins) and a NaN (it wins). */
static void test_maxpool_indices(void **state)
{
    (void)state;
    for (int tie = 0; tie < 2; tie++) {
        sm_tensor *x = ck_rand(4, D(3, 4, 17, 21), 3 + (unsigned)tie);
        float *p = x->data;
        for (int64_t i = 0; tie && i < x->numel; i++)
            p[i] = floorf(p[i] * 2);
        p[5] = NAN;
        CK_CHECK(SM_OP_MaxPool, 1, ((sm_tensor *[]){x}), 2,
                 ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
                       A_INTS("pads", 1, 1, 1, 1)),
                 CK_ONE(maxpool_indices), 0, 0, 0);
    }
    CK_CHECK(SM_OP_MaxPool, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 3, 11, 40), 5)}), 2,
             ATTRS(A_INTS("kernel_shape", 2, 3), A_INT("ceil_mode", 1),
                   A_INTS("dilations", 2, 1), A_INTS("pads", 0, 1, 1, 2),
                   A_INTS("strides", 2, 1)),
             CK_ONE(maxpool_indices), 0, 0, 0);
    CK_CHECK(SM_OP_MaxPool, 1,
             ((sm_tensor *[]){ck_rand(4, D(8, 16, 32, 32), 6)}), 2,
             ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2)),
             CK_ONE(maxpool_indices), 0, 0, 0);
    /* other windows' interiors (runs of outputs, selects per tap): 3x3
     * stride 2 pad 1 on rows of 301 outputs (two runs), ties, a NaN in
     * the second run of one row; 3x2 stride (1, 3) dilated (2, 2) */
    for (int v = 0; v < 2; v++) {
        sm_tensor *x = ck_rand(4, D(2, 3, 9, 601), 21 + (unsigned)v);
        float *p = x->data;
        for (int64_t i = 0; i < x->numel; i++)
            p[i] = floorf(p[i] * 3);
        p[601 * 4 + 520] = NAN;
        const sm_attr s2[] = {A_INTS("kernel_shape", 3, 3),
                              A_INTS("strides", 2, 2),
                              A_INTS("pads", 1, 1, 1, 1)};
        const sm_attr dil[] = {
            A_INTS("kernel_shape", 3, 2), A_INTS("strides", 1, 3),
            A_INTS("dilations", 2, 2), A_INTS("pads", 1, 1, 0, 1)};
        CK_CHECK(SM_OP_MaxPool, 1, ((sm_tensor *[]){x}), 2, v ? dil : s2,
                 v ? 4 : 3, CK_ONE(maxpool_indices), 0, 0, 0);
    }
    /* 2x2 windows (their interior runs unrolled): odd planes, overlapping
     * (stride 1), ceil_mode and padded borders, rows of 515 outputs
     * (over one block), ties and NaNs, each
     * against the reference */
    for (int v = 0; v < 7; v++) {
        /* 4 and 5: planes the window tiles exactly (one run of rows),
         * without and with NaNs */
        int64_t h = v == 4 ? 6 : v == 5 ? 4 : v == 6 ? 2 : 7 + v;
        int64_t w = v == 4 ? 8 : v == 5 ? 6 : v == 6 ? 1030 : 9 + 2 * v;
        sm_tensor *x = ck_rand(4, D(5, 3, h, w), 11 + (unsigned)v);
        float *p = x->data;
        for (int64_t i = 0; v >= 2 && i < x->numel; i++)
            p[i] = floorf(p[i] * 2);
        p[v * 7] = NAN;
        p[x->numel - 1 - v] = NAN;
        if (v == 4)
            p[v * 7] = p[x->numel - 1 - v] = 0.5f;
        int64_t st = v == 1 ? 1 : 2, pad = v == 3;
        CK_CHECK(SM_OP_MaxPool, 1, ((sm_tensor *[]){x}), 2,
                 ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", st, st),
                       A_INT("ceil_mode", v == 2),
                       A_INTS("pads", pad, pad, pad, pad)),
                 CK_ONE(maxpool_indices), 0, 0, 0);
    }
    /* storage_order 1 is the reference's */
    sm_tensor *in[1] = {nn_tensor(F32, 4, D(1, 1, 4, 4), NULL)};
    sm_tensor *out[2] = {nn_tensor(F32, 4, D(1, 1, 2, 2), NULL),
                         nn_tensor(I64, 4, D(1, 1, 2, 2), NULL)};
    assert_false(
        ck_supports(CK_ANY(maxpool_indices), SM_OP_MaxPool, 1, in, 2, out,
                    ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2),
                          A_INT("storage_order", 1))));
    sm_tensor_free(in[0]);
    sm_tensor_free(out[0]);
    sm_tensor_free(out[1]);
}

static void test_avgpool(void **state)
{
    (void)state;
    for (int inc = 0; inc < 2; inc++) {
        CK_CHECK(SM_OP_AveragePool, 1,
                 ((sm_tensor *[]){ck_rand(4, D(2, 3, 13, 19), 3)}), 1,
                 ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
                       A_INTS("pads", 1, 1, 1, 1),
                       A_INT("count_include_pad", inc)),
                 CK_ENTRIES(avgpool), 0, TOL);
        CK_CHECK(SM_OP_AveragePool, 1,
                 ((sm_tensor *[]){ck_rand(4, D(1, 2, 10, 33), 4)}), 1,
                 ATTRS(A_INTS("kernel_shape", 2, 5), A_INT("ceil_mode", 1),
                       A_INTS("pads", 1, 0, 0, 2), A_INTS("strides", 3, 1),
                       A_INT("count_include_pad", inc)),
                 CK_ENTRIES(avgpool), 0, TOL);
        /* small planes, stride 1: interior and border columns */
        CK_CHECK(SM_OP_AveragePool, 1,
                 ((sm_tensor *[]){ck_rand(4, D(1, 16, 8, 8), 5)}), 1,
                 ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("pads", 1, 1, 1, 1),
                       A_INT("count_include_pad", inc)),
                 CK_ENTRIES(avgpool), 0, TOL);
        /* a window wider than the input: no column has every tap inside */
        CK_CHECK(SM_OP_AveragePool, 1,
                 ((sm_tensor *[]){ck_rand(4, D(1, 3, 6, 4), 6)}), 1,
                 ATTRS(A_INTS("kernel_shape", 3, 5), A_INTS("pads", 1, 2, 1, 2),
                       A_INT("count_include_pad", inc)),
                 CK_ENTRIES(avgpool), 0, TOL);
        /* dilated; and more taps than one pass keeps (9 x 9) */
        CK_CHECK(SM_OP_AveragePool, 1,
                 ((sm_tensor *[]){ck_rand(4, D(1, 2, 12, 40), 7)}), 1,
                 ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("dilations", 2, 3),
                       A_INTS("pads", 2, 2, 2, 2),
                       A_INT("count_include_pad", inc)),
                 CK_ENTRIES(avgpool), 0, TOL);
        CK_CHECK(SM_OP_AveragePool, 1,
                 ((sm_tensor *[]){ck_rand(4, D(1, 2, 20, 21), 8)}), 1,
                 ATTRS(A_INTS("kernel_shape", 9, 9), A_INTS("pads", 4, 4, 4, 4),
                       A_INT("count_include_pad", inc)),
                 CK_ENTRIES(avgpool), 0, TOL);
    }
}

static void test_globalpool(void **state)
{
    (void)state;
    CK_CHECK(SM_OP_GlobalAveragePool, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 5, 7, 9), 5)}), 1, NO_ATTRS,
             CK_ENTRIES(gavgpool), 0, TOL);
    CK_CHECK(SM_OP_GlobalMaxPool, 1,
             ((sm_tensor *[]){ck_rand(4, D(3, 4, 1, 37), 6)}), 1, NO_ATTRS,
             CK_ENTRIES(gmaxpool), 0, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_maxpool_indices),
        cmocka_unit_test(test_avgpool),
        cmocka_unit_test(test_globalpool),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
