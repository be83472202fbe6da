/*
 * test_ref_elementwise.c - shape functions, reference kernels and costs of
 * the elementwise unary ops, Cast, Dropout and the broadcasting ops.
 *
 * run_op() does what the reference interpreter does for one node: infer
 * the output types from the concrete inputs, allocate the outputs, run the
 * kernel. Expected values are computed by hand.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/ir.h"
#include "ir/shape_util.h"

#define F32 SMELT_DTYPE_F32
#define F64 SMELT_DTYPE_F64
#define F16 SMELT_DTYPE_F16
#define BF16 SMELT_DTYPE_BF16
#define I8 SMELT_DTYPE_I8
#define U8 SMELT_DTYPE_U8
#define I32 SMELT_DTYPE_I32
#define I64 SMELT_DTYPE_I64
#define BOOL SMELT_DTYPE_BOOL

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* A tensor of dtype dt and shape dims holding v (stored with C rules). */
static sm_tensor *mk(smelt_dtype dt, int ndim, const int64_t *dims,
                     const double *v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(dt, t->data, i, v[i]);
    return t;
}

static sm_tensor *mk_i64(smelt_dtype dt, int ndim, const int64_t *dims,
                         const int64_t *v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_i64(dt, t->data, i, v[i]);
    return t;
}

/*
 * Runs op on the inputs as the interpreter will: shape function on the
 * concrete types (with data), outputs allocated from its result, then the
 * kernel and the cost function. The inputs are freed; on success out[]
 * holds the outputs (caller frees), on failure they are freed and NULL.
 */
static smelt_status run_op(smelt_ctx_t *ctx, sm_op op, int n_in, sm_tensor **in,
                           const sm_attr *attrs, int n_attr, int n_out,
                           sm_tensor **out, sm_cost *cost)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_type tin[8], tout[4];
    sm_operand opnd[8];
    for (int i = 0; i < n_in; i++) {
        if (in[i])
            sm_type_from_tensor(&tin[i], in[i]);
        opnd[i] = (sm_operand){in[i] != NULL, in[i] ? &tin[i] : NULL, in[i]};
    }
    for (int j = 0; j < n_out; j++) {
        sm_type_unknown(&tout[j]);
        out[j] = NULL;
    }
    sm_shape_ctx s = {info,  {attrs, n_attr, info->spec, info->n_spec},
                      n_in,  opnd,
                      n_out, tout,
                      NULL,  ctx};
    smelt_status st = info->shape(&s);
    for (int j = 0; st == SMELT_OK && j < n_out; j++) {
        assert_true(sm_type_known(&tout[j]));
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < tout[j].ndim; d++)
            dims[d] = tout[j].dims[d].size;
        st = sm_tensor_new(ctx, tout[j].dtype, tout[j].ndim, dims, &out[j]);
    }
    if (st == SMELT_OK) {
        sm_kargs k = {info->name, s.attrs, n_in, in,   n_out,
                      out,        ctx,     NULL, NULL, 0};
        st = info->ref(&k);
    }
    if (st == SMELT_OK && cost)
        info->cost(&s, cost);
    for (int i = 0; i < n_in; i++)
        sm_tensor_free(in[i]);
    for (int j = 0; st != SMELT_OK && j < n_out; j++) {
        sm_tensor_free(out[j]);
        out[j] = NULL;
    }
    return st;
}

/* Runs a one-output op and returns the output (asserting success). */
static sm_tensor *run1(sm_op op, int n_in, sm_tensor **in, const sm_attr *at,
                       int n_attr)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out;
    smelt_status st = run_op(ctx, op, n_in, in, at, n_attr, 1, &out, NULL);
    if (st != SMELT_OK)
        fail_msg("%s failed: %s", sm_op_info_get(op)->name,
                 smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return out;
}

/* Runs op expecting status want, with every word of `words` (separated
 * by '|') in the error message. */
static void run_fail(sm_op op, int n_in, sm_tensor **in, const sm_attr *at,
                     int n_attr, smelt_status want, const char *words)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out[2];
    assert_int_equal(run_op(ctx, op, n_in, in, at, n_attr, 1, out, NULL), want);
    const char *msg = smelt_ctx_error(ctx);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, "|"); w; w = strtok(NULL, "|"))
        if (!strstr(msg, w))
            fail_msg("message '%s' lacks '%s'", msg, w);
    smelt_ctx_free(ctx);
}

/* Checks t's dtype, shape and values (relative tolerance tol; nan
 * matches nan), then frees it. */
static void expect(sm_tensor *t, smelt_dtype dt, int ndim, const int64_t *dims,
                   const double *want, double tol)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->dims[d], dims[d]);
    for (int64_t i = 0; i < t->numel; i++) {
        double got = sm_load_f64(dt, t->data, i), w = want[i];
        if ((isnan(w) && isnan(got)) || got == w)
            continue;
        if (!(fabs(got - w) <= tol * fmax(1, fabs(w))))
            fail_msg("element %lld: got %.17g, want %.17g", (long long)i, got,
                     w);
    }
    sm_tensor_free(t);
}

static void expect_i64(sm_tensor *t, smelt_dtype dt, const int64_t *want)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, dt);
    for (int64_t i = 0; i < t->numel; i++)
        assert_true(sm_load_i64(dt, t->data, i) == want[i]);
    sm_tensor_free(t);
}

