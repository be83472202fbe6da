/*
 * shape_gather.c - shape functions of the element-wise indexing ops
 * (GatherElements, GatherND, ScatterElements and its deprecated alias
 * Scatter, ScatterND, MaxUnpool), of OneHot, and of the ops whose output
 * size depends on the input's values (NonZero, Compress); plus the
 * helpers of shape_check.h.
 *
 * Index values are checked against the dims they index whenever both are
 * known (always at run time), with the range check the kernels use
 * (kernels/ref/select.h).
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/select.h"

smelt_status sm_check_index_type(sm_shape_ctx *s, const sm_type *t,
                                 const char *what)
{
    if (t->dtype == SMELT_DTYPE_UNDEFINED || t->dtype == SMELT_DTYPE_I32 ||
        t->dtype == SMELT_DTYPE_I64)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: %s must be i32 or i64, got %s",
                  s->op->name, what, smelt_dtype_name(t->dtype));
}

smelt_status sm_check_float_type(sm_shape_ctx *s, const sm_type *t,
                                 const char *what)
{
    if (t->dtype == SMELT_DTYPE_UNDEFINED || sm_dtype_is_float(t->dtype))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: %s must be a float tensor, got %s", s->op->name, what,
                  smelt_dtype_name(t->dtype));
}

smelt_status sm_check_same_type(sm_shape_ctx *s, const sm_type *a,
                                const char *an, const sm_type *b,
                                const char *bn)
{
    if (a->dtype == SMELT_DTYPE_UNDEFINED ||
        b->dtype == SMELT_DTYPE_UNDEFINED || a->dtype == b->dtype)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: %s is %s but %s is %s",
                  s->op->name, an, smelt_dtype_name(a->dtype), bn,
                  smelt_dtype_name(b->dtype));
}

smelt_status sm_check_rank(sm_shape_ctx *s, const sm_type *t, const char *what,
                           int lo, int hi)
{
    if (t->ndim < 0 || (t->ndim >= lo && (hi < 0 || t->ndim <= hi)))
        return SMELT_OK;
    if (lo == hi)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must have rank %d, it has rank %d", s->op->name,
                      what, lo, t->ndim);
    if (hi < 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must have rank %d or more, it has rank %d",
                      s->op->name, what, lo, t->ndim);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s must have rank %d to %d, it has rank %d", s->op->name,
                  what, lo, hi, t->ndim);
}

smelt_status sm_check_same_dim(sm_shape_ctx *s, sm_dim a, const char *an,
                               sm_dim b, const char *bn)
{
    if (a.size < 0 || b.size < 0 || a.size == b.size)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: %s is %lld but %s is %lld",
                  s->op->name, an, (long long)a.size, bn, (long long)b.size);
}

/* Input i when present, after checking it holds one element. */
static smelt_status one_element(sm_shape_ctx *s, int i, const char *what,
                                const sm_tensor **data)
{
    const sm_type *t = sm_shape_in(s, i);
    *data = NULL;
    if (!t)
        return SMELT_OK;
    const sm_tensor *d = s->in[i].data;
    if ((sm_type_known(t) && sm_type_numel(t) != 1) || (d && d->numel != 1))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must hold one element, it has %lld", s->op->name,
                      what,
                      (long long)(d ? d->numel : (int64_t)sm_type_numel(t)));
    *data = d;
    return SMELT_OK;
}

smelt_status sm_check_scalar_int(sm_shape_ctx *s, int i, const char *what,
                                 int64_t *v, int *known)
{
    const sm_tensor *d;
    SM_TRY(one_element(s, i, what, &d));
    *known = d != NULL;
    if (d)
        *v = sm_load_i64(d->dtype, d->data, 0);
    return SMELT_OK;
}

smelt_status sm_check_scalar_f64(sm_shape_ctx *s, int i, const char *what,
                                 double *v, int *known)
{
    const sm_tensor *d;
    SM_TRY(one_element(s, i, what, &d));
    *known = d != NULL;
    if (d)
        *v = sm_load_f64(d->dtype, d->data, 0);
    return SMELT_OK;
}

/* The known sizes of dims [from, from + n) of t into v; 0 when one is
 * not known. */
