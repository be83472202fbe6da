/*
 * test_ref_reshape.c - shape functions and reference kernel of the ops
 * that view the same bytes under another shape: Reshape, Flatten,
 * Squeeze, Unsqueeze. Expected values are worked out by hand.
 */
#include "ref_harness.h"

#define IOTA6 V(0, 1, 2, 3, 4, 5)
#define IOTA24                                                                 \
    V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,    \
      20, 21, 22, 23)

/* Reshape keeps the row-major order; 0 copies, -1 is inferred. */
static void test_reshape(void **state)
{
    (void)state;
    sm_op op = SM_OP_Reshape;
    expect(run1(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, 3, -1))), F32, 2,
           D(3, 2), IOTA6, 0);
    /* 0 copies dim 0 (2); -1 = 24 / 2 */
    expect(run1(op, NO_ATTRS, INS(iota(3, D(2, 3, 4)), L(2, 0, -1))), F32, 2,
           D(2, 12), IOTA24, 0);
    /* -1 in the middle: 24 / (4 * 2) = 3 */
    expect(run1(op, NO_ATTRS, INS(iota(3, D(2, 3, 4)), L(3, 4, -1, 2))), F32, 3,
           D(4, 3, 2), IOTA24, 0);
    /* to a scalar and back */
    expect(run1(op, NO_ATTRS, INS(tf(F32, 1, D(1), V(7)), L0())), F32, 0, NULL,
           V(7), 0);
    /* allowzero=1: a 0 is a real zero-size dim */
    expect(run1(op, ATTRS(a_int("allowzero", 1)),
                INS(tf(F32, 2, D(0, 3), NULL), L(2, 3, 0))),
           F32, 2, D(3, 0), NULL, 0);
    /* int64 stays exact through the byte copy */
    expect_i(run1(op, NO_ATTRS,
                  INS(ti(I64, 2, D(2, 1), D(1LL << 60, -3)), L(1, -1))),
             I64, 1, D(2), D(1LL << 60, -3));
}

static void test_reshape_errors(void **state)
{
    (void)state;
    sm_op op = SM_OP_Reshape;
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, 4, 2)), 1,
             SMELT_ERR_SHAPE, "f32[2,3]|[4,2]|element counts");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, 4, -1)), 1,
             SMELT_ERR_SHAPE, "[4,-1]");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, -1, -1)), 1,
             SMELT_ERR_SHAPE, "more than one -1");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, -2, 3)), 1,
             SMELT_ERR_SHAPE, "invalid dimension -2");
    run_fail(op, NO_ATTRS, INS(iota(1, D(6)), L(2, 6, 0)), 1, SMELT_ERR_SHAPE,
             "0 at position 1");
    /* [0,5] into [0,-1]: the -1 could be anything */
    run_fail(op, NO_ATTRS, INS(tf(F32, 2, D(0, 5), NULL), L(2, 0, -1)), 1,
             SMELT_ERR_SHAPE, "cannot infer the -1");
    run_fail(op, ATTRS(a_int("allowzero", 1)),
             INS(tf(F32, 2, D(0, 5), NULL), L(2, 0, -1)), 1,
             SMELT_ERR_INVALID_ARG, "allowzero");
    run_fail(op, NO_ATTRS, INS(iota(1, D(4)), ti(F32, 1, D(2), D(2, 2))), 1,
             SMELT_ERR_TYPE, "integer");
}

static void test_reshape_infer(void **state)
{
    (void)state;
    sm_op op = SM_OP_Reshape;
    /* batch*4*8 / batch = 32 */
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,4,8]", "i64[2]"),
          DATA(NULL, L(2, 0, -1)), 1, "f32[batch,32]");
    /* batch*32 / (4*8) = batch */
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,32]", "i64[3]"),
          DATA(NULL, L(3, -1, 4, 8)), 1, "f32[batch,4,8]");
    /* two symbols left over: not solvable */
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,seq,8]", "i64[2]"),
          DATA(NULL, L(2, 0, -1)), 1, "f32[batch,?]");
    /* value unknown, length known: rank only */
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,4]", "i64[3]"), NULL, 1,
          "f32[?,?,?]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,4]", "i64[n]"), NULL, 1, "f32[*]");
    infer(op, NO_ATTRS, 2, TYPES("f32[*]", "i64[2]"), DATA(NULL, L(2, 0, 5)), 1,
          "f32[?,5]");
    /* batch*4 cannot equal 3*(anything*...) -1 that does not divide */
    infer_fail(op, NO_ATTRS, 2, TYPES("f32[batch,4,6]", "i64[3]"),
               DATA(NULL, L(3, 0, 5, -1)), SMELT_ERR_SHAPE, "element counts");
    /* a shape whose product overflows int64 */
    infer_fail(op, NO_ATTRS, 2, TYPES("f32[batch]", "i64[3]"),
               DATA(NULL, L(3, 1LL << 40, 1LL << 40, 1LL << 40)),
               SMELT_ERR_LIMIT, "overflows");
}

