/*
 * test_cpu_matmul.c - the optimized MatMul, Gemm and FusedGemm kernels
 * (kernels/cpu/matmul.c) through their registry entries against the
 * reference: batching and broadcasting, transposes, prepacked constant
 * operands, the fused epilogues; and what they refuse.
 */
#include "cpu_harness.h"

#include "core/act.h"

/* ---- MatMul, Gemm, FusedGemm through the registry --------------------- */

#define MM_TOL(k) 2e-6 * (double)((k) + 1), 1e-5

static void test_matmul_op(void **state)
{
    (void)state;
    static const int64_t sz[][3] = {
        {1, 1, 1}, {3, 5, 7}, {17, 33, 15}, {64, 31, 100}, {2, 130, 9}};
    for (size_t s = 0; s < N_OF(sz); s++) {
        int64_t M = sz[s][0], N = sz[s][1], K = sz[s][2];
        for (unsigned mask = 0; mask < 3; mask += 2)
            CK_CHECK(SM_OP_MatMul, 2,
                     ((sm_tensor *[]){ck_rand(2, D(M, K), 1),
                                      ck_rand(2, D(K, N), 2)}),
                     1, NO_ATTRS, CK_ENTRIES(matmul), mask, MM_TOL(K));
    }
    /* batched with broadcasting, constant B with its own batch dims */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(4, D(2, 1, 3, 4), 3),
                              ck_rand(3, D(5, 4, 19), 4)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(4));
    /* batch folded into M: [2,3,9,20] x [20,21] */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(4, D(2, 3, 9, 20), 5),
                              ck_rand(2, D(20, 21), 6)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(20));
    /* B broadcast over A's batch but B batched: [3,1,5,6] x [1,2,6,7] */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(4, D(3, 1, 5, 6), 7),
                              ck_rand(4, D(1, 2, 6, 7), 8)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 0, MM_TOL(6));
    /* 1-D operands */
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(1, D(9), 9), ck_rand(3, D(2, 9, 5), 10)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 0, MM_TOL(9));
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(2, D(4, 9), 11), ck_rand(1, D(9), 12)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(9));
    CK_CHECK(SM_OP_MatMul, 2,
             ((sm_tensor *[]){ck_rand(1, D(33), 13), ck_rand(1, D(33), 14)}), 1,
             NO_ATTRS, CK_ENTRIES(matmul), 0, MM_TOL(33));
}

static void test_gemm_op(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int64_t M = 13, N = 35, K = 21;
            const int64_t *ad = ta ? D(K, M) : D(M, K);
            const int64_t *bd = tb ? D(N, K) : D(K, N);
            /* C as [N], [M,1], scalar, [M,N] */
            const int64_t *cd[4] = {D(N), D(M, 1), D(1), D(M, N)};
            int cr[4] = {1, 2, 0, 2};
            int c = ta * 2 + tb;
            CK_CHECK(SM_OP_Gemm, 3,
                     ((sm_tensor *[]){ck_rand(2, ad, 1), ck_rand(2, bd, 2),
                                      ck_rand(cr[c], cd[c], 3)}),
                     1,
                     ATTRS(A_INT("transA", ta), A_INT("transB", tb),
                           A_FLOAT("alpha", 0.5), A_FLOAT("beta", -2)),
                     CK_ENTRIES(matmul), 2, MM_TOL(K));
        }
    /* no C */
    CK_CHECK(SM_OP_Gemm, 2,
             ((sm_tensor *[]){ck_rand(2, D(6, 8), 4), ck_rand(2, D(8, 3), 5)}),
             1, NO_ATTRS, CK_ENTRIES(matmul), 2, MM_TOL(8));
}

