/*
 * test_cpu_scatter.c - ScatterElements's CPU kernel (kernels/cpu/scatter.c)
 * against the reference, exactly: every axis of a 3-D tensor, 1-D (the
 * MaxPool gradient's form), reduction none and add, repeated and
 * negative indices, int32 indices; an out-of-range index is the
 * reference's error, and other reductions stay the reference's.
 */
#include "cpu_harness.h"

#define EXACT 0, 0

/* Indices of dims[] in [-n, n) by a fixed pattern (repeats, negatives). */
static sm_tensor *idx(smelt_dtype dt, int r, const int64_t *dims, int64_t n)
{
    sm_tensor *t = nn_tensor(dt, r, dims, NULL);
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(dt, t->data, i, (double)((i * 7 + 3) % (2 * n) - n));
    return t;
}

static void test_scatterelements(void **state)
{
    (void)state;
    for (int red = 0; red < 2; red++) {
        const char *rs = red ? "add" : "none";
        for (int axis = 0; axis < 3; axis++) {
            int64_t x[3] = {4, 5, 6}, u[3] = {3, 4, 5};
            u[axis] = 7;
            CK_CHECK(SM_OP_ScatterElements, 3,
                     ((sm_tensor *[]){ck_rand(3, x, 1), idx(I64, 3, u, x[axis]),
                                      ck_rand(3, u, 2)}),
                     1, ATTRS(A_INT("axis", axis), A_STR("reduction", rs)),
                     CK_ONE(scatterelements), 0, EXACT);
        }
        CK_CHECK(
            SM_OP_ScatterElements, 3,
            ((sm_tensor *[]){ck_rand(1, D(300), 3), idx(I32, 1, D(500), 300),
                             ck_rand(1, D(500), 4)}),
            1, ATTRS(A_STR("reduction", rs)), CK_ONE(scatterelements), 0,
            EXACT);
        /* 1-D with int64 indices (the MaxPool gradient's form, read
         * directly): repeats and negatives, sizes off a vector's width */
        for (int64_t n = 1; n <= 257; n += 64)
            CK_CHECK(SM_OP_ScatterElements, 3,
                     ((sm_tensor *[]){ck_rand(1, D(n), 7),
                                      idx(I64, 1, D(2 * n + 1), n),
                                      ck_rand(1, D(2 * n + 1), 8)}),
                     1, ATTRS(A_STR("reduction", rs)), CK_ONE(scatterelements),
                     0, EXACT);
    }
    /* an index out of range (here on the 1-D int64 form): the reference's
     * error, nothing written */
    sm_tensor *in[3] = {ck_rand(1, D(4), 5), nn_tensor(I64, 1, D(1), V(4)),
                        ck_rand(1, D(1), 6)};
    sm_tensor *out = nn_tensor(F32, 1, D(4), NULL);
    const sm_op_info *info = sm_op_info_get(SM_OP_ScatterElements);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_kargs ka = {.op_name = "ScatterElements",
                   .attrs = {NULL, 0, info->spec, info->n_spec},
                   .n_in = 3,
                   .in = in,
                   .n_out = 1,
                   .out = &out,
                   .ctx = ctx};
    sm_cpu_config cfg = {0};
    assert_int_not_equal(
        sm_cpu_kernel_run(CK_ANY(scatterelements), &ka, &cfg, NULL, NULL),
        SMELT_OK);
    assert_non_null(strstr(smelt_ctx_error(ctx), "ScatterElements"));
    smelt_ctx_free(ctx);
    /* reduction mul is the reference's */
    assert_false(ck_supports(CK_ANY(scatterelements), SM_OP_ScatterElements, 3,
                             in, 1, &out, ATTRS(A_STR("reduction", "mul"))));
    for (int i = 0; i < 3; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scatterelements),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