static int known_dims(const sm_type *t, int from, int n, int64_t *v)
{
    for (int i = 0; i < n; i++) {
        if (t->dims[from + i].size < 0)
            return 0;
        v[i] = t->dims[from + i].size;
    }
    return 1;
}

/* Checks the known index values of input i (m per index tuple, indexing
 * dims [axis0, axis0 + m) of data type x) when those dims are known. */
static smelt_status check_indices(sm_shape_ctx *s, int i, const sm_type *x,
                                  int m, int axis0)
{
    int64_t dims[SMELT_MAX_DIMS];
    const sm_tensor *ind = s->in[i].data;
    if (!ind || m <= 0 || !known_dims(x, axis0, m, dims))
        return SMELT_OK;
    return sm_index_check(s->ctx, SMELT_ERR_INVALID_ARG, s->op->name, ind, m,
                          axis0, dims);
}

/* Fails when a known dim d of the indices exceeds data's, except along
 * the gathered or scattered axis: the elements there would not exist. */
static smelt_status dims_within(sm_shape_ctx *s, const sm_type *it,
                                const sm_type *x, int axis)
{
    for (int d = 0; d < it->ndim; d++) {
        int64_t a = it->dims[d].size, b = x->dims[d].size;
        if (d != axis && a >= 0 && b >= 0 && a > b)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: indices dim %d is %lld, more than data's %lld",
                          s->op->name, d, (long long)a, (long long)b);
    }
    return SMELT_OK;
}

/* GatherND's and ScatterND's indices: i64 only, as ONNX defines them. */
static smelt_status nd_indices(sm_shape_ctx *s, const sm_type *it)
{
    if (it->dtype == SMELT_DTYPE_UNDEFINED || it->dtype == SMELT_DTYPE_I64)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: indices must be i64, got %s",
                  s->op->name, smelt_dtype_name(it->dtype));
}

/* GatherElements(data, indices) {axis}: indices of data's rank; the output
 * has the indices' shape and reads data with the axis index replaced by
 * the index value. */
smelt_status sm_shape_gatherelements(sm_shape_ctx *s)
{
    const sm_type *x, *it;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &it));
    SM_TRY(sm_check_index_type(s, it, "indices"));
    SM_TRY(sm_check_rank(s, x, "data", 1, -1));
    SM_TRY(sm_check_rank(s, it, "indices", 1, -1));
    if (x->ndim >= 0 && it->ndim >= 0 && x->ndim != it->ndim)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "GatherElements: indices have rank %d but data has "
                      "rank %d",
                      it->ndim, x->ndim);
    int rank = x->ndim >= 0 ? x->ndim : it->ndim, axis;
    sm_movement_unknown(s->out, x->dtype, rank);
    if (rank < 0)
        return SMELT_OK;
    SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), rank, &axis));
    if (it->ndim < 0)
        return SMELT_OK;
    memcpy(s->out->dims, it->dims, sizeof(sm_dim) * (size_t)rank);
    if (x->ndim < 0)
        return SMELT_OK;
    SM_TRY(dims_within(s, it, x, axis));
    SM_TRY(check_indices(s, 1, x, 1, axis));
    return sm_movement_check_size(s, s->out);
}

/* GatherND(data, indices) {batch_dims b}: each index tuple (the last dim
 * of indices, m values) picks a slice data[b0.., k0, .., km-1, ...]; the
 * output is indices.shape[:-1] + data.shape[b+m:], and the first b dims of
 * data and indices must agree. */