/* Unary ops on one input; e.g. UN(SM_OP_Exp, x). */
#define UN(op, x) run1(op, 1, (sm_tensor *[]){x}, NULL, 0)
/* Binary and n-ary ops. */
#define BIN(op, ...)                                                           \
    run1(op, N_OF(((sm_tensor *[]){__VA_ARGS__})),                             \
         (sm_tensor *[]){__VA_ARGS__}, NULL, 0)

static void test_unary_float(void **state)
{
    (void)state;
    const double e = 2.718281828459045;
#define X4 mk(F32, 1, D(4), V(-2, -0.5, 0, 1))
    expect(UN(SM_OP_Neg, X4), F32, 1, D(4), V(2, 0.5, 0, -1), 0);
    expect(UN(SM_OP_Abs, X4), F32, 1, D(4), V(2, 0.5, 0, 1), 0);
    expect(UN(SM_OP_Relu, X4), F32, 1, D(4), V(0, 0, 0, 1), 0);
    expect(UN(SM_OP_Floor, X4), F32, 1, D(4), V(-2, -1, 0, 1), 0);
    expect(UN(SM_OP_Ceil, X4), F32, 1, D(4), V(-2, -0, 0, 1), 0);
    expect(UN(SM_OP_Exp, X4), F32, 1, D(4),
           V(0.1353352832366127, 0.6065306597126334, 1, e), 1e-6);
    expect(UN(SM_OP_Tanh, X4), F32, 1, D(4),
           V(-0.9640275800758169, -0.46211715726000974, 0, 0.7615941559557649),
           1e-6);
    expect(UN(SM_OP_Sigmoid, X4), F32, 1, D(4),
           V(0.11920292202211755, 0.3775406687981454, 0.5, 0.7310585786300049),
           1e-6);
    expect(UN(SM_OP_Erf, X4), F32, 1, D(4),
           V(-0.9953222650189527, -0.5204998778130465, 0, 0.8427007929497149),
           1e-6);
    expect(UN(SM_OP_Sin, X4), F32, 1, D(4),
           V(-0.9092974268256817, -0.479425538604203, 0, 0.8414709848078965),
           1e-6);
    expect(UN(SM_OP_Cos, X4), F32, 1, D(4),
           V(-0.4161468365471424, 0.8775825618903728, 1, 0.5403023058681398),
           1e-6);
#undef X4
    sm_attr alpha = {"alpha", SM_ATTR_FLOAT, 0, {.f = 0.5}};
    expect(run1(SM_OP_LeakyRelu, 1,
                (sm_tensor *[]){mk(F32, 1, D(3), V(-4, 0, 3))}, &alpha, 1),
           F32, 1, D(3), V(-2, 0, 3), 0);
    /* the schema's default alpha is 0.01 */
    expect(UN(SM_OP_LeakyRelu, mk(F32, 1, D(2), V(-100, 2))), F32, 1, D(2),
           V(-1, 2), 1e-6);
    expect(UN(SM_OP_Sqrt, mk(F32, 1, D(3), V(4, 0.25, -1))), F32, 1, D(3),
           V(2, 0.5, NAN), 0);
    expect(UN(SM_OP_Log, mk(F32, 1, D(3), V(1, e, 0))), F32, 1, D(3),
           V(0, 1, -INFINITY), 1e-6);
    expect(UN(SM_OP_Reciprocal, mk(F32, 1, D(3), V(2, -0.25, 0))), F32, 1, D(3),
           V(0.5, -4, INFINITY), 0);
    /* log(exp(x) + 1), also where exp(x) overflows or underflows */
    expect(UN(SM_OP_Softplus, mk(F64, 1, D(4), V(0, 1, 1000, -1000))), F64, 1,
           D(4), V(0.6931471805599453, 1.3132616875182228, 1000, 0), 1e-12);
    /* Sigmoid far out in both directions stays finite */
    expect(UN(SM_OP_Sigmoid, mk(F64, 1, D(2), V(-1000, 1000))), F64, 1, D(2),
           V(0, 1), 0);
}

static void test_unary_dtypes(void **state)
{
    (void)state;
    /* f16 and bf16 compute in double, round once */
    expect(UN(SM_OP_Sqrt, mk(F16, 1, D(3), V(4, 2.25, 0.0625))), F16, 1, D(3),
           V(2, 1.5, 0.25), 0);
    expect(UN(SM_OP_Neg, mk(BF16, 0, NULL, V(1.5))), BF16, 0, NULL, V(-1.5), 0);
    expect(UN(SM_OP_Exp, mk(F64, 2, D(1, 2), V(0, 2))), F64, 2, D(1, 2),
           V(1, 7.38905609893065), 1e-14);
    /* integers: exact, wrapping like numpy */
    expect(UN(SM_OP_Neg, mk(I32, 1, D(3), V(5, -7, 0))), I32, 1, D(3),
           V(-5, 7, 0), 0);
    expect(UN(SM_OP_Abs, mk(I8, 1, D(3), V(-5, 7, -128))), I8, 1, D(3),
           V(5, 7, -128), 0);
    int64_t big = ((int64_t)1 << 62) + 1;
    expect_i64(UN(SM_OP_Relu, mk_i64(I64, 1, D(3),
                                     (const int64_t[]){big, -big, INT64_MIN})),
               I64, (const int64_t[]){big, 0, 0});
    expect_i64(
        UN(SM_OP_Neg, mk_i64(I64, 1, D(2), (const int64_t[]){big, INT64_MIN})),
        I64, (const int64_t[]){-big, INT64_MIN});
    expect(UN(SM_OP_Not, mk(BOOL, 1, D(3), V(1, 0, 1))), BOOL, 1, D(3),
           V(0, 1, 0), 0);
    expect(UN(SM_OP_Identity, mk(I64, 2, D(2, 1), V(3, -4))), I64, 2, D(2, 1),
           V(3, -4), 0);
}

