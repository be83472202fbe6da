/*
 * norm.c - reference kernels of the ops that normalize along axes:
 * BatchNormalization, LayerNormalization, InstanceNormalization,
 * MeanVarianceNormalization, LpNormalization, LRN, and the softmax family
 * (Softmax, LogSoftmax, Hardmax). (LpPool and GlobalLpPool live with the
 * other pools in pool.c.)
 *
 * Everything is computed in double and rounded once on store.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/window.h"

static double ld(const sm_tensor *t, int64_t i)
{
    return sm_load_f64(t->dtype, t->data, i);
}

/* Whether t broadcasts one-way onto x's shape (trailing dims aligned,
 * each 1 or equal). */
static int bcast_onto(const sm_tensor *t, const sm_tensor *x)
{
    if (t->ndim > x->ndim)
        return 0;
    for (int d = 0; d < t->ndim; d++) {
        int64_t td = t->dims[d], xd = x->dims[d + x->ndim - t->ndim];
        if (td != 1 && td != xd)
            return 0;
    }
    return 1;
}

/*
 * BatchNormalization over channel dim 1 (a 1-D input has one channel):
 * y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c]. In
 * inference mode mean and var are the inputs; in training mode they are
 * the batch's own per-channel mean and population variance, and the
 * optional outputs running_mean / running_var are
 * input * momentum + batch statistic * (1 - momentum), as in ONNX.
 */
smelt_status sm_ref_batchnorm(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->ndim < 1 || y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X must have rank >= 1 and Y its shape", a->op_name);
    int64_t c_n = x->ndim > 1 ? x->dims[1] : 1;
    int64_t inner = 1;
    for (int d = 2; d < x->ndim; d++)
        inner *= x->dims[d];
    for (int i = 1; i < 5; i++)
        if (i >= a->n_in || !a->in[i] || a->in[i]->numel != c_n)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: input %d must hold C = %lld values", a->op_name,
                          i, (long long)c_n);
    double eps = sm_attrs_float(&a->attrs, "epsilon", 1e-5);
    const sm_tensor *scale = a->in[1], *bias = a->in[2];
    const sm_tensor *mean = a->in[3], *var = a->in[4];
    int training = sm_attrs_int(&a->attrs, "training_mode", 0) != 0;
    /* stat[c] the mean, stat[c_n + c] the variance used */
    double *stat = sm_calloc(2 * (size_t)c_n + 1, sizeof *stat);
    if (!stat)
        return sm_err_nomem(a->ctx);
    int64_t per_c = c_n ? x->numel / c_n : 0;
    for (int64_t c = 0; c < c_n; c++) {
        stat[c] = ld(mean, c);
        stat[c_n + c] = ld(var, c);
    }
    if (training && per_c > 0) {
        for (int64_t c = 0; c < c_n; c++)
            stat[c] = stat[c_n + c] = 0;
        for (int64_t i = 0; i < x->numel; i++)
            stat[(i / inner) % c_n] += ld(x, i) / (double)per_c;
        for (int64_t i = 0; i < x->numel; i++) {
            int64_t c = (i / inner) % c_n;
            double dv = ld(x, i) - stat[c];
            stat[c_n + c] += dv * dv / (double)per_c;
        }
    }
    if (training) { /* an empty batch leaves the running statistics */
        double mom = sm_attrs_float(&a->attrs, "momentum", 0.9);
        for (int j = 1; j < a->n_out && j < 3; j++)
            for (int64_t c = 0; a->out[j] && c < c_n; c++)
                sm_store_f64(a->out[j]->dtype, a->out[j]->data, c,
                             ld(a->in[2 + j], c) * mom +
                                 stat[(j - 1) * c_n + c] * (1 - mom));
    }
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t c = (i / inner) % c_n;
        double v = (ld(x, i) - stat[c]) / sqrt(stat[c_n + c] + eps);
        sm_store_f64(y->dtype, y->data, i, v * ld(scale, c) + ld(bias, c));
    }
    sm_free(stat);
    return SMELT_OK;
}

/* The axis attribute resolved against rank (rank 0 takes axis 0 or -1,
 * the scalar being its own one-element axis). */
static smelt_status kernel_axis(const sm_kargs *a, int rank, int64_t def,
                                int *out)
{
    int64_t axis = sm_attrs_int(&a->attrs, "axis", def);
    int r = rank ? rank : 1;
    if (axis < -r || axis >= r)
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: axis %lld is out of range for rank %d", a->op_name,
                      (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + r : axis);
    return SMELT_OK;
}

