/*
 * test_ref_rnn.c - the recurrent ops (RNN, GRU, LSTM):
 * what tests/ops' generated cases do not reach: error paths of the shape
 * functions (right status, a message naming the op and the values), the
 * kernels' own re-checks when called without their shape function,
 * inference with symbolic and unknown dims, a few hand-computed values, and
 * allocation failures.
 */
#include "ref_harness.h"

#define NO_DATA NULL

static void test_rnn(void **state)
{
    (void)state;
    /* RNN, H = I = 1, W = 1, R = 0.5, no bias: h1 = tanh(1), h2 =
     * tanh(2 + 0.5 h1) */
    double h1 = tanh(1.0), h2 = tanh(2.0 + 0.5 * tanh(1.0));
    sm_tensor *out[3];
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(
        run(ctx, SM_OP_RNN, NO_ATTRS,
            INS(tf(F32, 3, D(2, 1, 1), V(1, 2)), tf(F32, 3, D(1, 1, 1), V(1)),
                tf(F32, 3, D(1, 1, 1), V(0.5))),
            2, out),
        SMELT_OK);
    expect(out[0], F32, 4, D(2, 1, 1, 1), V(h1, h2), 1e-6);
    expect(out[1], F32, 3, D(1, 1, 1), V(h2), 1e-6);
    smelt_ctx_free(ctx);
    sm_op op = SM_OP_GRU;
    run_fail(op, ATTRS(a_str("direction", "sideways")),
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_INVALID_ARG, "unknown direction 'sideways'");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 4, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "dim 1 of W is 4|expected 3");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 2)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "input size is 1|2");
    run_fail(op, ATTRS(a_str("direction", "bidirectional")),
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "direction dim of W is 1|expected 2");
    run_fail(op, ATTRS(a_int("hidden_size", 2)),
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "hidden size");
    const char *bad[] = {"Sigmoid", "Cube"};
    sm_attr acts = {.name = "activations", .kind = SM_ATTR_STRINGS, .n = 2};
    acts.v.strs = bad;
    run_fail(op, &acts, 1,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_INVALID_ARG, "unknown activation 'Cube'");
    acts.n = 1;
    run_fail(op, &acts, 1,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_INVALID_ARG, "name 2 functions|has 1");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1)),
                 NULL, ti(I32, 1, D(1), D(3))),
             2, SMELT_ERR_INVALID_ARG, "length 3 of batch 0|[0, 2]");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), zeros(I64, 3, D(1, 3, 1)),
                 iota(3, D(1, 3, 1))),
             2, SMELT_ERR_TYPE, "W is i64|X is f32");
    run_fail(SM_OP_LSTM, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 4, 1)), iota(3, D(1, 4, 1)),
                 NULL, NULL, NULL, NULL, iota(2, D(1, 2))),
             3, SMELT_ERR_SHAPE, "dim 1 of P is 2|expected 3");
    infer(op, NO_ATTRS, 3,
          TYPES("f32[seq,batch,4]", "f32[1,9,4]", "f32[1,9,3]"), NO_DATA, 2,
          "f32[seq,1,batch,3]|f32[1,batch,3]");
    infer(SM_OP_LSTM,
          ATTRS(a_int("layout", 1), a_str("direction", "bidirectional")), 3,
          TYPES("f32[b,s,4]", "f32[*]", "f32[*]"), NO_DATA, 3,
          "f32[b,s,2,?]|f32[b,2,?]|f32[b,2,?]");
    /* the kernel alone re-checks the shapes */
    sm_tensor *in[3] = {iota(3, D(2, 1, 1)), iota(3, D(1, 3, 2)),
                        iota(3, D(1, 3, 1))};
    sm_tensor *o[2] = {iota(4, D(2, 1, 1, 1)), iota(3, D(1, 1, 1))};
    kernel_fail(op, NO_ATTRS, 3, in, 2, o, SMELT_ERR_RUNTIME,
                "shapes do not agree");
    free_all(3, in);
    free_all(2, o);
}

static sm_tensor *make_gru(int i)
{
    static const int64_t dims[3][3] = {{3, 2, 2}, {1, 6, 2}, {1, 6, 2}};
    return iota(3, dims[i]);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_walk(SM_OP_GRU, NO_ATTRS, 2, make_gru, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rnn),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
