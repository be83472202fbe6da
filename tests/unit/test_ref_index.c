/*
 * test_ref_index.c - shape functions and reference kernels of the
 * indexing ops (Slice, Gather, Pad). Expected values are worked out by
 * hand.
 */
#include "ref_harness.h"

#define I64MAX INT64_MAX
#define I64MIN INT64_MIN

/* Slice of 0..9: negative indices, clamping, steps of either sign. */
static void test_slice_1d(void **state)
{
    (void)state;
    sm_op op = SM_OP_Slice;
#define SL(...) run1(op, NO_ATTRS, INS(iota(1, D(10)), __VA_ARGS__))
    expect(SL(L(1, 2), L(1, 5)), F32, 1, D(3), V(2, 3, 4), 0);
    /* from -3 to the end, as PyTorch exports x[-3:] */
    expect(SL(L(1, -3), L(1, I64MAX)), F32, 1, D(3), V(7, 8, 9), 0);
    /* ends past the end clamp; starts before the start clamp */
    expect(SL(L(1, 8), L(1, 100)), F32, 1, D(2), V(8, 9), 0);
    expect(SL(L(1, -100), L(1, 2)), F32, 1, D(2), V(0, 1), 0);
    /* the whole axis reversed, as PyTorch exports flip */
    expect(SL(L(1, -1), L(1, I64MIN), L(1, 0), L(1, -1)), F32, 1, D(10),
           V(9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 0);
    expect(SL(L(1, 8), L(1, 1), L(1, 0), L(1, -2)), F32, 1, D(4), V(8, 6, 4, 2),
           0);
    /* a reversed start past the end clamps to the last element */
    expect(SL(L(1, 100), L(1, 6), L(1, 0), L(1, -3)), F32, 1, D(1), V(9), 0);
    expect(SL(L(1, 0), L(1, 10), L(1, 0), L(1, 3)), F32, 1, D(4), V(0, 3, 6, 9),
           0);
    expect(SL(L(1, 1), L(1, I64MAX), L(1, 0), L(1, I64MAX)), F32, 1, D(1), V(1),
           0);
    expect(SL(L(1, -1), L(1, I64MIN), L(1, 0), L(1, I64MIN)), F32, 1, D(1),
           V(9), 0);
    /* empty: start after end */
    expect(SL(L(1, 5), L(1, 2)), F32, 1, D(0), NULL, 0);
    /* int32 starts and ends */
    expect(SL(ti(I32, 1, D(1), D(-2)), ti(I32, 1, D(1), D(10))), F32, 1, D(2),
           V(8, 9), 0);
#undef SL
}

static void test_slice_2d(void **state)
{
    (void)state;
    sm_op op = SM_OP_Slice;
    /* [[0..3],[4..7],[8..11]]: columns 1..2 */
    expect(run1(op, NO_ATTRS, INS(iota(2, D(3, 4)), L(1, 1), L(1, 3), L(1, 1))),
           F32, 2, D(3, 2), V(1, 2, 5, 6, 9, 10), 0);
    /* axes [-1, 0]: columns 3, 1 (step -2); rows 1..2 */
    expect(run1(op, NO_ATTRS,
                INS(iota(2, D(3, 4)), L(2, -1, 1), L(2, I64MIN, 3), L(2, -1, 0),
                    L(2, -2, 1))),
           F32, 2, D(2, 2), V(7, 5, 11, 9), 0);
    run_fail(op, NO_ATTRS,
             INS(iota(1, D(10)), L(1, 0), L(1, 5), L(1, 0), L(1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "step|0");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(3, 4)), L(2, 0, 0), L(2, 1, 1), L(2, 1, -1)), 1,
             SMELT_ERR_SHAPE, "repeated");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 4)), L(1, 0), L(1, 1), L(1, 2)), 1,
             SMELT_ERR_SHAPE, "axis 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 4)), L(1, 0), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "ends|2 values");
    infer(op, NO_ATTRS, 4, TYPES("f32[batch,10]", "i64[1]", "i64[1]", "i64[1]"),
          DATA(NULL, L(1, 2), L(1, 5), L(1, 1)), 1, "f32[batch,3]");
    infer(op, NO_ATTRS, 3, TYPES("f32[batch,10]", "i64[2]", "i64[2]"),
          DATA(NULL, L(2, 0, 0), L(2, I64MAX, 4)), 1, "f32[batch,4]");
    infer(op, NO_ATTRS, 5,
          TYPES("f32[batch,10]", "i64[1]", "i64[1]", "i64[1]", "i64[1]"),
          DATA(NULL, L(1, -1), L(1, I64MIN), L(1, 0), L(1, -1)), 1,
          "f32[batch,10]");
    infer(op, NO_ATTRS, 3, TYPES("f32[batch,10]", "i64[1]", "i64[1]"),
          DATA(NULL, L(1, 1), L(1, I64MAX)), 1, "f32[?,10]");
    infer(op, NO_ATTRS, 3, TYPES("f32[batch,10]", "i64[1]", "i64[1]"), NULL, 1,
          "f32[?,?]");
}

