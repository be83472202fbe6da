/*
 * resize.c - the reference kernel of Resize and Upsample, and the sizing
 * their shape function shares (resize.h).
 *
 * It follows the interpolation ONNX's own tests were computed with
 * (onnx/backend/test/case/node/resize.py): each axis on its own maps an
 * output coordinate to a fractional input coordinate, takes the n nearest
 * input positions (n = 2 for nearest and linear, 4 for cubic) of the input
 * padded by repeating its edges, and weights them; the N-D result is the
 * tensor product of the per-axis weights. Nearest is the 2-tap case with
 * one weight 1. Terms of weight exactly zero are skipped (so a NaN input
 * there does not leak into the result, which a plain dot product would
 * let through). Values are computed in double.
 */
#include "kernels/ref/resize.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

#define MAX_TAPS 4

static int find_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (s && strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

smelt_status sm_resize_attrs(smelt_ctx_t *ctx, smelt_status code,
                             const char *op, const sm_attrs *a, int upsample,
                             sm_resize *r)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {
        "half_pixel",         "asymmetric",         "align_corners",
        "pytorch_half_pixel", "tf_crop_and_resize", "tf_half_pixel_for_nn"};
    static const char *const rounds[] = {"round_prefer_floor",
                                         "round_prefer_ceil", "floor", "ceil"};
    memset(r, 0, sizeof *r);
    const char *m = sm_attrs_string(a, "mode", "nearest");
    int k = find_name(m, modes, upsample ? 2 : 3);
    if (k < 0)
        return sm_err(ctx, code, "%s: unknown mode '%s' (%s)", op, m,
                      upsample ? "nearest, linear" : "nearest, linear, cubic");
    r->mode = (sm_resize_mode)k;
    r->cubic_a = -0.75;
    if (upsample) {
        r->coord = SM_COORD_ASYMMETRIC;
        r->round = SM_ROUND_FLOOR;
        return SMELT_OK;
    }
    const char *c =
        sm_attrs_string(a, "coordinate_transformation_mode", "half_pixel");
    if ((k = find_name(c, coords, 6)) < 0)
        return sm_err(ctx, code,
                      "%s: unknown coordinate_transformation_mode '%s'", op, c);
    r->coord = (sm_resize_coord)k;
    const char *n = sm_attrs_string(a, "nearest_mode", "round_prefer_floor");
    if ((k = find_name(n, rounds, 4)) < 0)
        return sm_err(ctx, code, "%s: unknown nearest_mode '%s'", op, n);
    r->round = (sm_resize_round)k;
    r->cubic_a = sm_attrs_float(a, "cubic_coeff_a", -0.75);
    r->exclude_outside = sm_attrs_int(a, "exclude_outside", 0) != 0;
    r->extrapolation = sm_attrs_float(a, "extrapolation_value", 0);
    return SMELT_OK;
}

/* The region of interest of tf_crop_and_resize: [starts..., ends...]. The
 * length is rounded to the roi's dtype first, as ONNX's reference does
 * in float32. */
static smelt_status read_roi(smelt_ctx_t *ctx, smelt_status code,
                             const char *op, const sm_tensor *roi, sm_resize *r)
{
    if (r->coord != SM_COORD_TF_CROP_AND_RESIZE || !roi || roi->numel == 0)
        return SMELT_OK;
    if (roi->numel != 2 * r->ndim || !sm_dtype_is_float(roi->dtype))
        return sm_err(ctx, code,
                      "%s: roi must hold %d floats (starts, then ends), it "
                      "has %lld",
                      op, 2 * r->ndim, (long long)roi->numel);
    for (int d = 0; d < r->ndim; d++) {
        double s = sm_load_f64(roi->dtype, roi->data, d);
        double e = sm_load_f64(roi->dtype, roi->data, r->ndim + d);
        r->roi_start[d] = s;
        r->roi_len[d] =
            roi->dtype == SMELT_DTYPE_F32 ? (double)(float)(e - s) : e - s;
    }
    return SMELT_OK;
}

