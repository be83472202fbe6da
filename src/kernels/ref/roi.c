/*
 * roi.c - reference kernels of the box ops: NonMaxSuppression (with the
 * selection its shape function shares, select.h) and RoiAlign. Both
 * follow ONNX Runtime's algorithms, which ONNX's tests were made with:
 * NonMaxSuppression's greedy selection by descending score (ties: lower
 * box index first) with strict thresholds, RoiAlign's bilinear sampling
 * on a regular grid per bin.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/select.h"

/* The most samples RoiAlign takes per output bin. */
#define ROI_MAX_SAMPLES (1 << 20)

/* Scores of one (batch, class): score of box i at base + i. */
typedef struct score_line {
    const sm_tensor *scores;
    int64_t base;
} score_line;

/* Descending score; equal scores keep their order (the merge sort is
 * stable, so the lower box index stays first). */
static int score_cmp(const void *user, int64_t a, int64_t b)
{
    const score_line *l = user;
    double x = sm_load_f64(l->scores->dtype, l->scores->data, l->base + a);
    double y = sm_load_f64(l->scores->dtype, l->scores->data, l->base + b);
    return (x < y) - (x > y);
}

/* The box at offset off of boxes as (min, max) along x and y. */
static void box_edges(const sm_tensor *boxes, int64_t off, int center,
                      double e[4])
{
    double v[4];
    for (int k = 0; k < 4; k++)
        v[k] = sm_load_f64(boxes->dtype, boxes->data, off + k);
    if (center) { /* [x_center, y_center, width, height] */
        e[0] = v[0] - v[2] / 2;
        e[1] = v[0] + v[2] / 2;
        e[2] = v[1] - v[3] / 2;
        e[3] = v[1] + v[3] / 2;
        return;
    }
    /* [y1, x1, y2, x2], any diagonal pair of corners */
    e[0] = fmin(v[1], v[3]);
    e[1] = fmax(v[1], v[3]);
    e[2] = fmin(v[0], v[2]);
    e[3] = fmax(v[0], v[2]);
}

/* Whether boxes at offsets p and q overlap by an IOU above thr. Empty
 * boxes and disjoint ones never suppress each other. */
static int suppresses(const sm_tensor *boxes, int64_t p, int64_t q, int center,
                      double thr)
{
    double a[4], b[4];
    box_edges(boxes, p, center, a);
    box_edges(boxes, q, center, b);
    double x0 = fmax(a[0], b[0]), x1 = fmin(a[1], b[1]);
    double y0 = fmax(a[2], b[2]), y1 = fmin(a[3], b[3]);
    if (x1 <= x0 || y1 <= y0)
        return 0;
    double inter = (x1 - x0) * (y1 - y0);
    double area_a = (a[1] - a[0]) * (a[3] - a[2]);
    double area_b = (b[1] - b[0]) * (b[3] - b[2]);
    double uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0)
        return 0;
    return inter / uni > thr;
}

smelt_status sm_nms_select(smelt_ctx_t *ctx, const sm_tensor *boxes,
                           const sm_tensor *scores, const sm_tensor *max_out,
                           const sm_tensor *iou, const sm_tensor *score_thr,
                           int center, int64_t **sel, int64_t *count)
{
    *sel = NULL;
    *count = 0;
    if (boxes->ndim != 3 || boxes->dims[2] != 4 || scores->ndim != 3 ||
        scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "NonMaxSuppression: boxes must be [batches, boxes, 4] "
                      "and scores [batches, classes, boxes]");
    int64_t nb = boxes->dims[0], n = boxes->dims[1], nc = scores->dims[1];
    int64_t most = max_out && max_out->numel
                       ? sm_load_i64(max_out->dtype, max_out->data, 0)
                       : 0;
    double thr = iou && iou->numel ? sm_load_f64(iou->dtype, iou->data, 0) : 0;
    int has_min = score_thr && score_thr->numel;
    double min_score =
        has_min ? sm_load_f64(score_thr->dtype, score_thr->data, 0) : 0;
    if (most <= 0 || n == 0 || nb * nc == 0)
        return SMELT_OK;
    if (most > n)
        most = n;
    /* candidates, sort scratch, the boxes kept for the current class */
    int64_t *idx = sm_malloc(sizeof *idx * (size_t)n * 3);
    int64_t *out = sm_malloc(sizeof *out * (size_t)(nb * nc * most * 3));
    if (!idx || !out) {
        sm_free(idx);
        sm_free(out);
        return sm_err_nomem(ctx);
    }
    int64_t *kept = idx + 2 * n, total = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t c = 0; c < nc; c++) {
            score_line l = {scores, (b * nc + c) * n};
            int64_t m = 0, nk = 0;
            for (int64_t i = 0; i < n; i++)
                if (!has_min || sm_load_f64(scores->dtype, scores->data,
                                            l.base + i) > min_score)
                    idx[m++] = i;
            sm_sort_index(idx, idx + n, m, score_cmp, &l);
            for (int64_t p = 0; p < m && nk < most; p++) {
                int hit = 0;
                for (int64_t j = 0; j < nk && !hit; j++)
                    hit = suppresses(boxes, (b * n + idx[p]) * 4,
                                     (b * n + kept[j]) * 4, center, thr);
                if (hit)
                    continue;
                kept[nk++] = idx[p];
                out[total * 3] = b;
                out[total * 3 + 1] = c;
                out[total * 3 + 2] = idx[p];
                total++;
            }
        }
    sm_free(idx);
    if (total == 0) {
        sm_free(out);
        return SMELT_OK;
    }
    *sel = out;
    *count = total;
    return SMELT_OK;
}

