/*
 * shape_roi.c - shape functions and costs of the box ops:
 * NonMaxSuppression, whose output size depends on the input's values (known
 * only when the values are, always at run time, computed by the kernel's own
 * selection, select.h), and RoiAlign.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/select.h"

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
