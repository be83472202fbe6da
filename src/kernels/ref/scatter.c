/*
 * scatter.c - reference kernels of ScatterElements (and its deprecated
 * alias Scatter), ScatterND and MaxUnpool. The scatter ops' output
 * starts as a copy of data, then each update replaces its target element
 * or is reduced into it (add, mul, max, min), in the order of the
 * updates, so with repeated indices and no reduction the last update
 * wins.
 *
 * Floats combine in double, integers in int64 (exact), bool as 0/1.
 * Index values and shapes are re-checked before any element moves.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/select.h"

typedef enum reduction {
    RED_NONE,
    RED_ADD,
    RED_MUL,
    RED_MAX,
    RED_MIN
} reduction;

/* The reduction attribute, or -1 (with an error) when unknown. */
static int read_reduction(const sm_kargs *a)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *r = sm_attrs_string(&a->attrs, "reduction", "none");
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(r, names[i]) == 0)
            return i;
    sm_err(a->ctx, SMELT_ERR_RUNTIME, "%s: unknown reduction '%s'", a->op_name,
           r);
    return -1;
}

/* y[dst] = y[dst] (op) u[src]. */
static void combine(sm_tensor *y, int64_t dst, const sm_tensor *u, int64_t src,
                    reduction op)
{
    if (op == RED_NONE) {
        size_t es = smelt_dtype_size(y->dtype);
        memcpy((char *)y->data + (size_t)dst * es,
               (const char *)u->data + (size_t)src * es, es);
        return;
    }
    if (sm_dtype_is_float(y->dtype)) {
        double p = sm_load_f64(y->dtype, y->data, dst);
        double q = sm_load_f64(u->dtype, u->data, src);
        double v = op == RED_ADD   ? p + q
                   : op == RED_MUL ? p * q
                   : op == RED_MAX ? (q > p ? q : p)
                                   : (q < p ? q : p);
        sm_store_f64(y->dtype, y->data, dst, v);
        return;
    }
    int64_t p = sm_load_i64(y->dtype, y->data, dst);
    int64_t q = sm_load_i64(u->dtype, u->data, src);
    /* add and mul wrap like the narrow integer type would */
    int64_t v = op == RED_ADD   ? (int64_t)((uint64_t)p + (uint64_t)q)
                : op == RED_MUL ? (int64_t)((uint64_t)p * (uint64_t)q)
                : op == RED_MAX ? (q > p ? q : p)
                                : (q < p ? q : p);
    sm_store_i64(y->dtype, y->data, dst, v);
}

/* The checks both scatter kernels start with; copies data into y. */
static smelt_status scatter_begin(const sm_kargs *a, int *op)
{
    const sm_tensor *x = a->in[0], *up = a->in[2];
    sm_tensor *y = a->out[0];
    if ((*op = read_reduction(a)) < 0)
        return SMELT_ERR_RUNTIME;
    if (y->dtype != x->dtype || up->dtype != x->dtype || y->ndim != x->ndim ||
        y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: data, updates and output do not match", a->op_name);
    if (x->nbytes)
        memcpy(y->data, x->data, x->nbytes);
    return SMELT_OK;
}

/* ScatterElements(data, indices, updates) {axis, reduction}: update idx
 * goes to idx with its axis index replaced by indices[idx]. */
smelt_status sm_ref_scatterelements(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1], *up = a->in[2];
    sm_tensor *y = a->out[0];
    int op, axis = sm_kernel_axis(a, "axis", 0, x->ndim);
    if (axis < 0)
        return SMELT_ERR_RUNTIME;
    if (ind->ndim != x->ndim || up->ndim != x->ndim)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: indices and updates must have data's rank",
                      a->op_name);
    for (int d = 0; d < x->ndim; d++)
        if (up->dims[d] != ind->dims[d] ||
            (d != axis && ind->dims[d] > x->dims[d]))
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: indices and updates do not fit data",
                          a->op_name);
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, a->op_name, ind, 1, axis,
                          &x->dims[axis]));
    SM_TRY(scatter_begin(a, &op));
    if (up->numel == 0)
        return SMELT_OK;
    int64_t xstr[SMELT_MAX_DIMS], idx[SMELT_MAX_DIMS] = {0}, i = 0;
    sm_strides(x->ndim, x->dims, xstr);
    do {
        int64_t dst = 0;
        for (int d = 0; d < x->ndim; d++)
            dst += (d == axis ? sm_index_at(ind, i, x->dims[d]) : idx[d]) *
                   xstr[d];
        combine(y, dst, up, i++, (reduction)op);
    } while (sm_index_next(ind->ndim, ind->dims, idx));
    return SMELT_OK;
}

/* ScatterND(data, indices, updates) {reduction}: index tuple n (k values)
 * addresses a slice of `inner` elements of data, which slice n of the
 * updates replaces or is reduced into. */
