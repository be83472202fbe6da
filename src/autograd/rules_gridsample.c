/*
 * rules_gridsample.c - the gradient rule of GridSample (docs/AUTOGRAD.md,
 * "Rules: Det, recurrent ops, sampling").
 *
 * The rule rebuilds the sampling from ops of the table, as the reference
 * kernel (kernels/ref/gridsample.c) computes it, and lets the engine
 * differentiate that copy (rebuild.h): the grid unnormalized to pixel
 * coordinates (an affine map), padded (border: Clip; reflection: Abs,
 * Floor and the parity of the fold, then Clip), the taps' integer
 * coordinates by Floor (bilinear, bicubic) or Round (nearest), each tap
 * read with GatherElements from the flattened planes (zero outside the
 * map by a mask) and weighted by its bilinear or cubic weight, a
 * polynomial in the fractional part. X's gradient is then the
 * scatter-add of the weighted dY (GatherElements' rule) and the grid's
 * the weights' derivatives through the padding (Floor and Round give
 * none, so nearest's grid gradient is zero, as in PyTorch).
 */
#include "autograd/build_move.h"
#include "autograd/rebuild.h"
#include "autograd/rules_nn.h"
#include "autograd/rules_norm.h"
#include "kernels/ref/resize.h"

/* What every tap needs: the flattened planes and the sizes. */
typedef struct gs_build {
    int mode, pad, align; /* as sm_gridsample_attrs gives them */
    int64_t n, c, h, w, pts;
    sm_value *xf; /* X as [N, C, H*W] */
} gs_build;

static sm_value *clip_to(sm_grad_ctx *g, sm_value *v, double lo, double hi)
{
    return sm_g_op3(g, SM_OP_Clip, v, sm_g_scalar_like(g, v, lo),
                    sm_g_scalar_like(g, v, hi));
}

static sm_value *add_c(sm_grad_ctx *g, sm_value *v, double c)
{
    return nn_add(g, v, sm_g_scalar_like(g, v, c));
}

/* v folded into [lo2 / 2, hi2 / 2] (bounds doubled), as the kernel's
 * reflect: d = |v - lo|, the fold's remainder and its parity. */
static sm_value *reflect(sm_grad_ctx *g, sm_value *v, int64_t lo2, int64_t hi2)
{
    if (lo2 == hi2)
        return nn_scale(g, v, 0);
    double lo = (double)lo2 / 2, span = (double)(hi2 - lo2) / 2;
    sm_value *d = sm_g_op1(g, SM_OP_Abs, add_c(g, v, -lo));
    sm_value *flips = sm_g_op1(g, SM_OP_Floor, nn_scale(g, d, 1 / span));
    sm_value *extra = nn_sub(g, d, nn_scale(g, flips, span));
    sm_value *half = sm_g_op1(g, SM_OP_Floor, nn_scale(g, flips, 0.5));
    sm_value *odd = nn_sub(g, flips, nn_scale(g, half, 2));
    /* even folds: extra + lo; odd ones: span - extra + lo */
    sm_value *flip = nn_mul(g, odd, add_c(g, nn_scale(g, extra, -2), span));
    return add_c(g, nn_add(g, extra, flip), lo);
}

/* The padding of coordinate v on an axis of size len. */
static sm_value *padded(sm_grad_ctx *g, const gs_build *s, sm_value *v,
                        int64_t len)
{
    if (s->pad == 2)
        v = s->align ? reflect(g, v, 0, 2 * (len - 1))
                     : reflect(g, v, -1, 2 * len - 1);
    if (s->pad != 0)
        v = clip_to(g, v, 0, (double)(len - 1));
    return v;
}

/* The pixels at whole-numbered coordinates (xc, yc), each [N, 1, P], of
 * every channel: [N, C, P], zero outside the map. */