static void test_unary_errors(void **state)
{
    (void)state;
    run_fail(SM_OP_Sqrt, 1, (sm_tensor *[]){mk(I32, 1, D(1), V(4))}, NULL, 0,
             SMELT_ERR_TYPE, "Sqrt|i32|float");
    run_fail(SM_OP_Not, 1, (sm_tensor *[]){mk(F32, 1, D(1), V(4))}, NULL, 0,
             SMELT_ERR_TYPE, "Not|f32|bool");
    run_fail(SM_OP_Relu, 1, (sm_tensor *[]){mk(BOOL, 1, D(1), V(1))}, NULL, 0,
             SMELT_ERR_TYPE, "Relu|bool");
    /* Softmax shares sm_shape_unary, which checks its axis */
    sm_attr axis = {"axis", SM_ATTR_INT, 0, {.i = 2}};
    run_fail(SM_OP_Softmax, 1, (sm_tensor *[]){mk(F32, 2, D(1, 2), V(1, 2))},
             &axis, 1, SMELT_ERR_SHAPE, "Softmax|axis 2|rank 2");
}

static void test_clip(void **state)
{
    (void)state;
#define X5 mk(F32, 1, D(5), V(-3, -1, 0, 2, NAN))
    /* no bounds: identity (nan stays) */
    expect(run1(SM_OP_Clip, 1, (sm_tensor *[]){X5}, NULL, 0), F32, 1, D(5),
           V(-3, -1, 0, 2, NAN), 0);
    expect(run1(SM_OP_Clip, 3,
                (sm_tensor *[]){X5, mk(F32, 0, NULL, V(-1.5)),
                                mk(F32, 0, NULL, V(1))},
                NULL, 0),
           F32, 1, D(5), V(-1.5, -1, 0, 1, NAN), 0);
    /* max only (min absent) */
    expect(run1(SM_OP_Clip, 3,
                (sm_tensor *[]){X5, NULL, mk(F32, 1, D(1), V(0))}, NULL, 0),
           F32, 1, D(5), V(-3, -1, 0, 0, NAN), 0);
    /* min > max: max wins, as numpy.clip */
    expect(run1(SM_OP_Clip, 3,
                (sm_tensor *[]){X5, mk(F32, 0, NULL, V(5)),
                                mk(F32, 0, NULL, V(1))},
                NULL, 0),
           F32, 1, D(5), V(1, 1, 1, 1, NAN), 0);
#undef X5
    expect(run1(SM_OP_Clip, 2,
                (sm_tensor *[]){mk(I32, 1, D(3), V(-9, 3, 9)),
                                mk(I32, 0, NULL, V(0))},
                NULL, 0),
           I32, 1, D(3), V(0, 3, 9), 0);
    run_fail(SM_OP_Clip, 2,
             (sm_tensor *[]){mk(F32, 1, D(2), V(1, 2)), mk(F64, 0, NULL, V(0))},
             NULL, 0, SMELT_ERR_TYPE, "Clip|f32|f64");
    run_fail(
        SM_OP_Clip, 2,
        (sm_tensor *[]){mk(F32, 1, D(2), V(1, 2)), mk(F32, 1, D(2), V(0, 1))},
        NULL, 0, SMELT_ERR_SHAPE, "Clip|scalar|f32[2]");
}

