/*
 * test_cpu_ops.c - the optimized pooling, normalization, elementwise,
 * reduction and transpose kernels (kernels/cpu) against the reference
 * kernels, for every ISA entry this machine can run, on odd sizes whose
 * rows end in partial vectors, with 1, 2 and 3 threads.
 */
#include "cpu_harness.h"

#include "core/act.h"

#define TOL 1e-6, 2e-6

/* ---- pooling ----------------------------------------------------------- */

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

/* ---- normalization ----------------------------------------------------- */

static void test_softmax(void **state)
{
    (void)state;
    static const int64_t n[] = {1, 5, 16, 17, 100, 1000};
    for (size_t i = 0; i < N_OF(n); i++) {
        CK_CHECK(SM_OP_Softmax, 1, ((sm_tensor *[]){ck_rand(2, D(3, n[i]), 7)}),
                 1, NO_ATTRS, CK_ENTRIES(softmax), 0, TOL);
        CK_CHECK(SM_OP_LogSoftmax, 1,
                 ((sm_tensor *[]){ck_rand(2, D(3, n[i]), 8)}), 1, NO_ATTRS,
                 CK_ENTRIES(logsoftmax), 0, TOL);
    }
    /* an inner axis: normalized across groups of 19 lanes */
    CK_CHECK(SM_OP_Softmax, 1, ((sm_tensor *[]){ck_rand(3, D(2, 7, 19), 9)}), 1,
             ATTRS(A_INT("axis", 1)), CK_ENTRIES(softmax), 0, TOL);
    CK_CHECK(SM_OP_LogSoftmax, 1, ((sm_tensor *[]){ck_rand(3, D(3, 4, 5), 10)}),
             1, ATTRS(A_INT("axis", 0)), CK_ENTRIES(logsoftmax), 0, TOL);
    /* large values: the maximum is subtracted first */
    sm_tensor *x = ck_rand(2, D(2, 33), 11);
    for (int64_t i = 0; i < x->numel; i++)
        ((float *)x->data)[i] *= 80.0f;
    CK_CHECK(SM_OP_Softmax, 1, ((sm_tensor *[]){x}), 1, NO_ATTRS,
             CK_ENTRIES(softmax), 0, TOL);
    /* large logits (1000 classes near 3e4 and near 1e7, spread over 10):
     * LogSoftmax is (x - max) - log(sum), exact to float rounding; the
     * old x - (max + log(sum)) rounded at the max's magnitude (1e-3 off
     * at 3e4, -1 for -0.862 at 1e7). Along the last axis and an inner one. */
    static const float big[] = {3e4f, 1e7f};
    for (size_t b = 0; b < N_OF(big); b++)
        for (int inner = 0; inner < 2; inner++) {
            sm_tensor *l = inner ? ck_rand(3, D(2, 1000, 3), 12)
                                 : ck_rand(2, D(4, 1000), 12);
            for (int64_t i = 0; i < l->numel; i++)
                ((float *)l->data)[i] = big[b] + 5.0f * ((float *)l->data)[i];
            sm_tensor *l2 = ck_rand(l->ndim, l->dims, 0);
            memcpy(l2->data, l->data, l->nbytes);
            const sm_attr ax[] = {A_INT("axis", 1)};
            CK_CHECK(SM_OP_LogSoftmax, 1, ((sm_tensor *[]){l}), 1, ax,
                     inner ? 1 : 0, CK_ENTRIES(logsoftmax), 0, 1e-5, 1e-6);
            CK_CHECK(SM_OP_Softmax, 1, ((sm_tensor *[]){l2}), 1, ax,
                     inner ? 1 : 0, CK_ENTRIES(softmax), 0, 1e-9, 1e-5);
        }
}

