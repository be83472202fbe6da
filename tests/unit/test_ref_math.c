/*
 * test_ref_math.c - what the generated op cases (tests/ops) do not reach
 * for the ops of two sections of ops.def, "math, activations, logic and
 * reductions beyond the rows above" and "quantization" (the further math
 * ops, LpPool, the normalizations along axes, the mapped reductions,
 * Einsum, the losses and the quantized ops): the shape functions' errors
 * and symbolic dims, kernel edge cases (halves, saturation, empty and
 * noop reductions, nan, zero norms, integer overflow), Einsum's parser,
 * costs, and the kernels' allocation-failure paths. Expected values are
 * computed by hand or from the defining formula written out here.
 */
#include "nn_harness.h"

#include "core/alloc.h"

#define U8 SMELT_DTYPE_U8
#define T(dt, dims, ...)                                                       \
    mkt(dt, N_OF(dims), dims, N_OF(((const double[]){__VA_ARGS__})),           \
        (const double[]){__VA_ARGS__})
/* A rank-0 tensor. */
#define S(dt, v) nn_tensor(dt, 0, NULL, V(v))
#define A_EQ(s) A_STR("equation", s)
#define IN(...)                                                                \
    N_OF(((sm_tensor *[]){__VA_ARGS__})), (sm_tensor *[])                      \
    {                                                                          \
        __VA_ARGS__                                                            \
    }

/* A tensor of the given dims holding v[0..nv) repeated cyclically (the
 * error tests give one value for a whole tensor). */
static sm_tensor *mkt(smelt_dtype dt, int ndim, const int64_t *dims, int nv,
                      const double *v)
{
    sm_tensor *t = nn_tensor(dt, ndim, dims, NULL);
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(dt, t->data, i, v[i % nv]);
    return t;
}

/* Runs op on the inputs (one output) and checks its dtype, shape and
 * values: equal, both nan, or within tol (absolute plus relative). */
