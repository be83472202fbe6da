/*
 * pool.c - reference MaxPool (with its optional Indices output),
 * AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool and GlobalLpPool
 * over any number of spatial dims. Values are read and reduced in double;
 * MaxPool's int8 and uint8 inputs are exact in double too.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/window.h"

enum { POOL_MAX, POOL_AVG, POOL_LP };

/* LpPool's and GlobalLpPool's p, at least 1 (the shape function checked
 * it; checked again so a kernel called directly cannot divide by 0). */
static smelt_status read_p(const sm_kargs *a, double *p)
{
    int64_t v = sm_attrs_int(&a->attrs, "p", 2);
    *p = (double)v;
    if (v < 1)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: p = %lld must be at least 1", a->op_name,
                      (long long)v);
    return SMELT_OK;
}

/* The value written for a window with no input element (possible only
 * with SAME padding and large dilations): -inf for floats, 0 otherwise. */
static double empty_max(smelt_dtype dt)
{
    return sm_dtype_is_float(dt) ? -INFINITY : 0;
}

/* MaxPool's Indices with storage_order 1: the row-major spatial offset
 * `off` of a plane of sizes in[] re-expressed column-major. */
static int64_t col_major(int nsp, const int64_t *in, int64_t off)
{
    int64_t r = 0, stride = 1;
    int64_t idx[SMELT_MAX_DIMS];
    for (int d = nsp - 1; d >= 0; d--) {
        idx[d] = off % in[d];
        off /= in[d];
    }
    for (int d = 0; d < nsp; d++) {
        r += idx[d] * stride;
        stride *= in[d];
    }
    return r;
}

/* The pooling window for X, checked against the outputs' shapes. */
static smelt_status pool_setup(const sm_kargs *a, sm_window *w)
{
    const sm_tensor *x = a->in[0];
    if (x->ndim < 3)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X must have rank >= 3, got %d", a->op_name, x->ndim);
    SM_TRY(sm_window_init(a->ctx, a->op_name, &a->attrs, SM_WINDOW_POOL,
                          x->ndim - 2, x->dims + 2, NULL, w));
    for (int j = 0; j < a->n_out; j++) {
        const sm_tensor *y = a->out[j];
        int bad = y->ndim != x->ndim || y->dims[0] != x->dims[0] ||
                  y->dims[1] != x->dims[1];
        for (int d = 0; !bad && d < w->nsp; d++)
            bad = y->dims[d + 2] != w->out[d];
        if (bad)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: output %d's shape does not match the window",
                          a->op_name, j);
    }
    return SMELT_OK;
}

/* Along dim d at output position o: the kernel indices [*lo, *hi) whose
 * taps land in the input, and how many (*n_pad) land inside the padded
 * extent. Arithmetic, so an absurd kernel_shape (2^30 taps of padding)
 * costs nothing: only taps that read the input are walked. */
static void pool_taps_1d(const sm_window *w, int d, int64_t o, int64_t *lo,
                         int64_t *hi, int64_t *n_pad)
{
    int64_t dl = w->dil[d], k = w->kernel[d];
    int64_t base = o * w->stride[d] - w->pad0[d];
    int64_t a = base >= 0 ? 0 : (-base + dl - 1) / dl;
    int64_t b = w->in[d] - base <= 0 ? 0 : (w->in[d] - base - 1) / dl + 1;
    int64_t end = w->in[d] + w->pad1[d] - base;
    int64_t c = end <= 0 ? 0 : (end - 1) / dl + 1;
    *lo = a < k ? a : k;
    *hi = b < k ? b : k;
    if (*hi < *lo)
        *hi = *lo;
    *n_pad = c < k ? c : k;
}

/*
 * MaxPool, AveragePool and LpPool. Each output element scans the taps of
 * its window that read the input (in row-major kernel order, so the first
 * maximum stays the first): taps in the padding never win a max (they act
 * as -inf) and add nothing to a p-norm; they count toward an average's
 * divisor only with count_include_pad, as taps inside the padded extent;
 * taps past it (ceil_mode's last windows) never count. MaxPool's Indices
 * hold the flat index into X (batch and channel included) of the first
 * maximum, NaN winning as in PyTorch.
 */
