/*
 * reduce.c - reference kernels of ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ArgMax and ArgMin; the loop the other reductions share
 * (reduce_mapped.c).
 *
 * Floats accumulate in double and round once on store; integers
 * accumulate in int64 (wrapping on overflow) so that they stay exact.
 * Max and Min propagate nan, as numpy's max and min do.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/pointwise.h"
#include "kernels/ref/ref_util.h"

/* One reduction (pointwise.h): the ones here start from 0 or from the
 * first element and map nothing. */
typedef sm_reducer reducer;

static double rf_sum(double acc, double x)
{
    return acc + x;
}

static int64_t ri_sum(int64_t acc, int64_t x)
{
    return (int64_t)((uint64_t)acc + (uint64_t)x);
}

static double rf_max(double acc, double x)
{
    return isnan(acc) || isnan(x) ? NAN : x > acc ? x : acc;
}

static int64_t ri_max(int64_t acc, int64_t x)
{
    return x > acc ? x : acc;
}

static double rf_min(double acc, double x)
{
    return isnan(acc) || isnan(x) ? NAN : x < acc ? x : acc;
}

static int64_t ri_min(int64_t acc, int64_t x)
{
    return x < acc ? x : acc;
}

/* Reads the axes (input 1, else the `axes` attribute) into mask over
 * rank dims. Returns in *noop whether the op is the identity (no axes and
 * noop_with_empty_axes); no axes otherwise reduce everything. */
static smelt_status reduce_mask(const sm_kargs *a, int rank, int *mask,
                                int *noop)
{
    const sm_tensor *t = a->n_in > 1 ? a->in[1] : NULL;
    const int64_t *attr = NULL;
    int n = t ? (int)t->numel : sm_attrs_ints(&a->attrs, "axes", &attr);
    memset(mask, 0, SMELT_MAX_DIMS * sizeof *mask);
    *noop = 0;
    if (t && !sm_dtype_is_int(t->dtype))
        return sm_err(a->ctx, SMELT_ERR_TYPE,
                      "%s: axes must be integers, got %s", a->op_name,
                      smelt_dtype_name(t->dtype));
    if (n <= 0) {
        *noop = sm_attrs_int(&a->attrs, "noop_with_empty_axes", 0) != 0;
        for (int d = 0; d < rank; d++)
            mask[d] = !*noop;
        return SMELT_OK;
    }
    for (int i = 0; i < n; i++) {
        int64_t ax = t ? sm_load_i64(t->dtype, t->data, i) : attr[i];
        if (ax < -rank || ax >= (rank ? rank : 1))
            return sm_err(a->ctx, SMELT_ERR_SHAPE,
                          "%s: axis %lld is out of range for rank %d",
                          a->op_name, (long long)ax, rank);
        mask[ax < 0 ? ax + rank : ax] = 1;
    }
    return SMELT_OK;
}

/* Offset into x of the element at outer index o plus inner index r. */
static int64_t reduce_offset(const sm_tensor *x, const int64_t *o,
                             const int64_t *r)
{
    int64_t off = 0;
    for (int d = 0; d < x->ndim; d++)
        off = off * x->dims[d] + o[d] + r[d];
    return off;
}

/*
 * Splits x's dims into the kept ("outer", reduced axes set to 1) and the
 * reduced ("inner", kept axes set to 1) parts; every output element is
 * the reduction of the inner block at one outer index, in row-major
 * order. An empty Mean is nan for floats and 0 for integers.
 */
