/*
 * shape_select.c - shape functions of the selecting ops: TopK, Unique and
 * NonMaxSuppression. Unique's and NonMaxSuppression's output sizes depend
 * on the input's values: they are known only when the values are (always
 * at run time), computed by the kernels' own functions (select.h).
 */
#include "core/alloc.h"
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

/* NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output?,
 * iou_threshold?, score_threshold?) {center_point_box}: i64[n, 3]. */
smelt_status sm_shape_nonmaxsuppression(sm_shape_ctx *s)
{
    static const char *const names[] = {"max_output_boxes_per_class",
                                        "iou_threshold", "score_threshold"};
    const sm_type *bx, *sc;
    SM_TRY(sm_movement_input(s, 0, &bx));
    SM_TRY(sm_movement_input(s, 1, &sc));
    SM_TRY(sm_check_float_type(s, bx, "boxes"));
    SM_TRY(sm_check_same_type(s, sc, "scores", bx, "boxes"));
    SM_TRY(sm_check_rank(s, bx, "boxes", 3, 3));
    SM_TRY(sm_check_rank(s, sc, "scores", 3, 3));
    int64_t cpb = sm_attrs_int(&s->attrs, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "NonMaxSuppression: center_point_box %lld must be 0 or "
                      "1",
                      (long long)cpb);
    if (bx->ndim == 3) {
        SM_TRY(sm_check_same_dim(s, bx->dims[2], "the last dim of boxes",
                                 (sm_dim){4, NULL}, "required to be"));
        if (sc->ndim == 3) {
            SM_TRY(sm_check_same_dim(s, bx->dims[0], "the batch dim of boxes",
                                     sc->dims[0], "that of scores"));
            SM_TRY(sm_check_same_dim(s, bx->dims[1], "the box dim of boxes",
                                     sc->dims[2], "that of scores"));
        }
    }
    int all = s->in[0].data && s->in[1].data;
    const sm_tensor *opt[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        double v;
        int known;
        SM_TRY(sm_check_scalar_f64(s, i + 2, names[i], &v, &known));
        if (sm_shape_in(s, i + 2)) {
            opt[i] = s->in[i + 2].data;
            all = all && known;
        }
    }
    sm_movement_unknown(s->out, SMELT_DTYPE_I64, 2);
    s->out->dims[1].size = 3;
    if (!all)
        return SMELT_OK;
    int64_t *sel, count;
    SM_TRY(sm_nms_select(s->ctx, s->in[0].data, s->in[1].data, opt[0], opt[1],
                         opt[2], (int)cpb, &sel, &count));
    sm_free(sel);
    s->out->dims[0].size = count;
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
