/*
 * math.c - reference kernels of the further elementwise math ops
 * (rounding, trigonometric and hyperbolic functions, IsNaN / IsInf), the
 * activations (Elu, Selu, Celu, ThresholdedRelu, HardSigmoid, HardSwish,
 * Softsign, Mish, Shrink, PRelu), the bitwise and logic ops, Mod, the
 * comparisons LessOrEqual / GreaterOrEqual, Mean, and Det.
 *
 * The elementwise ones are scalar pairs (double, int64) run by the loops
 * of elementwise.c (pointwise.h). Integer arithmetic wraps like two's
 * complement; Mod by zero gives 0 instead of trapping (ONNX leaves it
 * undefined).
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/pointwise.h"

#define UF(name, expr)                                                         \
    static double uf_##name(double x, const sm_unary_prm *p)                   \
    {                                                                          \
        (void)p;                                                               \
        return (expr);                                                         \
    }
#define UI(name, expr)                                                         \
    static int64_t ui_##name(int64_t x, const sm_unary_prm *p)                 \
    {                                                                          \
        (void)p;                                                               \
        return (expr);                                                         \
    }

/* x * tanh(softplus(x)), with tanh(log(1 + e^x)) written as
 * n(n + 2) / (n(n + 2) + 2) for n = e^x: exact algebra, and no overflow
 * (beyond x = 20 the factor is 1 in double). */
static double mish(double x)
{
    if (x > 20)
        return x;
    double n = exp(x), t = n * (n + 2);
    return x * t / (t + 2);
}

static double hardsigmoid(double x, double alpha, double beta)
{
    double v = alpha * x + beta;
    return v < 0 ? 0 : v > 1 ? 1 : v; /* nan stays nan */
}

/* Shrink: lambd is alpha, bias is beta. */
static double shrink(double x, const sm_unary_prm *p)
{
    return x < -p->alpha ? x + p->beta : x > p->alpha ? x - p->beta : 0;
}

UF(sign, x > 0 ? 1 : x < 0 ? -1 : x) /* keeps 0, -0 and nan */
UI(sign, (x > 0) - (x < 0))
UF(round, nearbyint(x)) /* halves to even in the default rounding mode */
UF(isnan, isnan(x) != 0)
/* IsInf: detect_negative is alpha, detect_positive beta. */
UF(isinf, isinf(x) && (x < 0 ? p->alpha != 0 : p->beta != 0))
UF(tan, tan(x))
UF(asin, asin(x))
UF(acos, acos(x))
UF(atan, atan(x))
UF(sinh, sinh(x))
UF(cosh, cosh(x))
UF(asinh, asinh(x))
UF(acosh, acosh(x))
UF(atanh, atanh(x))
UF(elu, x < 0 ? p->alpha * expm1(x) : x)
/* Selu: alpha, and gamma as gamma. */
UF(selu, x > 0 ? p->gamma * x : p->gamma * p->alpha * expm1(x))
UF(celu, x > 0 ? x : p->alpha * expm1(x / p->alpha))
UF(thresholdedrelu, x > p->alpha ? x : 0)
UF(hardsigmoid, hardsigmoid(x, p->alpha, p->beta))
UF(hardswish, x *hardsigmoid(x, 1.0 / 6, 0.5))
UF(softsign, x / (1 + fabs(x)))
UF(mish, mish(x))
/* an integer Shrink with a huge or NaN bias saturates */
UI(shrink, sm_f64_to_i64(shrink((double)x, p)))
UI(bitwisenot, ~x)

/* Reads the float attributes named by names[0..2] (NULL: none) into
 * alpha, beta and gamma; the op's schema supplies the defaults. */
static void read_prm(const sm_kargs *a, const char *const *names,
                     sm_unary_prm *p)
{
    double *slot[3] = {&p->alpha, &p->beta, &p->gamma};
    memset(p, 0, sizeof *p);
    for (int k = 0; k < 3; k++)
        if (names[k])
            *slot[k] = sm_attrs_float(&a->attrs, names[k], 0);
}

/* Defines sm_ref_<name> over the scalar pair (F, I), with the attributes
 * A, B, G (names or NULL) as the pair's alpha, beta and gamma. */
