/*
 * binary.c - reference kernels of the broadcasting ops: arithmetic,
 * variadic Min/Max/Sum, comparisons, And/Or and Where.
 *
 * Each op is a pair of scalar functions, one over doubles and one over
 * int64 (NULL where the op is not defined on that kind). An op runs in
 * double when any input is a float dtype (Pow's exponent may be one while
 * the base is an integer; the result is then truncated on store), else in
 * int64 so that integers stay exact. Integer arithmetic wraps like two's
 * complement instead of overflowing; integer division truncates toward
 * zero (as C and ONNX Runtime do, unlike numpy's floor division).
 * u64 inputs, loaded as their int64 bit pattern, use the unsigned
 * variants (BU) of the ops where the sign matters.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/pointwise.h"
#include "kernels/ref/ref_util.h"

typedef sm_binary_fn binary_fn;

#define BF(name, expr)                                                         \
    static double bf_##name(double x, double y)                                \
    {                                                                          \
        return (expr);                                                         \
    }
#define BI(name, expr)                                                         \
    static int64_t bi_##name(int64_t x, int64_t y)                             \
    {                                                                          \
        return (expr);                                                         \
    }

#define BU(name, expr)                                                         \
    static int64_t bu_##name(int64_t sx, int64_t sy)                           \
    {                                                                          \
        uint64_t x = (uint64_t)sx, y = (uint64_t)sy;                           \
        return (int64_t)(expr);                                                \
    }

/* Wrapping integer arithmetic (unsigned in C, so no undefined overflow). */
#define WRAP(op) (int64_t)((uint64_t)x op(uint64_t) y)

/*
 * Integer division truncating toward zero. Division by zero does not
 * trap: it gives 0 (ONNX leaves it undefined). INT64_MIN / -1 wraps to
 * INT64_MIN.
 */
static int64_t div_i64(int64_t x, int64_t y)
{
    if (y == 0)
        return 0;
    if (y == -1)
        return (int64_t)(0u - (uint64_t)x);
    return x / y;
}

/*
 * Integer power by squaring, wrapping on overflow. A negative exponent
 * gives the truncated value of 1 / x^-y: 1 for x = 1, +-1 for x = -1, and
 * 0 otherwise (including x = 0, which has no value).
 */
static int64_t pow_i64(int64_t x, int64_t y)
{
    if (y < 0)
        return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)x;
    for (uint64_t e = (uint64_t)y; e; e >>= 1) {
        if (e & 1)
            r *= b;
        b *= b;
    }
    return (int64_t)r;
}

/* Unsigned power by squaring, wrapping modulo 2^64. */
static uint64_t pow_u64(uint64_t x, uint64_t y)
{
    uint64_t r = 1;
    for (; y; y >>= 1) {
        if (y & 1)
            r *= x;
        x *= x;
    }
    return r;
}

/* Min and Max propagate nan, as numpy.minimum / maximum do. */
static double min_f64(double x, double y)
{
    return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
}

static double max_f64(double x, double y)
{
    return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
}

BF(add, x + y)
BI(add, WRAP(+))
BF(sub, x - y)
BI(sub, WRAP(-))
BF(mul, x *y)
BI(mul, WRAP(*))
BF(div, x / y)
BI(div, div_i64(x, y))
BF(pow, pow(x, y))
BI(pow, pow_i64(x, y))
BF(min, min_f64(x, y))
BI(min, x < y ? x : y)
BF(max, max_f64(x, y))
BI(max, x > y ? x : y)
BF(equal, x == y)
BI(equal, x == y)
BF(less, x < y)
BI(less, x < y)
BF(greater, x > y)
BI(greater, x > y)
BI(and, x &&y)
BI(or, x || y)
BU(div, y ? x / y : 0)
BU(pow, pow_u64(x, y))
BU(min, x < y ? x : y)
BU(max, x > y ? x : y)
BU(less, x < y)
BU(greater, x > y)

/* Fails unless t broadcasts to out's shape, so that every offset the
 * kernels compute lies inside t. */
static smelt_status check_bcast(const sm_kargs *a, int i, const sm_tensor *out)
{
    const sm_tensor *t = a->in[i];
    if (!t)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG, "%s: input %d is missing",
                      a->op_name, i);
    int ok = t->ndim <= out->ndim;
    for (int d = 0; ok && d < t->ndim; d++) {
        int64_t n = t->dims[d], m = out->dims[d + out->ndim - t->ndim];
        ok = n == 1 || n == m;
    }
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: input %d does not broadcast to the output shape",
                      a->op_name, i);
    return SMELT_OK;
}

