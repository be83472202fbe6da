/*
 * shape_gather.c - shape functions of the gathering ops (GatherElements,
 * GatherND), of OneHot, and of the ops whose output size depends on the
 * input's values (NonZero, Compress); and the selection ops' cost.
 *
 * Index values are checked against the dims they index whenever both are
 * known (always at run time), with the range check the kernels use
 * (kernels/ref/select.h, through shape_check.h).
 */
#include <string.h>

#include "ir/shape_check.h"
#include "kernels/ref/select.h"

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
    SM_TRY(sm_check_dims_within(s, it, x, axis));
    SM_TRY(sm_check_indices(s, 1, x, 1, axis));
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
    SM_TRY(sm_check_nd_indices(s, it));
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
    SM_TRY(sm_check_indices(s, 1, x, (int)m, nb));
    return sm_movement_check_size(s, s->out);
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