smelt_status sm_resize_plan(smelt_ctx_t *ctx, smelt_status code, const char *op,
                            int ndim, const int64_t *in,
                            const sm_resize_args *args, sm_resize *r)
{
    const sm_tensor *sc = args->scales, *sz = args->sizes;
    int64_t ns = sc ? sc->numel : args->scale_attr ? args->n_scale_attr : 0;
    int64_t nz = sz ? sz->numel : 0;
    if (ns > 0 && nz > 0)
        return sm_err(ctx, code, "%s: give scales or sizes, not both", op);
    if (ns == 0 && nz == 0)
        return sm_err(ctx, code, "%s: needs scales or sizes", op);
    if ((sc && ns && !sm_dtype_is_float(sc->dtype)) ||
        (nz && !sm_dtype_is_int(sz->dtype)))
        return sm_err(ctx, code, "%s: scales must be floats and sizes integers",
                      op);
    if ((ns ? ns : nz) != ndim)
        return sm_err(ctx, code, "%s: %lld %s for an input of rank %d", op,
                      (long long)(ns ? ns : nz), ns ? "scales" : "sizes", ndim);
    r->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        r->in[d] = in[d];
        r->roi_start[d] = 0;
        r->roi_len[d] = 1;
        if (nz) {
            int64_t v = sm_load_i64(sz->dtype, sz->data, d);
            if (v < 0)
                return sm_err(ctx, code, "%s: size %lld of axis %d is negative",
                              op, (long long)v, d);
            if (in[d] == 0 && v > 0)
                return sm_err(ctx, code,
                              "%s: cannot resize empty axis %d to %lld", op, d,
                              (long long)v);
            r->out[d] = v;
            r->scale[d] = in[d] > 0 ? (double)v / (double)in[d] : 1;
            continue;
        }
        double s =
            sc ? sm_load_f64(sc->dtype, sc->data, d) : args->scale_attr[d];
        if (!(s > 0 && s < INFINITY))
            return sm_err(ctx, code,
                          "%s: scale %g of axis %d must be positive and finite",
                          op, s, d);
        r->scale[d] = s;
        r->out[d] = -1;
        if (in[d] < 0)
            continue;
        double o = floor(s * (double)in[d]);
        if (o > 4e18)
            return sm_err(ctx, SMELT_ERR_LIMIT,
                          "%s: axis %d of size %lld scaled by %g overflows", op,
                          d, (long long)in[d], s);
        r->out[d] = (int64_t)o;
    }
    return read_roi(ctx, code, op, args->roi, r);
}

/* The input coordinate output position x of axis d maps to; *outside is
 * set when tf_crop_and_resize lands outside the input. */
static double coord_of(const sm_resize *r, int d, int64_t x, int *outside)
{
    double in = (double)r->in[d], s = r->scale[d], xd = (double)x;
    double ow = s * in; /* the reference's (fractional) output length */
    *outside = 0;
    switch (r->coord) {
    case SM_COORD_ALIGN_CORNERS: return ow == 1 ? 0 : xd * (in - 1) / (ow - 1);
    case SM_COORD_ASYMMETRIC: return xd / s;
    case SM_COORD_TF_CROP_AND_RESIZE: {
        double len = r->roi_len[d];
        double xo =
            ow == 1 ? len * (in - 1) / 2 : xd * len * (in - 1) / (ow - 1);
        xo += r->roi_start[d] * (in - 1);
        /* a NaN (from a NaN or infinite ROI) is outside: extrapolated,
         * never cast to an index */
        *outside = !(xo >= 0 && xo <= in - 1);
        return xo;
    }
    case SM_COORD_PYTORCH_HALF_PIXEL:
        return ow == 1 ? -0.5 : (xd + 0.5) / s - 0.5;
    case SM_COORD_TF_HALF_PIXEL_FOR_NN: return (xd + 0.5) / s;
    case SM_COORD_HALF_PIXEL: break;
    }
    return (xd + 0.5) / s - 0.5;
}

