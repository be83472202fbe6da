/*
 * test_cpu_norm.c - the optimized normalization kernels (kernels/cpu/norm.c)
 * against the reference kernels, for every ISA entry this machine can run, on
 * odd sizes whose rows end in partial vectors, with 1, 2 and 3 threads.
 */
#include "cpu_harness.h"

#include "core/act.h"

#define TOL 1e-6, 2e-6

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

/* norm_batch.c: BatchNormalization with the batch's statistics and the
 * running ones as outputs (training_mode), and with given statistics;
 * ranks 2 to 4, one image and several, a copy large enough to split
 * over the pool. The variance input is made positive. */
static void test_batchnorm(void **state)
{
    (void)state;
    struct {
        int r;
        const int64_t *x;
        int64_t c;
    } cs[] = {{4, D(3, 5, 7, 9), 5},
              {2, D(6, 11), 11},
              {3, D(1, 4, 33), 4},
              {4, D(8, 16, 16, 16), 16}};
    for (size_t i = 0; i < N_OF(cs); i++)
        for (int train = 0; train < 2; train++) {
            sm_tensor *var = ck_rand(1, (int64_t[]){cs[i].c}, 25);
            for (int64_t k = 0; k < var->numel; k++)
                ((float *)var->data)[k] = fabsf(((float *)var->data)[k]) + 0.5f;
            CK_CHECK(
                SM_OP_BatchNormalization, 5,
                ((sm_tensor *[]){ck_rand(cs[i].r, cs[i].x, 21),
                                 ck_rand(1, (int64_t[]){cs[i].c}, 22),
                                 ck_rand(1, (int64_t[]){cs[i].c}, 23),
                                 ck_rand(1, (int64_t[]){cs[i].c}, 24), var}),
                train ? 3 : 1,
                ATTRS(A_INT("training_mode", train), A_FLOAT("momentum", 0.8)),
                CK_ONE(batchnorm), 0, 2e-6, 2e-5);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_batchnorm),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