static void test_gather(void **state)
{
    (void)state;
    sm_op op = SM_OP_Gather;
    /* rows 2 and -3 (= 0) of [[1,2],[3,4],[5,6]] */
    expect(run1(op, NO_ATTRS,
                INS(tf(F32, 2, D(3, 2), V(1, 2, 3, 4, 5, 6)), L(2, 2, -3))),
           F32, 2, D(2, 2), V(5, 6, 1, 2), 0);
    /* axis 1, i32 indices [[0,2],[-1,1]] of [[1,2,3],[4,5,6]]:
     * out[i][j][k] = x[i][ind[j][k]] */
    expect(run1(op, ATTRS(a_int("axis", 1)),
                INS(tf(F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
                    ti(I32, 2, D(2, 2), D(0, 2, -1, 1)))),
           F32, 3, D(2, 2, 2), V(1, 3, 3, 2, 4, 6, 6, 5), 0);
    /* a scalar index drops the axis */
    expect(run1(op, NO_ATTRS,
                INS(tf(F32, 2, D(3, 2), V(1, 2, 3, 4, 5, 6)),
                    ti(I64, 0, NULL, D(1)))),
           F32, 1, D(2), V(3, 4), 0);
    expect_i(run1(op, ATTRS(a_int("axis", -1)),
                  INS(ti(I64, 1, D(3), D(7, 1LL << 60, 9)), L(2, 1, 1))),
             I64, 1, D(2), D(1LL << 60, 1LL << 60));
    expect(run1(op, NO_ATTRS, INS(iota(1, D(3)), L0())), F32, 1, D(0), NULL, 0);
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(2, 0, 3)), 1,
             SMELT_ERR_INVALID_ARG, "index 3|size 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(1, -4)), 1,
             SMELT_ERR_INVALID_ARG, "index -4|size 3");
    run_fail(op, ATTRS(a_int("axis", 2)), INS(iota(2, D(3, 2)), L(1, 0)), 1,
             SMELT_ERR_SHAPE, "axis 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), tf(F32, 1, D(1), V(0))), 1,
             SMELT_ERR_TYPE, "i32 or i64");
    infer(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[batch,16]", "i64[seq]"),
          NULL, 1, "f32[batch,seq]");
    infer(op, NO_ATTRS, 2, TYPES("f32[vocab,64]", "i64[batch,seq]"), NULL, 1,
          "f32[batch,seq,64]");
    infer(op, NO_ATTRS, 2, TYPES("f32[vocab,64]", "i64[]"), NULL, 1, "f32[64]");
    /* with the value known, range is checked even during inference */
    infer_fail(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[batch,16]", "i64[1]"),
               DATA(NULL, L(1, 16)), SMELT_ERR_INVALID_ARG, "index 16|size 16");
}

/* The kernel checks indices itself, whatever the shape function did. */
static void test_gather_kernel_check(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const sm_op_info *info = sm_op_info_get(SM_OP_Gather);
    sm_tensor *in[2] = {iota(1, D(3)), L(1, 5)};
    sm_tensor *y = iota(1, D(1));
    sm_kargs k = {.op_name = "Gather",
                  .attrs = {NULL, 0, info->spec, info->n_spec},
                  .n_in = 2,
                  .in = in,
                  .n_out = 1,
                  .out = &y,
                  .ctx = ctx};
    assert_int_equal(sm_ref_gather(&k), SMELT_ERR_RUNTIME);
    has_words(smelt_ctx_error(ctx), "Gather|index 5|size 3");
    sm_tensor_free(in[0]);
    sm_tensor_free(in[1]);
    sm_tensor_free(y);
    smelt_ctx_free(ctx);
}

