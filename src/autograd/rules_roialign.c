/*
 * rules_roialign.c - the gradient rule of RoiAlign (docs/AUTOGRAD.md,
 * "Rules: Det, recurrent ops, sampling").
 *
 * Each output bin is a mean (or, in max mode, a max) of bilinear samples
 * of X, whose positions and weights depend on the ROIs alone. The rule
 * rebuilds that from ops, as the reference kernel (kernels/ref/roi.c,
 * after ONNX Runtime) computes it, and lets the engine differentiate it
 * (rebuild.h): each ROI's image gathered by batch index, the samples'
 * coordinates for every bin on a G x G grid per bin (G = sampling_ratio,
 * or with sampling_ratio 0 the largest per-ROI count, the samples past a
 * ROI's own count masked out), their corners read with GatherElements
 * and weighted. dX is then the weighted dY scattered back to the corners
 * (Gather's and GatherElements' rules); in max mode it goes to the
 * winning corner of the winning sample. The ROIs get the derivative of
 * the weights as the samples move with the box (Floor and Ceil give
 * none: where a sample crosses a pixel edge or, with sampling_ratio 0,
 * a bin's sample count changes, the output has a kink or a jump).
 */
#include <math.h>
#include <string.h>

#include "autograd/build_move.h"
#include "autograd/rebuild.h"
#include "autograd/rules_nn.h"
#include "autograd/rules_norm.h"
#include "core/alloc.h"
#include "core/dtype.h"

/* Samples per bin side the rule builds at most (sampling_ratio 0). */
#define ROI_MAX_GRID 64

typedef struct roi_build {
    int64_t r, c, h, w, oh, ow, grid;
    int64_t ratio;
    double scale, off;
    int half, max_mode;
    smelt_dtype dt;
} roi_build;

static sm_value *add_c(sm_grad_ctx *g, sm_value *v, double c)
{
    return nn_add(g, v, sm_g_scalar_like(g, v, c));
}

/* A constant of dtype dt, all dims 1 but axis (rank 5), holding
 * a, a + 1, ... plus shift. */
static sm_value *ramp(sm_grad_ctx *g, smelt_dtype dt, int axis, int64_t n,
                      double shift)
{
    int64_t dims[5] = {1, 1, 1, 1, 1};
    dims[axis] = n;
    double *v = sm_calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return nn_nomem(g);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i + shift;
    sm_value *c = sm_gn_const(g, dt, 5, dims, v);
    sm_free(v);
    return c;
}

/* Column k of the ROIs, scaled and shifted, as [R, 1, 1, 1, 1]. */
static sm_value *roi_col(sm_grad_ctx *g, const roi_build *s, sm_value *rois,
                         int k)
{
    int64_t axes[1] = {1}, a[1] = {k}, b[1] = {k + 1};
    sm_value *v = sm_gn_slice(g, rois, axes, a, b, 1);
    int64_t dims[5] = {s->r, 1, 1, 1, 1};
    v = sm_gn_reshape(g, v, dims, 5);
    return add_c(g, nn_scale(g, v, s->scale), -s->off);
}

/* The samples' coordinates on one axis: lo + p * bin + (i + 0.5) * bin /
 * count, with p the bin (on axis pax) and i the sample (on axis iax). */
static sm_value *axis_coords(sm_grad_ctx *g, const roi_build *s, sm_value *lo,
                             sm_value *bin, sm_value *count, int pax,
                             int64_t np, int iax)
{
    sm_value *p = ramp(g, s->dt, pax, np, 0);
    sm_value *i = ramp(g, s->dt, iax, s->grid, 0.5);
    sm_value *step = nn_div(g, bin, count);
    return nn_add(g, nn_add(g, lo, nn_mul(g, p, bin)), nn_mul(g, i, step));
}

/* One axis of the bilinear sampling (size len): the corners' indices lo
 * and hi, the weights of lo and hi, and whether the point lies inside
 * [-1, len], as the kernel's bilinear() takes them. */
static void axis_taps(sm_grad_ctx *g, sm_value *v, int64_t len, sm_value **lo,
                      sm_value **hi, sm_value **wlo, sm_value **whi,
                      sm_value **inside)
{
    double top = (double)(len - 1);
    sm_value *in = sm_g_op2(
        g, SM_OP_And,
        sm_g_op2(g, SM_OP_GreaterOrEqual, v, sm_g_scalar_like(g, v, -1)),
        sm_g_op2(g, SM_OP_LessOrEqual, v, sm_g_scalar_like(g, v, (double)len)));
    sm_value *cl = sm_g_op3(g, SM_OP_Clip, v, sm_g_scalar_like(g, v, 0),
                            sm_g_scalar_like(g, v, top));
    *lo = sm_g_op1(g, SM_OP_Floor, cl);
    *hi = sm_g_op2(g, SM_OP_Min, add_c(g, *lo, 1), sm_g_scalar_like(g, v, top));
    *whi = nn_sub(g, cl, *lo);
    *wlo = add_c(g, nn_scale(g, *whi, -1), 1);
    *inside = in;
}