static void test_cast(void **state)
{
    (void)state;
    sm_attr to = {"to", SM_ATTR_INT, 0, {.i = 6}}; /* int32 */
    expect(run1(SM_OP_Cast, 1,
                (sm_tensor *[]){
                    mk(F32, 1, D(6), V(2.7, -2.7, NAN, 1e10, -1e10, INFINITY))},
                &to, 1),
           I32, 1, D(6), V(2, -2, 0, INT32_MAX, INT32_MIN, INT32_MAX), 0);
    to.v.i = 2; /* uint8: saturates */
    expect(run1(SM_OP_Cast, 1,
                (sm_tensor *[]){mk(F64, 1, D(3), V(300, -5, 7.9))}, &to, 1),
           U8, 1, D(3), V(255, 0, 7), 0);
    to.v.i = 3; /* int64 -> int8 wraps */
    expect(run1(SM_OP_Cast, 1, (sm_tensor *[]){mk(I64, 1, D(2), V(300, -129))},
                &to, 1),
           I8, 1, D(2), V(44, 127), 0);
    to.v.i = 9; /* bool: non-zero is true, nan too */
    expect(run1(SM_OP_Cast, 1,
                (sm_tensor *[]){mk(F32, 1, D(4), V(0, -0.5, 3, NAN))}, &to, 1),
           BOOL, 1, D(4), V(0, 1, 1, 1), 0);
    to.v.i = 1; /* bool -> float */
    expect(run1(SM_OP_Cast, 1, (sm_tensor *[]){mk(BOOL, 1, D(2), V(1, 0))}, &to,
                1),
           F32, 1, D(2), V(1, 0), 0);
    to.v.i = 10; /* float16 rounds to nearest even */
    expect(run1(SM_OP_Cast, 1,
                (sm_tensor *[]){mk(F32, 1, D(3), V(1.00048828125, 70000, 0.5))},
                &to, 1),
           F16, 1, D(3), V(1, INFINITY, 0.5), 0);
    to.v.i = 7; /* f64 -> int64 saturates at both ends */
    expect_i64(run1(SM_OP_Cast, 1,
                    (sm_tensor *[]){mk(F64, 1, D(3), V(1e300, -1e300, -3.5))},
                    &to, 1),
               I64, (const int64_t[]){INT64_MAX, INT64_MIN, -3});
    to.v.i = 11; /* i64 -> f64 */
    expect(
        run1(SM_OP_Cast, 1, (sm_tensor *[]){mk(I64, 0, NULL, V(-12))}, &to, 1),
        F64, 0, NULL, V(-12), 0);
    to.v.i = 8; /* string */
    run_fail(SM_OP_Cast, 1, (sm_tensor *[]){mk(F32, 1, D(1), V(1))}, &to, 1,
             SMELT_ERR_UNSUPPORTED, "Cast|code 8");
    /* the ONNX code table round-trips */
    for (int dt = 1; dt < SMELT_DTYPE_COUNT; dt++)
        assert_int_equal(sm_dtype_from_onnx(sm_dtype_to_onnx(dt)), dt);
    assert_int_equal(sm_dtype_to_onnx(BF16), 16);
    assert_int_equal(sm_dtype_from_onnx(5), SMELT_DTYPE_I16);
    assert_int_equal(sm_dtype_from_onnx(0), SMELT_DTYPE_UNDEFINED);
    assert_int_equal(sm_dtype_from_onnx(13), SMELT_DTYPE_U64);
    assert_int_equal(sm_dtype_from_onnx(14), SMELT_DTYPE_UNDEFINED);
}

/* u64 beyond INT64_MAX: the ops whose result depends on the sign compare,
 * divide and shift as unsigned (a signed kernel would get each wrong). */
static void test_unsigned(void **state)
{
    (void)state;
    const smelt_dtype u64 = SMELT_DTYPE_U64;
    const int64_t big = (int64_t)UINT64_C(9223372036854775809); /* 2^63+1 */
    const int64_t top = -2;                                     /* 2^64-2 */
    expect_i64(BIN(SM_OP_Max, mk_i64(u64, 1, D(2), (int64_t[]){big, 5}),
                   mk_i64(u64, 1, D(2), (int64_t[]){3, 7})),
               u64, (int64_t[]){big, 7});
    expect_i64(BIN(SM_OP_Min, mk_i64(u64, 1, D(2), (int64_t[]){big, 5}),
                   mk_i64(u64, 1, D(2), (int64_t[]){3, 7})),
               u64, (int64_t[]){3, 5});
    /* (2^64 - 2) / 2 = 2^63 - 1; 10 / 3 = 3; by 0 gives 0 */
    expect_i64(BIN(SM_OP_Div, mk_i64(u64, 1, D(3), (int64_t[]){top, 10, 4}),
                   mk_i64(u64, 1, D(3), (int64_t[]){2, 3, 0})),
               u64, (int64_t[]){INT64_MAX, 3, 0});
    /* (2^64 - 2) mod 10 = 18446744073709551614 mod 10 = 4 */
    expect_i64(BIN(SM_OP_Mod, mk_i64(u64, 1, D(1), (int64_t[]){top}),
                   mk_i64(u64, 1, D(1), (int64_t[]){10})),
               u64, (int64_t[]){4});
    expect_i64(BIN(SM_OP_Less, mk_i64(u64, 1, D(2), (int64_t[]){big, 1}),
                   mk_i64(u64, 1, D(2), (int64_t[]){1, 2})),
               BOOL, (int64_t[]){0, 1});
    sm_attr right = {"direction", SM_ATTR_STRING, 0, {.s = "RIGHT"}};
    expect_i64(run1(SM_OP_BitShift, 2,
                    (sm_tensor *[]){mk_i64(u64, 1, D(1), (int64_t[]){big}),
                                    mk_i64(u64, 1, D(1), (int64_t[]){63})},
                    &right, 1),
               u64, (int64_t[]){1});
    expect(BIN(SM_OP_Max, mk(SMELT_DTYPE_U16, 1, D(2), V(65535, 2)),
               mk(SMELT_DTYPE_U16, 1, D(2), V(1, 300))),
           SMELT_DTYPE_U16, 1, D(2), V(65535, 300), 0);
    /* BitShift takes unsigned dtypes only */
    run_fail(SM_OP_BitShift, 2,
             (sm_tensor *[]){mk(I32, 1, D(1), V(1)), mk(I32, 1, D(1), V(1))},
             &right, 1, SMELT_ERR_TYPE, "BitShift|i32|unsigned");
    /* Cast: to u64 saturates at 0 and 2^64 - 1; from u64 is unsigned */
    sm_attr to = {"to", SM_ATTR_INT, 0, {.i = 13}};
    expect_i64(
        run1(SM_OP_Cast, 1,
             (sm_tensor *[]){mk(F64, 1, D(4), V(1e19, -5, NAN, 2e19))}, &to, 1),
        u64, (int64_t[]){(int64_t)UINT64_C(10000000000000000000), 0, 0, -1});
    to.v.i = 11;
    expect(run1(SM_OP_Cast, 1,
                (sm_tensor *[]){mk_i64(u64, 1, D(1), (int64_t[]){-1})}, &to, 1),
           F64, 1, D(1), V(18446744073709551616.0), 0);
    to.v.i = 4; /* f32 -> u16 saturates at 0 and 65535 */
    expect(run1(SM_OP_Cast, 1,
                (sm_tensor *[]){mk(F32, 1, D(3), V(70000, -1, 3.7))}, &to, 1),
           SMELT_DTYPE_U16, 1, D(3), V(65535, 0, 3), 0);
}