#define MATH_UNARY(name, F, I, A, B, G)                                        \
    smelt_status sm_ref_##name(const sm_kargs *a)                              \
    {                                                                          \
        static const sm_unary_fn fn = {F, I};                                  \
        static const char *const names[3] = {A, B, G};                         \
        sm_unary_prm p;                                                        \
        read_prm(a, names, &p);                                                \
        return sm_ref_unary_run(a, &fn, &p);                                   \
    }

MATH_UNARY(sign, uf_sign, ui_sign, NULL, NULL, NULL)
MATH_UNARY(round, uf_round, NULL, NULL, NULL, NULL)
MATH_UNARY(isnan, uf_isnan, NULL, NULL, NULL, NULL)
MATH_UNARY(isinf, uf_isinf, NULL, "detect_negative", "detect_positive", NULL)
MATH_UNARY(tan, uf_tan, NULL, NULL, NULL, NULL)
MATH_UNARY(asin, uf_asin, NULL, NULL, NULL, NULL)
MATH_UNARY(acos, uf_acos, NULL, NULL, NULL, NULL)
MATH_UNARY(atan, uf_atan, NULL, NULL, NULL, NULL)
MATH_UNARY(sinh, uf_sinh, NULL, NULL, NULL, NULL)
MATH_UNARY(cosh, uf_cosh, NULL, NULL, NULL, NULL)
MATH_UNARY(asinh, uf_asinh, NULL, NULL, NULL, NULL)
MATH_UNARY(acosh, uf_acosh, NULL, NULL, NULL, NULL)
MATH_UNARY(atanh, uf_atanh, NULL, NULL, NULL, NULL)
MATH_UNARY(elu, uf_elu, NULL, "alpha", NULL, NULL)
MATH_UNARY(selu, uf_selu, NULL, "alpha", NULL, "gamma")
MATH_UNARY(celu, uf_celu, NULL, "alpha", NULL, NULL)
MATH_UNARY(thresholdedrelu, uf_thresholdedrelu, NULL, "alpha", NULL, NULL)
MATH_UNARY(hardsigmoid, uf_hardsigmoid, NULL, "alpha", "beta", NULL)
MATH_UNARY(hardswish, uf_hardswish, NULL, NULL, NULL, NULL)
MATH_UNARY(softsign, uf_softsign, NULL, NULL, NULL, NULL)
MATH_UNARY(mish, uf_mish, NULL, NULL, NULL, NULL)
MATH_UNARY(shrink, shrink, ui_shrink, "lambd", "bias", NULL)
MATH_UNARY(bitwisenot, NULL, ui_bitwisenot, NULL, NULL, NULL)

/* ---- broadcasting ops ---------------------------------------------------- */

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

/* Integer remainder with the dividend's sign (C's %, fmod = 1), or with
 * the divisor's (Python's, fmod = 0). y = 0 gives 0; y = -1 gives 0
 * without the overflow INT64_MIN % -1 would be. */
static int64_t rem_i64(int64_t x, int64_t y, int floor_mode)
{
    if (y == 0 || y == -1)
        return 0;
    int64_t r = x % y;
    if (floor_mode && r != 0 && (r < 0) != (y < 0))
        r += y;
    return r;
}

/* A shift by 64 or more (or a negative count) leaves no bits. */
static int64_t shift_i64(int64_t x, int64_t y, int left)
{
    if (y < 0 || y >= 64)
        return 0;
    return left ? (int64_t)((uint64_t)x << y) : (int64_t)((uint64_t)x >> y);
}

#define BU(name, expr)                                                         \
    static int64_t bu_##name(int64_t sx, int64_t sy)                           \
    {                                                                          \
        uint64_t x = (uint64_t)sx, y = (uint64_t)sy;                           \
        return (int64_t)(expr);                                                \
    }

BF(fmod, fmod(x, y))
BU(mod, y ? x % y : 0) /* unsigned: both Mod modes agree */
BI(fmod, rem_i64(x, y, 0))
BI(mod, rem_i64(x, y, 1))
BI(shl, shift_i64(x, y, 1))
BI(shr, shift_i64(x, y, 0))
BI(xor, (x != 0) != (y != 0))
BI(bitand, x &y)
BI(bitor, x | y)
BI(bitxor, x ^ y)
BF(le, x <= y)
BI(le, x <= y)
BF(ge, x >= y)
BI(ge, x >= y)
BU(le, x <= y)
BU(ge, x >= y)
BU(prelu, ((void)y, x)) /* an unsigned x is never negative */
BF(prelu, x < 0 ? y * x : x)
BI(prelu, x < 0 ? (int64_t)((uint64_t)y * (uint64_t)x) : x)
BF(add, x + y)