static void check(sm_op op, int n_in, sm_tensor **in, const sm_attr *at,
                  int n_at, smelt_dtype dt, int ndim, const int64_t *dims,
                  const double *want, double tol)
{
    nn_result r = nn_ok(op, n_in, in, 1, at, n_at);
    const sm_tensor *y = r.out[0];
    assert_int_equal(y->dtype, dt);
    assert_int_equal(y->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(y->dims[d], dims[d]);
    for (int64_t i = 0; i < y->numel; i++) {
        double got = nn_at(y, i), w = want[i];
        if (got == w || (isnan(got) && isnan(w)) ||
            fabs(got - w) <= tol * (1 + fabs(w)))
            continue;
        fail_msg("%s element %lld: got %.17g, expected %.17g",
                 sm_op_info_get(op)->name, (long long)i, got, w);
    }
    nn_free(&r);
}

static void test_unary_values(void **state)
{
    (void)state;
    check(SM_OP_Sign, IN(T(F32, D(5), -2.5, -0.0, 0, 3, NAN)), NO_ATTRS, F32, 1,
          D(5), V(-1, 0, 0, 1, NAN), 0);
    check(SM_OP_Sign, IN(T(I64, D(3), -7, 0, 9)), NO_ATTRS, I64, 1, D(3),
          V(-1, 0, 1), 0);
    /* halves go to the even neighbour */
    check(SM_OP_Round, IN(T(F32, D(6), 2.5, -0.5, 3.5, -2.5, 0.4999, 1.5001)),
          NO_ATTRS, F32, 1, D(6), V(2, 0, 4, -2, 0, 2), 0);
    check(SM_OP_IsInf, IN(T(F32, D(4), -INFINITY, INFINITY, 1, NAN)),
          ATTRS(A_INT("detect_negative", 0)), BOOL, 1, D(4), V(0, 1, 0, 0), 0);
    check(SM_OP_IsNaN, IN(T(F64, D(3), NAN, INFINITY, 0)), NO_ATTRS, BOOL, 1,
          D(3), V(1, 0, 0), 0);
    /* Selu's defaults are ONNX's f32 constants */
    check(SM_OP_Selu, IN(T(F64, D(2), -1, 2)), NO_ATTRS, F64, 1, D(2),
          V(-1.1113307412864784, 2.1014020442962646), 1e-12);
    check(SM_OP_Celu, IN(T(F64, D(2), -1, 3)), ATTRS(A_FLOAT("alpha", 2)), F64,
          1, D(2), V(-0.7869386805747332, 3), 1e-12);
    check(SM_OP_Elu, IN(T(F64, D(2), -2, 0)), ATTRS(A_FLOAT("alpha", 0.5)), F64,
          1, D(2), V(-0.43233235838169365, 0), 1e-12);
    check(SM_OP_HardSwish, IN(T(F32, D(4), -3, 1, 3, 10)), NO_ATTRS, F32, 1,
          D(4), V(0, 2.0 / 3, 3, 10), 1e-6);
    check(SM_OP_Mish, IN(T(F64, D(3), 1, -1, 100)), NO_ATTRS, F64, 1, D(3),
          V(0.8650983882673103, -0.30340146137410895, 100), 1e-12);
    check(SM_OP_ThresholdedRelu, IN(T(F32, D(3), 1, 1.5, -2)), NO_ATTRS, F32, 1,
          D(3), V(0, 1.5, 0), 0);
    check(SM_OP_HardSigmoid, IN(T(F32, D(3), -5, 0, 5)), NO_ATTRS, F32, 1, D(3),
          V(0, 0.5, 1), 1e-7);
    check(SM_OP_Shrink, IN(T(I32, D(5), -3, -1, 0, 1, 3)),
          ATTRS(A_FLOAT("lambd", 1), A_FLOAT("bias", 2)), I32, 1, D(5),
          V(-1, 0, 0, 0, 1), 0);
    check(SM_OP_BitwiseNot, IN(T(U8, D(3), 0, 255, 5)), NO_ATTRS, U8, 1, D(3),
          V(255, 0, 250), 0);
    check(SM_OP_BitwiseNot, IN(T(I64, D(2), 0, -1)), NO_ATTRS, I64, 1, D(2),
          V(-1, 0), 0);
    /* out of the domain: nan, as the C library gives */
    check(SM_OP_Acosh, IN(T(F32, D(2), 0.5, 1)), NO_ATTRS, F32, 1, D(2),
          V(NAN, 0), 0);
}

static void test_binary_values(void **state)
{
    (void)state;
    /* Python's sign rule (fmod 0) and C's (fmod 1); by zero gives 0 */
    check(SM_OP_Mod, IN(T(I32, D(4), -7, 7, 7, 5), T(I32, D(4), 3, -3, 0, 5)),
          NO_ATTRS, I32, 1, D(4), V(2, -2, 0, 0), 0);
    check(SM_OP_Mod, IN(T(I32, D(2), -7, 7), T(I32, D(2), 3, -3)),
          ATTRS(A_INT("fmod", 1)), I32, 1, D(2), V(-1, 1), 0);
    /* INT64_MIN mod -1 is 0, not a trap */
    sm_tensor *a = nn_tensor(I64, 1, D(1), NULL),
              *b = nn_tensor(I64, 1, D(1), NULL);
    ((int64_t *)a->data)[0] = INT64_MIN;
    ((int64_t *)b->data)[0] = -1;
    check(SM_OP_Mod, IN(a, b), NO_ATTRS, I64, 1, D(1), V(0), 0);
    check(SM_OP_Mod, IN(T(F32, D(2), -4.5, 4.5), T(F32, D(1), 2)),
          ATTRS(A_INT("fmod", 1)), F32, 1, D(2), V(-0.5, 0.5), 0);
    /* u8 shifts: bits shifted past the byte are gone */
    check(SM_OP_BitShift,
          IN(T(U8, D(4), 200, 1, 255, 3), T(U8, D(4), 1, 7, 9, 0)),
          ATTRS(A_STR("direction", "LEFT")), U8, 1, D(4), V(144, 128, 0, 3), 0);
    check(SM_OP_BitShift, IN(T(U8, D(3), 200, 1, 255), T(U8, D(1), 3)),
          ATTRS(A_STR("direction", "RIGHT")), U8, 1, D(3), V(25, 0, 31), 0);
    check(SM_OP_BitwiseXor, IN(T(I8, D(2), -1, 12), T(I8, D(2), 1, 10)),
          NO_ATTRS, I8, 1, D(2), V(-2, 6), 0);
    check(SM_OP_Xor, IN(T(BOOL, D(4), 0, 0, 1, 1), T(BOOL, D(4), 0, 1, 0, 1)),
          NO_ATTRS, BOOL, 1, D(4), V(0, 1, 1, 0), 0);
    check(SM_OP_GreaterOrEqual,
          IN(T(F32, D(3), 1, NAN, 2), T(F32, D(3), 1, NAN, 3)), NO_ATTRS, BOOL,
          1, D(3), V(1, 0, 0), 0);
    check(SM_OP_LessOrEqual, IN(T(I64, D(2, 1), 1, 5), T(I64, D(2), 1, 4)),
          NO_ATTRS, BOOL, 2, D(2, 2), V(1, 1, 0, 0), 0);
    check(SM_OP_Mean,
          IN(T(F32, D(2), 1, 2), T(F32, D(1), 4), T(F32, D(2), 1, 0)), NO_ATTRS,
          F32, 1, D(2), V(2, 2), 0);
    check(SM_OP_PRelu,
          IN(T(F32, D(2, 2), -1, 2, -3, 4), T(F32, D(2, 1), 0.5, 2)), NO_ATTRS,
          F32, 2, D(2, 2), V(-0.5, 2, -6, 4), 0);
    check(SM_OP_CastLike, IN(T(F32, D(3), -1.7, 2.9, 300), T(I8, D(1), 0)),
          NO_ATTRS, I8, 1, D(3), V(-1, 2, 127), 0);
}

/* The ops' dtype rules and attribute checks, from the shape functions. */
static void test_math_errors(void **state)
{
    (void)state;
    nn_fail(SM_OP_Mod, IN(T(F32, D(1), 1), T(F32, D(1), 1)), 1, NO_ATTRS,
            SMELT_ERR_INVALID_ARG, "Mod|fmod must be 1|f32");
    nn_fail(SM_OP_Mod, IN(T(I32, D(1), 1), T(I32, D(1), 1)), 1,
            ATTRS(A_INT("fmod", 2)), SMELT_ERR_INVALID_ARG, "Mod|fmod = 2");
    nn_fail(SM_OP_Mod, IN(T(I32, D(1), 1), T(I64, D(1), 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "Mod|same dtype|i32|i64");
    nn_fail(SM_OP_BitShift, IN(T(I32, D(1), 1), T(I32, D(1), 1)), 1,
            ATTRS(A_STR("direction", "LEFT")), SMELT_ERR_TYPE,
            "BitShift|input 0|i32|unsigned");
    nn_fail(SM_OP_BitShift, IN(T(U8, D(1), 1), T(U8, D(1), 1)), 1,
            ATTRS(A_STR("direction", "UP")), SMELT_ERR_INVALID_ARG,
            "BitShift|direction 'UP'");
    nn_fail(SM_OP_BitwiseAnd, IN(T(F32, D(1), 1), T(F32, D(1), 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "BitwiseAnd|f32|integer");
    nn_fail(SM_OP_BitwiseNot, IN(T(BOOL, D(1), 1)), 1, NO_ATTRS, SMELT_ERR_TYPE,
            "BitwiseNot|bool");
    nn_fail(SM_OP_Xor, IN(T(I32, D(1), 1), T(I32, D(1), 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "Xor|i32|bool");
    nn_fail(SM_OP_Mean, IN(T(I32, D(1), 1), T(I32, D(1), 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "Mean|i32|float");
    nn_fail(SM_OP_Mean, IN(T(F32, D(2), 1, 1), T(F32, D(3), 1, 1, 1)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "Mean|broadcast|2|3");
    nn_fail(SM_OP_Sign, IN(T(BOOL, D(1), 1)), 1, NO_ATTRS, SMELT_ERR_TYPE,
            "Sign|bool|numeric");
    nn_fail(SM_OP_IsNaN, IN(T(I32, D(1), 1)), 1, NO_ATTRS, SMELT_ERR_TYPE,
            "IsNaN|i32|float");
    nn_fail(SM_OP_Tan, IN(T(I64, D(1), 1)), 1, NO_ATTRS, SMELT_ERR_TYPE,
            "Tan|i64|float");
    nn_fail(SM_OP_LessOrEqual, IN(T(F32, D(1), 1), T(F64, D(1), 1)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "LessOrEqual|f32|f64");
    nn_fail(SM_OP_PRelu, IN(T(F32, D(2, 4), 0), T(F32, D(3), 1, 1, 1)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "PRelu|broadcast");
    /* slope broadcasts two ways with X, but not onto X */
    nn_fail(SM_OP_PRelu, IN(T(F32, D(4), 0), T(F32, D(3, 1), 1, 1, 1)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "PRelu|slope f32[3,1]|X f32[4]");
    nn_fail(SM_OP_PRelu, IN(T(F32, D(2), 0, 0), T(I32, D(2), 1, 1)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "PRelu|same dtype");
    nn_fail(SM_OP_Det, IN(T(F32, D(2, 3), 0)), 1, NO_ATTRS, SMELT_ERR_SHAPE,
            "Det|square|f32[2,3]");
    nn_fail(SM_OP_Det, IN(T(F32, D(3), 0)), 1, NO_ATTRS, SMELT_ERR_SHAPE,
            "Det|[..., n, n]");
    nn_fail(SM_OP_Det, IN(T(I32, D(1, 1), 0)), 1, NO_ATTRS, SMELT_ERR_TYPE,
            "Det|i32");
    nn_fail(SM_OP_CastLike, IN(T(F32, D(1), 0)), 1, NO_ATTRS,
            SMELT_ERR_INVALID_ARG, "CastLike|input 1 is missing");
}

/* Output types during graph inference: symbolic dims carried, unknown
 * rank kept unknown, nothing certain refused. */
static void test_symbolic_shapes(void **state)
{
    (void)state;
    sm_type o[3], a = nn_type(F32, "batch,3"), b = nn_type(F32, "4"),
                  c = nn_type(F32, "n,1"), r = nn_type(F32, "*");
    char msg[SM_ERR_MSG_MAX];
    assert_int_equal(
        nn_shape(SM_OP_IsNaN, 1, (const sm_type *[]){&a}, 1, o, NO_ATTRS, msg),
        SMELT_OK);
    nn_type_is(&o[0], "bool[batch,3]");
    assert_int_equal(nn_shape(SM_OP_Mean, 2, (const sm_type *[]){&c, &b}, 1, o,
                              NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[n,4]");
    sm_type x = nn_type(F32, "n,3,h,w"), s = nn_type(F32, "3,1,1");
    assert_int_equal(nn_shape(SM_OP_PRelu, 2, (const sm_type *[]){&x, &s}, 1, o,
                              NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[n,3,h,w]");
    sm_type m = nn_type(F64, "b,3,3");
    assert_int_equal(
        nn_shape(SM_OP_Det, 1, (const sm_type *[]){&m}, 1, o, NO_ATTRS, msg),
        SMELT_OK);
    nn_type_is(&o[0], "f64[b]");
    assert_int_equal(
        nn_shape(SM_OP_Det, 1, (const sm_type *[]){&r}, 1, o, NO_ATTRS, msg),
        SMELT_OK);
    nn_type_is(&o[0], "f32[*]");
    sm_type l = nn_type(I64, "1");
    assert_int_equal(nn_shape(SM_OP_CastLike, 2, (const sm_type *[]){&a, &l}, 1,
                              o, NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "i64[batch,3]");
    assert_int_equal(nn_shape(SM_OP_ReduceL2, 1, (const sm_type *[]){&a}, 1, o,
                              ATTRS(A_INTS("axes", 1), A_INT("keepdims", 0)),
                              msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[batch]");
    sm_type ai = nn_type(I32, "b,4");
    assert_int_equal(nn_shape(SM_OP_ArgMin, 1, (const sm_type *[]){&ai}, 1, o,
                              ATTRS(A_INT("axis", -1)), msg),
                     SMELT_OK);
    nn_type_is(&o[0], "i64[b,1]");
    sm_type p = nn_type(F32, "n,c,8,8");
    assert_int_equal(
        nn_shape(SM_OP_LpPool, 1, (const sm_type *[]){&p}, 1, o,
                 ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2)),
                 msg),
        SMELT_OK);
    nn_type_is(&o[0], "f32[n,c,4,4]");
    sm_type g = nn_type(F32, "n,3,?");
    assert_int_equal(nn_shape(SM_OP_GlobalLpPool, 1, (const sm_type *[]){&g}, 1,
                              o, NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[n,3,1]");
    sm_type sc = nn_type(F32, "3"), bi = nn_type(F32, "?");
    assert_int_equal(nn_shape(SM_OP_InstanceNormalization, 3,
                              (const sm_type *[]){&x, &sc, &bi}, 1, o, NO_ATTRS,
                              msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[n,3,h,w]");
    assert_int_equal(nn_shape(SM_OP_MeanVarianceNormalization, 1,
                              (const sm_type *[]){&r}, 1, o, NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[*]");
}

/* Normalization errors: axis, axes, p, size, scale lengths, ranks. */
static void test_normalize_errors(void **state)
{
    (void)state;
    nn_fail(SM_OP_Hardmax, IN(T(F32, D(2), 0, 1)), 1, ATTRS(A_INT("axis", 1)),
            SMELT_ERR_SHAPE, "Hardmax|axis 1|rank 1");
    nn_fail(SM_OP_LpNormalization, IN(T(F32, D(2), 0, 1)), 1,
            ATTRS(A_INT("p", 3)), SMELT_ERR_INVALID_ARG,
            "LpNormalization|p = 3");
    nn_fail(SM_OP_MeanVarianceNormalization, IN(T(F32, D(2, 2, 2), 0)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE,
            "MeanVarianceNormalization|axis 3|rank 3");
    nn_fail(SM_OP_MeanVarianceNormalization, IN(T(F32, D(2, 2), 0)), 1,
            ATTRS(A_INTS("axes", 1, -1)), SMELT_ERR_INVALID_ARG,
            "MeanVarianceNormalization|repeated");
    nn_fail(SM_OP_LRN, IN(T(F32, D(1, 2, 1), 0)), 1, ATTRS(A_INT("size", 0)),
            SMELT_ERR_INVALID_ARG, "LRN|size = 0");
    nn_fail(SM_OP_LRN, IN(T(F32, D(2), 0)), 1, ATTRS(A_INT("size", 1)),
            SMELT_ERR_SHAPE, "LRN|rank >= 2");
    nn_fail(SM_OP_InstanceNormalization,
            IN(T(F32, D(1, 2, 2), 0), T(F32, D(3), 1, 1, 1), T(F32, D(2), 0)),
            1, NO_ATTRS, SMELT_ERR_SHAPE, "InstanceNormalization|scale|C = 2");
    nn_fail(SM_OP_InstanceNormalization,
            IN(T(F32, D(1, 2), 0), T(F32, D(2), 1, 1), T(F32, D(2), 0)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "InstanceNormalization|rank >= 3");
    nn_fail(SM_OP_InstanceNormalization,
            IN(T(F32, D(1, 2, 1), 0), T(F64, D(2), 1, 1), T(F32, D(2), 0)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "InstanceNormalization|f32|f64");
    nn_fail(SM_OP_LpPool, IN(T(F32, D(1, 1, 3), 0)), 1,
            ATTRS(A_INTS("kernel_shape", 2), A_INT("p", 0)),
            SMELT_ERR_INVALID_ARG, "LpPool|p = 0");
    nn_fail(SM_OP_GlobalLpPool, IN(T(F32, D(1, 1, 3), 0)), 1,
            ATTRS(A_INT("p", -2)), SMELT_ERR_INVALID_ARG,
            "GlobalLpPool|p = -2");
}

static void test_normalize_values(void **state)
{
    (void)state;
    /* nan wins a Hardmax, as in numpy's argmax; ties go to the first */
    check(SM_OP_Hardmax, IN(T(F32, D(2, 3), 1, NAN, 5, 2, 2, 1)), NO_ATTRS, F32,
          2, D(2, 3), V(0, 1, 0, 1, 0, 0), 0);
    /* a line of zeros stays zeros */
    check(SM_OP_LpNormalization, IN(T(F32, D(2, 2), 0, 0, 3, 4)), NO_ATTRS, F32,
          2, D(2, 2), V(0, 0, 0.6, 0.8), 1e-7);
    check(SM_OP_LpNormalization, IN(T(F64, D(2, 2), 1, -3, 1, 1)),
          ATTRS(A_INT("axis", 0), A_INT("p", 1)), F64, 2, D(2, 2),
          V(0.5, -0.75, 0.5, 0.25), 1e-15);
    /* channel 0 is [1, 3]: mean 2, std 1; channel 1 is constant: 0 */
    check(SM_OP_MeanVarianceNormalization,
          IN(T(F32, D(1, 2, 1, 2), 1, 3, 4, 4)), NO_ATTRS, F32, 4,
          D(1, 2, 1, 2), V(-1, 1, 0, 0), 1e-6);
    /* sums of squares over channels c-1..c+1: 5, 14, 13 */
    check(SM_OP_LRN, IN(T(F64, D(1, 3, 1, 1), 1, 2, 3)),
          ATTRS(A_INT("size", 3), A_FLOAT("alpha", 0.5), A_FLOAT("bias", 2)),
          F64, 4, D(1, 3, 1, 1),
          V(0.45790643500456496, 0.6659067581404805, 1.028678554691568), 1e-12);
    /* channel 0 [1, 3] scaled by 2 plus 0.5; channel 1 constant: B */
    check(SM_OP_InstanceNormalization,
          IN(T(F64, D(1, 2, 2), 1, 3, 5, 5), T(F64, D(2), 2, 1),
             T(F64, D(2), 0.5, -1)),
          NO_ATTRS, F64, 3, D(1, 2, 2), V(-1.5, 2.5, -1, -1), 1e-4);
    /* windows [pad 3] [3 -4] [-4 0] [0 pad] */
    check(SM_OP_LpPool, IN(T(F32, D(1, 1, 3), 3, -4, 0)),
          ATTRS(A_INTS("kernel_shape", 2), A_INTS("pads", 1, 1)), F32, 3,
          D(1, 1, 4), V(3, 5, 4, 0), 1e-6);
    check(SM_OP_GlobalLpPool, IN(T(F32, D(1, 2, 3), 3, -4, 0, 1, 1, 1)),
          ATTRS(A_INT("p", 1)), F32, 3, D(1, 2, 1), V(7, 3), 0);
    /* a zero first pivot needs a row swap: det = -6 */
    check(SM_OP_Det,
          IN(T(F32, D(2, 3, 3), 0, 2, 1, 1, 0, 0, 0, 0, 3, 2, 0, 0, 0, 2, 0, 0,
               0, 2)),
          NO_ATTRS, F32, 1, D(2), V(-6, 8), 1e-6);
    check(SM_OP_Det, IN(T(F64, D(0, 0), 0)), NO_ATTRS, F64, 0, D(0), V(1), 0);
}

static void test_reduce_mapped_values(void **state)
{
    (void)state;
    check(SM_OP_ReduceLogSumExp, IN(T(F64, D(3), 1, 2, 3)), NO_ATTRS, F64, 1,
          D(1), V(3.40760596444438), 1e-12);
    /* no overflow for large values; -inf rows stay -inf */
    check(SM_OP_ReduceLogSumExp,
          IN(T(F32, D(2, 2), 1000, 1000, -INFINITY, -INFINITY)),
          ATTRS(A_INTS("axes", 1), A_INT("keepdims", 0)), F32, 1, D(2),
          V(1000 + log(2.0), -INFINITY), 1e-6);
    check(SM_OP_ReduceL2, IN(T(F32, D(3), 1, -2, 3)), NO_ATTRS, F32, 1, D(1),
          V(3.7416573867739413), 1e-6);
    /* integers: Prod and L1 exact, L2 truncated */
    check(SM_OP_ReduceProd, IN(T(I64, D(2), 3000000000.0, 3)), NO_ATTRS, I64, 1,
          D(1), V(9000000000.0), 0);
    check(SM_OP_ReduceL1, IN(T(I32, D(2, 2), -1, 2, -3, 4)),
          ATTRS(A_INTS("axes", 0)), I32, 2, D(1, 2), V(4, 6), 0);
    check(SM_OP_ReduceL2, IN(T(I32, D(2), 3, 3)), NO_ATTRS, I32, 1, D(1), V(4),
          0);
    check(SM_OP_ReduceSumSquare, IN(T(I8, D(2), -3, 4)), NO_ATTRS, I8, 1, D(1),
          V(25), 0);
    /* empty reductions give the fold's start */
    check(SM_OP_ReduceProd, IN(nn_tensor(F32, 2, D(2, 0), NULL)),
          ATTRS(A_INTS("axes", 1), A_INT("keepdims", 0)), F32, 1, D(2), V(1, 1),
          0);
    check(SM_OP_ReduceLogSum, IN(nn_tensor(F32, 1, D(0), NULL)), NO_ATTRS, F32,
          1, D(1), V(-INFINITY), 0);
    check(SM_OP_ReduceLogSumExp, IN(nn_tensor(F32, 1, D(0), NULL)), NO_ATTRS,
          F32, 1, D(1), V(-INFINITY), 0);
    /* noop_with_empty_axes: the identity (not |x|), as ONNX specifies */
    check(SM_OP_ReduceL1, IN(T(F32, D(2), -1, 2)),
          ATTRS(A_INT("noop_with_empty_axes", 1)), F32, 1, D(2), V(-1, 2), 0);
    check(SM_OP_ReduceSumSquare, IN(T(F32, D(2), -1, 2)),
          ATTRS(A_INT("noop_with_empty_axes", 1)), F32, 1, D(2), V(-1, 2), 0);
    /* ArgMin: nan wins; ties to the last with select_last_index */
    check(SM_OP_ArgMin, IN(T(F32, D(4), 3, NAN, -1, NAN)),
          ATTRS(A_INT("keepdims", 0)), I64, 0, D(0), V(1), 0);
    check(SM_OP_ArgMin, IN(T(I32, D(4), 2, -1, 5, -1)),
          ATTRS(A_INT("select_last_index", 1)), I64, 1, D(1), V(3), 0);
    nn_fail(SM_OP_ReduceProd, IN(T(BOOL, D(1), 1)), 1, NO_ATTRS, SMELT_ERR_TYPE,
            "ReduceProd|bool");
    nn_fail(SM_OP_ArgMin, IN(nn_tensor(F32, 2, D(2, 0), NULL)), 1,
            ATTRS(A_INT("axis", 1)), SMELT_ERR_SHAPE, "ArgMin|axis 1|size 0");
}

static void test_einsum_values(void **state)
{
    (void)state;
    check(SM_OP_Einsum,
          IN(T(F32, D(2, 2), 1, 2, 3, 4), T(F32, D(2, 2), 5, 6, 7, 8)),
          ATTRS(A_EQ("ij,jk->ik")), F32, 2, D(2, 2), V(19, 22, 43, 50), 0);
    check(SM_OP_Einsum, IN(T(F32, D(2, 2), 1, 2, 3, 4)), ATTRS(A_EQ("ii")), F32,
          0, D(0), V(5), 0);
    check(SM_OP_Einsum, IN(T(F32, D(2, 2), 1, 2, 3, 4)),
          ATTRS(A_EQ(" i i -> i")), F32, 1, D(2), V(1, 4), 0);
    /* implicit output: sorted labels, so 'ba' transposes */
    check(SM_OP_Einsum, IN(T(F32, D(2, 2), 1, 2, 3, 4)), ATTRS(A_EQ("ba")), F32,
          2, D(2, 2), V(1, 3, 2, 4), 0);
    /* upper case sorts first (ASCII): 'aB' gives 'Ba' */
    check(SM_OP_Einsum, IN(T(F32, D(1, 2), 1, 2)), ATTRS(A_EQ("aB")), F32, 2,
          D(2, 1), V(1, 2), 0);
    /* an ellipsis left out of an explicit output is summed */
    check(SM_OP_Einsum, IN(T(F32, D(2, 2), 1, 2, 3, 4)), ATTRS(A_EQ("...i->i")),
          F32, 1, D(2), V(4, 6), 0);
    /* ellipsis dims broadcast: [2,1] with [3] */
    check(SM_OP_Einsum,
          IN(T(F32, D(2, 1, 1), 1, 2), T(F32, D(3, 1), 1, 10, 100)),
          ATTRS(A_EQ("...i,...i->...")), F32, 2, D(2, 3),
          V(1, 10, 100, 2, 20, 200), 0);
    /* int64 stays exact */
    sm_tensor *big = nn_tensor(I64, 1, D(2), NULL);
    ((int64_t *)big->data)[0] = ((int64_t)1 << 53) + 1;
    ((int64_t *)big->data)[1] = 1;
    nn_result r =
        nn_ok(SM_OP_Einsum, IN(big, T(I64, D(2), 1, 1)), 1, ATTRS(A_EQ("i,i")));
    assert_true(((int64_t *)r.out[0]->data)[0] == ((int64_t)1 << 53) + 2);
    nn_free(&r);
    /* a zero-size label: the sum of nothing */
    check(SM_OP_Einsum, IN(nn_tensor(F32, 2, D(2, 0), NULL)),
          ATTRS(A_EQ("ij->i")), F32, 1, D(2), V(0, 0), 0);
}

static void test_einsum_errors(void **state)
{
    (void)state;
#define X23 T(F32, D(2, 3), 0)
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("ij,jk->ik")),
            SMELT_ERR_INVALID_ARG, "Einsum|more terms than the 1 inputs");
    nn_fail(SM_OP_Einsum, IN(X23, X23), 1, ATTRS(A_EQ("ij->ij")),
            SMELT_ERR_INVALID_ARG, "Einsum|1 terms for 2 inputs");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("ij->ik")),
            SMELT_ERR_INVALID_ARG, "Einsum|'k' does not appear");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("ij->ii")),
            SMELT_ERR_INVALID_ARG, "Einsum|'i' is repeated");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("i#")), SMELT_ERR_INVALID_ARG,
            "Einsum|unexpected character '#'");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("i.j")), SMELT_ERR_INVALID_ARG,
            "Einsum|'...'");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("ij-ji")),
            SMELT_ERR_INVALID_ARG, "Einsum|'->'");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("ij->...")),
            SMELT_ERR_INVALID_ARG, "Einsum|no input does");
    nn_fail(SM_OP_Einsum, IN(X23), 1, ATTRS(A_EQ("ijk")), SMELT_ERR_SHAPE,
            "Einsum|rank 2|3 letters");
    nn_fail(SM_OP_Einsum, IN(X23, X23), 1, ATTRS(A_EQ("ij,jk")),
            SMELT_ERR_SHAPE, "Einsum|label 'j'|3|2");
    nn_fail(SM_OP_Einsum, IN(X23, T(F32, D(4, 3), 0)), 1,
            ATTRS(A_EQ("...i,...i")), SMELT_ERR_SHAPE,
            "Einsum|'...'|broadcast|2|4");
    nn_fail(SM_OP_Einsum, IN(X23, T(F64, D(3), 0)), 1, ATTRS(A_EQ("ij,j")),
            SMELT_ERR_TYPE, "Einsum|f32|f64");
    nn_fail(SM_OP_Einsum, IN(T(BOOL, D(1), 0)), 1, ATTRS(A_EQ("i")),
            SMELT_ERR_TYPE, "Einsum|bool");
    nn_fail(SM_OP_Einsum, IN(X23), 1, NO_ATTRS, SMELT_ERR_INVALID_ARG,
            "Einsum|equation is required");
#undef X23
    /* symbolic dims come through; unknown rank under '...' stays unknown */
    sm_type o[1], a = nn_type(F32, "b,2,3"), b = nn_type(F32, "b,3,n"),
                  u = nn_type(F32, "*"), k = nn_type(F32, "?,3");
    char msg[SM_ERR_MSG_MAX];
    assert_int_equal(nn_shape(SM_OP_Einsum, 2, (const sm_type *[]){&a, &b}, 1,
                              o, ATTRS(A_EQ("bij,bjk->bik")), msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[b,2,n]");
    assert_int_equal(nn_shape(SM_OP_Einsum, 1, (const sm_type *[]){&u}, 1, o,
                              ATTRS(A_EQ("...ij->...ji")), msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[*]");
    assert_int_equal(nn_shape(SM_OP_Einsum, 2, (const sm_type *[]){&u, &k}, 1,
                              o, ATTRS(A_EQ("ij,jk->ki")), msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[3,?]");
    assert_int_equal(nn_shape(SM_OP_Einsum, 2, (const sm_type *[]){&a, &k}, 1,
                              o, ATTRS(A_EQ("bij,jk->bik")), msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[b,2,3]");
}

static void test_quant_values(void **state)
{
    (void)state;
    /* halves to even, then saturation to i8 */
    check(SM_OP_QuantizeLinear,
          IN(T(F32, D(6), 2.5, 3.5, -2.5, -0.5, 1000, -1000), T(F32, D(1), 1),
             T(I8, D(1), 0)),
          NO_ATTRS, I8, 1, D(6), V(2, 4, -2, 0, 127, -128), 0);
    /* no zero point: u8 */
    check(SM_OP_QuantizeLinear, IN(T(F32, D(3), -5, 7, 300), S(F32, 2)),
          NO_ATTRS, U8, 1, D(3), V(0, 4, 150), 0);
    /* per axis 0: row 1 is 3 / 2 = 1.5 -> 2 and 4 / 2 -> 2, plus 10 */
    check(
        SM_OP_QuantizeLinear,
        IN(T(F32, D(2, 2), 1, 2, 3, 4), T(F32, D(2), 1, 2), T(U8, D(2), 0, 10)),
        ATTRS(A_INT("axis", 0)), U8, 2, D(2, 2), V(1, 2, 12, 12), 0);
    check(SM_OP_DequantizeLinear,
          IN(T(U8, D(2, 2), 10, 20, 30, 40), T(F32, D(2), 0.5, 2),
             T(U8, D(2), 10, 0)),
          ATTRS(A_INT("axis", -1)), F32, 2, D(2, 2), V(0, 40, 10, 80), 0);
    /* all zeros: scale 0, zero point 0 */
    nn_result r =
        nn_ok(SM_OP_DynamicQuantizeLinear, IN(T(F32, D(2), 0, 0)), 3, NO_ATTRS);
    nn_expect(r.out[0], 1, D(2), V(0, 0), 0);
    nn_expect(r.out[1], 0, D(0), V(0), 0);
    nn_expect(r.out[2], 0, D(0), V(0), 0);
    assert_int_equal(r.out[2]->dtype, U8);
    nn_free(&r);
    /* acc (20 - 10) * (3 - 1) = 20, times 0.5 * 0.25 / 1 = 2.5 -> 2 */
    check(SM_OP_QLinearMatMul,
          IN(T(U8, D(1, 1), 20), S(F32, 0.5), S(U8, 10), T(U8, D(1, 1), 3),
             S(F32, 0.25), S(U8, 1), S(F32, 1), S(U8, 100)),
          NO_ATTRS, U8, 2, D(1, 1), V(102), 0);
    /* (x - 1) . (w - 1) = 0 + 1 + 2 + 3 = 6, times 0.5 * 1 / 2 -> 1.5 -> 2 */
    check(SM_OP_QLinearConv,
          IN(T(U8, D(1, 1, 2, 2), 1, 2, 3, 4), S(F32, 0.5), S(U8, 1),
             T(U8, D(1, 1, 2, 2), 2, 2, 2, 2), S(F32, 1), S(U8, 1), S(F32, 2),
             S(U8, 0)),
          NO_ATTRS, U8, 4, D(1, 1, 1, 1), V(2), 0);
    check(SM_OP_MatMulInteger,
          IN(T(I8, D(2, 2), -128, 127, 1, 2), T(I8, D(2, 1), 127, -128),
             T(I8, D(2), 0, 1)),
          NO_ATTRS, I32, 2, D(2, 1), V(-32512, -128), 0);
}

static void test_quant_errors(void **state)
{
    (void)state;
    nn_fail(SM_OP_QuantizeLinear, IN(T(F32, D(2, 2), 0), T(F32, D(3), 1, 1, 1)),
            1, NO_ATTRS, SMELT_ERR_SHAPE,
            "QuantizeLinear|input 1|1-D with 2|f32[3]");
    nn_fail(SM_OP_QuantizeLinear, IN(T(F32, D(2, 2), 0), T(F32, D(2), 1, 1)), 1,
            ATTRS(A_INT("axis", 5)), SMELT_ERR_SHAPE,
            "QuantizeLinear|axis 5|rank 2");
    nn_fail(SM_OP_QuantizeLinear, IN(T(BOOL, D(1), 0), S(F32, 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "QuantizeLinear|input 0|bool");
    nn_fail(SM_OP_QuantizeLinear, IN(T(F32, D(1), 0), S(F32, 1), S(I32, 0)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "QuantizeLinear|input 2|i32|u8 or i8");
    nn_fail(SM_OP_DequantizeLinear, IN(T(U8, D(1), 0), S(F32, 1), S(I8, 0)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "DequantizeLinear|inputs 0 and 2|u8|i8");
    nn_fail(SM_OP_DequantizeLinear, IN(T(U8, D(1), 0), S(I32, 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "DequantizeLinear|input 1|float");
    nn_fail(SM_OP_MatMulInteger, IN(T(F32, D(1, 2), 0), T(U8, D(2, 1), 0)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "MatMulInteger|input 0|f32");
    nn_fail(SM_OP_MatMulInteger,
            IN(T(U8, D(2, 2), 0), T(U8, D(2, 1), 0), T(U8, D(3), 0, 0, 0)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "MatMulInteger|input 2|with 2");
    nn_fail(SM_OP_MatMulInteger, IN(T(U8, D(2, 3), 0), T(U8, D(2, 1), 0)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "MatMulInteger|inner dimensions");
    nn_fail(SM_OP_QLinearMatMul,
            IN(T(U8, D(1, 1), 0), S(F32, 1), S(U8, 0), T(U8, D(1, 1), 0),
               S(F32, 1), S(U8, 0), S(F32, 1), S(F32, 0)),
            1, NO_ATTRS, SMELT_ERR_TYPE, "QLinearMatMul|input 7|f32");
    nn_fail(SM_OP_ConvInteger,
            IN(T(U8, D(1, 2, 3, 3), 0), T(U8, D(1, 3, 2, 2), 0)), 1, NO_ATTRS,
            SMELT_ERR_SHAPE, "ConvInteger|channels");
    nn_fail(SM_OP_QLinearConv,
            IN(T(U8, D(1, 1, 2, 2), 0), S(F32, 1), S(U8, 0),
               T(U8, D(2, 1, 1, 1), 0), T(F32, D(3), 1, 1, 1), S(U8, 0),
               S(F32, 1), S(U8, 0)),
            1, NO_ATTRS, SMELT_ERR_SHAPE, "QLinearConv|input 4|with 2");
    sm_type o[3], x = nn_type(F32, "b,3"), z = nn_type(I8, ""),
                  s = nn_type(F32, ""), a = nn_type(U8, "b,4"),
                  w = nn_type(U8, "4,n"), q = nn_type(U8, "n,2,5,5"),
                  k = nn_type(I8, "3,2,3,3");
    char msg[SM_ERR_MSG_MAX];
    assert_int_equal(nn_shape(SM_OP_QuantizeLinear, 3,
                              (const sm_type *[]){&x, &s, &z}, 1, o, NO_ATTRS,
                              msg),
                     SMELT_OK);
    nn_type_is(&o[0], "i8[b,3]");
    assert_int_equal(nn_shape(SM_OP_MatMulInteger, 2,
                              (const sm_type *[]){&a, &w}, 1, o, NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "i32[b,n]");
    sm_type yz = nn_type(U8, "");
    assert_int_equal(
        nn_shape(SM_OP_QLinearConv, 8,
                 (const sm_type *[]){&q, &s, &yz, &k, &s, &z, &s, &yz}, 1, o,
                 NO_ATTRS, msg),
        SMELT_OK);
    nn_type_is(&o[0], "u8[n,3,3,3]");
    sm_type f = nn_type(F32, "n,?");
    assert_int_equal(nn_shape(SM_OP_DynamicQuantizeLinear, 1,
                              (const sm_type *[]){&f}, 3, o, NO_ATTRS, msg),
                     SMELT_OK);
    nn_type_is(&o[0], "u8[n,?]");
    nn_type_is(&o[1], "f32[]");
    nn_type_is(&o[2], "u8[]");
}

static void test_costs(void **state)
{
    (void)state;
    /* Det: 4/3 n^3 per matrix */
    nn_result r =
        nn_ok(SM_OP_Det, IN(nn_tensor(F32, 3, D(2, 3, 3), NULL)), 1, NO_ATTRS);
    assert_true(r.cost.flops == 2 * 36);
    assert_true(r.cost.bytes_read == 18 * 4 && r.cost.bytes_write == 2 * 4);
    nn_free(&r);
    /* Einsum: 2 x 3 x 4 points, a multiply and an add at each */
    r = nn_ok(
        SM_OP_Einsum,
        IN(nn_tensor(F32, 2, D(2, 3), NULL), nn_tensor(F32, 2, D(3, 4), NULL)),
        1, ATTRS(A_EQ("ij,jk->ik")));
    assert_true(r.cost.flops == 48);
    assert_true(r.cost.bytes_read == 18 * 4 && r.cost.bytes_write == 8 * 4);
    nn_free(&r);
    /* MatMulInteger: 2 K per output element, plus the shift */
    r = nn_ok(
        SM_OP_MatMulInteger,
        IN(nn_tensor(U8, 2, D(2, 3), NULL), nn_tensor(U8, 2, D(3, 4), NULL)), 1,
        NO_ATTRS);
    assert_true(r.cost.flops == 2 * 3 * 8 + 8);
    assert_true(r.cost.bytes_read == 18 && r.cost.bytes_write == 8 * 4);
    nn_free(&r);
    r = nn_ok(SM_OP_ReduceL2, IN(nn_tensor(F32, 2, D(2, 3), NULL)), 1,
              NO_ATTRS);
    assert_true(r.cost.flops == 6 && r.cost.bytes_write == 4);
    nn_free(&r);
}

/*
 * Runs the kernel of op on in[] (outputs sized by the shape function)
 * with the n-th allocation failing, for n = 0, 1, ... until it succeeds:
 * every failure must be SMELT_ERR_NOMEM, and ASan sees any leak.
 */
static void walk_alloc_failures(sm_op op, int n_in, sm_tensor **in,
                                const sm_attr *at, int n_at)
{
    const sm_op_info *info = sm_op_info_get(op);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_type types[8], ty;
    sm_operand opnd[8];
    for (int i = 0; i < n_in; i++) {
        sm_type_from_tensor(&types[i], in[i]);
        opnd[i] = (sm_operand){1, &types[i], in[i]};
    }
    sm_type_unknown(&ty);
    sm_shape_ctx s = {.op = info,
                      .attrs = {at, n_at, info->spec, info->n_spec},
                      .n_in = n_in,
                      .in = opnd,
                      .n_out = 1,
                      .out = &ty,
                      .ctx = ctx};
    assert_int_equal(info->shape(&s), SMELT_OK);
    int64_t dims[SMELT_MAX_DIMS];
    for (int d = 0; d < ty.ndim; d++)
        dims[d] = ty.dims[d].size;
    sm_tensor *out;
    assert_int_equal(sm_tensor_new(ctx, ty.dtype, ty.ndim, dims, &out),
                     SMELT_OK);
    sm_kargs k = {.op_name = info->name,
                  .attrs = s.attrs,
                  .n_in = n_in,
                  .in = in,
                  .n_out = 1,
                  .out = &out,
                  .ctx = ctx};
    smelt_status st = SMELT_ERR_NOMEM;
    int n;
    for (n = 0; st != SMELT_OK && n < 64; n++) {
        sm_alloc_fail_after(n);
        st = info->ref(&k);
        sm_alloc_fail_after(-1);
        assert_true(st == SMELT_OK || st == SMELT_ERR_NOMEM);
    }
    assert_int_equal(st, SMELT_OK);
    assert_true(n > 1); /* the kernel allocates: some run failed */
    sm_tensor_free(out);
    for (int i = 0; i < n_in; i++)
        sm_tensor_free(in[i]);
    smelt_ctx_free(ctx);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    walk_alloc_failures(SM_OP_Det, IN(nn_pattern(F32, 3, D(2, 3, 3), 1)),
                        NO_ATTRS);
    walk_alloc_failures(
        SM_OP_Einsum,
        IN(nn_pattern(F32, 2, D(2, 3), 2), nn_pattern(F32, 2, D(3, 2), 3)),
        ATTRS(A_EQ("ij,jk->ik")));
    walk_alloc_failures(SM_OP_MatMulInteger,
                        IN(T(U8, D(2, 2), 1, 2, 3, 4), T(U8, D(2, 1), 5, 6),
                           S(U8, 1), S(U8, 2)),
                        NO_ATTRS);
    walk_alloc_failures(SM_OP_QLinearMatMul,
                        IN(T(U8, D(1, 2), 1, 2), S(F32, 1), S(U8, 0),
                           T(U8, D(2, 1), 3, 4), S(F32, 1), S(U8, 0), S(F32, 1),
                           S(U8, 0)),
                        NO_ATTRS);
    walk_alloc_failures(
        SM_OP_ConvInteger,
        IN(T(U8, D(1, 1, 2, 2), 1, 2, 3, 4), T(U8, D(1, 1, 1, 1), 2)),
        NO_ATTRS);
    walk_alloc_failures(SM_OP_QLinearConv,
                        IN(T(U8, D(1, 1, 2, 2), 1, 2, 3, 4), S(F32, 1),
                           S(U8, 0), T(U8, D(1, 1, 1, 1), 2), S(F32, 1),
                           S(U8, 0), S(F32, 1), S(U8, 0)),
                        NO_ATTRS);
}

static void test_losses(void **state)
{
    (void)state;
#define NLL SM_OP_NegativeLogLikelihoodLoss
#define SCE SM_OP_SoftmaxCrossEntropyLoss
    /* -(x[0,1] w1 + x[1,0] w0) / (w1 + w0) */
    check(NLL,
          IN(T(F32, D(2, 2), -1, -2, -3, -4), T(I64, D(2), 1, 0),
             T(F32, D(2), 0.5, 2)),
          NO_ATTRS, F32, 0, D(0), V((2 * 2 + 3 * 0.5) / 2.5), 1e-6);
    /* every target ignored: the mean is 0 / 0 */
    check(NLL, IN(T(F32, D(1, 2), -1, -2), T(I32, D(1), 3)),
          ATTRS(A_INT("ignore_index", 3)), F32, 0, D(0), V(NAN), 0);
    nn_result r = nn_ok(SCE, IN(T(F32, D(1, 2), 0, 0), T(I64, D(1), 1)), 2,
                        ATTRS(A_STR("reduction", "none")));
    nn_expect(r.out[0], 1, D(1), V(log(2.0)), 1e-6);
    nn_expect(r.out[1], 2, D(1, 2), V(-log(2.0), -log(2.0)), 1e-6);
    nn_free(&r);
    nn_fail(NLL, IN(T(F32, D(2, 2), 0), T(I64, D(2), 0, 1)), 1,
            ATTRS(A_STR("reduction", "avg")), SMELT_ERR_INVALID_ARG,
            "NegativeLogLikelihoodLoss|reduction 'avg'");
    nn_fail(NLL, IN(T(F32, D(2, 2), 0), T(F32, D(2), 0, 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "NegativeLogLikelihoodLoss|target|f32");
    nn_fail(NLL, IN(T(I32, D(2, 2), 0), T(I64, D(2), 0, 1)), 1, NO_ATTRS,
            SMELT_ERR_TYPE, "NegativeLogLikelihoodLoss|i32|float");
    nn_fail(SCE, IN(T(F32, D(2, 2), 0), T(I64, D(2), 0, 2)), 1, NO_ATTRS,
            SMELT_ERR_INVALID_ARG, "SoftmaxCrossEntropyLoss|target 2|[0, 2)");
    nn_fail(SCE, IN(T(F32, D(2, 3), 0), T(I64, D(3), 0, 1, 1)), 1, NO_ATTRS,
            SMELT_ERR_SHAPE, "SoftmaxCrossEntropyLoss|f32[2,3]|i64[3]");
    nn_fail(SCE, IN(T(F32, D(2), 0), T(I64, D(1), 0)), 1, NO_ATTRS,
            SMELT_ERR_SHAPE, "SoftmaxCrossEntropyLoss|do not fit");
    nn_fail(NLL, IN(T(F32, D(2, 2), 0), T(I64, D(2), 0, 1), T(F32, D(3), 0)), 1,
            NO_ATTRS, SMELT_ERR_SHAPE, "weight (input 2)|C = 2");
    nn_fail(NLL, IN(T(F32, D(2, 2), 0), T(I64, D(2), 0, 1), T(F64, D(2), 0)), 1,
            NO_ATTRS, SMELT_ERR_TYPE, "weight (input 2)|f64");
    sm_type o[2], x = nn_type(F32, "n,5,h"), t = nn_type(I64, "n,h");
    char msg[SM_ERR_MSG_MAX];
    assert_int_equal(nn_shape(SCE, 2, (const sm_type *[]){&x, &t}, 2, o,
                              ATTRS(A_STR("reduction", "none")), msg),
                     SMELT_OK);
    nn_type_is(&o[0], "f32[n,h]");
    nn_type_is(&o[1], "f32[n,5,h]");
    assert_int_equal(
        nn_shape(NLL, 2, (const sm_type *[]){&x, &t}, 1, o, NO_ATTRS, msg),
        SMELT_OK);
    nn_type_is(&o[0], "f32[]");
    walk_alloc_failures(
        SCE, IN(T(F32, D(2, 2), 1, 2, 3, 4), T(I64, D(2), 0, 1)), NO_ATTRS);
#undef NLL
#undef SCE
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_values),
        cmocka_unit_test(test_binary_values),
        cmocka_unit_test(test_math_errors),
        cmocka_unit_test(test_symbolic_shapes),
        cmocka_unit_test(test_normalize_errors),
        cmocka_unit_test(test_normalize_values),
        cmocka_unit_test(test_reduce_mapped_values),
        cmocka_unit_test(test_einsum_values),
        cmocka_unit_test(test_einsum_errors),
        cmocka_unit_test(test_quant_values),
        cmocka_unit_test(test_quant_errors),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_losses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
