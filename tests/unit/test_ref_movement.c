/*
 * test_ref_movement.c - shape functions and reference kernels of the
 * data-movement ops: Transpose, Concat, Split, Expand, Tile; and the
 * kernels' own re-checks (Reshape's too). Expected values are worked out
 * by hand.
 */
#include "ref_harness.h"

static void test_transpose(void **state)
{
    (void)state;
    sm_op op = SM_OP_Transpose;
    /* [[0,1,2],[3,4,5]] reversed */
    expect(run1(op, NO_ATTRS, INS(iota(2, D(2, 3)))), F32, 2, D(3, 2),
           V(0, 3, 1, 4, 2, 5), 0);
    /* perm [1,0,2] of 2x3x4: out[j][i][k] = 12i + 4j + k */
    expect(run1(op, ATTRS(a_ints("perm", 3, D(1, 0, 2))),
                INS(iota(3, D(2, 3, 4)))),
           F32, 3, D(3, 2, 4),
           V(0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10,
             11, 20, 21, 22, 23),
           0);
    /* perm [2,0,1]: out[k][i][j] = 12i + 4j + k */
    expect(run1(op, ATTRS(a_ints("perm", 3, D(2, 0, 1))),
                INS(iota(3, D(2, 3, 4)))),
           F32, 3, D(4, 2, 3),
           V(0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3,
             7, 11, 15, 19, 23),
           0);
    expect_i(run1(op, NO_ATTRS,
                  INS(ti(I64, 2, D(2, 2), D(1, 1LL << 62, 3, -(1LL << 61))))),
             I64, 2, D(2, 2), D(1, 3, 1LL << 62, -(1LL << 61)));
    expect(run1(op, NO_ATTRS, INS(tf(F16, 2, D(1, 2), V(0.5, -2)))), F16, 2,
           D(2, 1), V(0.5, -2), 0);
    run_fail(op, ATTRS(a_ints("perm", 3, D(0, 0, 1))), INS(iota(3, D(2, 3, 4))),
             1, SMELT_ERR_INVALID_ARG, "[0,0,1]|not a permutation");
    run_fail(op, ATTRS(a_ints("perm", 2, D(1, 0))), INS(iota(3, D(2, 3, 4))), 1,
             SMELT_ERR_SHAPE, "2 entries|rank 3");
    infer(op, NO_ATTRS, 1, TYPES("f32[batch,3,4]"), NULL, 1, "f32[4,3,batch]");
    infer(op, ATTRS(a_ints("perm", 3, D(0, 2, 1))), 1, TYPES("f32[batch,3,4]"),
          NULL, 1, "f32[batch,4,3]");
    infer(op, ATTRS(a_ints("perm", 3, D(0, 2, 1))), 1, TYPES("f32[*]"), NULL, 1,
          "f32[?,?,?]");
    infer(op, NO_ATTRS, 1, TYPES("f32[*]"), NULL, 1, "f32[*]");
}

static void test_concat(void **state)
{
    (void)state;
    sm_op op = SM_OP_Concat;
    /* [[1],[2]] ++ [[3,4],[5,6]] along 1 */
    expect(run1(op, ATTRS(a_int("axis", 1)),
                INS(tf(F32, 2, D(2, 1), V(1, 2)),
                    tf(F32, 2, D(2, 2), V(3, 4, 5, 6)))),
           F32, 2, D(2, 3), V(1, 3, 4, 2, 5, 6), 0);
    /* negative axis, and a zero-size input in the middle */
    expect(run1(op, ATTRS(a_int("axis", -1)),
                INS(tf(F32, 2, D(2, 1), V(1, 2)), tf(F32, 2, D(2, 0), NULL),
                    tf(F32, 2, D(2, 2), V(3, 4, 5, 6)))),
           F32, 2, D(2, 3), V(1, 3, 4, 2, 5, 6), 0);
    /* axis 0, three inputs, int64 */
    expect_i(run1(op, ATTRS(a_int("axis", 0)),
                  INS(ti(I64, 1, D(1), D(1LL << 50)), ti(I64, 1, D(2), D(2, 3)),
                      ti(I64, 1, D(1), D(-4)))),
             I64, 1, D(4), D(1LL << 50, 2, 3, -4));
    expect_i(run1(op, ATTRS(a_int("axis", 0)),
                  INS(ti(BOOL, 1, D(1), D(1)), ti(BOOL, 1, D(2), D(0, 1)))),
             BOOL, 1, D(3), D(1, 0, 1));
    run_fail(op, ATTRS(a_int("axis", 1)),
             INS(tf(F32, 2, D(2, 1), V(1, 2)), iota(2, D(3, 2))), 1,
             SMELT_ERR_SHAPE, "dimension 0|3|2");
    run_fail(op, ATTRS(a_int("axis", 0)),
             INS(tf(F32, 1, D(1), V(1)), ti(I64, 1, D(1), D(1))), 1,
             SMELT_ERR_TYPE, "i64|f32");
    run_fail(op, ATTRS(a_int("axis", 0)),
             INS(tf(F32, 1, D(1), V(1)), tf(F32, 2, D(1, 1), V(1))), 1,
             SMELT_ERR_SHAPE, "rank");
    run_fail(op, ATTRS(a_int("axis", 2)), INS(tf(F32, 2, D(1, 1), V(1))), 1,
             SMELT_ERR_SHAPE, "axis 2");
    run_fail(op, NO_ATTRS, INS(tf(F32, 1, D(1), V(1))), 1,
             SMELT_ERR_INVALID_ARG, "axis");
    infer(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[batch,2]", "f32[batch,3]"),
          NULL, 1, "f32[batch,5]");
    /* a known size wins; the symbol alone stays along the axis */
    infer(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[batch,n]", "f32[0,3]"),
          NULL, 1, "f32[batch,3]");
    infer(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[batch,2]", "f32[seq,2]"),
          NULL, 1, "f32[?,2]");
    infer(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[*]", "f32[seq,2]"), NULL,
          1, "f32[?,2]");
    infer(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[*]", "f32[*]"), NULL, 1,
          "f32[*]");
    infer_fail(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[a,2]", "f32[b,3]"),
               NULL, SMELT_ERR_SHAPE, "dimension 1");
}

