/*
 * gridsample.c - the reference kernel of GridSample (opset 16: 4-D input,
 * modes bilinear, nearest and bicubic, padding zeros, border and
 * reflection), following PyTorch's grid_sampler_2d, which ONNX's
 * definition and tests follow: grid values in [-1, 1] map to input pixel
 * coordinates (corner pixels' centers with align_corners, their outer
 * edges without), padding moves coordinates that fall outside (border
 * clamps, reflection mirrors) or reads zeros there.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/resize.h"

typedef enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_pad;

/* One sampling: the attributes and the input's spatial size. */
typedef struct gs {
    int mode; /* 0 bilinear, 1 nearest, 2 bicubic */
    gs_pad pad;
    int align;
} gs;

void sm_gridsample_attrs(const sm_attrs *a, int *mode, int *pad, int *align)
{
    static const char *const modes[] = {"bilinear", "nearest", "bicubic",
                                        "linear", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    const char *m = sm_attrs_string(a, "mode", "bilinear");
    const char *p = sm_attrs_string(a, "padding_mode", "zeros");
    *mode = *pad = -1;
    for (int i = 0; i < 5; i++)
        if (strcmp(m, modes[i]) == 0)
            *mode = i == 3 ? 0 : i == 4 ? 2 : i;
    for (int i = 0; i < 3; i++)
        if (strcmp(p, pads[i]) == 0)
            *pad = i;
    *align = sm_attrs_int(a, "align_corners", 0) != 0;
}

/* Grid coordinate g in [-1, 1] to a pixel coordinate on an axis of n. */
static double unnormalize(const gs *s, double g, int64_t n)
{
    return s->align ? (g + 1) / 2 * (double)(n - 1)
                    : ((g + 1) * (double)n - 1) / 2;
}

/* x mirrored into [lo2 / 2, hi2 / 2] (bounds given doubled). */
static double reflect(double x, int64_t lo2, int64_t hi2)
{
    if (lo2 == hi2)
        return 0;
    double lo = (double)lo2 / 2, span = (double)(hi2 - lo2) / 2;
    x = fabs(x - lo);
    double extra = fmod(x, span);
    int even = fmod(floor(x / span), 2) == 0; /* flips, no int overflow */
    return even ? extra + lo : span - extra + lo;
}

/* Applies border or reflection padding to coordinate x on an axis of n. */
static double padded(const gs *s, double x, int64_t n)
{
    if (s->pad == GS_REFLECTION)
        x = s->align ? reflect(x, 0, 2 * (n - 1)) : reflect(x, -1, 2 * n - 1);
    if (s->pad != GS_ZEROS)
        x = fmin((double)(n - 1), fmax(x, 0));
    return x;
}

/* Pixel (y, x) of a plane of h by w (zero outside). */
static double pixel(const sm_tensor *t, int64_t plane, int64_t h, int64_t w,
                    int64_t y, int64_t x)
{
    if (y < 0 || y >= h || x < 0 || x >= w)
        return 0;
    return sm_load_f64(t->dtype, t->data, plane + y * w + x);
}

/* The index of a whole-numbered coordinate; one far outside the map
 * (or NaN) becomes an index still outside it that int64 holds. */
static int64_t idx(double v)
{
    if (!(v >= -2))
        return -2;
    return v > 1e18 ? (int64_t)1e18 : (int64_t)v;
}

static double cubic1(double x, double a)
{
    return ((a + 2) * x - (a + 3)) * x * x + 1;
}

static double cubic2(double x, double a)
{
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* Cubic interpolation of v[0..3] at t in [0, 1) past v[1]. */
static double cubic(const double *v, double t)
{
    double a = -0.75;
    return v[0] * cubic2(t + 1, a) + v[1] * cubic1(t, a) +
           v[2] * cubic1(1 - t, a) + v[3] * cubic2(2 - t, a);
}

/* The sample of one plane at grid point (gx, gy). */
static double sample(const gs *s, const sm_tensor *x, int64_t plane, int64_t h,
                     int64_t w, double gx, double gy)
{
    double fx = unnormalize(s, gx, w), fy = unnormalize(s, gy, h);
    if (s->mode == 2) { /* taps padded one by one, as PyTorch does */
        double x0 = floor(fx), y0 = floor(fy), row[4], col[4];
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) {
                double px = padded(s, x0 - 1 + j, w);
                double py = padded(s, y0 - 1 + i, h);
                row[j] = pixel(x, plane, h, w, idx(py), idx(px));
            }
            col[i] = cubic(row, fx - x0);
        }
        return cubic(col, fy - y0);
    }
    fx = padded(s, fx, w);
    fy = padded(s, fy, h);
    if (s->mode == 1)
        return pixel(x, plane, h, w, idx(nearbyint(fy)), idx(nearbyint(fx)));
    double x0 = floor(fx), y0 = floor(fy), tx = fx - x0, ty = fy - y0;
    int64_t ix = idx(x0), iy = idx(y0);
    return pixel(x, plane, h, w, iy, ix) * (1 - tx) * (1 - ty) +
           pixel(x, plane, h, w, iy, ix + 1) * tx * (1 - ty) +
           pixel(x, plane, h, w, iy + 1, ix) * (1 - tx) * ty +
           pixel(x, plane, h, w, iy + 1, ix + 1) * tx * ty;
}

/* GridSample(X [N, C, H, W], grid [N, Ho, Wo, 2]): output [N, C, Ho, Wo],
 * each point sampling X at the (x, y) the grid gives. */
smelt_status sm_ref_gridsample(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *g = a->in[1];
    sm_tensor *y = a->out[0];
    int mode, pad, align;
    sm_gridsample_attrs(&a->attrs, &mode, &pad, &align);
    if (mode < 0 || pad < 0)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "GridSample: unknown mode or padding_mode");
    if (x->ndim != 4 || g->ndim != 4 || g->dims[3] != 2 || y->ndim != 4 ||
        g->dims[0] != x->dims[0] || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1] || y->dims[2] != g->dims[1] ||
        y->dims[3] != g->dims[2] || y->dtype != x->dtype)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "GridSample: inputs and output do not match");
    gs s = {mode, (gs_pad)pad, align};
    int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
    int64_t pts = g->dims[1] * g->dims[2];
    for (int64_t b = 0; b < n; b++)
        for (int64_t p = 0; p < pts; p++) {
            double gx = sm_load_f64(g->dtype, g->data, (b * pts + p) * 2);
            double gy = sm_load_f64(g->dtype, g->data, (b * pts + p) * 2 + 1);
            for (int64_t ch = 0; ch < c; ch++)
                sm_store_f64(y->dtype, y->data, (b * c + ch) * pts + p,
                             sample(&s, x, (b * c + ch) * h * w, h, w, gx, gy));
        }
    return SMELT_OK;
}