static sm_value *pixels(sm_grad_ctx *g, const gs_build *s, sm_value *xc,
                        sm_value *yc)
{
    sm_value *xin = clip_to(g, xc, 0, (double)(s->w - 1));
    sm_value *yin = clip_to(g, yc, 0, (double)(s->h - 1));
    sm_value *inside = sm_g_op2(g, SM_OP_And, sm_g_op2(g, SM_OP_Equal, xc, xin),
                                sm_g_op2(g, SM_OP_Equal, yc, yin));
    sm_value *flat = nn_add(g, nn_scale(g, yin, (double)s->w), xin);
    sm_value *idx = sm_g_cast(g, flat, SMELT_DTYPE_I64);
    int64_t dims[3] = {s->n, s->c, s->pts};
    idx = sm_g_op2(g, SM_OP_Expand, idx, sm_g_ints(g, dims, 3));
    sm_value *in[2] = {s->xf, idx};
    sm_node *nd = sm_g_node(g, SM_OP_GatherElements, 2, in, 1);
    mv_set_int(g, nd, "axis", 2);
    sm_value *v = sm_g_done(g, nd);
    return nn_mul(g, v, sm_g_cast(g, inside, g->n->in[0]->type.dtype));
}

/* Cubic convolution weights (a = -0.75) of a tap at distance t. */
static sm_value *cubic1(sm_grad_ctx *g, sm_value *t)
{
    const double a = -0.75; /* ((a + 2) t - (a + 3)) t^2 + 1 */
    sm_value *p = add_c(g, nn_scale(g, t, a + 2), -(a + 3));
    return add_c(g, nn_mul(g, nn_mul(g, p, t), t), 1);
}

static sm_value *cubic2(sm_grad_ctx *g, sm_value *t)
{
    const double a = -0.75; /* ((a t - 5a) t + 8a) t - 4a */
    sm_value *p = add_c(g, nn_scale(g, t, a), -5 * a);
    p = add_c(g, nn_mul(g, p, t), 8 * a);
    return add_c(g, nn_mul(g, p, t), -4 * a);
}

/* The four weights of fractional part t, for taps -1, 0, 1, 2. */
static void cubic_weights(sm_grad_ctx *g, sm_value *t, sm_value **w)
{
    sm_value *one_t = add_c(g, nn_scale(g, t, -1), 1);
    w[0] = cubic2(g, add_c(g, t, 1));
    w[1] = cubic1(g, t);
    w[2] = cubic1(g, one_t);
    w[3] = cubic2(g, add_c(g, one_t, 1));
}

/* The samples [N, C, P] at pixel coordinates (fx, fy), unpadded. */
static sm_value *sample(sm_grad_ctx *g, const gs_build *s, sm_value *fx,
                        sm_value *fy)
{
    if (s->mode == 2) { /* bicubic: 16 taps, each padded on its own */
        sm_value *x0 = sm_g_op1(g, SM_OP_Floor, fx);
        sm_value *y0 = sm_g_op1(g, SM_OP_Floor, fy);
        sm_value *wx[4], *wy[4], *px[4], *py[4], *acc = NULL;
        cubic_weights(g, nn_sub(g, fx, x0), wx);
        cubic_weights(g, nn_sub(g, fy, y0), wy);
        for (int k = 0; k < 4; k++) {
            px[k] = padded(g, s, add_c(g, x0, k - 1), s->w);
            py[k] = padded(g, s, add_c(g, y0, k - 1), s->h);
        }
        for (int i = 0; i < 4; i++) {
            sm_value *row = NULL;
            for (int j = 0; j < 4; j++) {
                sm_value *t = nn_mul(g, pixels(g, s, px[j], py[i]), wx[j]);
                row = row ? nn_add(g, row, t) : t;
            }
            sm_value *t = nn_mul(g, row, wy[i]);
            acc = acc ? nn_add(g, acc, t) : t;
        }
        return acc;
    }
    fx = padded(g, s, fx, s->w);
    fy = padded(g, s, fy, s->h);
    if (s->mode == 1)
        return pixels(g, s, sm_g_op1(g, SM_OP_Round, fx),
                      sm_g_op1(g, SM_OP_Round, fy));
    sm_value *x0 = sm_g_op1(g, SM_OP_Floor, fx);
    sm_value *y0 = sm_g_op1(g, SM_OP_Floor, fy);
    sm_value *tx = nn_sub(g, fx, x0), *ty = nn_sub(g, fy, y0);
    sm_value *ux = add_c(g, nn_scale(g, tx, -1), 1);
    sm_value *uy = add_c(g, nn_scale(g, ty, -1), 1);
    sm_value *x1 = add_c(g, x0, 1), *y1 = add_c(g, y0, 1);
    sm_value *v00 = nn_mul(g, pixels(g, s, x0, y0), nn_mul(g, ux, uy));
    sm_value *v01 = nn_mul(g, pixels(g, s, x1, y0), nn_mul(g, tx, uy));
    sm_value *v10 = nn_mul(g, pixels(g, s, x0, y1), nn_mul(g, ux, ty));
    sm_value *v11 = nn_mul(g, pixels(g, s, x1, y1), nn_mul(g, tx, ty));
    return nn_add(g, nn_add(g, v00, v01), nn_add(g, v10, v11));
}

