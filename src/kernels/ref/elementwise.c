/*
 * elementwise.c - reference kernels of the elementwise unary ops, Clip,
 * Identity and Dropout.
 *
 * Each op is a pair of scalar functions: one over doubles (every float
 * dtype is computed in double and rounded once on store) and one over
 * int64 (integers and bool, so int64 stays exact); NULL where the op is
 * not defined on that kind. Integer negation wraps like two's complement
 * (Neg and Abs of the most negative value give it back, as in numpy).
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
