/*
 * normalize.c - reference kernels of the ops that normalize or select
 * along axes: Hardmax, LpNormalization, MeanVarianceNormalization, LRN,
 * InstanceNormalization. (LpPool and GlobalLpPool live with the other
 * pools in pool.c.)
 *
 * Everything is computed in double and rounded once on store.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/window.h"

/* x viewed as [outer, len, inner] around axis `axis` (already checked by
 * the shape function; checked again so that the loops stay in bounds). */
typedef struct axis_view {
    int64_t outer, len, inner;
} axis_view;

static smelt_status axis_split(const sm_kargs *a, const sm_tensor *x,
                               int64_t def, axis_view *v)
{
    int rank = x->ndim;
    int64_t axis = sm_attrs_int(&a->attrs, "axis", def);
    if (axis < -rank || axis >= (rank ? rank : 1))
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: axis %lld is out of range for rank %d", a->op_name,
                      (long long)axis, rank);
    int ax = (int)(axis < 0 ? axis + rank : axis);
    v->outer = v->inner = 1;
    v->len = rank ? x->dims[ax] : 1;
    for (int d = 0; d < rank; d++) {
        if (d < ax)
            v->outer *= x->dims[d];
        else if (d > ax)
            v->inner *= x->dims[d];
    }
    if (a->out[0]->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    return SMELT_OK;
}

/* Element k of line (o, i) of the view. */
static int64_t line_at(const axis_view *v, int64_t o, int64_t i, int64_t k)
{
    return (o * v->len + k) * v->inner + i;
}

/*
 * Hardmax (opset 13): 1 at the first largest element of each line along
 * `axis`, 0 elsewhere; nan counts as the largest, as in numpy's argmax.
 */
smelt_status sm_ref_hardmax(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    axis_view v;
    SM_TRY(axis_split(a, x, -1, &v));
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t i = 0; i < v.inner; i++) {
            int64_t arg = 0;
            double best =
                v.len ? sm_load_f64(x->dtype, x->data, line_at(&v, o, i, 0))
                      : 0;
            for (int64_t k = 1; k < v.len && !isnan(best); k++) {
                double e = sm_load_f64(x->dtype, x->data, line_at(&v, o, i, k));
                if (e > best || isnan(e)) {
                    best = e;
                    arg = k;
                }
            }
            for (int64_t k = 0; k < v.len; k++)
                sm_store_f64(y->dtype, y->data, line_at(&v, o, i, k), k == arg);
        }
    }
    return SMELT_OK;
}

/*
 * LpNormalization: each line along `axis` divided by its L1 (p = 1) or
 * L2 (p = 2) norm. A line of zeros stays zeros (as in ONNX Runtime)
 * instead of becoming nan.
 */
smelt_status sm_ref_lpnormalization(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    axis_view v;
    SM_TRY(axis_split(a, x, -1, &v));
    int64_t p = sm_attrs_int(&a->attrs, "p", 2);
    if (p != 1 && p != 2)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: p = %lld must be 1 or 2", a->op_name, (long long)p);
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t i = 0; i < v.inner; i++) {
            double norm = 0;
            for (int64_t k = 0; k < v.len; k++) {
                double e = sm_load_f64(x->dtype, x->data, line_at(&v, o, i, k));
                norm += p == 1 ? fabs(e) : e * e;
            }
            norm = p == 1 ? norm : sqrt(norm);
            for (int64_t k = 0; k < v.len; k++) {
                int64_t at = line_at(&v, o, i, k);
                double e = sm_load_f64(x->dtype, x->data, at);
                sm_store_f64(y->dtype, y->data, at, norm == 0 ? 0 : e / norm);
            }
        }
    }
    return SMELT_OK;
}

/* Row-major offset of the element at multi-index o + r. */
static int64_t offset2(const sm_tensor *x, const int64_t *o, const int64_t *r)
{
    int64_t off = 0;
    for (int d = 0; d < x->ndim; d++)
        off = off * x->dims[d] + o[d] + r[d];
    return off;
}

/*
 * MeanVarianceNormalization: over `axes` (default [0, 2, 3]),
 * y = (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9), the formula of
 * ONNX's function body.
 */
