/*
 * shape_scatter.c - shape functions of the scattering ops: ScatterElements
 * and its deprecated alias Scatter, ScatterND and MaxUnpool; and their
 * cost.
 *
 * Index values are checked against the dims they index whenever both are
 * known (always at run time), with the range check the kernels use
 * (kernels/ref/select.h, through shape_check.h).
 */
#include <string.h>

#include "ir/shape_check.h"
#include "kernels/ref/select.h"

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
    SM_TRY(sm_check_dims_within(s, it, x, axis));
    return sm_check_indices(s, 1, x, 1, axis);
}

/* ScatterND(data, indices, updates) {reduction}: each index tuple (the
 * last dim of indices, k values) addresses a slice data[k0, .., kk-1,
 * ...] that the matching slice of updates (of shape indices.shape[:-1] +
 * data.shape[k:]) replaces or is reduced into. */
smelt_status sm_shape_scatternd(sm_shape_ctx *s)
{
    const sm_type *x, *it, *up;
    SM_TRY(scatter_inputs(s, &x, &it, &up));
    SM_TRY(sm_check_nd_indices(s, it));
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
    return sm_check_indices(s, 1, x, (int)k, 0);
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
