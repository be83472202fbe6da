/*
 * shape_gridsample.c - shape function and cost of GridSample, whose
 * attributes are read by the reference kernel's own function (resize.h).
 */
#include "ir/shape_check.h"
#include "kernels/ref/resize.h"

/* GridSample(X [N, C, H, W], grid [N, Ho, Wo, 2]) {align_corners, mode,
 * padding_mode}: [N, C, Ho, Wo] of X's dtype. Only 2 spatial dims (opset
 * 16's form) are supported. */
smelt_status sm_shape_gridsample(sm_shape_ctx *s)
{
    const sm_type *x, *g;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &g));
    SM_TRY(sm_check_float_type(s, g, "grid"));
    int mode, pad, align;
    sm_gridsample_attrs(&s->attrs, &mode, &pad, &align);
    if (mode < 0 || pad < 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "GridSample: unknown mode '%s' or padding_mode '%s' "
                      "(bilinear, nearest, bicubic; zeros, border, "
                      "reflection)",
                      sm_attrs_string(&s->attrs, "mode", "bilinear"),
                      sm_attrs_string(&s->attrs, "padding_mode", "zeros"));
    for (int i = 0; i < 2; i++) {
        const sm_type *t = i ? g : x;
        if (t->ndim >= 0 && t->ndim != 4)
            return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                          "GridSample: %s has rank %d; only 4-D inputs (two "
                          "spatial dims) are supported",
                          i ? "grid" : "X", t->ndim);
    }
    sm_movement_unknown(s->out, x->dtype, 4);
    if (x->ndim == 4) {
        s->out->dims[0] = x->dims[0];
        s->out->dims[1] = x->dims[1];
    }
    if (g->ndim == 4) {
        SM_TRY(sm_check_same_dim(s, g->dims[3], "the last dim of grid",
                                 (sm_dim){2, NULL}, "required to be"));
        SM_TRY(sm_check_same_dim(s, g->dims[0], "the batch dim of grid",
                                 s->out->dims[0], "X's"));
        if (s->out->dims[0].size < 0 && !s->out->dims[0].sym)
            s->out->dims[0] = g->dims[0];
        s->out->dims[2] = g->dims[1];
        s->out->dims[3] = g->dims[2];
    }
    return sm_movement_check_size(s, s->out);
}

/* GridSample: per output point and channel, one weighted read per tap
 * (4 bilinear, 1 nearest, 16 bicubic). */
void sm_cost_gridsample(const sm_shape_ctx *s, sm_cost *c)
{
    int mode, pad, align;
    sm_gridsample_attrs(&s->attrs, &mode, &pad, &align);
    double taps = mode == 1 ? 1 : mode == 2 ? 16 : 4;
    c->flops = 2 * taps * sm_type_numel(s->out);
    c->bytes_read = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
    c->bytes_write = sm_type_bytes(s->out);
}