smelt_status sm_shape_gathernd(sm_shape_ctx *s)
{
    const sm_type *x, *it;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &it));
    SM_TRY(nd_indices(s, it));
    SM_TRY(sm_check_rank(s, x, "data", 1, -1));
    SM_TRY(sm_check_rank(s, it, "indices", 1, -1));
    int64_t b = sm_attrs_int(&s->attrs, "batch_dims", 0);
    sm_movement_unknown(s->out, x->dtype, SM_RANK_UNKNOWN);
    if (b < 0 || (x->ndim >= 0 && b >= x->ndim) ||
        (it->ndim >= 0 && b >= it->ndim))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "GatherND: batch_dims %lld must be at least 0 and less "
                      "than the ranks of data (%d) and indices (%d)",
                      (long long)b, x->ndim, it->ndim);
    if (x->ndim < 0 || it->ndim < 0)
        return SMELT_OK;
    int r = x->ndim, q = it->ndim, nb = (int)b;
    for (int d = 0; d < nb; d++)
        SM_TRY(sm_check_same_dim(s, it->dims[d], "a batch dim of indices",
                                 x->dims[d], "data's"));
    int64_t m = it->dims[q - 1].size;
    if (m < 0)
        return SMELT_OK;
    if (m < 1 || m > r - nb)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "GatherND: index tuples of %lld values for data of rank "
                      "%d with %d batch dims (1 to %d allowed)",
                      (long long)m, r, nb, r - nb);
    int rank = q - 1 + r - nb - (int)m;
    if (rank > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "GatherND: output rank %d exceeds the maximum %d", rank,
                      SMELT_MAX_DIMS);
    sm_movement_unknown(s->out, x->dtype, rank);
    for (int d = 0; d < rank; d++)
        s->out->dims[d] =
            d < q - 1 ? it->dims[d] : x->dims[d - (q - 1) + nb + (int)m];
    SM_TRY(check_indices(s, 1, x, (int)m, nb));
    return sm_movement_check_size(s, s->out);
}

/* The reduction attribute of the scatter ops. */
static smelt_status scatter_reduction(sm_shape_ctx *s)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *r = sm_attrs_string(&s->attrs, "reduction", "none");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(r, names[i]) == 0)
            return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                  "%s: unknown reduction '%s' (none, add, mul, max, min)",
                  s->op->name, r);
}

/* The three inputs of a scatter op; the output is data's type. */
static smelt_status scatter_inputs(sm_shape_ctx *s, const sm_type **x,
                                   const sm_type **it, const sm_type **up)
{
    SM_TRY(sm_movement_input(s, 0, x));
    SM_TRY(sm_movement_input(s, 1, it));
    SM_TRY(sm_movement_input(s, 2, up));
    SM_TRY(sm_check_index_type(s, *it, "indices"));
    SM_TRY(sm_check_same_type(s, *up, "updates", *x, "data"));
    SM_TRY(sm_check_rank(s, *x, "data", 1, -1));
    SM_TRY(sm_check_rank(s, *it, "indices", 1, -1));
    SM_TRY(scatter_reduction(s));
    *s->out = **x;
    return SMELT_OK;
}

/* ScatterElements(data, indices, updates) {axis, reduction} and Scatter:
 * a copy of data where element idx of updates goes to idx with the axis
 * index replaced by indices[idx]; indices and updates share a shape and
 * data's rank. */
smelt_status sm_shape_scatterelements(sm_shape_ctx *s)
{
    const sm_type *x, *it, *up;
    SM_TRY(scatter_inputs(s, &x, &it, &up));
    int rank = x->ndim >= 0 ? x->ndim : it->ndim, axis;
    const sm_type *t[3] = {x, it, up};
    for (int i = 1; i < 3; i++)
        if (rank >= 0 && t[i]->ndim >= 0 && t[i]->ndim != rank)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: %s has rank %d but data has rank %d",
                          s->op->name, i == 1 ? "indices" : "updates",
                          t[i]->ndim, rank);
    if (rank < 0)
        return SMELT_OK;
    SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), rank, &axis));
    if (it->ndim < 0)
        return SMELT_OK;
    for (int d = 0; up->ndim >= 0 && d < rank; d++)
        SM_TRY(sm_check_same_dim(s, up->dims[d], "a dim of updates",
                                 it->dims[d], "of indices"));
    if (x->ndim < 0)
        return SMELT_OK;
    SM_TRY(dims_within(s, it, x, axis));
    return check_indices(s, 1, x, 1, axis);
}

/* ScatterND(data, indices, updates) {reduction}: each index tuple (the
 * last dim of indices, k values) addresses a slice data[k0, .., kk-1,
 * ...] that the matching slice of updates (of shape indices.shape[:-1] +
 * data.shape[k:]) replaces or is reduced into. */