/* NonMaxSuppression(boxes, scores, max_output_boxes_per_class?,
 * iou_threshold?, score_threshold?) {center_point_box}: i64[n, 3] of the
 * selected (batch, class, box), batch by batch, class by class, each in
 * the order of selection. */
smelt_status sm_ref_nonmaxsuppression(const sm_kargs *a)
{
    const sm_tensor *opt[3];
    for (int i = 0; i < 3; i++)
        opt[i] = i + 2 < a->n_in ? a->in[i + 2] : NULL;
    int64_t *sel, n;
    SM_TRY(sm_nms_select(a->ctx, a->in[0], a->in[1], opt[0], opt[1], opt[2],
                         sm_attrs_int(&a->attrs, "center_point_box", 0) != 0,
                         &sel, &n));
    sm_tensor *y = a->out[0];
    if (y->dtype != SMELT_DTYPE_I64 || y->numel != n * 3) {
        sm_free(sel);
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "NonMaxSuppression: the output does not hold the %lld "
                      "selected boxes",
                      (long long)n);
    }
    if (n)
        memcpy(y->data, sel, sizeof *sel * (size_t)n * 3);
    sm_free(sel);
    return SMELT_OK;
}

/* One bilinear sample: four element offsets in the H*W plane and their
 * weights (all zero when the point lies outside the map). */
typedef struct sample {
    int64_t pos[4];
    double w[4];
} sample;

/* The sample at (y, x) of an h by w map, as ONNX Runtime takes it. A
 * map with no pixels (h or w 0, where ONNX Runtime's clamp to h - 1
 * reads before the plane) has every point outside it, and a NaN
 * coordinate (a NaN ROI) lies outside too (never cast to an index):
 * their weights stay zero. */
static sample bilinear(double y, double x, int64_t h, int64_t w)
{
    sample s = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (h < 1 || w < 1 ||
        !(y >= -1.0 && y <= (double)h && x >= -1.0 && x <= (double)w))
        return s;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= h - 1) {
        y0 = y1 = h - 1;
        y = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= w - 1) {
        x0 = x1 = w - 1;
        x = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
    s.pos[0] = y0 * w + x0;
    s.pos[1] = y0 * w + x1;
    s.pos[2] = y1 * w + x0;
    s.pos[3] = y1 * w + x1;
    s.w[0] = hy * hx;
    s.w[1] = hy * lx;
    s.w[2] = ly * hx;
    s.w[3] = ly * lx;
    return s;
}

/* One output bin of the channel plane starting at element `plane`: the
 * mean of the samples' bilinear values, or in max mode the largest
 * weighted corner value over the samples (as ONNX Runtime computes it). */
static double roi_bin(const sm_tensor *x, int64_t plane, const sample *s,
                      int64_t n, int max_mode)
{
    double acc = 0;
    for (int64_t i = 0; i < n; i++) {
        double v[4];
        for (int k = 0; k < 4; k++)
            v[k] =
                s[i].w[k] * sm_load_f64(x->dtype, x->data, plane + s[i].pos[k]);
        if (!max_mode) {
            acc += v[0] + v[1] + v[2] + v[3];
            continue;
        }
        double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
        acc = i == 0 ? m : fmax(acc, m);
    }
    return max_mode ? acc : acc / (double)(n > 0 ? n : 1);
}