smelt_status sm_ref_reduce_run(const sm_kargs *a, const reducer *rd)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int mask[SMELT_MAX_DIMS], noop;
    SM_TRY(reduce_mask(a, x->ndim, mask, &noop));
    reducer ident = {rd->f, rd->i, 1, 0};
    if (noop) /* the identity, as ONNX specifies, also for ReduceL1... */
        rd = &ident;
    int64_t outer[SMELT_MAX_DIMS], inner[SMELT_MAX_DIMS];
    int64_t n_out = 1, count = 1;
    for (int d = 0; d < x->ndim; d++) {
        outer[d] = mask[d] ? 1 : x->dims[d];
        inner[d] = mask[d] ? x->dims[d] : 1;
        n_out *= outer[d];
        count *= inner[d];
    }
    if (y->numel != n_out || y->dtype != x->dtype)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the reduced shape",
                      a->op_name);
    if (count == 0 && rd->first && n_out > 0)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: cannot reduce over an empty axis", a->op_name);
    int as_float = sm_dtype_is_float(x->dtype) || rd->in_double;
    int64_t o[SMELT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n_out; i++) {
        int64_t r[SMELT_MAX_DIMS] = {0};
        double facc = rd->init;
        int64_t iacc = rd->iinit;
        for (int64_t j = 0; j < count; j++) {
            int64_t off = reduce_offset(x, o, r);
            if (as_float) {
                double v = sm_load_f64(x->dtype, x->data, off);
                v = rd->map ? rd->map(v) : v;
                facc = j == 0 && rd->first ? v : rd->f(facc, v);
            } else {
                int64_t v = sm_load_i64(x->dtype, x->data, off);
                v = rd->imap ? rd->imap(v) : v;
                iacc = j == 0 && rd->first ? v : rd->i(iacc, v);
            }
            sm_index_next(x->ndim, inner, r);
        }
        if (rd->mean) {
            facc /= (double)count;
            iacc = count ? iacc / count : 0;
        }
        if (rd->post)
            facc = rd->post(facc);
        if (as_float)
            sm_store_f64(y->dtype, y->data, i, facc);
        else
            sm_store_i64(y->dtype, y->data, i, iacc);
        sm_index_next(x->ndim, outer, o);
    }
    return SMELT_OK;
}

#define REDUCE_KERNEL(name, F, I, FIRST, MEAN)                                 \
    smelt_status sm_ref_##name(const sm_kargs *a)                              \
    {                                                                          \
        static const reducer rd = {F, I, FIRST, MEAN};                         \
        return sm_ref_reduce_run(a, &rd);                                      \
    }

REDUCE_KERNEL(reducesum, rf_sum, ri_sum, 0, 0)
REDUCE_KERNEL(reducemean, rf_sum, ri_sum, 0, 1)
REDUCE_KERNEL(reducemax, rf_max, ri_max, 1, 0)
REDUCE_KERNEL(reducemin, rf_min, ri_min, 1, 0)

/* Whether v replaces the best so far (at best): greater, or equal when
 * the last index is wanted. nan counts as the largest value, and the
 * first nan wins, as in numpy. */
static int argmax_better(double v, double best, int last)
{
    if (isnan(best))
        return 0;
    return isnan(v) || v > best || (last && v == best);
}

/*
 * ArgMax (ArgMin) along `axis`: the index of the largest (smallest)
 * element of each line (the first one, or the last with
 * select_last_index). ArgMin compares negated floats, which keeps nan the
 * winner as numpy's argmin does; integers compare in int64 so that large
 * values stay exact.
 */
static smelt_status arg_run(const sm_kargs *a, int is_min)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int rank = x->ndim;
    int64_t axis = sm_attrs_int(&a->attrs, "axis", 0);
    if (axis < -rank || axis >= (rank ? rank : 1))
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: axis %lld is out of range for rank %d", a->op_name,
                      (long long)axis, rank);
    int ax = (int)(axis < 0 ? axis + rank : axis);
    int last = sm_attrs_int(&a->attrs, "select_last_index", 0) != 0;
    int64_t len = rank ? x->dims[ax] : 1;
    int64_t n_out = len ? x->numel / len : 0;
    int64_t stride = 1;
    for (int d = ax + 1; d < rank; d++)
        stride *= x->dims[d];
    if (y->numel != n_out || y->dtype != SMELT_DTYPE_I64 ||
        (len == 0 && x->numel > 0))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    int as_float = sm_dtype_is_float(x->dtype);
    double sign = is_min ? -1 : 1;
    for (int64_t i = 0; i < n_out; i++) {
        int64_t base = (i / stride) * len * stride + i % stride, arg = 0;
        for (int64_t k = 1; k < len; k++) {
            int64_t p = base + k * stride, q = base + arg * stride;
            int better;
            if (as_float)
                better = argmax_better(sign * sm_load_f64(x->dtype, x->data, p),
                                       sign * sm_load_f64(x->dtype, x->data, q),
                                       last);
            else {
                int64_t v = sm_load_i64(x->dtype, x->data, p);
                int64_t b = sm_load_i64(x->dtype, x->data, q);
                better = (is_min ? v < b : v > b) || (last && v == b);
            }
            if (better)
                arg = k;
        }
        ((int64_t *)y->data)[i] = arg;
    }
    return SMELT_OK;
}

smelt_status sm_ref_argmax(const sm_kargs *a)
{
    return arg_run(a, 0);
}

smelt_status sm_ref_argmin(const sm_kargs *a)
{
    return arg_run(a, 1);
}