static void test_flatten(void **state)
{
    (void)state;
    sm_op op = SM_OP_Flatten;
    expect(run1(op, NO_ATTRS, INS(iota(3, D(2, 3, 4)))), F32, 2, D(2, 12),
           IOTA24, 0);
    expect(run1(op, ATTRS(a_int("axis", -1)), INS(iota(3, D(2, 3, 4)))), F32, 2,
           D(6, 4), IOTA24, 0);
    expect(run1(op, ATTRS(a_int("axis", 0)), INS(iota(3, D(2, 3, 4)))), F32, 2,
           D(1, 24), IOTA24, 0);
    expect(run1(op, ATTRS(a_int("axis", 3)), INS(iota(3, D(2, 3, 4)))), F32, 2,
           D(24, 1), IOTA24, 0);
    run_fail(op, ATTRS(a_int("axis", 4)), INS(iota(3, D(2, 3, 4))), 1,
             SMELT_ERR_SHAPE, "axis 4|rank 3");
    run_fail(op, ATTRS(a_int("axis", -4)), INS(iota(3, D(2, 3, 4))), 1,
             SMELT_ERR_SHAPE, "axis -4");
    infer(op, NO_ATTRS, 1, TYPES("f32[batch,3,4]"), NULL, 1, "f32[batch,12]");
    infer(op, ATTRS(a_int("axis", 2)), 1, TYPES("f32[batch,3,4]"), NULL, 1,
          "f32[?,4]");
    infer(op, ATTRS(a_int("axis", 1)), 1, TYPES("f32[0,n]"), NULL, 1,
          "f32[0,n]");
    infer(op, NO_ATTRS, 1, TYPES("f32[*]"), NULL, 1, "f32[?,?]");
}

static void test_squeeze(void **state)
{
    (void)state;
    sm_op op = SM_OP_Squeeze;
    /* no axes: every 1 goes */
    expect(run1(op, NO_ATTRS, INS(iota(4, D(1, 3, 1, 2)))), F32, 2, D(3, 2),
           IOTA6, 0);
    /* older opsets: attribute */
    expect(
        run1(op, ATTRS(a_ints("axes", 1, D(0))), INS(iota(4, D(1, 3, 1, 2)))),
        F32, 3, D(3, 1, 2), IOTA6, 0);
    /* newer: input, negative axis */
    expect(run1(op, NO_ATTRS, INS(iota(4, D(1, 3, 1, 2)), L(1, -2))), F32, 3,
           D(1, 3, 2), IOTA6, 0);
    /* empty axes input: as if absent */
    expect(run1(op, NO_ATTRS, INS(iota(4, D(1, 3, 1, 2)), L0())), F32, 2,
           D(3, 2), IOTA6, 0);
    run_fail(op, NO_ATTRS, INS(iota(4, D(1, 3, 1, 2)), L(1, 1)), 1,
             SMELT_ERR_SHAPE, "axis 1 of size 3");
    run_fail(op, NO_ATTRS, INS(iota(4, D(1, 3, 1, 2)), L(2, 0, -4)), 1,
             SMELT_ERR_SHAPE, "repeated");
    run_fail(op, NO_ATTRS, INS(iota(4, D(1, 3, 1, 2)), L(1, 4)), 1,
             SMELT_ERR_SHAPE, "axis 4");
    infer(op, NO_ATTRS, 2, TYPES("f32[1,batch]", "i64[1]"), DATA(NULL, L(1, 0)),
          1, "f32[batch]");
    /* batch might be 1: rank unknown */
    infer(op, NO_ATTRS, 1, TYPES("f32[1,batch]"), NULL, 1, "f32[*]");
    infer(op, NO_ATTRS, 2, TYPES("f32[1,batch,1]", "i64[2]"), NULL, 1,
          "f32[?]");
}

static void test_unsqueeze(void **state)
{
    (void)state;
    sm_op op = SM_OP_Unsqueeze;
    expect(run1(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(2, 0, 3))), F32, 4,
           D(1, 3, 2, 1), IOTA6, 0);
    /* negative axes count in the output's rank 3 */
    expect(run1(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(1, -1))), F32, 3,
           D(3, 2, 1), IOTA6, 0);
    expect(run1(op, ATTRS(a_ints("axes", 1, D(1))), INS(iota(2, D(3, 2)))), F32,
           3, D(3, 1, 2), IOTA6, 0);
    expect(run1(op, NO_ATTRS, INS(tf(F32, 0, NULL, V(5)), L(1, 0))), F32, 1,
           D(1), V(5), 0);
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2))), 1, SMELT_ERR_INVALID_ARG,
             "axes are required");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(2, 1, -3)), 1,
             SMELT_ERR_SHAPE, "repeated");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(1, 3)), 1, SMELT_ERR_SHAPE,
             "axis 3|rank 3");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,seq]", "i64[1]"),
          DATA(NULL, L(1, 1)), 1, "f32[batch,1,seq]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,seq]", "i64[2]"), NULL, 1,
          "f32[?,?,?,?]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_reshape_errors),
        cmocka_unit_test(test_reshape_infer),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_squeeze),
        cmocka_unit_test(test_unsqueeze),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
