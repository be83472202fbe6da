/*
 * test_ref_const.c - shape functions and reference kernels of the ops
 * that generate values (Shape, ConstantOfShape, Range, Constant).
 * Expected values are worked out by hand.
 */
#include "ref_harness.h"

static void test_shape(void **state)
{
    (void)state;
    sm_op op = SM_OP_Shape;
    expect_i(run1(op, NO_ATTRS, INS(iota(3, D(2, 3, 4)))), I64, 1, D(3),
             D(2, 3, 4));
    expect_i(run1(op, ATTRS(a_int("start", 1)), INS(iota(3, D(2, 3, 4)))), I64,
             1, D(2), D(3, 4));
    expect_i(run1(op, ATTRS(a_int("end", -1)), INS(iota(3, D(2, 3, 4)))), I64,
             1, D(2), D(2, 3));
    /* out of range start and end clamp */
    expect_i(run1(op, ATTRS(a_int("start", -2), a_int("end", 10)),
                  INS(iota(3, D(2, 3, 4)))),
             I64, 1, D(2), D(3, 4));
    expect_i(run1(op, ATTRS(a_int("start", 2), a_int("end", 1)),
                  INS(iota(3, D(2, 3, 4)))),
             I64, 1, D(0), NULL);
    expect_i(run1(op, NO_ATTRS, INS(tf(F32, 0, NULL, V(1)))), I64, 1, D(0),
             NULL);
    infer(op, NO_ATTRS, 1, TYPES("f32[batch,3]"), NULL, 1, "i64[2]");
    infer(op, NO_ATTRS, 1, TYPES("f32[*]"), NULL, 1, "i64[?]");
}

static void test_constantofshape(void **state)
{
    (void)state;
    sm_op op = SM_OP_ConstantOfShape;
    expect(run1(op, NO_ATTRS, INS(L(2, 2, 3))), F32, 2, D(2, 3),
           V(0, 0, 0, 0, 0, 0), 0);
    sm_tensor *seven = ti(I64, 1, D(1), D(7));
    expect_i(run1(op, ATTRS(a_tensor("value", seven)), INS(L(2, 1, 3))), I64, 2,
             D(1, 3), D(7, 7, 7));
    /* an empty shape gives a scalar */
    expect_i(run1(op, ATTRS(a_tensor("value", seven)), INS(L0())), I64, 0, NULL,
             D(7));
    sm_tensor *half = tf(F16, 1, D(1), V(0.5));
    expect(run1(op, ATTRS(a_tensor("value", half)), INS(L(1, 2))), F16, 1, D(2),
           V(0.5, 0.5), 0);
    /* 2^80 elements: overflows; 2^50 f32: over the allocation limit */
    run_fail(op, NO_ATTRS, INS(L(2, 1LL << 40, 1LL << 40)), 1, SMELT_ERR_LIMIT,
             "overflows");
    run_fail(op, NO_ATTRS, INS(L(3, 1LL << 20, 1LL << 20, 1LL << 10)), 1,
             SMELT_ERR_LIMIT, "limit");
    run_fail(op, NO_ATTRS, INS(L(2, 2, -1)), 1, SMELT_ERR_SHAPE, "negative");
    sm_tensor *two = ti(I64, 1, D(2), D(1, 2));
    run_fail(op, ATTRS(a_tensor("value", two)), INS(L(1, 2)), 1,
             SMELT_ERR_INVALID_ARG, "one-element");
    infer(op, ATTRS(a_tensor("value", seven)), 1, TYPES("i64[3]"), NULL, 1,
          "i64[?,?,?]");
    infer(op, NO_ATTRS, 1, TYPES("i64[?]"), NULL, 1, "f32[*]");
    sm_tensor_free(seven);
    sm_tensor_free(half);
    sm_tensor_free(two);
}