/* The largest per-ROI sample count of a side when sampling_ratio is 0:
 * ceil(size / bins) over the constant ROIs; -1 when they are not known
 * before running, 0 when no ROI has a sample. */
static int64_t adaptive_grid(const roi_build *s, const sm_value *rois)
{
    if (!rois->data)
        return -1;
    double most = 0;
    for (int64_t r = 0; r < s->r; r++) {
        double v[4];
        for (int k = 0; k < 4; k++)
            v[k] = sm_load_f64(rois->data->dtype, rois->data->data, r * 4 + k) *
                       s->scale -
                   s->off;
        double rw = v[2] - v[0], rh = v[3] - v[1];
        if (!s->half) {
            rw = fmax(rw, 1.0);
            rh = fmax(rh, 1.0);
        }
        most = fmax(most,
                    fmax(ceil(rh / (double)s->oh), ceil(rw / (double)s->ow)));
    }
    return most > ROI_MAX_GRID ? ROI_MAX_GRID + 1 : (int64_t)most;
}

/* ROI sizes and bin sizes of one axis (k0, k1 the ROI's columns), and the
 * per-ROI sample count. */
static void roi_axis(sm_grad_ctx *g, const roi_build *s, sm_value *rois, int k0,
                     int k1, int64_t bins, sm_value **lo, sm_value **bin,
                     sm_value **count)
{
    *lo = roi_col(g, s, rois, k0);
    sm_value *size = nn_sub(g, roi_col(g, s, rois, k1), *lo);
    if (!s->half) /* malformed ROIs become 1x1 */
        size = sm_g_op2(g, SM_OP_Max, size, sm_g_scalar_like(g, size, 1));
    *bin = nn_scale(g, size, 1.0 / (double)bins);
    *count = s->ratio > 0
                 ? sm_g_scalar_like(g, size, (double)s->ratio)
                 : sm_g_op2(g, SM_OP_Max, sm_g_op1(g, SM_OP_Ceil, *bin),
                            sm_g_scalar_like(g, size, 0));
}

/* Concat of the four corners' v[k] [R, oh, ow, G, G] on a new last
 * axis, flattened to [R, 1, S]. */
static sm_value *corners(sm_grad_ctx *g, const roi_build *s, sm_value **v)
{
    sm_value *parts[4];
    for (int k = 0; k < 4; k++) {
        int64_t ax[1] = {5};
        parts[k] = nn_unsqueeze(g, v[k], ax, 1);
    }
    int64_t dims[3] = {s->r, 1, s->oh * s->ow * s->grid * s->grid * 4};
    return sm_gn_reshape(g, mv_concat(g, parts, 4, 5), dims, 3);
}