static void test_fusedgemm_op(void **state)
{
    (void)state;
    for (int act = 0; act < SM_ACT_COUNT; act++) {
        sm_attr al[3] = {A_STR("activation", sm_act_name((sm_act_kind)act)),
                         A_FLOAT("activation_alpha", -0.25),
                         A_FLOAT("activation_beta", 0.5)};
        int n_al = act == SM_ACT_CLIP ? 3 : act == SM_ACT_LEAKYRELU ? 2 : 1;
        /* batched MatMul form with bias [N] and residual [B, M, N] */
        CK_CHECK(SM_OP_FusedGemm, 4,
                 ((sm_tensor *[]){
                     ck_rand(3, D(2, 9, 17), 1), ck_rand(2, D(17, 40), 2),
                     ck_rand(1, D(40), 3), ck_rand(3, D(2, 9, 40), 4)}),
                 1, al, n_al, CK_ENTRIES(matmul), 2, MM_TOL(17));
    }
    /* Gemm form: transB, alpha, C [M, 1], residual [1, N] */
    CK_CHECK(SM_OP_FusedGemm, 4,
             ((sm_tensor *[]){ck_rand(2, D(5, 11), 5), ck_rand(2, D(33, 11), 6),
                              ck_rand(2, D(5, 1), 7), ck_rand(2, D(1, 33), 8)}),
             1,
             ATTRS(A_INT("transB", 1), A_FLOAT("alpha", 2),
                   A_STR("activation", "relu")),
             CK_ENTRIES(matmul), 2, MM_TOL(11));
    /* residual per batch broadcast over M: [2,1,N] onto [2,M,N] */
    CK_CHECK(
        SM_OP_FusedGemm, 4,
        ((sm_tensor *[]){ck_rand(3, D(2, 6, 7), 9), ck_rand(2, D(7, 20), 10),
                         NULL, ck_rand(3, D(2, 1, 20), 11)}),
        1, ATTRS(A_STR("activation", "silu")), CK_ENTRIES(matmul), 2,
        MM_TOL(7));
}

/* What the kernels leave to the reference: integer MatMul, f64 Gemm, a
 * FusedGemm with 1-D operands and a residual. */
static void test_matmul_refusals(void **state)
{
    (void)state;
    sm_tensor *in[2] = {nn_tensor(I32, 2, D(2, 3), NULL),
                        nn_tensor(I32, 2, D(3, 2), NULL)};
    sm_tensor *out[1] = {nn_tensor(I32, 2, D(2, 2), NULL)};
    assert_false(ck_supports(CK_K(matmul, scalar), SM_OP_MatMul, 2, in, 1, out,
                             NO_ATTRS));
    sm_tensor_free(in[0]);
    sm_tensor_free(in[1]);
    sm_tensor_free(out[0]);
    sm_tensor *in4[4] = {nn_tensor(F32, 1, D(3), NULL),
                         nn_tensor(F32, 2, D(3, 2), NULL), NULL,
                         nn_tensor(F32, 1, D(2), NULL)};
    out[0] = nn_tensor(F32, 1, D(2), NULL);
    assert_false(ck_supports(CK_K(matmul, scalar), SM_OP_FusedGemm, 4, in4, 1,
                             out, NO_ATTRS));
    /* a run on shapes that do not fit reports the op */
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_kargs ka = {.op_name = "MatMul",
                   .n_in = 2,
                   .in = in4,
                   .n_out = 1,
                   .out = out,
                   .ctx = ctx};
    sm_tensor_free(in4[1]);
    in4[1] = nn_tensor(F32, 2, D(4, 2), NULL); /* K = 3 against 4 */
    const sm_op_info *info = sm_op_info_get(SM_OP_MatMul);
    ka.attrs = (sm_attrs){NULL, 0, info->spec, info->n_spec};
    sm_cpu_config cfg = {SM_CPU_ALGO_GEMM, 0, 0, {0}, 0};
    assert_int_equal(
        sm_cpu_kernel_run(CK_K(matmul, scalar), &ka, &cfg, NULL, NULL),
        SMELT_ERR_RUNTIME);
    nn_has_words(smelt_ctx_error(ctx), "MatMul|do not fit");
    smelt_ctx_free(ctx);
    for (int i = 0; i < 4; i++)
        sm_tensor_free(in4[i]);
    sm_tensor_free(out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_op),
        cmocka_unit_test(test_gemm_op),
        cmocka_unit_test(test_fusedgemm_op),
        cmocka_unit_test(test_matmul_refusals),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