static void test_dropout(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out[2];
    sm_tensor *in[3] = {mk(F32, 2, D(2, 2), V(1, -2, 3, 4)), NULL, NULL};
    assert_int_equal(run_op(ctx, SM_OP_Dropout, 1, in, NULL, 0, 2, out, NULL),
                     SMELT_OK);
    expect(out[0], F32, 2, D(2, 2), V(1, -2, 3, 4), 0);
    expect(out[1], BOOL, 2, D(2, 2), V(1, 1, 1, 1), 0);
    /* training_mode = false given explicitly: still the identity */
    in[0] = mk(F32, 1, D(2), V(5, 6));
    in[1] = mk(F32, 0, NULL, V(0.5));
    in[2] = mk(BOOL, 0, NULL, V(0));
    assert_int_equal(run_op(ctx, SM_OP_Dropout, 3, in, NULL, 0, 1, out, NULL),
                     SMELT_OK);
    expect(out[0], F32, 1, D(2), V(5, 6), 0);
    /* training: each element is 0 (mask false) or 2x (mask true) */
    double ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1;
    in[0] = mk(F32, 1, D(64), ones);
    in[1] = mk(F32, 0, NULL, V(0.5));
    in[2] = mk(BOOL, 0, NULL, V(1));
    assert_int_equal(run_op(ctx, SM_OP_Dropout, 3, in, NULL, 0, 2, out, NULL),
                     SMELT_OK);
    int kept = 0;
    for (int i = 0; i < 64; i++) {
        double y = sm_load_f64(F32, out[0]->data, i);
        int m = (int)sm_load_i64(BOOL, out[1]->data, i);
        assert_true(m ? y == 2 : y == 0);
        kept += m;
    }
    assert_true(kept > 8 && kept < 56);
    sm_tensor_free(out[0]);
    sm_tensor_free(out[1]);
    in[0] = mk(F32, 1, D(2), V(5, 6));
    in[1] = mk(F32, 0, NULL, V(1.5));
    in[2] = NULL;
    assert_int_equal(run_op(ctx, SM_OP_Dropout, 2, in, NULL, 0, 1, out, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "ratio 1.5"));
    smelt_ctx_free(ctx);
}

