/*
 * elementwise.c - reference kernels of the elementwise ops: the unary ops,
 * Clip, Identity, Dropout and Cast (which CastLike runs too); and of the
 * broadcasting ops: arithmetic, variadic Min/Max/Sum, comparisons, And/Or
 * and Where.
 *
 * Each op is a pair of scalar functions: one over doubles (every float
 * dtype is computed in double and rounded once on store) and one over
 * int64 (integers and bool, so int64 stays exact); NULL where the op is
 * not defined on that kind. Integer negation wraps like two's complement
 * (Neg and Abs of the most negative value give it back, as in numpy).
 *
 * A broadcasting op runs in double when any input is a float dtype (Pow's
 * exponent may be one while the base is an integer; the result is then
 * truncated on store), else in int64 so that integers stay exact. Integer
 * arithmetic wraps like two's complement instead of overflowing; integer
 * division truncates toward zero (as C and ONNX Runtime do, unlike numpy's
 * floor division). u64 inputs, loaded as their int64 bit pattern, use the
 * unsigned variants (BU) of the ops where the sign matters.
 *
 * Cast's conversion rules (ONNX, as ONNX Runtime implements them):
 * - float to integer truncates toward zero, saturates at the target's
 *   range, and nan becomes 0;
 * - integer to integer wraps (two's complement), as numpy does;
 * - anything to bool is "not zero" (nan is not zero, so true);
 * - bool reads as 0 or 1;
 * - to a float dtype: through double, rounded once to the target.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/pointwise.h"
#include "kernels/ref/ref_util.h"

typedef sm_unary_prm unary_prm;
typedef sm_unary_fn unary_fn;

#define UF(name, expr)                                                         \
    static double uf_##name(double x, const unary_prm *p)                      \
    {                                                                          \
        (void)p;                                                               \
        return (expr);                                                         \
    }
#define UI(name, expr)                                                         \
    static int64_t ui_##name(int64_t x, const unary_prm *p)                    \
    {                                                                          \
        (void)p;                                                               \
        return (expr);                                                         \
    }

static int64_t wrap_neg(int64_t x)
{
    return (int64_t)(0u - (uint64_t)x);
}

/* Logistic function, written so that neither branch overflows. */
static double sigmoid(double x)
{
    if (x >= 0)
        return 1 / (1 + exp(-x));
    double e = exp(x);
    return e / (1 + e);
}

/* log(exp(x) + 1) without overflow for large x. */
static double softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

UF(neg, -x)
UI(neg, wrap_neg(x))
UF(abs, fabs(x))
UI(abs, x < 0 ? wrap_neg(x) : x)
UF(sqrt, sqrt(x))
UF(exp, exp(x))
UF(log, log(x))
UF(tanh, tanh(x))
UF(sigmoid, sigmoid(x))
UF(relu, x < 0 ? 0 : x) /* nan stays nan */
UI(relu, x < 0 ? 0 : x)
UF(leakyrelu, x < 0 ? p->alpha * x : x)
UF(erf, erf(x))
UF(reciprocal, 1 / x)
UF(floor, floor(x))
UF(ceil, ceil(x))
UF(sin, sin(x))
UF(cos, cos(x))
UF(softplus, softplus(x))
UI(not, !x)
/* numpy's clip: min(max(x, lo), hi), so hi wins when lo > hi; nan stays. */
UF(clip, x<p->lo ? (p->lo > p->hi ? p->hi : p->lo) : x> p->hi ? p->hi : x)
UI(clip,
   x<p->ilo ? (p->ilo > p->ihi ? p->ihi : p->ilo) : x> p->ihi ? p->ihi : x)

/* Fails unless out has in's element count (the kernels index both by
 * the same flat position). */