/* Split of 0..5 (and of a 2x4) in every way the op table allows. */
static void test_split(void **state)
{
    (void)state;
    sm_op op = SM_OP_Split;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *o[4];
    /* equal split by the number of outputs */
    assert_int_equal(run(ctx, op, NO_ATTRS, INS(iota(1, D(6))), 3, o),
                     SMELT_OK);
    expect(o[0], F32, 1, D(2), V(0, 1), 0);
    expect(o[1], F32, 1, D(2), V(2, 3), 0);
    expect(o[2], F32, 1, D(2), V(4, 5), 0);
    /* older opsets: attribute */
    assert_int_equal(run(ctx, op, ATTRS(a_ints("split", 3, D(1, 2, 3))),
                         INS(iota(1, D(6))), 3, o),
                     SMELT_OK);
    expect(o[0], F32, 1, D(1), V(0), 0);
    expect(o[1], F32, 1, D(2), V(1, 2), 0);
    expect(o[2], F32, 1, D(3), V(3, 4, 5), 0);
    /* newer: input 1, with a zero-size part */
    assert_int_equal(
        run(ctx, op, NO_ATTRS, INS(iota(1, D(6)), L(3, 4, 0, 2)), 3, o),
        SMELT_OK);
    expect(o[0], F32, 1, D(4), V(0, 1, 2, 3), 0);
    expect(o[1], F32, 1, D(0), NULL, 0);
    expect(o[2], F32, 1, D(2), V(4, 5), 0);
    /* opset 18 num_outputs: 7 in chunks of ceil(7/3) = 3, last 1 */
    assert_int_equal(
        run(ctx, op, ATTRS(a_int("num_outputs", 3)), INS(iota(1, D(7))), 3, o),
        SMELT_OK);
    expect(o[0], F32, 1, D(3), V(0, 1, 2), 0);
    expect(o[1], F32, 1, D(3), V(3, 4, 5), 0);
    expect(o[2], F32, 1, D(1), V(6), 0);
    /* axis -1 of [[0,1,2,3],[4,5,6,7]] into 1 + 3 */
    assert_int_equal(run(ctx, op,
                         ATTRS(a_int("axis", -1), a_ints("split", 2, D(1, 3))),
                         INS(iota(2, D(2, 4))), 2, o),
                     SMELT_OK);
    expect(o[0], F32, 2, D(2, 1), V(0, 4), 0);
    expect(o[1], F32, 2, D(2, 3), V(1, 2, 3, 5, 6, 7), 0);
    smelt_ctx_free(ctx);
}

static void test_split_errors(void **state)
{
    (void)state;
    sm_op op = SM_OP_Split;
    run_fail(op, ATTRS(a_ints("split", 2, D(1, 2))), INS(iota(1, D(6))), 2,
             SMELT_ERR_SHAPE, "sum to 3|size 6");
    run_fail(op, NO_ATTRS, INS(iota(1, D(6)), L(3, 1, 2, 3)), 2,
             SMELT_ERR_SHAPE, "3 split sizes for 2 outputs");
    run_fail(op, NO_ATTRS, INS(iota(1, D(6)), L(2, 7, -1)), 2, SMELT_ERR_SHAPE,
             "-1");
    run_fail(op, NO_ATTRS, INS(iota(1, D(5))), 2, SMELT_ERR_SHAPE,
             "size 5|evenly|2 outputs");
    run_fail(op, ATTRS(a_int("num_outputs", 3)), INS(iota(1, D(6))), 2,
             SMELT_ERR_INVALID_ARG, "num_outputs is 3|2 outputs");
    run_fail(op, ATTRS(a_int("axis", 1)), INS(iota(1, D(6))), 2,
             SMELT_ERR_SHAPE, "axis 1");
    infer(op, ATTRS(a_int("axis", 1)), 1, TYPES("f32[batch,6]"), NULL, 2,
          "f32[batch,3]|f32[batch,3]");
    infer(op, NO_ATTRS, 1, TYPES("f32[batch,6]"), NULL, 2, "f32[?,6]|f32[?,6]");
    infer(op, ATTRS(a_ints("split", 2, D(1, 2))), 1, TYPES("f32[batch,6]"),
          NULL, 2, "f32[1,6]|f32[2,6]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,6]", "i64[2]"), NULL, 2,
          "f32[?,6]|f32[?,6]");
}