#define MATH_BINARY(name, ...)                                                 \
    smelt_status sm_ref_##name(const sm_kargs *a)                              \
    {                                                                          \
        static const sm_binary_fn fn = {__VA_ARGS__};                          \
        return sm_ref_nary_run(a, &fn);                                        \
    }

MATH_BINARY(xor, NULL, bi_xor)
MATH_BINARY(bitwiseand, NULL, bi_bitand)
MATH_BINARY(bitwiseor, NULL, bi_bitor)
MATH_BINARY(bitwisexor, NULL, bi_bitxor)
MATH_BINARY(lessorequal, bf_le, bi_le, 0, bu_le)
MATH_BINARY(greaterorequal, bf_ge, bi_ge, 0, bu_ge)
MATH_BINARY(prelu, bf_prelu, bi_prelu, 0, bu_prelu)
MATH_BINARY(mean, bf_add, NULL, 1)

/* Mod: fmod = 1 is C's fmod (the dividend's sign) for every dtype;
 * fmod = 0, the default, is Python's for integers and not defined for
 * floats (the shape function refuses it). */
smelt_status sm_ref_mod(const sm_kargs *a)
{
    static const sm_binary_fn trunc = {bf_fmod, bi_fmod, 0, bu_mod};
    static const sm_binary_fn floor_ = {NULL, bi_mod, 0, bu_mod};
    int f = sm_attrs_int(&a->attrs, "fmod", 0) != 0;
    return sm_ref_nary_run(a, f ? &trunc : &floor_);
}

/* BitShift: direction "LEFT" or "RIGHT" (checked by the shape function;
 * anything else is an error here too). */
smelt_status sm_ref_bitshift(const sm_kargs *a)
{
    static const sm_binary_fn left = {NULL, bi_shl};
    static const sm_binary_fn right = {NULL, bi_shr};
    const char *dir = sm_attrs_string(&a->attrs, "direction", "");
    if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: direction '%s' is not LEFT or RIGHT", a->op_name,
                      dir);
    return sm_ref_nary_run(a, dir[0] == 'L' ? &left : &right);
}

/* ---- Det ------------------------------------------------------------------
 */

/* Determinant of the n x n row-major matrix m (overwritten) by Gaussian
 * elimination with partial pivoting: the product of the pivots, negated
 * per row swap. */
static double det_lu(double *m, int64_t n)
{
    double det = 1;
    for (int64_t k = 0; k < n; k++) {
        int64_t piv = k;
        for (int64_t r = k + 1; r < n; r++)
            if (fabs(m[r * n + k]) > fabs(m[piv * n + k]))
                piv = r;
        if (m[piv * n + k] == 0)
            return 0;
        if (piv != k) {
            for (int64_t c = 0; c < n; c++) {
                double t = m[k * n + c];
                m[k * n + c] = m[piv * n + c];
                m[piv * n + c] = t;
            }
            det = -det;
        }
        double d = m[k * n + k];
        det *= d;
        for (int64_t r = k + 1; r < n; r++) {
            double f = m[r * n + k] / d;
            for (int64_t c = k + 1; c < n; c++)
                m[r * n + c] -= f * m[k * n + c];
        }
    }
    return det;
}

/* Det: X [..., n, n] gives Y [...], one determinant per matrix, computed
 * in double. */
smelt_status sm_ref_det(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->ndim < 2 || x->dims[x->ndim - 1] != x->dims[x->ndim - 2])
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X must be [..., n, n], got rank %d", a->op_name,
                      x->ndim);
    int64_t n = x->dims[x->ndim - 1], nn = n * n;
    if (y->numel * nn != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's batch dims",
                      a->op_name);
    double *m = sm_malloc((size_t)(nn ? nn : 1) * sizeof *m);
    if (!m)
        return sm_err(a->ctx, SMELT_ERR_NOMEM,
                      "%s: out of memory for a %lld x %lld matrix", a->op_name,
                      (long long)n, (long long)n);
    for (int64_t b = 0; b < y->numel; b++) {
        for (int64_t i = 0; i < nn; i++)
            m[i] = sm_load_f64(x->dtype, x->data, b * nn + i);
        sm_store_f64(y->dtype, y->data, b, det_lu(m, n));
    }
    sm_free(m);
    return SMELT_OK;
}