smelt_status sm_ref_scatternd(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1], *up = a->in[2];
    sm_tensor *y = a->out[0];
    int op, r = x->ndim, q = ind->ndim;
    int64_t k = q > 0 ? ind->dims[q - 1] : -1;
    int ok = q >= 1 && k >= 0 && k <= r && up->ndim == q - 1 + r - (int)k;
    for (int d = 0; ok && d < up->ndim; d++)
        ok = up->dims[d] ==
             (d < q - 1 ? ind->dims[d] : x->dims[d - (q - 1) + (int)k]);
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: updates do not match indices and data", a->op_name);
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, a->op_name, ind, (int)k, 0,
                          x->dims));
    SM_TRY(scatter_begin(a, &op));
    int64_t xstr[SMELT_MAX_DIMS], inner = 1, n = 1;
    sm_strides(r, x->dims, xstr);
    for (int d = (int)k; d < r; d++)
        inner *= x->dims[d];
    for (int d = 0; d < q - 1; d++)
        n *= ind->dims[d];
    for (int64_t t = 0; t < n; t++) {
        int64_t off = 0;
        for (int j = 0; j < (int)k; j++)
            off += sm_index_at(ind, t * k + j, x->dims[j]) * xstr[j];
        for (int64_t e = 0; e < inner; e++)
            combine(y, off + e, up, t * inner + e, (reduction)op);
    }
    return SMELT_OK;
}

smelt_status sm_unpool_shape(smelt_ctx_t *ctx, smelt_status code,
                             const sm_attrs *a, int ndim, const int64_t *x,
                             int64_t *out)
{
    const int64_t *kv, *sv, *pv;
    int k = sm_attrs_ints(a, "kernel_shape", &kv);
    int ns = sm_attrs_ints(a, "strides", &sv);
    int np = sm_attrs_ints(a, "pads", &pv);
    if (k < 1 || k != ndim - 2 || (ns >= 0 && ns != k) ||
        (np >= 0 && np != 2 * k))
        return sm_err(ctx, code,
                      "MaxUnpool: for rank %d, kernel_shape needs %d values, "
                      "strides as many and pads twice as many (got %d, %d, "
                      "%d)",
                      ndim, ndim - 2, k, ns, np);
    out[0] = x[0];
    out[1] = x[1];
    for (int i = 0; i < k; i++) {
        int64_t st = ns >= 0 ? sv[i] : 1, pb = np >= 0 ? pv[i] : 0;
        int64_t pe = np >= 0 ? pv[k + i] : 0, v = x[2 + i] - 1;
        if (kv[i] < 1 || st < 1 || pb < 0 || pe < 0)
            return sm_err(ctx, code,
                          "MaxUnpool: spatial dim %d has kernel %lld, stride "
                          "%lld, pads %lld and %lld",
                          i, (long long)kv[i], (long long)st, (long long)pb,
                          (long long)pe);
        out[2 + i] = -1;
        if (x[2 + i] < 0)
            continue;
        if (x[2 + i] == 0) {
            out[2 + i] = 0;
            continue;
        }
        if (v > (INT64_MAX - kv[i]) / st)
            return sm_err(ctx, SMELT_ERR_LIMIT,
                          "MaxUnpool: spatial dim %d overflows", i);
        out[2 + i] = v * st + kv[i] - pb - pe;
        if (out[2 + i] < 0)
            return sm_err(ctx, code,
                          "MaxUnpool: pads %lld and %lld leave nothing of "
                          "spatial dim %d",
                          (long long)pb, (long long)pe, i);
    }
    return SMELT_OK;
}

/* MaxUnpool(X, I, output_shape?): the zero output with X[i] at flat
 * position I[i] of the unpooled shape, which sits at the output's start
 * (negative positions count from the end). */
smelt_status sm_ref_maxunpool(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1];
    sm_tensor *y = a->out[0];
    int64_t un[SMELT_MAX_DIMS], total = 1, ystr[SMELT_MAX_DIMS];
    SM_TRY(sm_unpool_shape(a->ctx, SMELT_ERR_RUNTIME, &a->attrs, x->ndim,
                           x->dims, un));
    int ok =
        ind->numel == x->numel && y->dtype == x->dtype && y->ndim == x->ndim;
    for (int d = 0; ok && d < x->ndim; d++) {
        ok = y->dims[d] >= un[d];
        total *= un[d];
    }
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "MaxUnpool: I, X and the output do not match");
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, "MaxUnpool", ind, 1, 0,
                          &total));
    size_t es = smelt_dtype_size(x->dtype);
    sm_strides(y->ndim, y->dims, ystr);
    memset(y->data, 0, y->nbytes);
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t flat = sm_index_at(ind, i, total), off = 0;
        for (int d = x->ndim - 1; d >= 0; d--) {
            off += flat % un[d] * ystr[d];
            flat /= un[d];
        }
        memcpy((char *)y->data + (size_t)off * es,
               (const char *)x->data + (size_t)i * es, es);
    }
    return SMELT_OK;
}
