/*
 * shape_resize.c - shape functions of the resampling ops: Resize, its
 * older form Upsample, RoiAlign and GridSample. Resize's output size comes from
 * the values of its scales or sizes input (kernels/ref/resize.h sizes both the
 * inference and the kernel); when they are not known only the rank is.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/resize.h"
#include "kernels/ref/select.h"

/* Whether input i is present and certainly empty by its type. */
static int known_empty(const sm_shape_ctx *s, int i)
{
    const sm_type *t = sm_shape_in(s, i);
    return t && sm_type_known(t) && sm_type_numel(t) == 0;
}

/* Resize(X, roi?, scales?, sizes?) (upsample 0) or Upsample(X, scales?)
 * {scales?}: X's dtype and rank, each dim floor(dim * scale) or the
 * given size. */
static smelt_status resize_shape(sm_shape_ctx *s, int upsample)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    sm_resize r;
    SM_TRY(sm_resize_attrs(s->ctx, SMELT_ERR_INVALID_ARG, s->op->name,
                           &s->attrs, upsample, &r));
    int i_roi = upsample ? -1 : 1, i_sc = upsample ? 1 : 2, i_sz = 3;
    sm_resize_args args = {NULL, NULL, NULL, NULL, 0};
    const sm_type *t;
    if (i_roi > 0 && (t = sm_shape_in(s, i_roi))) {
        SM_TRY(sm_check_float_type(s, t, "roi"));
        args.roi = s->in[i_roi].data;
    }
    int unknown = 0;
    if ((t = sm_shape_in(s, i_sc))) {
        SM_TRY(sm_check_float_type(s, t, "scales"));
        SM_TRY(sm_check_rank(s, t, "scales", 1, 1));
        args.scales = s->in[i_sc].data;
        unknown |= !args.scales && !known_empty(s, i_sc);
    } else if (upsample) {
        args.n_scale_attr =
            sm_attrs_floats(&s->attrs, "scales", &args.scale_attr);
        args.n_scale_attr = args.n_scale_attr < 0 ? 0 : args.n_scale_attr;
    }
    if (!upsample && (t = sm_shape_in(s, i_sz))) {
        if (t->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != SMELT_DTYPE_I64)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "Resize: sizes must be i64, got %s",
                          smelt_dtype_name(t->dtype));
        SM_TRY(sm_check_rank(s, t, "sizes", 1, 1));
        args.sizes = s->in[i_sz].data;
        unknown |= !args.sizes && !known_empty(s, i_sz);
    }
    sm_movement_unknown(s->out, x->dtype, x->ndim);
    if (x->ndim < 0 || unknown)
        return SMELT_OK;
    int64_t in[SMELT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        in[d] = x->dims[d].size;
    SM_TRY(sm_resize_plan(s->ctx, SMELT_ERR_INVALID_ARG, s->op->name, x->ndim,
                          in, &args, &r));
    for (int d = 0; d < x->ndim; d++)
        s->out->dims[d] = r.out[d] < 0 && r.scale[d] == 1
                              ? x->dims[d]
                              : (sm_dim){r.out[d], NULL};
    return sm_movement_check_size(s, s->out);
}

smelt_status sm_shape_resize(sm_shape_ctx *s)
{
    return resize_shape(s, 0);
}

smelt_status sm_shape_upsample(sm_shape_ctx *s)
{
    return resize_shape(s, 1);
}

/* Resize: per output element, one weighted read per tap, taps per axis
 * (1 nearest, 2 linear, 4 cubic) multiplied over the resized axes. */
void sm_cost_resize(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    const char *mode = sm_attrs_string(&s->attrs, "mode", "nearest");
    double taps = strcmp(mode, "cubic") == 0    ? 4
                  : strcmp(mode, "linear") == 0 ? 2
                                                : 1;
    double per = 1;
    for (int d = 0; x && d < x->ndim && d < s->out->ndim; d++)
        if (x->dims[d].size != s->out->dims[d].size)
            per *= taps;
    c->flops = 2 * per * sm_type_numel(s->out);
    c->bytes_read = x ? sm_type_bytes(x) : 0;
    c->bytes_write = sm_type_bytes(s->out);
}

/* RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]) {mode,
 * output_height, output_width, sampling_ratio, ...}: [R, C, oh, ow]. */
smelt_status sm_shape_roialign(sm_shape_ctx *s)
{
    const sm_type *x, *rois, *bi;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &rois));
    SM_TRY(sm_movement_input(s, 2, &bi));
    SM_TRY(sm_check_float_type(s, x, "X"));
    SM_TRY(sm_check_same_type(s, rois, "rois", x, "X"));
    SM_TRY(sm_check_index_type(s, bi, "batch_indices"));
    SM_TRY(sm_check_rank(s, x, "X", 4, 4));
    SM_TRY(sm_check_rank(s, rois, "rois", 2, 2));
    SM_TRY(sm_check_rank(s, bi, "batch_indices", 1, 1));
    const char *mode = sm_attrs_string(&s->attrs, "mode", "avg");
    const char *ctm = sm_attrs_string(
        &s->attrs, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "RoiAlign: unknown mode '%s' (avg, max)", mode);
    if (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "output_half_pixel") != 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "RoiAlign: unknown coordinate_transformation_mode '%s' "
                      "(half_pixel, output_half_pixel)",
                      ctm);
    int64_t oh = sm_attrs_int(&s->attrs, "output_height", 1);
    int64_t ow = sm_attrs_int(&s->attrs, "output_width", 1);
    int64_t ratio = sm_attrs_int(&s->attrs, "sampling_ratio", 0);
    if (oh < 1 || ow < 1 || ratio < 0 || ratio > 1024)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "RoiAlign: output_height %lld and output_width %lld "
                      "must be positive and sampling_ratio %lld 0 to 1024",
                      (long long)oh, (long long)ow, (long long)ratio);
    sm_movement_unknown(s->out, x->dtype, 4);
    s->out->dims[2].size = oh;
    s->out->dims[3].size = ow;
    if (x->ndim == 4)
        s->out->dims[1] = x->dims[1];
    if (rois->ndim == 2) {
        SM_TRY(sm_check_same_dim(s, rois->dims[1], "the last dim of rois",
                                 (sm_dim){4, NULL}, "required to be"));
        s->out->dims[0] = rois->dims[0];
    }
    if (bi->ndim == 1) {
        SM_TRY(sm_check_same_dim(s, bi->dims[0], "the length of batch_indices",
                                 s->out->dims[0], "the number of rois"));
        if (s->out->dims[0].size < 0)
            s->out->dims[0] = bi->dims[0];
    }
    if (s->in[2].data && x->ndim == 4 && x->dims[0].size >= 0)
        SM_TRY(sm_index_check(s->ctx, SMELT_ERR_INVALID_ARG, "RoiAlign",
                              s->in[2].data, 1, 0, &x->dims[0].size));
    return sm_movement_check_size(s, s->out);
}

/* RoiAlign: four weighted reads per sample; the samples per bin are not
 * known from types, so one per bin is counted. */
void sm_cost_roialign(const sm_shape_ctx *s, sm_cost *c)
{
    c->flops = 8 * sm_type_numel(s->out);
    c->bytes_read = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
    c->bytes_write = sm_type_bytes(s->out);
}

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