smelt_status sm_shape_scatternd(sm_shape_ctx *s)
{
    const sm_type *x, *it, *up;
    SM_TRY(scatter_inputs(s, &x, &it, &up));
    SM_TRY(nd_indices(s, it));
    if (x->ndim < 0 || it->ndim < 0)
        return SMELT_OK;
    int r = x->ndim, q = it->ndim;
    int64_t k = it->dims[q - 1].size;
    if (k < 0)
        return SMELT_OK;
    if (k > r)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "ScatterND: index tuples of %lld values for data of "
                      "rank %d",
                      (long long)k, r);
    int want = q - 1 + r - (int)k;
    if (up->ndim >= 0 && up->ndim != want)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "ScatterND: updates have rank %d where indices and "
                      "data need %d",
                      up->ndim, want);
    for (int d = 0; up->ndim >= 0 && d < want; d++) {
        sm_dim w = d < q - 1 ? it->dims[d] : x->dims[d - (q - 1) + (int)k];
        SM_TRY(sm_check_same_dim(s, up->dims[d], "a dim of updates", w,
                                 "the one indices and data give"));
    }
    return check_indices(s, 1, x, (int)k, 0);
}

/* OneHot(indices, depth, values) {axis}: the indices' shape with a new
 * axis of size depth inserted at axis; dtype of values (off, on). */
smelt_status sm_shape_onehot(sm_shape_ctx *s)
{
    const sm_type *it, *dt, *vt;
    SM_TRY(sm_movement_input(s, 0, &it));
    SM_TRY(sm_movement_input(s, 1, &dt));
    SM_TRY(sm_movement_input(s, 2, &vt));
    if (vt->ndim >= 0 &&
        (vt->ndim != 1 || (vt->dims[0].size >= 0 && vt->dims[0].size != 2)))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "OneHot: values must be [off, on], a 1-D tensor of 2 "
                      "elements");
    int64_t depth = -1;
    int known;
    SM_TRY(sm_check_scalar_int(s, 1, "depth", &depth, &known));
    if (known && depth < 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "OneHot: depth %lld is negative", (long long)depth);
    int r = it->ndim, axis;
    if (r >= SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "OneHot: output rank %d exceeds the maximum %d", r + 1,
                      SMELT_MAX_DIMS);
    sm_movement_unknown(s->out, vt->dtype, r < 0 ? SM_RANK_UNKNOWN : r + 1);
    if (r < 0)
        return SMELT_OK;
    SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", -1), r + 1, &axis));
    for (int d = 0; d <= r; d++)
        s->out->dims[d] = d < axis   ? it->dims[d]
                          : d > axis ? it->dims[d - 1]
                          : known    ? (sm_dim){depth, NULL}
                                     : (sm_dim){-1, NULL};
    return sm_movement_check_size(s, s->out);
}

/* Compress(input, condition) {axis?}: the slices along axis (or, without
 * axis, the elements of the flattened input) whose condition entry is
 * true; the count comes from condition's value. */
smelt_status sm_shape_compress(sm_shape_ctx *s)
{
    const sm_type *x, *ct;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &ct));
    if (ct->dtype != SMELT_DTYPE_UNDEFINED && ct->dtype != SMELT_DTYPE_BOOL)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "Compress: condition must be bool, got %s",
                      smelt_dtype_name(ct->dtype));
    SM_TRY(sm_check_rank(s, ct, "condition", 1, 1));
    int has_axis = sm_attrs_find(&s->attrs, "axis") != NULL, axis = 0;
    sm_dim dim = {-1, NULL};
    if (!has_axis) {
        sm_movement_unknown(s->out, x->dtype, 1);
        if (sm_type_known(x))
            dim.size = (int64_t)sm_type_numel(x);
    } else {
        *s->out = *x;
        if (x->ndim < 0)
            return SMELT_OK;
        SM_TRY(sm_check_rank(s, x, "input", 1, -1));
        SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), x->ndim,
                             &axis));
        dim = x->dims[axis];
        s->out->dims[axis] = (sm_dim){-1, NULL};
    }
    if (!s->in[1].data || dim.size < 0)
        return SMELT_OK;
    int64_t count;
    SM_TRY(sm_compress_count(s->ctx, SMELT_ERR_INVALID_ARG, s->in[1].data,
                             dim.size, &count));
    s->out->dims[axis] = (sm_dim){count, NULL};
    return SMELT_OK;
}

/* NonZero(x): i64[rank, n], the indices of the n nonzero elements, one
 * per column. n depends on x's value: it is known only when the value
 * is (at run time it always is). */