static void test_pad(void **state)
{
    (void)state;
    sm_op op = SM_OP_Pad;
    /* [[1,2],[3,4]], pads: row before 1, column after 1, fill 9 */
    expect(run1(op, NO_ATTRS,
                INS(tf(F32, 2, D(2, 2), V(1, 2, 3, 4)), L(4, 1, 0, 0, 1),
                    tf(F32, 0, NULL, V(9)))),
           F32, 2, D(3, 3), V(9, 9, 9, 1, 2, 9, 3, 4, 9), 0);
    /* reflect [1,2,3] by 2 each side: 3 2 | 1 2 3 | 2 1 */
    expect(run1(op, ATTRS(a_str("mode", "reflect")),
                INS(tf(F32, 1, D(3), V(1, 2, 3)), L(2, 2, 2))),
           F32, 1, D(7), V(3, 2, 1, 2, 3, 2, 1), 0);
    /* reflect wider than the axis keeps bouncing (as numpy) */
    expect(run1(op, ATTRS(a_str("mode", "reflect")),
                INS(tf(F32, 1, D(3), V(1, 2, 3)), L(2, 5, 5))),
           F32, 1, D(13), V(2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2), 0);
    expect(run1(op, ATTRS(a_str("mode", "edge")),
                INS(tf(F32, 1, D(3), V(1, 2, 3)), L(2, 2, 1))),
           F32, 1, D(6), V(1, 1, 1, 2, 3, 3), 0);
    expect(run1(op, ATTRS(a_str("mode", "wrap")),
                INS(tf(F32, 1, D(3), V(1, 2, 3)), L(2, 1, 2))),
           F32, 1, D(6), V(3, 1, 2, 3, 1, 2), 0);
    /* edge on 2-D: corners take the corner element */
    expect(run1(op, ATTRS(a_str("mode", "edge")),
                INS(tf(F32, 2, D(2, 2), V(1, 2, 3, 4)), L(4, 1, 1, 0, 0))),
           F32, 2, D(3, 3), V(1, 1, 2, 1, 1, 2, 3, 3, 4), 0);
    /* a negative pad crops: drop 1 at the start, add 2 zeros */
    expect(run1(op, NO_ATTRS,
                INS(tf(F32, 1, D(5), V(1, 2, 3, 4, 5)), L(2, -1, 2))),
           F32, 1, D(6), V(2, 3, 4, 5, 0, 0), 0);
    /* crop then reflect: [1,2,3,4] less 2 at the end is [1,2], reflected
     * by 2 at the start: 1 2 | 1 2 */
    expect(run1(op, ATTRS(a_str("mode", "reflect")),
                INS(tf(F32, 1, D(4), V(1, 2, 3, 4)), L(2, 2, -2))),
           F32, 1, D(4), V(1, 2, 1, 2), 0);
    /* opset 18 axes: only the last axis, i64 fill */
    expect_i(run1(op, NO_ATTRS,
                  INS(ti(I64, 2, D(2, 3), D(1, 2, 3, 4, 5, 6)), L(2, 1, 1),
                      ti(I64, 0, NULL, D(-7)), L(1, -1))),
             I64, 2, D(2, 5), D(-7, 1, 2, 3, -7, -7, 4, 5, 6, -7));
}

static void test_pad_errors(void **state)
{
    (void)state;
    sm_op op = SM_OP_Pad;
    run_fail(op, ATTRS(a_str("mode", "mirror")), INS(iota(1, D(3)), L(2, 1, 1)),
             1, SMELT_ERR_INVALID_ARG, "unknown mode 'mirror'");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "pads|2 values|4");
    run_fail(op, ATTRS(a_str("mode", "reflect")),
             INS(tf(F32, 1, D(0), NULL), L(2, 1, 0)), 1, SMELT_ERR_INVALID_ARG,
             "empty axis 0");
    run_fail(op, NO_ATTRS, INS(iota(1, D(3)), L(2, -2, -2)), 1, SMELT_ERR_SHAPE,
             "crop more than axis 0");
    run_fail(op, NO_ATTRS,
             INS(iota(1, D(3)), L(2, 1, 1), ti(I64, 0, NULL, D(1))), 1,
             SMELT_ERR_TYPE, "constant_value is i64");
    run_fail(op, NO_ATTRS, INS(iota(1, D(3)), L(2, 1LL << 40, 0)), 1,
             SMELT_ERR_LIMIT, "Pad");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,3]", "i64[4]"),
          DATA(NULL, L(4, 0, 1, 0, 1)), 1, "f32[batch,5]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,3]", "i64[4]"),
          DATA(NULL, L(4, 1, 0, 0, 0)), 1, "f32[?,3]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,3]", "i64[4]"), NULL, 1,
          "f32[?,?]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_1d),
        cmocka_unit_test(test_slice_2d),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_gather_kernel_check),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_pad_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