static smelt_status check_same_numel(const sm_kargs *a, const sm_tensor *in,
                                     const sm_tensor *out)
{
    if (!in || !out || in->numel != out->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    return SMELT_OK;
}

/* y[i] = fn(x[i]) over input 0 into output 0. */
smelt_status sm_ref_unary_run(const sm_kargs *a, const unary_fn *fn,
                              const unary_prm *p)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    SM_TRY(check_same_numel(a, x, y));
    int as_float = sm_dtype_is_float(x->dtype);
    if (as_float ? !fn->f : !fn->i)
        return sm_err(a->ctx, SMELT_ERR_TYPE, "%s: dtype %s is not supported",
                      a->op_name, smelt_dtype_name(x->dtype));
    for (int64_t i = 0; i < x->numel; i++) {
        if (as_float)
            sm_store_f64(y->dtype, y->data, i,
                         fn->f(sm_load_f64(x->dtype, x->data, i), p));
        else
            sm_store_i64(y->dtype, y->data, i,
                         fn->i(sm_load_i64(x->dtype, x->data, i), p));
    }
    return SMELT_OK;
}

/* Defines sm_ref_<name> over the scalar pair (F, I); the only attribute
 * any of them reads is LeakyRelu's alpha. */
#define UNARY_KERNEL(name, F, I)                                               \
    smelt_status sm_ref_##name(const sm_kargs *a)                              \
    {                                                                          \
        static const unary_fn fn = {F, I};                                     \
        unary_prm p = {0};                                                     \
        p.alpha = sm_attrs_float(&a->attrs, "alpha", 0.01);                    \
        return sm_ref_unary_run(a, &fn, &p);                                   \
    }

UNARY_KERNEL(neg, uf_neg, ui_neg)
UNARY_KERNEL(abs, uf_abs, ui_abs)
UNARY_KERNEL(sqrt, uf_sqrt, NULL)
UNARY_KERNEL(exp, uf_exp, NULL)
UNARY_KERNEL(log, uf_log, NULL)
UNARY_KERNEL(tanh, uf_tanh, NULL)
UNARY_KERNEL(sigmoid, uf_sigmoid, NULL)
UNARY_KERNEL(relu, uf_relu, ui_relu)
UNARY_KERNEL(leakyrelu, uf_leakyrelu, NULL)
UNARY_KERNEL(erf, uf_erf, NULL)
UNARY_KERNEL(reciprocal, uf_reciprocal, NULL)
UNARY_KERNEL(floor, uf_floor, NULL)
UNARY_KERNEL(ceil, uf_ceil, NULL)
UNARY_KERNEL(sin, uf_sin, NULL)
UNARY_KERNEL(cos, uf_cos, NULL)
UNARY_KERNEL(softplus, uf_softplus, NULL)
UNARY_KERNEL(not, NULL, ui_not)

/* Reads Clip's optional bound input i (a one-element tensor of x's
 * dtype) into *f and *v; leaves them alone when the input is absent. */
static smelt_status clip_bound(const sm_kargs *a, int i, double *f, int64_t *v)
{
    const sm_tensor *b = i < a->n_in ? a->in[i] : NULL;
    if (!b)
        return SMELT_OK;
    if (b->numel != 1)
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: bound (input %d) must be a scalar, got %lld "
                      "elements",
                      a->op_name, i, (long long)b->numel);
    if (b->dtype != a->in[0]->dtype)
        return sm_err(a->ctx, SMELT_ERR_TYPE,
                      "%s: bound (input %d) has dtype %s, input 0 has %s",
                      a->op_name, i, smelt_dtype_name(b->dtype),
                      smelt_dtype_name(a->in[0]->dtype));
    *f = sm_load_f64(b->dtype, b->data, 0);
    *v = sm_load_i64(b->dtype, b->data, 0);
    return SMELT_OK;
}

/* Clip(x, min?, max?): absent bounds are unbounded. */
smelt_status sm_ref_clip(const sm_kargs *a)
{
    static const unary_fn fn = {uf_clip, ui_clip};
    unary_prm p = {
        .lo = -INFINITY, .hi = INFINITY, .ilo = INT64_MIN, .ihi = INT64_MAX};
    SM_TRY(check_same_numel(a, a->in[0], a->out[0]));
    SM_TRY(clip_bound(a, 1, &p.lo, &p.ilo));
    SM_TRY(clip_bound(a, 2, &p.hi, &p.ihi));
    return sm_ref_unary_run(a, &fn, &p);
}

/* A byte copy: input and output have the same dtype and shape. */
static smelt_status copy_tensor(const sm_kargs *a, const sm_tensor *x,
                                sm_tensor *y)
{
    SM_TRY(check_same_numel(a, x, y));
    if (x->dtype != y->dtype)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output dtype %s differs from input dtype %s",
                      a->op_name, smelt_dtype_name(y->dtype),
                      smelt_dtype_name(x->dtype));
    if (x->nbytes)
        memcpy(y->data, x->data, x->nbytes);
    return SMELT_OK;
}