/* The bins [R, C, oh, ow] rebuilt on leaf x (the ROIs read directly). */
static sm_value *rebuild_bins(sm_grad_ctx *g, const roi_build *s, sm_value *x,
                              sm_value *rois)
{
    sm_value *bidx = g->n->in[2];
    sm_value *y0, *bh, *gh, *x0, *bw, *gw;
    roi_axis(g, s, rois, 1, 3, s->oh, &y0, &bh, &gh);
    roi_axis(g, s, rois, 0, 2, s->ow, &x0, &bw, &gw);
    /* coordinates [R, oh, 1, G, 1] and [R, 1, ow, 1, G] */
    sm_value *yc = axis_coords(g, s, y0, bh, gh, 1, s->oh, 3);
    sm_value *xc = axis_coords(g, s, x0, bw, gw, 2, s->ow, 4);
    sm_value *ylo, *yhi, *wylo, *wyhi, *yin, *xlo, *xhi, *wxlo, *wxhi, *xin;
    axis_taps(g, yc, s->h, &ylo, &yhi, &wylo, &wyhi, &yin);
    axis_taps(g, xc, s->w, &xlo, &xhi, &wxlo, &wxhi, &xin);
    /* [R, 1, 1, G, G]: the samples a ROI has (sampling_ratio 0: those
     * past its own count are left out) */
    sm_value *has = NULL;
    if (s->ratio <= 0)
        has = sm_g_op2(
            g, SM_OP_And,
            sm_g_op2(g, SM_OP_Less, ramp(g, s->dt, 3, s->grid, 0), gh),
            sm_g_op2(g, SM_OP_Less, ramp(g, s->dt, 4, s->grid, 0), gw));
    sm_value *use = sm_g_op2(g, SM_OP_And, yin, xin);
    if (has)
        use = sm_g_op2(g, SM_OP_And, use, has);
    sm_value *usef = sm_g_cast(g, use, s->dt);
    sm_value *ys[2] = {ylo, yhi}, *xs[2] = {xlo, xhi};
    sm_value *wy[2] = {wylo, wyhi}, *wx[2] = {wxlo, wxhi};
    sm_value *pos[4], *wts[4];
    for (int k = 0; k < 4; k++) {
        pos[k] = nn_add(g, nn_scale(g, ys[k / 2], (double)s->w), xs[k % 2]);
        wts[k] = nn_mul(g, nn_mul(g, wy[k / 2], wx[k % 2]), usef);
    }
    int64_t sdims[3] = {s->r, s->c, s->oh * s->ow * s->grid * s->grid * 4};
    sm_value *idx = sm_g_cast(g, corners(g, s, pos), SMELT_DTYPE_I64);
    idx = sm_g_op2(g, SM_OP_Expand, idx, sm_g_ints(g, sdims, 3));
    /* each ROI's image, its planes flattened: [R, C, H*W] */
    sm_value *gin[2] = {x, bidx};
    sm_value *img = sm_g_done(g, sm_g_node(g, SM_OP_Gather, 2, gin, 1));
    int64_t idims[3] = {s->r, s->c, s->h * s->w};
    sm_value *in[2] = {sm_gn_reshape(g, img, idims, 3), idx};
    sm_node *nd = sm_g_node(g, SM_OP_GatherElements, 2, in, 1);
    mv_set_int(g, nd, "axis", 2);
    sm_value *v = nn_mul(g, sm_g_done(g, nd), corners(g, s, wts));
    int64_t vdims[6] = {s->r, s->c, s->oh, s->ow, s->grid * s->grid, 4};
    v = sm_gn_reshape(g, v, vdims, 6);
    /* the count of samples per bin of each ROI, [R, 1, 1, 1] or scalar */
    sm_value *count = nn_mul(g, gh, gw);
    if (s->ratio <= 0) {
        int64_t cd[4] = {s->r, 1, 1, 1};
        count = sm_gn_reshape(g, count, cd, 4);
    }
    if (!s->max_mode) {
        const int64_t axes[2] = {4, 5};
        sm_value *sum = nn_reduce(g, SM_OP_ReduceSum, v, axes, 2, 0);
        return nn_div(
            g, sum,
            sm_g_op2(g, SM_OP_Max, count, sm_g_scalar_like(g, count, 1)));
    }
    /* max: the largest weighted corner of each sample, then of the
     * samples the ROI has; a ROI without samples gives 0 */
    const int64_t a5[1] = {5}, a4[1] = {4};
    sm_value *m = nn_reduce(g, SM_OP_ReduceMax, v, a5, 1, 0);
    if (!has)
        return nn_reduce(g, SM_OP_ReduceMax, m, a4, 1, 0);
    int64_t hd[5] = {s->r, 1, 1, 1, s->grid * s->grid};
    m = sm_g_op3(g, SM_OP_Where, sm_gn_reshape(g, has, hd, 5), m,
                 sm_g_scalar_like(g, m, -INFINITY));
    m = nn_reduce(g, SM_OP_ReduceMax, m, a4, 1, 0);
    sm_value *any =
        sm_g_op2(g, SM_OP_Greater, count, sm_g_scalar_like(g, count, 0));
    return sm_g_op3(g, SM_OP_Where, any, m, sm_g_scalar_like(g, m, 0));
}

smelt_status sm_grad_roialign(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    roi_build s = {0};
    sm_attrs at = sm_node_attrs(n);
    s.oh = sm_attrs_int(&at, "output_height", 1);
    s.ow = sm_attrs_int(&at, "output_width", 1);
    s.ratio = sm_attrs_int(&at, "sampling_ratio", 0);
    s.scale = sm_attrs_float(&at, "spatial_scale", 1);
    s.half = strcmp(sm_attrs_string(&at, "coordinate_transformation_mode",
                                    "half_pixel"),
                    "half_pixel") == 0;
    s.max_mode = strcmp(sm_attrs_string(&at, "mode", "avg"), "max") == 0;
    s.off = s.half ? 0.5 : 0;
    const sm_type *x = &n->in[0]->type, *rois = &n->in[1]->type;
    if (x->ndim != 4 || rois->ndim != 2 || !sm_type_known(x) ||
        !sm_type_known(rois))
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "X and the ROIs must have sizes known before "
                         "running (bind them with --dim)");
    s.dt = x->dtype;
    s.r = rois->dims[0].size;
    s.c = x->dims[1].size;
    s.h = x->dims[2].size;
    s.w = x->dims[3].size;
    s.grid = s.ratio > 0 ? s.ratio : adaptive_grid(&s, n->in[1]);
    if (s.grid < 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "sampling_ratio 0 with ROIs known only at run time "
                         "(the samples per bin follow the boxes' sizes); give "
                         "sampling_ratio > 0");
    if (s.grid > ROI_MAX_GRID)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "more than %d samples per bin side", ROI_MAX_GRID);
    if (s.h * s.w == 0 || s.r * s.c * s.oh * s.ow * s.grid == 0) {
        sm_g_set(g, 0, sm_g_zeros_like(g, n->in[0])); /* every bin is 0 */
        return g->st;
    }
    sm_rebuild rb;
    sm_rebuild_begin(g, &rb, 3);
    sm_value *y = rebuild_bins(g, &s, rb.leaf[0], rb.leaf[1]);
    return sm_rebuild_finish(g, &rb, &y, 1);
}