static void test_range(void **state)
{
    (void)state;
    sm_op op = SM_OP_Range;
#define S64(v) ti(I64, 0, NULL, D(v))
#define S32(v) ti(I32, 0, NULL, D(v))
#define SF(v) tf(F32, 0, NULL, V(v))
    expect_i(run1(op, NO_ATTRS, INS(S64(0), S64(5), S64(2))), I64, 1, D(3),
             D(0, 2, 4));
    /* ceil((4 - 10) / -3) = 2 */
    expect_i(run1(op, NO_ATTRS, INS(S32(10), S32(4), S32(-3))), I32, 1, D(2),
             D(10, 7));
    expect(run1(op, NO_ATTRS, INS(SF(1), SF(2), SF(0.25))), F32, 1, D(4),
           V(1, 1.25, 1.5, 1.75), 0);
    /* ceil(1 / 0.3) = 4 */
    expect(run1(op, NO_ATTRS, INS(SF(0), SF(1), SF(0.3))), F32, 1, D(4),
           V(0, 0.3, 0.6, 0.9), 1e-6);
    expect_i(run1(op, NO_ATTRS, INS(S64(5), S64(0), S64(1))), I64, 1, D(0),
             NULL);
    /* exact near the int64 limits */
    expect_i(
        run1(op, NO_ATTRS, INS(S64(INT64_MAX - 2), S64(INT64_MAX), S64(1))),
        I64, 1, D(2), D(INT64_MAX - 2, INT64_MAX - 1));
    expect_i(
        run1(op, NO_ATTRS, INS(S64(INT64_MAX), S64(INT64_MIN), S64(INT64_MIN))),
        I64, 1, D(2), D(INT64_MAX, -1));
    run_fail(op, NO_ATTRS, INS(S64(0), S64(5), S64(0)), 1,
             SMELT_ERR_INVALID_ARG, "delta is 0");
    run_fail(op, NO_ATTRS, INS(SF(0), SF(5), SF(0)), 1, SMELT_ERR_INVALID_ARG,
             "delta is 0");
    run_fail(op, NO_ATTRS, INS(S64(0), S32(5), S64(1)), 1, SMELT_ERR_TYPE,
             "i64|i32");
    run_fail(op, NO_ATTRS, INS(S64(0), L(2, 1, 2), S64(1)), 1, SMELT_ERR_SHAPE,
             "limit must be a scalar");
    run_fail(op, NO_ATTRS, INS(S64(0), S64(INT64_MAX), S64(1)), 1,
             SMELT_ERR_LIMIT, "limit");
    run_fail(op, NO_ATTRS, INS(S64(INT64_MIN), S64(INT64_MAX), S64(1)), 1,
             SMELT_ERR_LIMIT, "exceed");
    run_fail(op, NO_ATTRS, INS(SF(0), SF(1e30), SF(1)), 1, SMELT_ERR_LIMIT,
             "Range");
    infer(op, NO_ATTRS, 3, TYPES("f32[]", "f32[]", "f32[]"), NULL, 1, "f32[?]");
    infer_fail(op, NO_ATTRS, 3, TYPES("i64[]", "i64[]", "i64[]"),
               DATA(NULL, NULL, S64(0)), SMELT_ERR_INVALID_ARG, "delta is 0");
#undef S64
#undef S32
#undef SF
}

static void test_constant(void **state)
{
    (void)state;
    sm_op op = SM_OP_Constant;
    expect(run1(op, ATTRS(a_float("value_float", 2.5)), 0, NULL), F32, 0, NULL,
           V(2.5), 0);
    expect(run1(op, ATTRS(a_floats("value_floats", 2, V(1.5, -2))), 0, NULL),
           F32, 1, D(2), V(1.5, -2), 0);
    expect_i(run1(op, ATTRS(a_int("value_int", 1LL << 60)), 0, NULL), I64, 0,
             NULL, D(1LL << 60));
    expect_i(run1(op, ATTRS(a_ints("value_ints", 3, D(1, 2, 3))), 0, NULL), I64,
             1, D(3), D(1, 2, 3));
    sm_tensor *t = tf(F64, 2, D(1, 2), V(0.1, 1e300));
    expect(run1(op, ATTRS(a_tensor("value", t)), 0, NULL), F64, 2, D(1, 2),
           V(0.1, 1e300), 0);
    sm_tensor_free(t);
    run_fail(op, NO_ATTRS, 0, NULL, 1, SMELT_ERR_INVALID_ARG,
             "exactly one|has 0");
    run_fail(op, ATTRS(a_int("value_int", 1), a_float("value_float", 1)), 0,
             NULL, 1, SMELT_ERR_INVALID_ARG, "has 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_constantofshape),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_constant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