static void test_layernorm(void **state)
{
    (void)state;
    static const int64_t n[] = {1, 7, 16, 33, 768};
    for (size_t i = 0; i < N_OF(n); i++)
        CK_CHECK(
            SM_OP_LayerNormalization, 3,
            ((sm_tensor *[]){ck_rand(3, D(2, 3, n[i]), 12),
                             ck_rand(1, D(n[i]), 13), ck_rand(1, D(n[i]), 14)}),
            3, NO_ATTRS, CK_ENTRIES(layernorm), 0, 2e-6, 2e-5);
    /* axis 1 over [5, 6] with a 2-D scale, no bias, one output */
    CK_CHECK(
        SM_OP_LayerNormalization, 2,
        ((sm_tensor *[]){ck_rand(3, D(4, 5, 6), 15), ck_rand(2, D(5, 6), 16)}),
        1, ATTRS(A_INT("axis", 1), A_FLOAT("epsilon", 1e-3)),
        CK_ENTRIES(layernorm), 0, 2e-6, 2e-5);
}

/* ---- elementwise ------------------------------------------------------- */

static void unary_case(sm_op op, const sm_cpu_kernel *const *ks,
                       const sm_attr *al, int n_al, int positive)
{
    static const int64_t n[] = {1, 15, 16, 17, 100003};
    for (size_t i = 0; i < N_OF(n); i++) {
        sm_tensor *x = ck_rand(1, D(n[i]), (unsigned)i);
        for (int64_t j = 0; j < x->numel; j++) {
            float *p = (float *)x->data + j;
            *p = positive ? fabsf(*p) * 4 + 0.01f : *p * 6;
        }
        CK_CHECK(op, 1, ((sm_tensor *[]){x}), 1, al, n_al, ks, 0, 1e-6, 2e-6);
    }
}

static void test_unary(void **state)
{
    (void)state;
    unary_case(SM_OP_Relu, CK_ENTRIES(relu), NO_ATTRS, 0);
    unary_case(SM_OP_Sigmoid, CK_ENTRIES(sigmoid), NO_ATTRS, 0);
    unary_case(SM_OP_Tanh, CK_ENTRIES(tanh), NO_ATTRS, 0);
    unary_case(SM_OP_LeakyRelu, CK_ENTRIES(leakyrelu),
               ATTRS(A_FLOAT("alpha", 0.2)), 0);
    unary_case(SM_OP_Gelu, CK_ENTRIES(gelu), NO_ATTRS, 0);
    unary_case(SM_OP_Gelu, CK_ENTRIES(gelu),
               ATTRS(A_STR("approximate", "tanh")), 0);
    unary_case(SM_OP_Exp, CK_ENTRIES(exp), NO_ATTRS, 0);
    unary_case(SM_OP_Neg, CK_ENTRIES(neg), NO_ATTRS, 0);
    unary_case(SM_OP_Abs, CK_ENTRIES(abs), NO_ATTRS, 0);
    unary_case(SM_OP_Sqrt, CK_ENTRIES(sqrt), NO_ATTRS, 1);
    unary_case(SM_OP_Erf, CK_ENTRIES(erf), NO_ATTRS, 0);
    unary_case(SM_OP_Reciprocal, CK_ENTRIES(reciprocal), NO_ATTRS, 1);
    /* Clip with both bounds, with only a lower one */
    CK_CHECK(SM_OP_Clip, 3,
             ((sm_tensor *[]){ck_rand(2, D(3, 37), 1),
                              nn_tensor(F32, 0, NULL, V(-0.5)),
                              nn_tensor(F32, 0, NULL, V(0.25))}),
             1, NO_ATTRS, CK_ENTRIES(clip), 0, 0, 0);
    CK_CHECK(
        SM_OP_Clip, 2,
        ((sm_tensor *[]){ck_rand(1, D(21), 2), nn_tensor(F32, 0, NULL, V(0))}),
        1, NO_ATTRS, CK_ENTRIES(clip), 0, 0, 0);
}

/* Infinities, NaN, overflow and underflow give what the reference gives
 * (exp(100) = inf, exp(-100) ~ 0, tanh(inf) = 1, NaN stays NaN). */