static void test_arith_broadcast(void **state)
{
    (void)state;
    /* [2,3] + [3] */
    expect(BIN(SM_OP_Add, mk(F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
               mk(F32, 1, D(3), V(10, 20, 30))),
           F32, 2, D(2, 3), V(11, 22, 33, 14, 25, 36), 0);
    /* [2,1] * [1,3] */
    expect(BIN(SM_OP_Mul, mk(F32, 2, D(2, 1), V(2, 3)),
               mk(F32, 2, D(1, 3), V(1, 10, 100))),
           F32, 2, D(2, 3), V(2, 20, 200, 3, 30, 300), 0);
    /* scalar - [2] and [2] - scalar */
    expect(BIN(SM_OP_Sub, mk(F64, 0, NULL, V(10)), mk(F64, 1, D(2), V(1, 2))),
           F64, 1, D(2), V(9, 8), 0);
    expect(BIN(SM_OP_Sub, mk(F64, 1, D(2), V(1, 2)), mk(F64, 0, NULL, V(10))),
           F64, 1, D(2), V(-9, -8), 0);
    expect(BIN(SM_OP_Div, mk(F32, 1, D(3), V(1, -3, 1)),
               mk(F32, 1, D(3), V(4, 2, 0))),
           F32, 1, D(3), V(0.25, -1.5, INFINITY), 0);
    expect(BIN(SM_OP_Add, mk(F16, 1, D(2), V(0.5, 1024)),
               mk(F16, 1, D(2), V(0.25, 1))),
           F16, 1, D(2), V(0.75, 1025), 0);
    /* [3,1,2] + [2,1] -> [3,2,2] */
    expect(BIN(SM_OP_Add, mk(I32, 3, D(3, 1, 2), V(0, 1, 10, 11, 20, 21)),
               mk(I32, 2, D(2, 1), V(100, 200))),
           I32, 3, D(3, 2, 2),
           V(100, 101, 200, 201, 110, 111, 210, 211, 120, 121, 220, 221), 0);
}

static void test_arith_int(void **state)
{
    (void)state;
    /* integer division truncates toward zero; x / 0 gives 0 */
    expect(BIN(SM_OP_Div, mk(I32, 1, D(5), V(-7, 7, 7, 6, 5)),
               mk(I32, 1, D(5), V(2, -2, 2, 3, 0))),
           I32, 1, D(5), V(-3, -3, 3, 2, 0), 0);
    expect_i64(BIN(SM_OP_Div,
                   mk_i64(I64, 1, D(1), (const int64_t[]){INT64_MIN}),
                   mk_i64(I64, 1, D(1), (const int64_t[]){-1})),
               I64, (const int64_t[]){INT64_MIN});
    /* int64 stays exact above 2^53 */
    int64_t p53 = (int64_t)1 << 53;
    expect_i64(BIN(SM_OP_Add,
                   mk_i64(I64, 1, D(2), (const int64_t[]){p53 + 1, 5}),
                   mk_i64(I64, 0, NULL, (const int64_t[]){1})),
               I64, (const int64_t[]){p53 + 2, 6});
    expect_i64(BIN(SM_OP_Mul, mk_i64(I64, 1, D(1), (const int64_t[]){p53 + 1}),
                   mk_i64(I64, 1, D(1), (const int64_t[]){3})),
               I64, (const int64_t[]){3 * p53 + 3});
    /* int32 wraps */
    expect(
        BIN(SM_OP_Add, mk(I32, 1, D(1), V(INT32_MAX)), mk(I32, 1, D(1), V(1))),
        I32, 1, D(1), V(INT32_MIN), 0);
    expect(BIN(SM_OP_Sub, mk(U8, 1, D(1), V(0)), mk(U8, 1, D(1), V(1))), U8, 1,
           D(1), V(255), 0);
}

static void test_pow(void **state)
{
    (void)state;
    expect(BIN(SM_OP_Pow, mk(F32, 1, D(3), V(2, 4, -8)),
               mk(F32, 1, D(3), V(3, 0.5, 2))),
           F32, 1, D(3), V(8, 2, 64), 0);
    /* float base, int exponent */
    expect(
        BIN(SM_OP_Pow, mk(F32, 1, D(3), V(2, -3, 0.5)), mk(I64, 0, NULL, V(3))),
        F32, 1, D(3), V(8, -27, 0.125), 0);
    /* int base, int exponent: exact; negative exponents truncate */
    expect(BIN(SM_OP_Pow, mk(I32, 1, D(6), V(2, -3, 3, 1, -1, 0)),
               mk(I32, 1, D(6), V(10, 3, -1, -5, -3, 0))),
           I32, 1, D(6), V(1024, -27, 0, 1, -1, 1), 0);
    expect_i64(BIN(SM_OP_Pow, mk(I64, 1, D(1), V(3)), mk(I64, 1, D(1), V(39))),
               I64, (const int64_t[]){4052555153018976267});
    /* int base, float exponent: the result truncates into the base's type */
    expect(
        BIN(SM_OP_Pow, mk(I32, 1, D(2), V(9, 2)), mk(F32, 1, D(2), V(0.5, -1))),
        I32, 1, D(2), V(3, 0), 0);
}

static void test_minmax_sum(void **state)
{
    (void)state;
    /* variadic, broadcasting, nan propagates */
    expect(BIN(SM_OP_Max, mk(F32, 2, D(2, 2), V(1, 5, NAN, 0)),
               mk(F32, 1, D(2), V(3, 2)), mk(F32, 0, NULL, V(4))),
           F32, 2, D(2, 2), V(4, 5, NAN, 4), 0);
    expect(BIN(SM_OP_Min, mk(F32, 2, D(2, 2), V(1, 5, -7, 0)),
               mk(F32, 1, D(2), V(3, 2)), mk(F32, 0, NULL, V(4))),
           F32, 2, D(2, 2), V(1, 2, -7, 0), 0);
    expect(BIN(SM_OP_Sum, mk(I64, 1, D(3), V(1, 2, 3)),
               mk(I64, 2, D(2, 1), V(10, 20)), mk(I64, 0, NULL, V(100))),
           I64, 2, D(2, 3), V(111, 112, 113, 121, 122, 123), 0);
    /* a single input is copied */
    expect(BIN(SM_OP_Sum, mk(F32, 1, D(2), V(1.5, 2))), F32, 1, D(2), V(1.5, 2),
           0);
    expect(BIN(SM_OP_Max, mk(I8, 1, D(3), V(-128, 5, 0)),
               mk(I8, 1, D(3), V(-1, 4, 127))),
           I8, 1, D(3), V(-1, 5, 127), 0);
}

static void test_compare_logic(void **state)
{
    (void)state;
    expect(BIN(SM_OP_Less, mk(F32, 2, D(2, 2), V(1, 2, 3, 4)),
               mk(F32, 1, D(2), V(2, 2))),
           BOOL, 2, D(2, 2), V(1, 0, 0, 0), 0);
    expect(BIN(SM_OP_Greater, mk(F32, 1, D(3), V(1, NAN, 3)),
               mk(F32, 0, NULL, V(2))),
           BOOL, 1, D(3), V(0, 0, 1), 0);
    /* int64 compares exactly: 2^60 and 2^60 + 1 are the same double */
    int64_t p60 = (int64_t)1 << 60;
    expect(BIN(SM_OP_Less, mk_i64(I64, 1, D(1), (const int64_t[]){p60}),
               mk_i64(I64, 1, D(1), (const int64_t[]){p60 + 1})),
           BOOL, 1, D(1), V(1), 0);
    expect(BIN(SM_OP_Equal, mk(I32, 2, D(2, 1), V(1, 2)),
               mk(I32, 1, D(2), V(1, 2))),
           BOOL, 2, D(2, 2), V(1, 0, 0, 1), 0);
    expect(BIN(SM_OP_Equal, mk(BOOL, 1, D(2), V(1, 0)),
               mk(BOOL, 1, D(2), V(1, 1))),
           BOOL, 1, D(2), V(1, 0), 0);
    expect(BIN(SM_OP_And, mk(BOOL, 2, D(2, 1), V(1, 0)),
               mk(BOOL, 1, D(2), V(1, 0))),
           BOOL, 2, D(2, 2), V(1, 0, 0, 0), 0);
    expect(BIN(SM_OP_Or, mk(BOOL, 2, D(2, 1), V(1, 0)),
               mk(BOOL, 1, D(2), V(1, 0))),
           BOOL, 2, D(2, 2), V(1, 1, 1, 0), 0);
}

static void test_where(void **state)
{
    (void)state;
    /* cond [2,1], x [1,3], y scalar -> [2,3] */
    expect(run1(SM_OP_Where, 3,
                (sm_tensor *[]){mk(BOOL, 2, D(2, 1), V(1, 0)),
                                mk(F32, 2, D(1, 3), V(1, 2, 3)),
                                mk(F32, 0, NULL, V(-1))},
                NULL, 0),
           F32, 2, D(2, 3), V(1, 2, 3, -1, -1, -1), 0);
    int64_t big = INT64_MAX - 1;
    expect_i64(
        run1(SM_OP_Where, 3,
             (sm_tensor *[]){mk(BOOL, 1, D(2), V(0, 1)),
                             mk_i64(I64, 1, D(2), (const int64_t[]){big, big}),
                             mk_i64(I64, 1, D(1), (const int64_t[]){-big})},
             NULL, 0),
        I64, (const int64_t[]){-big, big});
    run_fail(SM_OP_Where, 3,
             (sm_tensor *[]){mk(F32, 1, D(1), V(1)), mk(F32, 1, D(1), V(1)),
                             mk(F32, 1, D(1), V(1))},
             NULL, 0, SMELT_ERR_TYPE, "Where|input 0|f32|bool");
    run_fail(SM_OP_Where, 3,
             (sm_tensor *[]){mk(BOOL, 1, D(1), V(1)), mk(F32, 1, D(1), V(1)),
                             mk(F64, 1, D(1), V(1))},
             NULL, 0, SMELT_ERR_TYPE, "Where|f32|f64");
}

static void test_broadcast_errors(void **state)
{
    (void)state;
    run_fail(SM_OP_Add, 2,
             (sm_tensor *[]){mk(F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
                             mk(F32, 1, D(4), V(1, 2, 3, 4))},
             NULL, 0, SMELT_ERR_SHAPE, "Add|3|4");
    run_fail(SM_OP_Add, 2,
             (sm_tensor *[]){mk(F32, 1, D(1), V(1)), mk(I64, 1, D(1), V(1))},
             NULL, 0, SMELT_ERR_TYPE, "Add|f32|i64");
    run_fail(SM_OP_Sum, 3,
             (sm_tensor *[]){mk(F32, 1, D(2), V(1, 2)),
                             mk(F32, 1, D(2), V(1, 2)),
                             mk(F32, 1, D(3), V(1, 2, 3))},
             NULL, 0, SMELT_ERR_SHAPE, "Sum|2|3");
    run_fail(SM_OP_And, 2,
             (sm_tensor *[]){mk(F32, 1, D(1), V(1)), mk(F32, 1, D(1), V(1))},
             NULL, 0, SMELT_ERR_TYPE, "And|f32|bool");
    run_fail(SM_OP_Add, 2,
             (sm_tensor *[]){mk(BOOL, 1, D(1), V(1)), mk(BOOL, 1, D(1), V(1))},
             NULL, 0, SMELT_ERR_TYPE, "Add|bool");
    run_fail(SM_OP_Less, 2,
             (sm_tensor *[]){mk(I32, 1, D(1), V(1)), mk(I64, 1, D(1), V(1))},
             NULL, 0, SMELT_ERR_TYPE, "Less|i32|i64");
}

/* A type from a dims string: "batch,3,?" (names are interned in syms so
 * the pointers stay valid) or "*" for unknown rank. */
static sm_type ty(smelt_dtype dt, const char *dims)
{
    static const char *syms[] = {"batch", "n", "m"};
    sm_type t;
    sm_type_unknown(&t);
    t.dtype = dt;
    if (strcmp(dims, "*") == 0)
        return t;
    t.ndim = 0;
    for (const char *p = dims; *p;) {
        size_t len = strcspn(p, ",");
        sm_dim d = {-1, NULL};
        if (*p >= '0' && *p <= '9')
            d.size = strtoll(p, NULL, 10);
        for (int i = 0; i < N_OF(syms); i++)
            if (strlen(syms[i]) == len && strncmp(p, syms[i], len) == 0)
                d.sym = syms[i];
        t.dims[t.ndim++] = d;
        p += len + (p[len] == ',');
    }
    return t;
}

/* Infers op's output 0 from types alone (no data), as graph inference
 * does, and compares its text form with want. */
static void infer(sm_op op, int n, const sm_type *types, const char *want)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_operand opnd[4];
    for (int i = 0; i < n; i++)
        opnd[i] = (sm_operand){1, &types[i], NULL};
    sm_type out[2];
    sm_type_unknown(&out[0]);
    sm_type_unknown(&out[1]);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_shape_ctx s = {
        info, {NULL, 0, info->spec, info->n_spec}, n, opnd, 1, out, NULL, ctx};
    smelt_status st = info->shape(&s);
    if (st != SMELT_OK)
        fail_msg("%s: %s", info->name, smelt_ctx_error(ctx));
    char buf[128];
    sm_type_str(&out[0], buf, sizeof buf);
    assert_string_equal(buf, want);
    smelt_ctx_free(ctx);
}

#define INFER(op, want, ...)                                                   \
    infer(op, N_OF(((sm_type[]){__VA_ARGS__})), (sm_type[]){__VA_ARGS__}, want)

static void test_infer_symbolic(void **state)
{
    (void)state;
    INFER(SM_OP_Add, "f32[batch,3]", ty(F32, "batch,3"), ty(F32, "3"));
    INFER(SM_OP_Mul, "f32[batch,4]", ty(F32, "batch,1"), ty(F32, "1,4"));
    INFER(SM_OP_Sub, "f32[batch,3]", ty(F32, "batch,3"), ty(F32, "batch,1"));
    INFER(SM_OP_Add, "f32[3]", ty(F32, "n"), ty(F32, "3"));
    INFER(SM_OP_Add, "f32[?]", ty(F32, "n"), ty(F32, "m"));
    INFER(SM_OP_Add, "f32[*]", ty(F32, "*"), ty(F32, "3"));
    /* an unknown dtype takes the other input's */
    INFER(SM_OP_Add, "i64[2]", ty(SMELT_DTYPE_UNDEFINED, "2"), ty(I64, "1"));
    INFER(SM_OP_Sum, "f32[batch,2,3]", ty(F32, "3"), ty(F32, "2,1"),
          ty(F32, "batch,1,1"));
    INFER(SM_OP_Less, "bool[batch,3]", ty(I32, "batch,3"), ty(I32, ""));
    INFER(SM_OP_Where, "f64[batch,?]", ty(BOOL, "batch,1"), ty(F64, "?"),
          ty(F64, "1"));
    INFER(SM_OP_Pow, "f32[2]", ty(F32, "2"), ty(I64, ""));
    INFER(SM_OP_Exp, "f32[batch,?,3]", ty(F32, "batch,?,3"));
    INFER(SM_OP_Relu, "i32[*]", ty(I32, "*"));
    INFER(SM_OP_Dropout, "f16[n]", ty(F16, "n"));
}

static void test_infer_cast_symbolic(void **state)
{
    (void)state;
    sm_type in = ty(F32, "batch,2");
    sm_operand opnd = {1, &in, NULL};
    sm_type out;
    sm_attr to = {"to", SM_ATTR_INT, 0, {.i = 7}};
    const sm_op_info *info = sm_op_info_get(SM_OP_Cast);
    sm_shape_ctx s = {
        info, {&to, 1, info->spec, info->n_spec}, 1, &opnd, 1, &out, NULL,
        NULL};
    assert_int_equal(info->shape(&s), SMELT_OK);
    char buf[64];
    sm_type_str(&out, buf, sizeof buf);
    assert_string_equal(buf, "i64[batch,2]");
    assert_string_equal(out.dims[0].sym, "batch");
}

/* Cost of op over concrete types. */
static sm_cost cost_of(sm_op op, int n, const sm_type *types, sm_type out)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_operand opnd[4];
    for (int i = 0; i < n; i++)
        opnd[i] = (sm_operand){1, &types[i], NULL};
    sm_shape_ctx s = {
        info, {NULL, 0, info->spec, info->n_spec}, n, opnd, 1, &out, NULL,
        NULL};
    sm_cost c = {-1, -1, -1};
    info->cost(&s, &c);
    return c;
}

