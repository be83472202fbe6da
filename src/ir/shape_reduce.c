/*
 * shape_reduce.c - shape inference and cost of the reductions (ReduceSum,
 * ReduceMean, ReduceMax, ReduceMin and the reductions of reduce_mapped.c) and
 * ArgMax / ArgMin.
 *
 * Reduction axes come from the `axes` attribute (older opsets) or from the
 * optional input 1 (newer opsets); when that input's data is unknown during
 * inference only what does not depend on it is inferred.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"

/* What the shape function knows about the axes. */
typedef struct reduce_axes {
    int known; /* the axis values are known */
    int n;     /* their count; -1 when not even that is known */
    int64_t v[SMELT_MAX_DIMS];
} reduce_axes;

/* Reads the axes from input 1 or from the `axes` attribute (absent from
 * both: none, n = 0). Giving both is an error. */
static smelt_status read_axes(sm_shape_ctx *s, reduce_axes *ax)
{
    const int64_t *attr;
    int na = sm_attrs_ints(&s->attrs, "axes", &attr);
    const sm_type *t = sm_shape_in(s, 1);
    ax->known = 1;
    ax->n = 0;
    if (t && na >= 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: axes given both as attribute and as input 1",
                      s->op->name);
    if (na > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %d axes where at most %d are allowed", s->op->name,
                      na, SMELT_MAX_DIMS);
    if (na > 0) {
        memcpy(ax->v, attr, (size_t)na * sizeof *attr);
        ax->n = na;
    }
    if (!t)
        return SMELT_OK;
    if (t->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != SMELT_DTYPE_I64)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: axes (input 1) must be i64, got %s", s->op->name,
                      smelt_dtype_name(t->dtype));
    if (t->ndim > 1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: axes (input 1) must be 1-D, got rank %d",
                      s->op->name, t->ndim);
    const sm_tensor *data = s->in[1].data;
    if (data) {
        ax->n = sm_shape_read_ints(s, data, ax->v, SMELT_MAX_DIMS);
        if (ax->n >= 0)
            return SMELT_OK;
        smelt_status st = smelt_ctx_status(s->ctx);
        return st != SMELT_OK ? st : SMELT_ERR_SHAPE;
    }
    ax->known = 0;
    ax->n = t->ndim == 1 && t->dims[0].size >= 0 ? (int)t->dims[0].size : -1;
    if (ax->n == 0)
        ax->known = 1; /* an empty list is known without its data */
    return SMELT_OK;
}

/* Output type when the axis values are unknown: with keepdims the rank
 * stays and dims of size 1 stay 1, the rest is unknown; without, not even
 * the rank is known (as in ONNX's own inference). */
static void reduce_unknown_axes(const sm_type *x, int keep, sm_type *out)
{
    out->ndim = keep ? x->ndim : SM_RANK_UNKNOWN;
    for (int d = 0; d < out->ndim; d++)
        out->dims[d] = (sm_dim){x->dims[d].size == 1 ? 1 : -1, NULL};
}

/* ReduceMax and ReduceMin have no value over an empty axis, and are the
 * reductions defined on bool. */
static const unsigned char reduce_is_extremum[SM_OP_COUNT] = {
    [SM_OP_ReduceMax] = 1,
    [SM_OP_ReduceMin] = 1,
};

static int is_extremum(const sm_shape_ctx *s)
{
    sm_op op = sm_op_from_name(s->op->name, (int)strlen(s->op->name));
    return op < SM_OP_COUNT && reduce_is_extremum[op];
}

/*
 * Reductions: output has input 0's dtype; each reduced axis becomes 1
 * (keepdims) or disappears. No axes reduce everything, or nothing when
 * noop_with_empty_axes is set. Axes are checked for range and repeats;
 * ReduceMax/Min over an axis of size 0 is an error.
 */
smelt_status sm_shape_reduce(sm_shape_ctx *s)
{
    const sm_type *x = sm_shape_in(s, 0);
    if (!x)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input 0 is missing",
                      s->op->name);
    int extremum = is_extremum(s);
    if (x->dtype == SMELT_DTYPE_BOOL && !extremum)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: input 0 has dtype bool, expected a numeric dtype",
                      s->op->name);
    int keep = sm_attrs_int(&s->attrs, "keepdims", 1) != 0;
    int noop = sm_attrs_int(&s->attrs, "noop_with_empty_axes", 0) != 0;
    reduce_axes ax;
    SM_TRY(read_axes(s, &ax));
    sm_type *out = &s->out[0];
    if (ax.known && ax.n == 0 && noop) {
        *out = *x;
        return SMELT_OK;
    }
    out->dtype = x->dtype;
    if (x->ndim < 0) {
        out->ndim = SM_RANK_UNKNOWN;
        return SMELT_OK;
    }
    if (!ax.known) {
        reduce_unknown_axes(x, keep, out);
        return SMELT_OK;
    }
    int mask[SMELT_MAX_DIMS] = {0};
    for (int i = 0; i < ax.n; i++) {
        int d;
        SM_TRY(sm_shape_axis(s, ax.v[i], x->ndim, &d));
        if (mask[d])
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: axis %lld is repeated in axes", s->op->name,
                          (long long)ax.v[i]);
        mask[d] = 1;
    }
    int rank = x->ndim, n = 0;
    for (int d = 0; d < rank; d++) {
        int reduced = ax.n == 0 || mask[d];
        if (reduced && x->dims[d].size == 0 && extremum)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: cannot reduce over axis %d of size 0",
                          s->op->name, d);
        if (!reduced)
            out->dims[n++] = x->dims[d];
        else if (keep)
            out->dims[n++] = (sm_dim){1, NULL};
    }
    out->ndim = n;
    return SMELT_OK;
}

/*
 * ArgMax and ArgMin: int64 indices along `axis`, which becomes 1
 * (keepdims) or disappears. An axis of size 0 has no extremum.
 */
smelt_status sm_shape_argmax(sm_shape_ctx *s)
{
    const sm_type *x = sm_shape_in(s, 0);
    if (!x)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input 0 is missing",
                      s->op->name);
    if (x->dtype == SMELT_DTYPE_BOOL)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: input 0 has dtype bool, expected a numeric dtype",
                      s->op->name);
    int keep = sm_attrs_int(&s->attrs, "keepdims", 1) != 0;
    sm_type *out = &s->out[0];
    out->dtype = SMELT_DTYPE_I64;
    if (x->ndim < 0) {
        out->ndim = SM_RANK_UNKNOWN;
        return SMELT_OK;
    }
    int axis;
    SM_TRY(
        sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), x->ndim, &axis));
    if (x->ndim > 0 && x->dims[axis].size == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: axis %d has size 0, so it has no extremum",
                      s->op->name, axis);
    int n = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (d != axis)
            out->dims[n++] = x->dims[d];
        else if (keep)
            out->dims[n++] = (sm_dim){1, NULL};
    }
    out->ndim = n;
    return SMELT_OK;
}

/* One operation per input element; reads the input, writes the result. */
void sm_cost_reduce(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    c->flops = x ? sm_type_numel(x) : 0;
    c->bytes_read = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
    c->bytes_write = s->n_out > 0 ? sm_type_bytes(&s->out[0]) : 0;
}