static void test_expand(void **state)
{
    (void)state;
    sm_op op = SM_OP_Expand;
    /* [3,1] to [2,1,2] -> [2,3,2]: out[a][b][c] = x[b] */
    expect(
        run1(op, NO_ATTRS, INS(tf(F32, 2, D(3, 1), V(1, 2, 3)), L(3, 2, 1, 2))),
        F32, 3, D(2, 3, 2), V(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 0);
    /* bidirectional: a shape of lower rank or with 1s keeps x's dims */
    expect(run1(op, NO_ATTRS, INS(tf(F32, 2, D(3, 1), V(1, 2, 3)), L(1, 2))),
           F32, 2, D(3, 2), V(1, 1, 2, 2, 3, 3), 0);
    expect(run1(op, NO_ATTRS, INS(tf(F32, 2, D(1, 2), V(4, 5)), L(2, 1, 1))),
           F32, 2, D(1, 2), V(4, 5), 0);
    expect_i(run1(op, NO_ATTRS, INS(ti(U8, 0, NULL, D(200)), L(1, 3))), U8, 1,
             D(3), D(200, 200, 200));
    run_fail(op, NO_ATTRS, INS(tf(F32, 1, D(3), V(1, 2, 3)), L(1, 2)), 1,
             SMELT_ERR_SHAPE, "broadcast|3|2");
    run_fail(op, NO_ATTRS, INS(tf(F32, 1, D(1), V(1)), L(1, -2)), 1,
             SMELT_ERR_SHAPE, "negative");
    run_fail(op, NO_ATTRS,
             INS(tf(F32, 1, D(1), V(1)), L(2, 1LL << 40, 1LL << 40)), 1,
             SMELT_ERR_LIMIT, "Expand");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,1]", "i64[2]"),
          DATA(NULL, L(2, 1, 5)), 1, "f32[batch,5]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,1]", "i64[3]"), NULL, 1,
          "f32[?,?,?]");
}

static void test_tile(void **state)
{
    (void)state;
    sm_op op = SM_OP_Tile;
    expect(
        run1(op, NO_ATTRS, INS(tf(F32, 2, D(2, 2), V(1, 2, 3, 4)), L(2, 1, 2))),
        F32, 2, D(2, 4), V(1, 2, 1, 2, 3, 4, 3, 4), 0);
    expect(
        run1(op, NO_ATTRS, INS(tf(F32, 2, D(2, 2), V(1, 2, 3, 4)), L(2, 2, 1))),
        F32, 2, D(4, 2), V(1, 2, 3, 4, 1, 2, 3, 4), 0);
    expect_i(run1(op, NO_ATTRS, INS(ti(BOOL, 1, D(2), D(1, 0)), L(1, 3))), BOOL,
             1, D(6), D(1, 0, 1, 0, 1, 0));
    expect(run1(op, NO_ATTRS, INS(tf(F32, 1, D(2), V(1, 2)), L(1, 0))), F32, 1,
           D(0), NULL, 0);
    run_fail(op, NO_ATTRS, INS(tf(F32, 1, D(2), V(1, 2)), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "2 repeats|rank 1");
    run_fail(op, NO_ATTRS, INS(tf(F32, 1, D(2), V(1, 2)), L(1, -1)), 1,
             SMELT_ERR_SHAPE, "negative");
    run_fail(op, NO_ATTRS, INS(tf(F32, 1, D(2), V(1, 2)), L(1, 1LL << 40)), 1,
             SMELT_ERR_LIMIT, "Tile");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,3]", "i64[2]"),
          DATA(NULL, L(2, 1, 2)), 1, "f32[batch,6]");
    infer(op, NO_ATTRS, 2, TYPES("f32[batch,3]", "i64[2]"), NULL, 1,
          "f32[?,?]");
}

/* The kernels refuse an output that does not fit their inputs (what the
 * shape function guarantees), instead of reading out of bounds. */
static void test_kernel_checks(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *x = iota(2, D(2, 3)), *y = iota(2, D(2, 2));
    sm_kargs k = {.op_name = "Reshape",
                  .n_in = 1,
                  .in = &x,
                  .n_out = 1,
                  .out = &y,
                  .ctx = ctx};
    assert_int_equal(sm_ref_reshape(&k), SMELT_ERR_RUNTIME);
    k.op_name = "Transpose";
    assert_int_equal(sm_ref_transpose(&k), SMELT_ERR_RUNTIME);
    has_words(smelt_ctx_error(ctx), "Transpose");
    sm_tensor_free(x);
    sm_tensor_free(y);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_tile),
        cmocka_unit_test(test_kernel_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