smelt_status sm_ref_meanvariancenormalization(const sm_kargs *a)
{
    static const int64_t def[3] = {0, 2, 3};
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    const int64_t *axes;
    int n = sm_attrs_ints(&a->attrs, "axes", &axes), rank = x->ndim;
    if (n < 0) {
        axes = def;
        n = 3;
    }
    int64_t outer[SMELT_MAX_DIMS], inner[SMELT_MAX_DIMS];
    int mask[SMELT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        if (axes[i] < -rank || axes[i] >= rank)
            return sm_err(a->ctx, SMELT_ERR_SHAPE,
                          "%s: axis %lld is out of range for rank %d",
                          a->op_name, (long long)axes[i], rank);
        mask[axes[i] < 0 ? axes[i] + rank : axes[i]] = 1;
    }
    int64_t n_outer = 1, count = 1;
    for (int d = 0; d < rank; d++) {
        outer[d] = mask[d] ? 1 : x->dims[d];
        inner[d] = mask[d] ? x->dims[d] : 1;
        n_outer *= outer[d];
        count *= inner[d];
    }
    if (y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    int64_t o[SMELT_MAX_DIMS] = {0}, r[SMELT_MAX_DIMS];
    for (int64_t i = 0; i < n_outer; i++, sm_index_next(rank, outer, o)) {
        double sum = 0, sq = 0;
        memset(r, 0, sizeof r);
        for (int64_t j = 0; j < count; j++, sm_index_next(rank, inner, r)) {
            double e = sm_load_f64(x->dtype, x->data, offset2(x, o, r));
            sum += e;
            sq += e * e;
        }
        double mean = sum / (double)count;
        double var = sq / (double)count - mean * mean;
        double den = sqrt(var > 0 ? var : 0) + 1e-9;
        memset(r, 0, sizeof r);
        for (int64_t j = 0; j < count; j++, sm_index_next(rank, inner, r)) {
            int64_t at = offset2(x, o, r);
            sm_store_f64(y->dtype, y->data, at,
                         (sm_load_f64(x->dtype, x->data, at) - mean) / den);
        }
    }
    return SMELT_OK;
}

/*
 * LRN over X [N, C, ...]: y = x / (bias + alpha / size * s)^beta, s the
 * sum of squares over channels c - floor((size-1)/2) .. c + ceil((size-1)/2)
 * (clipped to [0, C)).
 */
smelt_status sm_ref_lrn(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int64_t size = sm_attrs_int(&a->attrs, "size", 0);
    double alpha = sm_attrs_float(&a->attrs, "alpha", 1e-4);
    double beta = sm_attrs_float(&a->attrs, "beta", 0.75);
    double bias = sm_attrs_float(&a->attrs, "bias", 1);
    if (size < 1 || x->ndim < 2 || y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: needs size >= 1 (got %lld) and X of rank >= 2 "
                      "(got %d)",
                      a->op_name, (long long)size, x->ndim);
    int64_t C = x->dims[1], plane = sm_window_prod(x->ndim - 2, x->dims + 2);
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    for (int64_t nb = 0; nb < x->dims[0]; nb++) {
        for (int64_t c = 0; c < C; c++) {
            /* the window clipped to the channels first: a size of 2^62
             * walks C channels, not 2^62 */
            int64_t k0 = c > lo ? c - lo : 0;
            int64_t k1 = hi > C - 1 - c ? C - 1 : c + hi;
            for (int64_t s = 0; s < plane; s++) {
                double sum = 0;
                for (int64_t k = k0; k <= k1; k++) {
                    double e = sm_load_f64(x->dtype, x->data,
                                           (nb * C + k) * plane + s);
                    sum += e * e;
                }
                int64_t at = (nb * C + c) * plane + s;
                double e = sm_load_f64(x->dtype, x->data, at);
                sm_store_f64(y->dtype, y->data, at,
                             e / pow(bias + alpha / (double)size * sum, beta));
            }
        }
    }
    return SMELT_OK;
}

/*
 * InstanceNormalization: each (n, c) plane normalized by its own mean and
 * (population) variance, y = scale[c] (x - mean) / sqrt(var + epsilon)
 * + B[c].
 */
smelt_status sm_ref_instancenormalization(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *sc = a->in[1], *b = a->in[2];
    sm_tensor *y = a->out[0];
    double eps = sm_attrs_float(&a->attrs, "epsilon", 1e-5);
    if (x->ndim < 2 || y->numel != x->numel || sc->numel != x->dims[1] ||
        b->numel != x->dims[1])
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: scale and B must have X's C values", a->op_name);
    int64_t planes = x->dims[0] * x->dims[1];
    int64_t len = planes ? x->numel / planes : 0;
    for (int64_t p = 0; p < planes; p++) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < len; i++)
            sum += sm_load_f64(x->dtype, x->data, p * len + i);
        double mean = sum / (double)len;
        for (int64_t i = 0; i < len; i++) {
            double d = sm_load_f64(x->dtype, x->data, p * len + i) - mean;
            sq += d * d;
        }
        int64_t c = p % x->dims[1];
        double k =
            sm_load_f64(sc->dtype, sc->data, c) / sqrt(sq / (double)len + eps);
        double off = sm_load_f64(b->dtype, b->data, c);
        for (int64_t i = 0; i < len; i++) {
            double e = sm_load_f64(x->dtype, x->data, p * len + i);
            sm_store_f64(y->dtype, y->data, p * len + i, (e - mean) * k + off);
        }
    }
    return SMELT_OK;
}