/* RoiAlign(X, rois, batch_indices): output [R, C, oh, ow]; ROI r (x1, y1,
 * x2, y2 scaled by spatial_scale, shifted by half a pixel in half_pixel
 * mode) is cut into oh by ow bins, each sampled on a grid of
 * sampling_ratio points per side (or ceil(bin size) when 0). */
smelt_status sm_ref_roialign(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *rois = a->in[1], *bi = a->in[2];
    sm_tensor *y = a->out[0];
    if (x->ndim != 4 || rois->ndim != 2 || rois->dims[1] != 4 ||
        bi->ndim != 1 || bi->dims[0] != rois->dims[0] || y->ndim != 4 ||
        y->dims[0] != rois->dims[0] || y->dims[1] != x->dims[1] ||
        y->dtype != x->dtype || rois->dtype != x->dtype)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "RoiAlign: inputs and output do not match");
    int64_t c = x->dims[1], h = x->dims[2], w = x->dims[3];
    int64_t oh = y->dims[2], ow = y->dims[3];
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, "RoiAlign", bi, 1, 0,
                          &x->dims[0]));
    double scale = sm_attrs_float(&a->attrs, "spatial_scale", 1);
    int64_t ratio = sm_attrs_int(&a->attrs, "sampling_ratio", 0);
    int half =
        strcmp(sm_attrs_string(&a->attrs, "coordinate_transformation_mode",
                               "half_pixel"),
               "half_pixel") == 0;
    int max_mode =
        strcmp(sm_attrs_string(&a->attrs, "mode", "avg"), "max") == 0;
    double off = half ? 0.5 : 0;
    for (int64_t r = 0; r < rois->dims[0]; r++) {
        double v[4];
        for (int k = 0; k < 4; k++)
            v[k] =
                sm_load_f64(rois->dtype, rois->data, r * 4 + k) * scale - off;
        double rw = v[2] - v[0], rh = v[3] - v[1];
        if (!half) { /* malformed ROIs become 1x1 */
            rw = fmax(rw, 1.0);
            rh = fmax(rh, 1.0);
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        double gy = ratio > 0 ? (double)ratio : ceil(rh / (double)oh);
        double gx = ratio > 0 ? (double)ratio : ceil(rw / (double)ow);
        if (!(fmax(gy, 0) * fmax(gx, 0) <= ROI_MAX_SAMPLES))
            return sm_err(a->ctx, SMELT_ERR_LIMIT,
                          "RoiAlign: ROI %lld needs %g by %g samples per bin, "
                          "more than %d",
                          (long long)r, gy, gx, ROI_MAX_SAMPLES);
        int64_t gh = gy > 0 ? (int64_t)gy : 0, gw = gx > 0 ? (int64_t)gx : 0;
        int64_t ns = gh * gw;
        sample *s = sm_malloc(sizeof *s * (size_t)(ns > 0 ? ns : 1));
        if (!s)
            return sm_err_nomem(a->ctx);
        int64_t batch = sm_index_at(bi, r, x->dims[0]);
        for (int64_t ph = 0; ph < oh; ph++)
            for (int64_t pw = 0; pw < ow; pw++) {
                for (int64_t iy = 0; iy < gh; iy++)
                    for (int64_t ix = 0; ix < gw; ix++)
                        s[iy * gw + ix] =
                            bilinear(v[1] + (double)ph * bh +
                                         ((double)iy + 0.5) * bh / (double)gh,
                                     v[0] + (double)pw * bw +
                                         ((double)ix + 0.5) * bw / (double)gw,
                                     h, w);
                /* an empty map has no pixel to read: its bins are 0,
                 * what all-outside samples give */
                for (int64_t ch = 0; ch < c; ch++)
                    sm_store_f64(
                        y->dtype, y->data, ((r * c + ch) * oh + ph) * ow + pw,
                        h * w == 0 ? 0.0
                                   : roi_bin(x, (batch * c + ch) * h * w, s,
                                             gh * gw, max_mode));
            }
        sm_free(s);
    }
    return SMELT_OK;
}