smelt_status sm_ref_identity(const sm_kargs *a)
{
    return copy_tensor(a, a->in[0], a->out[0]);
}

/* splitmix64: a small, well-mixed generator; Dropout's training mode
 * only needs a reproducible stream from the `seed` attribute. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/*
 * Dropout(data, ratio = 0.5, training_mode = false). In inference mode (or
 * ratio 0) it is the identity and the mask is all true. In training mode
 * each element is kept with probability 1 - ratio and scaled by
 * 1 / (1 - ratio), drawn from a stream seeded by `seed` (0 when absent).
 */
smelt_status sm_ref_dropout(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    sm_tensor *mask = a->n_out > 1 ? a->out[1] : NULL;
    const sm_tensor *r = a->n_in > 1 ? a->in[1] : NULL;
    const sm_tensor *tm = a->n_in > 2 ? a->in[2] : NULL;
    double ratio = r && r->numel > 0 ? sm_load_f64(r->dtype, r->data, 0) : 0.5;
    int training = tm && tm->numel > 0 && sm_load_i64(tm->dtype, tm->data, 0);
    if (mask)
        SM_TRY(check_same_numel(a, x, mask));
    if (!training || ratio == 0) {
        if (mask)
            memset(mask->data, 1, mask->nbytes);
        return copy_tensor(a, x, y);
    }
    if (!(ratio > 0 && ratio < 1))
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: ratio %g is outside [0, 1)", a->op_name, ratio);
    SM_TRY(check_same_numel(a, x, y));
    uint64_t state = (uint64_t)sm_attrs_int(&a->attrs, "seed", 0);
    double scale = 1 / (1 - ratio);
    for (int64_t i = 0; i < x->numel; i++) {
        double u = (double)(splitmix64(&state) >> 11) * 0x1p-53;
        int keep = u >= ratio;
        double v = keep ? sm_load_f64(x->dtype, x->data, i) * scale : 0;
        sm_store_f64(y->dtype, y->data, i, v);
        if (mask)
            sm_store_i64(mask->dtype, mask->data, i, keep);
    }
    return SMELT_OK;
}

/* ---- broadcasting ops ---------------------------------------------------- */

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

/* ---- Cast ---------------------------------------------------------------- */

/* Range of an integer dtype. */
static void int_range(smelt_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case SMELT_DTYPE_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case SMELT_DTYPE_U8: *lo = 0, *hi = UINT8_MAX; break;
    case SMELT_DTYPE_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case SMELT_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case SMELT_DTYPE_U16: *lo = 0, *hi = UINT16_MAX; break;
    case SMELT_DTYPE_U32: *lo = 0, *hi = UINT32_MAX; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* Float to integer: truncate, saturate, nan -> 0. (double)hi may round
 * up (2^63 for int64), so the comparisons use >= and <=. */
static int64_t saturate(double v, int64_t lo, int64_t hi)
{
    if (isnan(v))
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

smelt_status sm_ref_cast(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (!x || !y || x->numel != y->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    int from_float = sm_dtype_is_float(x->dtype);
    int to_float = sm_dtype_is_float(y->dtype);
    int64_t lo, hi;
    int_range(y->dtype, &lo, &hi);
    for (int64_t i = 0; i < x->numel; i++) {
        if (from_float && y->dtype == SMELT_DTYPE_U64) {
            /* beyond int64: sm_store_f64 saturates to [0, 2^64 - 1] */
            sm_store_f64(y->dtype, y->data, i,
                         sm_load_f64(x->dtype, x->data, i));
        } else if (from_float && sm_dtype_is_int(y->dtype)) {
            double v = sm_load_f64(x->dtype, x->data, i);
            sm_store_i64(y->dtype, y->data, i, saturate(v, lo, hi));
        } else if (from_float || to_float) {
            sm_store_f64(y->dtype, y->data, i,
                         sm_load_f64(x->dtype, x->data, i));
        } else {
            sm_store_i64(y->dtype, y->data, i,
                         sm_load_i64(x->dtype, x->data, i));
        }
    }
    return SMELT_OK;
}