static void test_unary_special(void **state)
{
    (void)state;
    static const double v[] = {-INFINITY, -100, -88.7,    -1e-30, 0,
                               88.7,      100,  INFINITY, NAN,    0.5};
    struct {
        sm_op op;
        const sm_cpu_kernel *const *ks;
    } ops[] = {{SM_OP_Exp, CK_ENTRIES(exp)},
               {SM_OP_Sigmoid, CK_ENTRIES(sigmoid)},
               {SM_OP_Tanh, CK_ENTRIES(tanh)},
               {SM_OP_Erf, CK_ENTRIES(erf)},
               {SM_OP_Relu, CK_ENTRIES(relu)}};
    for (size_t i = 0; i < N_OF(ops); i++)
        CK_CHECK(ops[i].op, 1,
                 ((sm_tensor *[]){nn_tensor(F32, 1, D(N_OF(v)), v)}), 1,
                 NO_ATTRS, ops[i].ks, 0, 1e-6, 2e-6);
}

/* Broadcast patterns: same shape, row vector, column vector, scalar,
 * scalar first, outer products, per-channel [1,C,1,1]. */
static void test_binary(void **state)
{
    (void)state;
    struct {
        int ra;
        const int64_t *a;
        int rb;
        const int64_t *b;
    } cs[] = {
        {2, D(5, 37), 2, D(5, 37)},
        {2, D(5, 37), 1, D(37)},
        {2, D(5, 37), 2, D(5, 1)},
        {2, D(5, 37), 0, NULL},
        {0, NULL, 2, D(3, 17)},
        {2, D(9, 1), 2, D(1, 23)},
        {4, D(2, 6, 5, 7), 4, D(1, 6, 1, 1)},
        {3, D(4, 1, 33), 2, D(3, 1)},
        {1, D(70000), 1, D(70000)},
    };
    sm_op ops[6] = {SM_OP_Add, SM_OP_Sub, SM_OP_Mul,
                    SM_OP_Div, SM_OP_Max, SM_OP_Min};
    const sm_cpu_kernel *const *ks[6] = {CK_ENTRIES(add), CK_ENTRIES(sub),
                                         CK_ENTRIES(mul), CK_ENTRIES(div),
                                         CK_ENTRIES(max), CK_ENTRIES(min)};
    for (int o = 0; o < 6; o++)
        for (size_t c = 0; c < N_OF(cs); c++) {
            sm_tensor *b = ck_rand(cs[c].rb, cs[c].b, 2);
            if (ops[o] == SM_OP_Div) /* keep divisors away from 0 */
                for (int64_t i = 0; i < b->numel; i++)
                    ((float *)b->data)[i] += ((float *)b->data)[i] < 0 ? -1 : 1;
            CK_CHECK(ops[o], 2,
                     ((sm_tensor *[]){ck_rand(cs[c].ra, cs[c].a, 1), b}), 1,
                     NO_ATTRS, ks[o], 0, 1e-7, 1e-6);
        }
}

/* ---- reductions -------------------------------------------------------- */