smelt_status sm_shape_nonzero(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    sm_movement_unknown(s->out, SMELT_DTYPE_I64, 2);
    if (x->ndim >= 0)
        s->out->dims[0].size = x->ndim;
    if (s->in[0].data)
        s->out->dims[1].size = sm_nonzero_count(s->in[0].data);
    return SMELT_OK;
}

/* MaxUnpool(X [N, C, d...], I, output_shape?) {kernel_shape, pads,
 * strides}: X[i] goes to flat position I[i] of the unpooled shape
 * ((d - 1) * stride - pads + kernel per spatial dim); output_shape, when
 * given, may enlarge that shape, the unpooled values keeping their
 * positions at its start. */
smelt_status sm_shape_maxunpool(sm_shape_ctx *s)
{
    const sm_type *x, *it, *st = sm_shape_in(s, 2);
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &it));
    SM_TRY(sm_check_index_type(s, it, "I"));
    const int64_t *kv;
    int rank = sm_attrs_ints(&s->attrs, "kernel_shape", &kv) + 2;
    if (rank < 3 || rank > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "MaxUnpool: kernel_shape must have 1 to %d values",
                      SMELT_MAX_DIMS - 2);
    SM_TRY(sm_check_rank(s, x, "X", rank, rank));
    SM_TRY(sm_check_rank(s, it, "I", rank, rank));
    for (int d = 0; x->ndim >= 0 && it->ndim >= 0 && d < x->ndim; d++)
        SM_TRY(
            sm_check_same_dim(s, it->dims[d], "a dim of I", x->dims[d], "X's"));
    int64_t in[SMELT_MAX_DIMS], un[SMELT_MAX_DIMS];
    for (int d = 0; d < rank; d++)
        in[d] = x->ndim >= 0 ? x->dims[d].size : -1;
    SM_TRY(sm_unpool_shape(s->ctx, SMELT_ERR_INVALID_ARG, &s->attrs, rank, in,
                           un));
    sm_movement_unknown(s->out, x->dtype, rank);
    for (int d = 0; d < rank; d++)
        s->out->dims[d] =
            d < 2 && x->ndim >= 0 ? x->dims[d] : (sm_dim){un[d], NULL};
    if (st) {
        int n;
        int64_t v[SMELT_MAX_DIMS];
        sm_movement_unknown(s->out, x->dtype, rank);
        if (!s->in[2].data)
            return SMELT_OK;
        SM_TRY(sm_movement_read(s, s->in[2].data, v, &n));
        if (n != rank)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "MaxUnpool: output_shape has %d values for rank %d",
                          n, rank);
        for (int d = 0; d < n; d++)
            if (v[d] < 0 || (un[d] >= 0 && v[d] < un[d]))
                return sm_err(s->ctx, SMELT_ERR_SHAPE,
                              "MaxUnpool: output_shape dim %d is %lld, less "
                              "than the unpooled %lld",
                              d, (long long)v[d], (long long)un[d]);
        sm_type_set(s->out, x->dtype, n, v);
    }
    SM_TRY(sm_movement_check_size(s, s->out));
    int64_t total = 1;
    for (int d = 0; d < rank; d++)
        if (un[d] < 0 || !sm_movement_mul(&total, un[d]))
            return SMELT_OK;
    if (!s->in[1].data)
        return SMELT_OK;
    return sm_index_check(s->ctx, SMELT_ERR_INVALID_ARG, "MaxUnpool",
                          s->in[1].data, 1, 0, &total);
}

/* Scatter ops: one operation per update, data copied once. */
void sm_cost_scatter(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *up = sm_shape_in(s, 2);
    c->flops = up ? sm_type_numel(up) : 0;
    c->bytes_read = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
    c->bytes_write = s->n_out > 0 ? sm_type_bytes(&s->out[0]) : 0;
}

/* Selection ops (NonZero, Compress, OneHot, Unique, ...): one operation
 * per element of the first input and of every output; every input read,
 * every output written. */
void sm_cost_select(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    c->flops = x ? sm_type_numel(x) : 0;
    c->bytes_read = 0;
    c->bytes_write = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
    for (int j = 0; j < s->n_out; j++) {
        c->flops += sm_type_numel(&s->out[j]);
        c->bytes_write += sm_type_bytes(&s->out[j]);
    }
}