/* out = fold of fn over all inputs, left to right, with broadcasting. */
smelt_status sm_ref_nary_run(const sm_kargs *a, const binary_fn *fn)
{
    sm_tensor *y = a->out[0];
    int as_float = 0, as_u64 = 0;
    for (int k = 0; k < a->n_in; k++) {
        SM_TRY(check_bcast(a, k, y));
        as_float |= sm_dtype_is_float(a->in[k]->dtype);
        as_u64 |= a->in[k]->dtype == SMELT_DTYPE_U64;
    }
    int64_t (*ifn)(int64_t, int64_t) = as_u64 && fn->u ? fn->u : fn->i;
    if (as_float ? !fn->f : !fn->i)
        return sm_err(a->ctx, SMELT_ERR_TYPE, "%s: dtype %s is not supported",
                      a->op_name, smelt_dtype_name(a->in[0]->dtype));
    int64_t idx[SMELT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < y->numel; i++) {
        const sm_tensor *t = a->in[0];
        int64_t off = sm_bcast_offset(t, y->ndim, idx);
        if (as_float) {
            double acc = sm_load_f64(t->dtype, t->data, off);
            for (int k = 1; k < a->n_in; k++) {
                t = a->in[k];
                off = sm_bcast_offset(t, y->ndim, idx);
                acc = fn->f(acc, sm_load_f64(t->dtype, t->data, off));
            }
            if (fn->mean)
                acc /= a->n_in;
            sm_store_f64(y->dtype, y->data, i, acc);
        } else {
            int64_t acc = sm_load_i64(t->dtype, t->data, off);
            for (int k = 1; k < a->n_in; k++) {
                t = a->in[k];
                off = sm_bcast_offset(t, y->ndim, idx);
                acc = ifn(acc, sm_load_i64(t->dtype, t->data, off));
            }
            sm_store_i64(y->dtype, y->data, i, acc);
        }
        sm_index_next(y->ndim, y->dims, idx);
    }
    return SMELT_OK;
}

#define BINARY_KERNEL(name, F, I, U)                                           \
    smelt_status sm_ref_##name(const sm_kargs *a)                              \
    {                                                                          \
        static const binary_fn fn = {F, I, 0, U};                              \
        return sm_ref_nary_run(a, &fn);                                        \
    }

BINARY_KERNEL(add, bf_add, bi_add, NULL)
BINARY_KERNEL(sub, bf_sub, bi_sub, NULL)
BINARY_KERNEL(mul, bf_mul, bi_mul, NULL)
BINARY_KERNEL(div, bf_div, bi_div, bu_div)
BINARY_KERNEL(pow, bf_pow, bi_pow, bu_pow)
BINARY_KERNEL(min, bf_min, bi_min, bu_min)
BINARY_KERNEL(max, bf_max, bi_max, bu_max)
BINARY_KERNEL(sum, bf_add, bi_add, NULL)
BINARY_KERNEL(equal, bf_equal, bi_equal, NULL)
BINARY_KERNEL(less, bf_less, bi_less, bu_less)
BINARY_KERNEL(greater, bf_greater, bi_greater, bu_greater)
BINARY_KERNEL(and, NULL, bi_and, NULL)
BINARY_KERNEL(or, NULL, bi_or, NULL)

/* Where(cond, x, y): copies each element from x where cond holds, else
 * from y, byte for byte (so every dtype is exact). */
smelt_status sm_ref_where(const sm_kargs *a)
{
    sm_tensor *out = a->out[0];
    if (a->n_in != 3)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: expected 3 inputs, got %d", a->op_name, a->n_in);
    for (int k = 0; k < 3; k++)
        SM_TRY(check_bcast(a, k, out));
    const sm_tensor *c = a->in[0];
    if (a->in[1]->dtype != out->dtype || a->in[2]->dtype != out->dtype)
        return sm_err(a->ctx, SMELT_ERR_TYPE,
                      "%s: x and y must both have the output's dtype %s",
                      a->op_name, smelt_dtype_name(out->dtype));
    size_t es = smelt_dtype_size(out->dtype);
    int64_t idx[SMELT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t coff = sm_bcast_offset(c, out->ndim, idx);
        const sm_tensor *src =
            sm_load_i64(c->dtype, c->data, coff) ? a->in[1] : a->in[2];
        int64_t off = sm_bcast_offset(src, out->ndim, idx);
        memcpy((char *)out->data + (size_t)i * es,
               (const char *)src->data + (size_t)off * es, es);
        sm_index_next(out->ndim, out->dims, idx);
    }
    return SMELT_OK;
}
