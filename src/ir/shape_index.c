/*
 * shape_index.c - shape functions of the indexing ops: Slice,
 * Gather, Pad. The index arithmetic is the kernels' own
 * (kernels/ref/movement.h), so inferred shapes and the elements read agree.
 */
#include "core/dtype.h"
#include "ir/shape_movement.h"
#include "kernels/ref/movement.h"

/* Whether every present input in [from, to) has a known value. */
static int values_known(const sm_shape_ctx *s, int from, int to)
{
    for (int i = from; i < to; i++)
        if (sm_shape_in(s, i) && !s->in[i].data)
            return 0;
    return 1;
}

/* Slice(data, starts, ends, axes?, steps?): per axis, ONNX's clamped
 * start/end with any step. A symbolic dim survives a whole-axis slice
 * (0 to INT64_MAX, or reversed). */
smelt_status sm_shape_slice(sm_shape_ctx *s)
{
    const sm_type *x, *t;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &t));
    SM_TRY(sm_movement_input(s, 2, &t));
    sm_movement_unknown(s->out, x->dtype, x->ndim);
    if (x->ndim < 0 || !values_known(s, 1, s->n_in))
        return SMELT_OK;
    int64_t start[SMELT_MAX_DIMS], end[SMELT_MAX_DIMS], step[SMELT_MAX_DIMS];
    const sm_tensor *axes = sm_shape_in(s, 3) ? s->in[3].data : NULL;
    const sm_tensor *steps = sm_shape_in(s, 4) ? s->in[4].data : NULL;
    SM_TRY(sm_slice_read(s->ctx, x->ndim, s->in[1].data, s->in[2].data, axes,
                         steps, start, end, step));
    for (int d = 0; d < x->ndim; d++) {
        sm_dim *o = &s->out->dims[d];
        int64_t first;
        if (x->dims[d].size >= 0)
            sm_slice_dim(x->dims[d].size, start[d], end[d], step[d], &first,
                         &o->size);
        else if (sm_slice_whole(start[d], end[d], step[d]))
            *o = x->dims[d];
    }
    return SMELT_OK;
}

/* Gather(data, indices) along axis: data.shape[:axis] + indices.shape +
 * data.shape[axis+1:] (scalar indices drop the axis). Known indices are
 * checked against a known dim: index + dim when negative. */
smelt_status sm_shape_gather(sm_shape_ctx *s)
{
    const sm_type *x, *it;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &it));
    if (it->dtype != SMELT_DTYPE_UNDEFINED && it->dtype != SMELT_DTYPE_I32 &&
        it->dtype != SMELT_DTYPE_I64)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "Gather: indices must be i32 or i64, got %s",
                      smelt_dtype_name(it->dtype));
    sm_type *out = s->out;
    sm_movement_unknown(out, x->dtype, SM_RANK_UNKNOWN);
    if (x->ndim == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Gather: data must have rank 1 or more");
    if (x->ndim < 0 || it->ndim < 0)
        return SMELT_OK;
    int axis, q = it->ndim;
    SM_TRY(
        sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), x->ndim, &axis));
    if (x->ndim + q - 1 > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Gather: output rank %d exceeds the maximum %d",
                      x->ndim + q - 1, SMELT_MAX_DIMS);
    out->ndim = x->ndim + q - 1;
    for (int d = 0; d < out->ndim; d++)
        out->dims[d] = d < axis       ? x->dims[d]
                       : d < axis + q ? it->dims[d - axis]
                                      : x->dims[d - q + 1];
    const sm_tensor *ind = s->in[1].data;
    int64_t dim = x->dims[axis].size;
    for (int64_t j = 0; ind && dim >= 0 && j < ind->numel; j++) {
        int64_t k = sm_load_i64(ind->dtype, ind->data, j);
        if (k < -dim || k >= dim)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "Gather: index %lld (element %lld of indices) is "
                          "out of range for axis %d of size %lld",
                          (long long)k, (long long)j, axis, (long long)dim);
    }
    return sm_movement_check_size(s, out);
}

/* Pad(data, pads, constant_value?, axes?): each axis grows by its begin
 * and end pads (negative ones crop). Modes constant, reflect, edge, wrap;
 * all but constant need a non-empty axis to read from. */
smelt_status sm_shape_pad(sm_shape_ctx *s)
{
    const sm_type *x, *pt, *cv = sm_shape_in(s, 2);
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &pt));
    const char *mname = sm_attrs_string(&s->attrs, "mode", "constant");
    int mode = sm_pad_mode_from(mname);
    if (mode < 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Pad: unknown mode '%s' (constant, reflect, edge, wrap)",
                      mname);
    if (cv && cv->dtype != SMELT_DTYPE_UNDEFINED &&
        x->dtype != SMELT_DTYPE_UNDEFINED && cv->dtype != x->dtype)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "Pad: constant_value is %s but data is %s",
                      smelt_dtype_name(cv->dtype), smelt_dtype_name(x->dtype));
    if (cv && sm_type_known(cv) && sm_type_numel(cv) > 1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Pad: constant_value must be one element, it has %.0f",
                      sm_type_numel(cv));
    sm_movement_unknown(s->out, x->dtype, x->ndim);
    if (x->ndim < 0 || !s->in[1].data || !values_known(s, 3, 4))
        return SMELT_OK;
    int64_t begin[SMELT_MAX_DIMS], end[SMELT_MAX_DIMS];
    const sm_tensor *axes = sm_shape_in(s, 3) ? s->in[3].data : NULL;
    SM_TRY(sm_pad_read(s->ctx, x->ndim, s->in[1].data, axes, begin, end));
    for (int d = 0; d < x->ndim; d++) {
        sm_dim xd = x->dims[d], *o = &s->out->dims[d];
        if (xd.size < 0) {
            if (begin[d] == 0 && end[d] == 0)
                *o = xd;
            continue;
        }
        /* negative pads crop first, then the rest pads (as ONNX does) */
        int64_t lo = begin[d] < 0 ? -begin[d] : 0;
        int64_t hi = end[d] < 0 ? -end[d] : 0;
        if (lo > xd.size || hi > xd.size - lo)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Pad: pads %lld and %lld crop more than axis %d of "
                          "size %lld",
                          (long long)begin[d], (long long)end[d], d,
                          (long long)xd.size);
        int64_t kept = xd.size - lo - hi;
        o->size = kept;
        if (!sm_movement_add(&o->size, begin[d] + lo) ||
            !sm_movement_add(&o->size, end[d] + hi))
            return sm_err(s->ctx, SMELT_ERR_LIMIT,
                          "Pad: padding axis %d overflows", d);
        if (mode != SM_PAD_CONSTANT && kept == 0 && o->size > 0)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "Pad: cannot pad empty axis %d in mode '%s'", d,
                          mname);
    }
    return sm_movement_check_size(s, s->out);
}