/* The weights of the n taps around a coordinate whose distance past the
 * tap on its left is ratio (1 when the coordinate is a whole number). */
static int coeffs(const sm_resize *r, double ratio, int whole, double *c)
{
    double a = r->cubic_a, p = ratio + 1, q = 1 - ratio, t = 2 - ratio;
    switch (r->mode) {
    case SM_RESIZE_NEAREST:
        c[0] = 0;
        c[1] = 1;
        if (whole)
            return 2;
        switch (r->round) {
        case SM_ROUND_PREFER_FLOOR: c[0] = ratio <= 0.5; break;
        case SM_ROUND_PREFER_CEIL: c[0] = ratio < 0.5; break;
        case SM_ROUND_FLOOR: c[0] = 1; break;
        case SM_ROUND_CEIL: c[0] = 0; break;
        }
        c[1] = 1 - c[0];
        return 2;
    case SM_RESIZE_LINEAR:
        c[0] = 1 - ratio;
        c[1] = ratio;
        return 2;
    case SM_RESIZE_CUBIC: break;
    }
    c[0] = ((a * p - 5 * a) * p + 8 * a) * p - 4 * a;
    c[1] = ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
    c[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
    c[3] = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 4;
}

/* The taps of output position x along axis d: up to MAX_TAPS input
 * indices (clamped to the edges) with their nonzero weights; returns how
 * many, or -1 when the position lies outside (extrapolated). */
static int taps_of(const sm_resize *r, int d, int64_t x, int64_t *idx,
                   double *w)
{
    int outside;
    int64_t len = r->in[d];
    double xo = coord_of(r, d, x, &outside), c[MAX_TAPS];
    if (outside)
        return -1;
    double fl = floor(xo);
    int n = coeffs(r, xo == fl ? 1 : xo - fl, xo == fl, c);
    /* the n nearest of the input padded by ceil(n/2) on each side, ties
     * to the lower index: a window starting at ceil(x) - n/2, kept in the
     * padded range */
    int64_t pad = (n + 1) / 2, last = len + 2 * pad - n;
    double st = ceil(xo + (double)pad) - (double)(n / 2);
    int64_t start = !(st >= 0) ? 0 : st > (double)last ? last : (int64_t)st;
    double sum = 0;
    for (int t = 0; t < n; t++) {
        int64_t at = start + t - pad;
        if (r->exclude_outside && (at < 0 || at >= len))
            c[t] = 0;
        sum += c[t];
    }
    int k = 0;
    for (int t = 0; t < n; t++) {
        int64_t at = start + t - pad;
        double ct = r->exclude_outside ? c[t] / sum : c[t];
        if (ct == 0)
            continue;
        idx[k] = at < 0 ? 0 : at >= len ? len - 1 : at;
        w[k++] = ct;
    }
    return k;
}

/* Per-axis taps of every output position, laid out axis after axis. */
typedef struct tap_table {
    int64_t first[SMELT_MAX_DIMS]; /* position of axis d's entries */
    int64_t *idx;                  /* MAX_TAPS per output position */
    double *w;
    int *n; /* taps per position, -1: outside */
} tap_table;

static smelt_status taps_build(smelt_ctx_t *ctx, const sm_resize *r,
                               tap_table *t)
{
    int64_t total = 0;
    for (int d = 0; d < r->ndim; d++) {
        t->first[d] = total;
        total += r->out[d];
    }
    size_t cnt = (size_t)(total ? total : 1);
    t->idx = sm_malloc(sizeof *t->idx * cnt * MAX_TAPS);
    t->w = sm_malloc(sizeof *t->w * cnt * MAX_TAPS);
    t->n = sm_malloc(sizeof *t->n * cnt);
    if (!t->idx || !t->w || !t->n)
        return sm_err_nomem(ctx);
    for (int d = 0; d < r->ndim; d++)
        for (int64_t x = 0; x < r->out[d]; x++) {
            int64_t e = t->first[d] + x;
            t->n[e] =
                taps_of(r, d, x, t->idx + e * MAX_TAPS, t->w + e * MAX_TAPS);
        }
    return SMELT_OK;
}

/* The value of the output element at multi-index o. */
static double resize_at(const sm_resize *r, const tap_table *t,
                        const sm_tensor *x, const int64_t *stride,
                        const int64_t *o)
{
    int64_t e[SMELT_MAX_DIMS];
    int k[SMELT_MAX_DIMS] = {0};
    for (int d = 0; d < r->ndim; d++) {
        e[d] = t->first[d] + o[d];
        if (t->n[e[d]] < 0)
            return r->extrapolation;
        if (t->n[e[d]] == 0)
            return 0;
    }
    double acc = 0;
    for (;;) {
        double w = 1;
        int64_t off = 0;
        for (int d = 0; d < r->ndim; d++) {
            int64_t j = e[d] * MAX_TAPS + k[d];
            w *= t->w[j];
            off += t->idx[j] * stride[d];
        }
        acc += w * sm_load_f64(x->dtype, x->data, off);
        int d = r->ndim - 1;
        while (d >= 0 && ++k[d] >= t->n[e[d]])
            k[d--] = 0;
        if (d < 0)
            return acc;
    }
}

/* Resize(X, roi?, scales?, sizes?) and Upsample(X, scales?) {scales?}. */
static smelt_status resize_run(const sm_kargs *a, int upsample)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    sm_resize r;
    sm_resize_args args = {NULL, NULL, NULL, NULL, 0};
    SM_TRY(sm_resize_attrs(a->ctx, SMELT_ERR_RUNTIME, a->op_name, &a->attrs,
                           upsample, &r));
    const sm_tensor *opt[4] = {NULL, NULL, NULL, NULL};
    for (int i = 1; i < a->n_in && i < 4; i++)
        opt[i] = a->in[i];
    if (upsample) {
        args.scales = opt[1];
        if (!args.scales) {
            args.n_scale_attr =
                sm_attrs_floats(&a->attrs, "scales", &args.scale_attr);
            args.n_scale_attr = args.n_scale_attr < 0 ? 0 : args.n_scale_attr;
        }
    } else {
        args.roi = opt[1];
        args.scales = opt[2];
        args.sizes = opt[3];
    }
    SM_TRY(sm_resize_plan(a->ctx, SMELT_ERR_RUNTIME, a->op_name, x->ndim,
                          x->dims, &args, &r));
    int ok = y->ndim == x->ndim && y->dtype == x->dtype;
    for (int d = 0; ok && d < x->ndim; d++)
        ok = y->dims[d] == r.out[d];
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output shape does not match the resized input",
                      a->op_name);
    if (y->numel == 0)
        return SMELT_OK;
    tap_table t = {{0}, NULL, NULL, NULL};
    smelt_status st = taps_build(a->ctx, &r, &t);
    if (st == SMELT_OK) {
        int64_t stride[SMELT_MAX_DIMS], o[SMELT_MAX_DIMS] = {0}, i = 0;
        sm_strides(x->ndim, x->dims, stride);
        do {
            sm_store_f64(y->dtype, y->data, i++,
                         resize_at(&r, &t, x, stride, o));
        } while (sm_index_next(y->ndim, y->dims, o));
    }
    sm_free(t.idx);
    sm_free(t.w);
    sm_free(t.n);
    return st;
}

smelt_status sm_ref_resize(const sm_kargs *a)
{
    return resize_run(a, 0);
}

smelt_status sm_ref_upsample(const sm_kargs *a)
{
    return resize_run(a, 1);
}