/*
 * LayerNormalization: for every index over dims [0, axis), the elements
 * over dims [axis, rank) are normalized with their mean and (population)
 * variance, then scaled and shifted by Scale and B, which broadcast onto
 * X. Optional outputs Mean and InvStdDev = 1/sqrt(var + epsilon) have X's
 * leading dims and 1 for the normalized ones.
 */
smelt_status sm_ref_layernorm(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *scale = a->in[1];
    const sm_tensor *bias = a->n_in > 2 ? a->in[2] : NULL;
    sm_tensor *y = a->out[0];
    sm_tensor *mean_out = a->n_out > 1 ? a->out[1] : NULL;
    sm_tensor *inv_out = a->n_out > 2 ? a->out[2] : NULL;
    int ax = 0;
    if (x->ndim < 1)
        return sm_err(a->ctx, SMELT_ERR_SHAPE, "%s: X must have rank >= 1",
                      a->op_name);
    SM_TRY(kernel_axis(a, x->ndim, -1, &ax));
    int64_t outer = 1;
    for (int d = 0; d < ax; d++)
        outer *= x->dims[d];
    int64_t inner = outer ? x->numel / outer : 0;
    if (!bcast_onto(scale, x) || (bias && !bcast_onto(bias, x)) ||
        y->numel != x->numel || (mean_out && mean_out->numel != outer) ||
        (inv_out && inv_out->numel != outer))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: Scale, B or an output does not fit X", a->op_name);
    double eps = sm_attrs_float(&a->attrs, "epsilon", 1e-5);
    int64_t idx[SMELT_MAX_DIMS] = {0};
    for (int64_t ob = 0; ob < outer; ob++) {
        const int64_t base = ob * inner;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < inner; j++)
            mean += ld(x, base + j);
        mean /= (double)inner;
        for (int64_t j = 0; j < inner; j++) {
            double dlt = ld(x, base + j) - mean;
            var += dlt * dlt;
        }
        double inv = 1.0 / sqrt(var / (double)inner + eps);
        for (int64_t j = 0; j < inner; j++) {
            double v = (ld(x, base + j) - mean) * inv;
            v *= ld(scale, sm_bcast_offset(scale, x->ndim, idx));
            if (bias)
                v += ld(bias, sm_bcast_offset(bias, x->ndim, idx));
            sm_store_f64(y->dtype, y->data, base + j, v);
            sm_index_next(x->ndim, x->dims, idx);
        }
        if (mean_out)
            sm_store_f64(mean_out->dtype, mean_out->data, ob, mean);
        if (inv_out)
            sm_store_f64(inv_out->dtype, inv_out->data, ob, inv);
    }
    return SMELT_OK;
}

/*
 * Softmax and LogSoftmax along one axis (opset 13), stable: the axis'
 * maximum is subtracted before exponentiating, so large inputs do not
 * overflow. y = exp(x - max) / sum, or (x - max) - log(sum).
 */
static smelt_status softmax_run(const sm_kargs *a, int log_out)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int ax = 0;
    SM_TRY(kernel_axis(a, x->ndim, -1, &ax));
    if (y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME, "%s: Y must have X's shape",
                      a->op_name);
    int64_t n = x->ndim ? x->dims[ax] : 1, inner = 1, outer = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d < ax)
            outer *= x->dims[d];
        else if (d > ax)
            inner *= x->dims[d];
    }
    for (int64_t ob = 0; ob < outer; ob++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = ob * n * inner + i;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; j++) {
                double v = ld(x, base + j * inner);
                if (v > mx || isnan(v))
                    mx = v;
            }
            for (int64_t j = 0; j < n; j++)
                sum += exp(ld(x, base + j * inner) - mx);
            for (int64_t j = 0; j < n; j++) {
                double v = ld(x, base + j * inner) - mx;
                sm_store_f64(y->dtype, y->data, base + j * inner,
                             log_out ? v - log(sum) : exp(v) / sum);
            }
        }
    }
    return SMELT_OK;
}

smelt_status sm_ref_softmax(const sm_kargs *a)
{
    return softmax_run(a, 0);
}

smelt_status sm_ref_logsoftmax(const sm_kargs *a)
{
    return softmax_run(a, 1);
}

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
