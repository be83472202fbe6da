/*
 * shape_topk.c - shape functions of the sorting ops TopK and Unique, and
 * TopK's cost. Unique's output sizes depend on the input's values: they
 * are known only when the values are (always at run time), computed by
 * the kernel's own function (select.h).
 */
#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/select.h"

/* TopK(X, K) {axis, largest, sorted}, or TopK(X) {k} before opset 10:
 * values (X's dtype) and indices (i64), X's shape with k along axis. */
smelt_status sm_shape_topk(sm_shape_ctx *s)
{
    const sm_type *x, *kt = sm_shape_in(s, 1);
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_check_rank(s, x, "input", 1, -1));
    int64_t k = 0;
    int known = 1, axis;
    if (kt) {
        SM_TRY(sm_check_index_type(s, kt, "K"));
        SM_TRY(sm_check_scalar_int(s, 1, "K", &k, &known));
    } else if (sm_attrs_find(&s->attrs, "k")) {
        k = sm_attrs_int(&s->attrs, "k", 0);
    } else {
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "TopK: K is required (input 1, or attribute k before "
                      "opset 10)");
    }
    if (known && k < 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "TopK: k %lld is negative",
                      (long long)k);
    s->out[0] = *x;
    if (x->ndim >= 0) {
        SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", -1), x->ndim,
                             &axis));
        sm_dim dim = x->dims[axis];
        if (known && dim.size >= 0 && k > dim.size)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "TopK: k %lld exceeds the size %lld of axis %d",
                          (long long)k, (long long)dim.size, axis);
        s->out[0].dims[axis] = known ? (sm_dim){k, NULL} : (sm_dim){-1, NULL};
    }
    if (s->n_out > 1) {
        s->out[1] = s->out[0];
        s->out[1].dtype = SMELT_DTYPE_I64;
    }
    return sm_movement_check_size(s, &s->out[0]);
}

/* Unique(X) {axis?, sorted}: Y (X's dtype: the distinct elements of the
 * flattened X, or X's shape with the distinct slices along axis), then
 * i64 indices [u], inverse_indices [n] and counts [u]. */
smelt_status sm_shape_unique(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    int has_axis = sm_attrs_find(&s->attrs, "axis") != NULL, axis = -1;
    sm_dim n = {-1, NULL}, u = {-1, NULL};
    if (has_axis) {
        SM_TRY(sm_check_rank(s, x, "X", 1, -1));
        s->out[0] = *x;
        if (x->ndim >= 0) {
            SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), x->ndim,
                                 &axis));
            n = x->dims[axis];
        }
    } else {
        sm_movement_unknown(&s->out[0], x->dtype, 1);
        if (sm_type_known(x))
            n.size = (int64_t)sm_type_numel(x);
    }
    if (s->in[0].data && (!has_axis || axis >= 0)) {
        sm_unique r;
        SM_TRY(sm_unique_find(s->ctx, s->in[0].data, axis,
                              (int)sm_attrs_int(&s->attrs, "sorted", 1), &r));
        u.size = r.u;
        sm_unique_free(&r);
    }
    if (s->out[0].ndim >= 0)
        s->out[0].dims[axis < 0 ? 0 : axis] = u;
    for (int j = 1; j < s->n_out && j < 4; j++) {
        sm_movement_unknown(&s->out[j], SMELT_DTYPE_I64, 1);
        s->out[j].dims[0] = j == 2 ? n : u;
    }
    return SMELT_OK;
}

/* TopK: about n log2 n comparisons per sorted line. */
void sm_cost_topk(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    double n = x ? sm_type_numel(x) : 0, line = 1;
    if (x && x->ndim > 0) {
        int64_t axis = sm_attrs_int(&s->attrs, "axis", -1);
        if (axis < 0)
            axis += x->ndim;
        if (axis >= 0 && axis < x->ndim && x->dims[axis].size > 1)
            line = (double)x->dims[axis].size;
    }
    double lg = 0;
    for (double v = line; v > 1; v /= 2)
        lg++;
    c->flops = n * lg;
    c->bytes_read = x ? sm_type_bytes(x) : 0;
    c->bytes_write = 0;
    for (int j = 0; j < s->n_out; j++)
        c->bytes_write += sm_type_bytes(&s->out[j]);
}