static void test_cost(void **state)
{
    (void)state;
    sm_cost c = cost_of(SM_OP_Add, 2, (sm_type[]){ty(F32, "2,3"), ty(F32, "3")},
                        ty(F32, "2,3"));
    assert_true(c.flops == 6 && c.bytes_read == 36 && c.bytes_write == 24);
    c = cost_of(SM_OP_Sum, 3,
                (sm_type[]){ty(F64, "4"), ty(F64, "4"), ty(F64, "4")},
                ty(F64, "4"));
    assert_true(c.flops == 8 && c.bytes_read == 96 && c.bytes_write == 32);
    c = cost_of(SM_OP_Exp, 1, (sm_type[]){ty(F16, "batch,8")},
                ty(F16, "batch,8"));
    assert_true(c.flops == 8 && c.bytes_read == 16 && c.bytes_write == 16);
    c = cost_of(SM_OP_Identity, 1, (sm_type[]){ty(I64, "5")}, ty(I64, "5"));
    assert_true(c.flops == 0 && c.bytes_read == 40 && c.bytes_write == 40);
    c = cost_of(SM_OP_Where, 3,
                (sm_type[]){ty(BOOL, "4"), ty(F32, "4"), ty(F32, "1")},
                ty(F32, "4"));
    assert_true(c.flops == 8 && c.bytes_read == 24 && c.bytes_write == 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_float),
        cmocka_unit_test(test_unary_dtypes),
        cmocka_unit_test(test_unary_errors),
        cmocka_unit_test(test_clip),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_unsigned),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_arith_broadcast),
        cmocka_unit_test(test_arith_int),
        cmocka_unit_test(test_pow),
        cmocka_unit_test(test_minmax_sum),
        cmocka_unit_test(test_compare_logic),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_broadcast_errors),
        cmocka_unit_test(test_infer_symbolic),
        cmocka_unit_test(test_infer_cast_symbolic),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