static void test_reduce(void **state)
{
    (void)state;
    sm_op ops[4] = {SM_OP_ReduceSum, SM_OP_ReduceMean, SM_OP_ReduceMax,
                    SM_OP_ReduceMin};
    const sm_cpu_kernel *const *ks[4] = {
        CK_ENTRIES(reducesum), CK_ENTRIES(reducemean), CK_ENTRIES(reducemax),
        CK_ENTRIES(reducemin)};
    for (int o = 0; o < 4; o++) {
        for (int keep = 0; keep < 2; keep++) {
            /* last axis, middle axes, first axis, everything */
            CK_CHECK(ops[o], 1, ((sm_tensor *[]){ck_rand(3, D(3, 4, 37), 1)}),
                     1, ATTRS(A_INTS("axes", -1), A_INT("keepdims", keep)),
                     ks[o], 0, TOL);
            CK_CHECK(ops[o], 1,
                     ((sm_tensor *[]){ck_rand(4, D(2, 3, 5, 19), 2)}), 1,
                     ATTRS(A_INTS("axes", 1, 2), A_INT("keepdims", keep)),
                     ks[o], 0, TOL);
            CK_CHECK(ops[o], 1, ((sm_tensor *[]){ck_rand(2, D(9, 21), 3)}), 1,
                     ATTRS(A_INTS("axes", 0), A_INT("keepdims", keep)), ks[o],
                     0, TOL);
            CK_CHECK(ops[o], 1, ((sm_tensor *[]){ck_rand(2, D(9, 21), 4)}), 1,
                     ATTRS(A_INT("keepdims", keep)), ks[o], 0, TOL);
        }
        /* axes as an input (opset 18), and noop_with_empty_axes */
        CK_CHECK(ops[o], 2,
                 ((sm_tensor *[]){ck_rand(3, D(6, 5, 4), 5),
                                  nn_tensor(I64, 1, D(1), V(1))}),
                 1, NO_ATTRS, ks[o], 0, TOL);
        CK_CHECK(ops[o], 1, ((sm_tensor *[]){ck_rand(2, D(6, 5), 6)}), 1,
                 ATTRS(A_INT("noop_with_empty_axes", 1)), ks[o], 0, 0, 0);
    }
    /* axes {0, 2} are not one run: left to the reference */
    sm_tensor *in[1] = {nn_tensor(F32, 3, D(2, 3, 4), NULL)};
    sm_tensor *out[1] = {nn_tensor(F32, 3, D(1, 3, 1), NULL)};
    assert_false(ck_supports(CK_K(reducesum, scalar), SM_OP_ReduceSum, 1, in, 1,
                             out, ATTRS(A_INTS("axes", 0, 2))));
    sm_tensor_free(in[0]);
    sm_tensor_free(out[0]);
}

/* ---- transpose --------------------------------------------------------- */

static void test_transpose(void **state)
{
    (void)state;
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(2, D(37, 19), 1)}), 1,
             NO_ATTRS, CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 5, 3, 17), 2)}), 1,
             ATTRS(A_INTS("perm", 0, 2, 1, 3)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 5, 3, 17), 3)}), 1,
             ATTRS(A_INTS("perm", 3, 1, 0, 2)), CK_ENTRIES(transpose), 0, 0, 0);
    /* attention's [B, S, H, D] -> [B, H, S, D] and -> [B, H, D, S] */
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 33, 4, 16), 4)}), 1,
             ATTRS(A_INTS("perm", 0, 2, 3, 1)), CK_ENTRIES(transpose), 0, 0, 0);
    /* the last two dims swapped over several tiles with ragged edges
     * (4 x 4 register blocks and the rest), and BERT's key transpose */
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(3, D(3, 45, 70), 6)}),
             1, ATTRS(A_INTS("perm", 0, 2, 1)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(3, D(32, 8, 64), 7)}),
             1, ATTRS(A_INTS("perm", 1, 2, 0)), CK_ENTRIES(transpose), 0, 0, 0);
    /* rows kept whole, long (a memcpy each) and short (inline), enough
     * of them to split over the threads */
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(3, D(3, 40, 300), 8)}), 1,
             ATTRS(A_INTS("perm", 1, 0, 2)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(8, 8, 16, 48), 9)}), 1,
             ATTRS(A_INTS("perm", 2, 0, 1, 3)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(3, D(1, 40, 1), 5)}),
             1, ATTRS(A_INTS("perm", 2, 0, 1)), CK_ENTRIES(transpose), 0, 0, 0);
    /* a bad perm is refused */
    sm_tensor *in[1] = {nn_tensor(F32, 2, D(2, 3), NULL)};
    sm_tensor *out[1] = {nn_tensor(F32, 2, D(3, 2), NULL)};
    assert_false(ck_supports(CK_K(transpose, scalar), SM_OP_Transpose, 1, in, 1,
                             out, ATTRS(A_INTS("perm", 1, 1))));
    sm_tensor_free(in[0]);
    sm_tensor_free(out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maxpool),       cmocka_unit_test(test_avgpool),
        cmocka_unit_test(test_globalpool),    cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_layernorm),     cmocka_unit_test(test_unary),
        cmocka_unit_test(test_unary_special), cmocka_unit_test(test_binary),
        cmocka_unit_test(test_reduce),        cmocka_unit_test(test_transpose),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