static smelt_status pool_run(const sm_kargs *a, int kind)
{
    sm_window w;
    double pw = 2;
    if (kind == POOL_LP)
        SM_TRY(read_p(a, &pw));
    SM_TRY(pool_setup(a, &w));
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0], *ind = a->n_out > 1 ? a->out[1] : NULL;
    int include_pad = sm_attrs_int(&a->attrs, "count_include_pad", 0) != 0;
    int by_col = sm_attrs_int(&a->attrs, "storage_order", 0) != 0;
    int nsp = w.nsp;
    int64_t planes = x->dims[0] * x->dims[1];
    int64_t isz = sm_window_prod(nsp, w.in), osz = sm_window_prod(nsp, w.out);
    int64_t o[SMELT_MAX_DIMS], k[SMELT_MAX_DIMS], lo[SMELT_MAX_DIMS],
        hi[SMELT_MAX_DIMS], span[SMELT_MAX_DIMS];
    for (int64_t p = 0; p < planes; p++) {
        memset(o, 0, sizeof o);
        for (int64_t op = 0; op < osz; op++, sm_index_next(nsp, w.out, o)) {
            double best = 0, sum = 0, norm = 0, cnt_pad = 1;
            int64_t arg = -1, cnt = 1;
            for (int d = 0; d < nsp; d++) {
                int64_t n_pad;
                pool_taps_1d(&w, d, o[d], &lo[d], &hi[d], &n_pad);
                span[d] = hi[d] - lo[d];
                cnt *= span[d];
                cnt_pad *= (double)n_pad;
            }
            memset(k, 0, sizeof k);
            for (int64_t kp = 0; kp < cnt; kp++, sm_index_next(nsp, span, k)) {
                int64_t at = 0;
                for (int d = 0; d < nsp; d++)
                    at = at * w.in[d] + o[d] * w.stride[d] - w.pad0[d] +
                         (lo[d] + k[d]) * w.dil[d];
                double v = sm_load_f64(x->dtype, x->data, p * isz + at);
                sum += v;
                norm += kind == POOL_LP ? pow(fabs(v), pw) : 0;
                if (arg < 0 || v > best || (isnan(v) && !isnan(best))) {
                    best = v;
                    arg = at;
                }
            }
            int64_t yi = p * osz + op;
            if (kind == POOL_LP) {
                sm_store_f64(y->dtype, y->data, yi, pow(norm, 1 / pw));
                continue;
            }
            if (kind == POOL_AVG) {
                double div = include_pad ? cnt_pad : (double)cnt;
                sm_store_f64(y->dtype, y->data, yi, div ? sum / div : NAN);
                continue;
            }
            sm_store_f64(y->dtype, y->data, yi,
                         arg < 0 ? empty_max(y->dtype) : best);
            if (ind)
                sm_store_i64(
                    ind->dtype, ind->data, yi,
                    arg < 0
                        ? -1
                        : p * isz + (by_col ? col_major(nsp, w.in, arg) : arg));
        }
    }
    return SMELT_OK;
}

smelt_status sm_ref_maxpool(const sm_kargs *a)
{
    return pool_run(a, POOL_MAX);
}

smelt_status sm_ref_averagepool(const sm_kargs *a)
{
    return pool_run(a, POOL_AVG);
}

smelt_status sm_ref_lppool(const sm_kargs *a)
{
    return pool_run(a, POOL_LP);
}

/* GlobalMaxPool, GlobalAveragePool and GlobalLpPool: one value per
 * (n, c) plane, over all its spatial elements (an empty plane gives -inf,
 * NaN or 0). */
static smelt_status global_run(const sm_kargs *a, int kind)
{
    double pw = 2;
    if (kind == POOL_LP)
        SM_TRY(read_p(a, &pw));
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->ndim < 2 || y->ndim != x->ndim || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1] || y->numel != x->dims[0] * x->dims[1])
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output shape does not match X of rank %d",
                      a->op_name, x->ndim);
    int64_t planes = y->numel, isz = sm_window_prod(x->ndim - 2, x->dims + 2);
    for (int64_t p = 0; p < planes; p++) {
        double best = -INFINITY, sum = 0, norm = 0;
        for (int64_t i = 0; i < isz; i++) {
            double v = sm_load_f64(x->dtype, x->data, p * isz + i);
            sum += v;
            norm += kind == POOL_LP ? pow(fabs(v), pw) : 0;
            if (v > best || (isnan(v) && !isnan(best)))
                best = v;
        }
        sm_store_f64(y->dtype, y->data, p,
                     kind == POOL_MAX  ? best
                     : kind == POOL_LP ? pow(norm, 1 / pw)
                     : isz             ? sum / (double)isz
                                       : NAN);
    }
    return SMELT_OK;
}

smelt_status sm_ref_globalmaxpool(const sm_kargs *a)
{
    return global_run(a, POOL_MAX);
}

smelt_status sm_ref_globalaveragepool(const sm_kargs *a)
{
    return global_run(a, POOL_AVG);
}

smelt_status sm_ref_globallppool(const sm_kargs *a)
{
    return global_run(a, POOL_LP);
}