/* Grid component k (0: x, 1: y) as pixel coordinates [N, 1, P] on an
 * axis of size len. */
static sm_value *coord(sm_grad_ctx *g, const gs_build *s, sm_value *grid, int k,
                       int64_t len)
{
    sm_value *in[2] = {grid, sm_g_scalar(g, SMELT_DTYPE_I64, k)};
    sm_node *nd = sm_g_node(g, SM_OP_Gather, 2, in, 1);
    mv_set_int(g, nd, "axis", 3);
    int64_t dims[3] = {s->n, 1, s->pts};
    sm_value *v = sm_gn_reshape(g, sm_g_done(g, nd), dims, 3);
    /* align: (v + 1) (len - 1) / 2; else ((v + 1) len - 1) / 2 */
    double a = s->align ? (double)(len - 1) / 2 : (double)len / 2;
    return add_c(g, nn_scale(g, v, a), (double)(len - 1) / 2);
}

smelt_status sm_grad_gridsample(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    gs_build s = {0};
    sm_attrs at = sm_node_attrs(n);
    sm_gridsample_attrs(&at, &s.mode, &s.pad, &s.align);
    if (s.mode < 0 || s.pad < 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "unknown mode or padding_mode");
    const sm_type *x = &n->in[0]->type, *gr = &n->in[1]->type;
    if (x->ndim != 4 || gr->ndim != 4 || !sm_type_known(x) ||
        !sm_type_known(gr))
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "X and grid must be 4-D with sizes known before "
                         "running (bind them with --dim)");
    s.n = x->dims[0].size;
    s.c = x->dims[1].size;
    s.h = x->dims[2].size;
    s.w = x->dims[3].size;
    s.pts = gr->dims[1].size * gr->dims[2].size;
    if (s.h * s.w == 0 || s.n * s.c * s.pts == 0) { /* every sample is 0 */
        sm_g_set(g, 0, sm_g_zeros_like(g, n->in[0]));
        sm_g_set(g, 1, sm_g_zeros_like(g, n->in[1]));
        return g->st;
    }
    sm_rebuild rb;
    sm_rebuild_begin(g, &rb, 3);
    int64_t xd[3] = {s.n, s.c, s.h * s.w};
    s.xf = sm_gn_reshape(g, rb.leaf[0], xd, 3);
    sm_value *fx = coord(g, &s, rb.leaf[1], 0, s.w);
    sm_value *fy = coord(g, &s, rb.leaf[1], 1, s.h);
    int64_t yd[4] = {s.n, s.c, gr->dims[1].size, gr->dims[2].size};
    sm_value *y = sm_gn_reshape(g, sample(g, &s, fx, fy), yd, 4);
    return sm_rebuild_finish(g, &rb, &y, 1);
}
