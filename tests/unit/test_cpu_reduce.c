/*
 * test_cpu_reduce.c - the optimized reduction kernels (kernels/cpu/reduce.c,
 * reduce_axes.c)
 * against the reference kernels, for every ISA entry this machine can run, on
 * odd sizes whose rows end in partial vectors, with 1, 2 and 3 threads.
 */
#include "cpu_harness.h"

#include "core/act.h"

#define TOL 1e-6, 2e-6

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

/* reduce_axes.c: axes that are not one run of dims, and constant axes
 * inputs with keepdims 0 (the backward pass's BatchNorm and bias sums). */
static void test_reduce_axes(void **state)
{
    (void)state;
    sm_op ops[4] = {SM_OP_ReduceSum, SM_OP_ReduceMean, SM_OP_ReduceMax,
                    SM_OP_ReduceMin};
    const sm_cpu_kernel *const *ks[4] = {
        CK_ENTRIES(reducesum_axes), CK_ENTRIES(reducemean_axes),
        CK_ENTRIES(reducemax_axes), CK_ENTRIES(reducemin_axes)};
    for (int o = 0; o < 4; o++) {
        for (int keep = 0; keep < 2; keep++) {
            /* NCHW over {0, 2, 3}: the channel kept in the middle */
            CK_CHECK(ops[o], 1,
                     ((sm_tensor *[]){ck_rand(4, D(3, 5, 7, 11), 11)}), 1,
                     ATTRS(A_INTS("axes", 0, 2, 3), A_INT("keepdims", keep)),
                     ks[o], 0, TOL);
            /* kept, reduced, kept, reduced; a size-1 dim between */
            CK_CHECK(ops[o], 1,
                     ((sm_tensor *[]){ck_rand(5, D(4, 3, 1, 6, 17), 12)}), 1,
                     ATTRS(A_INTS("axes", 1, -1), A_INT("keepdims", keep)),
                     ks[o], 0, TOL);
            /* a large innermost kept row split over the threads */
            CK_CHECK(ops[o], 1,
                     ((sm_tensor *[]){ck_rand(3, D(3, 7, 1600), 13)}), 1,
                     ATTRS(A_INTS("axes", 0, 1), A_INT("keepdims", keep)),
                     ks[o], 0, TOL);
            /* the same, the axes a constant input, and one run */
            CK_CHECK(ops[o], 2,
                     ((sm_tensor *[]){ck_rand(3, D(4, 9, 300), 14),
                                      nn_tensor(I64, 1, D(2), V(0, 1))}),
                     1, ATTRS(A_INT("keepdims", keep)), ks[o], 2, TOL);
            CK_CHECK(ops[o], 2,
                     ((sm_tensor *[]){ck_rand(3, D(4, 9, 30), 15),
                                      nn_tensor(I64, 1, D(2), V(2, 0))}),
                     1, ATTRS(A_INT("keepdims", keep)), ks[o], 2, TOL);
        }
        CK_CHECK(ops[o], 1, ((sm_tensor *[]){ck_rand(2, D(6, 5), 16)}), 1,
                 ATTRS(A_INT("noop_with_empty_axes", 1)), ks[o], 0, 0, 0);
    }
    /* an axes input that is not constant: its values are unknown */
    sm_tensor *in[2] = {nn_tensor(F32, 3, D(2, 3, 4), NULL),
                        nn_tensor(I64, 1, D(2), V(0, 2))};
    sm_tensor *out[1] = {nn_tensor(F32, 1, D(3), NULL)};
    assert_false(ck_supports(CK_K(reducesum_axes, scalar), SM_OP_ReduceSum, 2,
                             in, 1, out, NO_ATTRS));
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_reduce_axes),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
