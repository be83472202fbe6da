/*
 * rules_norm.c - gradient rules of Softmax, LogSoftmax, the
 * normalizations that scale and shift (LayerNormalization,
 * BatchNormalization in both modes, InstanceNormalization) and those
 * without learned parameters (MeanVarianceNormalization, LpNormalization,
 * LRN).
 *
 * Softmax's rules use the forward output (y), never exp of a large x.
 * The normalizations recompute their statistics in the backward graph in
 * X's own dtype (LayerNormalization's stashed Mean/InvStdDev may be f32
 * for an f64 X) and share one formula: with x^ = (x - mean) * inv over
 * the normalized axes and g = dy * scale,
 *
 *     dx = inv * (g - mean(g) - x^ * mean(g * x^)).
 */
#include "autograd/rules_norm.h"

/* softmax: dx = y * (dy - sum(dy * y)) along the axis */
smelt_status sm_grad_softmax(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    sm_attrs at = sm_node_attrs(g->n);
    int64_t ax = r < 0 ? -1 : nn_axis(g, sm_attrs_int(&at, "axis", -1), r);
    if (ax < 0)
        return g->st;
    sm_value *s =
        nn_reduce(g, SM_OP_ReduceSum, nn_mul(g, dy, y), &ax, r ? 1 : 0, 1);
    sm_g_set(g, 0, nn_mul(g, y, nn_sub(g, dy, s)));
    return g->st;
}

/* logsoftmax: dx = dy - exp(y) * sum(dy) along the axis */
smelt_status sm_grad_logsoftmax(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    sm_attrs at = sm_node_attrs(g->n);
    int64_t ax = r < 0 ? -1 : nn_axis(g, sm_attrs_int(&at, "axis", -1), r);
    if (ax < 0)
        return g->st;
    sm_value *s = nn_reduce(g, SM_OP_ReduceSum, dy, &ax, r ? 1 : 0, 1);
    sm_value *p = sm_g_op1(g, SM_OP_Exp, y);
    sm_g_set(g, 0, nn_sub(g, dy, nn_mul(g, p, s)));
    return g->st;
}

/* The statistics of x over axes, kept as broadcastable values. */
typedef struct norm_stats {
    sm_value *xc;   /* x - mean */
    sm_value *inv;  /* 1 / sqrt(var + eps), reduced axes kept as 1 */
    sm_value *xhat; /* xc * inv */
} norm_stats;

static void norm_stats_make(sm_grad_ctx *g, sm_value *x, const int64_t *axes,
                            int n, double eps, norm_stats *s)
{
    sm_value *mean = nn_reduce(g, SM_OP_ReduceMean, x, axes, n, 1);
    s->xc = nn_sub(g, x, mean);
    sm_value *var =
        nn_reduce(g, SM_OP_ReduceMean, nn_mul(g, s->xc, s->xc), axes, n, 1);
    sm_value *sd =
        sm_g_op1(g, SM_OP_Sqrt, nn_add(g, var, sm_g_scalar_like(g, x, eps)));
    s->inv = sm_g_op1(g, SM_OP_Reciprocal, sd);
    s->xhat = nn_mul(g, s->xc, s->inv);
}

/* dx = inv * (gg - mean(gg) - x^ * mean(gg * x^)) for y = x^ * (...). */
static sm_value *norm_dx(sm_grad_ctx *g, const norm_stats *s, sm_value *gg,
                         const int64_t *axes, int n)
{
    sm_value *m1 = nn_reduce(g, SM_OP_ReduceMean, gg, axes, n, 1);
    sm_value *m2 =
        nn_reduce(g, SM_OP_ReduceMean, nn_mul(g, gg, s->xhat), axes, n, 1);
    sm_value *t = nn_sub(g, nn_sub(g, gg, m1), nn_mul(g, s->xhat, m2));
    return nn_mul(g, s->inv, t);
}

/*
 * layernormalization over axes [axis, rank):
 *   dScale = sum(dy * x^), dB = sum(dy) (summed to their shapes),
 *   dx = norm_dx(dy * Scale)
 *        + dMean / N                       (output Mean)
 *        - dInvStdDev * inv^2 * x^ / N     (output InvStdDev)
 */
smelt_status sm_grad_layernormalization(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *scale = n->in[1];
    sm_value *bias = n->n_in > 2 ? n->in[2] : NULL;
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    sm_attrs at = sm_node_attrs(n);
    int ax = nn_axis(g, sm_attrs_int(&at, "axis", -1), r);
    if (ax < 0)
        return g->st;
    double eps = sm_attrs_float(&at, "epsilon", 1e-5);
    int64_t axes[SMELT_MAX_DIMS];
    int na = 0;
    for (int d = ax; d < r; d++)
        axes[na++] = d;
    norm_stats s;
    norm_stats_make(g, x, axes, na, eps, &s);
    sm_value *dy = g->dy[0], *dx = NULL;
    if (dy) {
        if (g->need[1])
            sm_g_set(g, 1, sm_g_unbroadcast(g, nn_mul(g, dy, s.xhat), scale));
        if (bias && g->need[2])
            sm_g_set(g, 2, sm_g_unbroadcast(g, dy, bias));
        if (g->need[0])
            dx = norm_dx(g, &s, nn_mul(g, dy, scale), axes, na);
    }
    int stats_grad = (n->n_out > 1 && g->dy[1]) || (n->n_out > 2 && g->dy[2]);
    if (g->need[0] && stats_grad) {
        double cnt = nn_count(x, axes, na);
        if (cnt <= 0)
            return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                             "the gradient of Mean or InvStdDev needs the "
                             "normalized dimensions' sizes (bind them with "
                             "--dim)");
        if (n->n_out > 1 && g->dy[1]) {
            sm_value *dm = sm_g_cast(g, g->dy[1], x->type.dtype);
            dx = nn_accum(g, dx, nn_scale(g, dm, 1.0 / cnt), x);
        }
        if (n->n_out > 2 && g->dy[2]) {
            sm_value *di = sm_g_cast(g, g->dy[2], x->type.dtype);
            sm_value *t = nn_mul(g, di, nn_mul(g, s.inv, s.inv));
            dx = nn_accum(g, dx, nn_scale(g, nn_mul(g, t, s.xhat), -1.0 / cnt),
                          x);
        }
    }
    sm_g_set(g, 0, dx);
    return g->st;
}

/* A per-channel vector [C] shaped to broadcast onto x of rank r along
 * dim 1: [C, 1, ..., 1] (as it is for rank <= 2). */
static sm_value *per_channel(sm_grad_ctx *g, sm_value *p, int r)
{
    int64_t axes[SMELT_MAX_DIMS];
    int n = 0;
    for (int d = 2; d < r; d++)
        axes[n++] = d - 1;
    return nn_unsqueeze(g, p, axes, n);
}

/* The axes of x (rank r) other than the channel dim 1 (all of them, {0},
 * for rank 1, whose single channel spans the tensor). */
static int non_channel_axes(int r, int64_t *axes)
{
    int n = 0;
    for (int d = 0; d < r; d++)
        if (d != 1 || r == 1)
            axes[n++] = d;
    return n;
}

/* d summed over every axis but the channel one, to shape [C]. */
static sm_value *channel_sum(sm_grad_ctx *g, sm_value *d, int r)
{
    int64_t axes[SMELT_MAX_DIMS];
    int n = non_channel_axes(r, axes);
    return nn_reduce(g, SM_OP_ReduceSum, d, axes, n, r == 1);
}

/*
 * batchnormalization, inference form (the statistics are inputs):
 *   dx = dy * scale * inv,  dScale = sum(dy * x^),  dB = sum(dy),
 *   dmean = -sum(dy) * scale * inv,
 *   dvar = -sum(dy * (x - mean)) * scale * inv^3 / 2.
 */
static smelt_status batchnorm_infer(sm_grad_ctx *g, int r, double eps)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *scale = n->in[1], *mean = n->in[3];
    sm_value *var = n->in[4], *dy = g->dy[0];
    sm_value *inv = sm_g_op1(
        g, SM_OP_Reciprocal,
        sm_g_op1(g, SM_OP_Sqrt, nn_add(g, var, sm_g_scalar_like(g, x, eps))));
    sm_value *k = nn_mul(g, scale, inv); /* [C] */
    sm_value *xc = NULL;
    if (g->need[1] || g->need[4])
        xc = nn_sub(g, x, per_channel(g, mean, r));
    if (g->need[0])
        sm_g_set(g, 0, nn_mul(g, dy, per_channel(g, k, r)));
    if (g->need[1])
        sm_g_set(
            g, 1,
            channel_sum(g, nn_mul(g, dy, nn_mul(g, xc, per_channel(g, inv, r))),
                        r));
    sm_value *sdy = g->need[2] || g->need[3] ? channel_sum(g, dy, r) : NULL;
    sm_g_set(g, 2, sdy);
    if (g->need[3])
        sm_g_set(g, 3, sm_g_op1(g, SM_OP_Neg, nn_mul(g, sdy, k)));
    if (g->need[4]) {
        sm_value *inv3 = nn_mul(g, k, nn_mul(g, inv, inv));
        sm_value *sx = channel_sum(g, nn_mul(g, dy, xc), r);
        sm_g_set(g, 4, nn_scale(g, nn_mul(g, sx, inv3), -0.5));
    }
    return g->st;
}

/*
 * batchnormalization, training form (the batch's own statistics over
 * every axis but the channel's, M elements each):
 *   dx = norm_dx(dy * scale) + (1 - momentum) (dRunMean / M
 *        + dRunVar * 2 (x - mean) / M),
 *   dScale = sum(dy * x^), dB = sum(dy),
 *   d input mean = dRunMean * momentum, d input var = dRunVar * momentum.
 */
static smelt_status batchnorm_train(sm_grad_ctx *g, int r, double eps)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *scale = n->in[1], *dy = g->dy[0];
    sm_attrs at = sm_node_attrs(n);
    double mom = sm_attrs_float(&at, "momentum", 0.9);
    int64_t axes[SMELT_MAX_DIMS];
    int na = non_channel_axes(r, axes);
    norm_stats s;
    norm_stats_make(g, x, axes, na, eps, &s);
    sm_value *dx = NULL;
    if (dy) {
        if (g->need[0])
            dx = norm_dx(g, &s, nn_mul(g, dy, per_channel(g, scale, r)), axes,
                         na);
        if (g->need[1])
            sm_g_set(g, 1, channel_sum(g, nn_mul(g, dy, s.xhat), r));
        if (g->need[2])
            sm_g_set(g, 2, channel_sum(g, dy, r));
    }
    sm_value *drm = n->n_out > 1 ? g->dy[1] : NULL;
    sm_value *drv = n->n_out > 2 ? g->dy[2] : NULL;
    if (drm)
        sm_g_set(g, 3, nn_scale(g, drm, mom));
    if (drv)
        sm_g_set(g, 4, nn_scale(g, drv, mom));
    if (g->need[0] && (drm || drv)) {
        double cnt = nn_count(x, axes, na);
        if (cnt <= 0)
            return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                             "the gradient of the running statistics needs "
                             "the batch's dimensions (bind them with --dim)");
        if (drm)
            dx = nn_accum(
                g, dx, nn_scale(g, per_channel(g, drm, r), (1 - mom) / cnt), x);
        if (drv) {
            sm_value *t = nn_mul(g, per_channel(g, drv, r), s.xc);
            dx = nn_accum(g, dx, nn_scale(g, t, 2 * (1 - mom) / cnt), x);
        }
    }
    sm_g_set(g, 0, dx);
    return g->st;
}

smelt_status sm_grad_batchnormalization(sm_grad_ctx *g)
{
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    sm_attrs at = sm_node_attrs(g->n);
    double eps = sm_attrs_float(&at, "epsilon", 1e-5);
    if (sm_attrs_int(&at, "training_mode", 0))
        return batchnorm_train(g, r, eps);
    return batchnorm_infer(g, r, eps);
}

/*
 * instancenormalization: each (n, c) plane over axes [2, rank):
 *   dx = norm_dx(dy * scale[c]), dScale = sum(dy * x^), dB = sum(dy),
 *   the sums over every axis but the channel one.
 */
smelt_status sm_grad_instancenormalization(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    if (r < 2)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "X must have rank >= 2");
    sm_attrs at = sm_node_attrs(n);
    int64_t axes[SMELT_MAX_DIMS];
    int na = 0;
    for (int d = 2; d < r; d++)
        axes[na++] = d;
    norm_stats s;
    norm_stats_make(g, x, axes, na, sm_attrs_float(&at, "epsilon", 1e-5), &s);
    if (g->need[0])
        sm_g_set(g, 0,
                 norm_dx(g, &s, nn_mul(g, dy, per_channel(g, n->in[1], r)),
                         axes, na));
    if (g->need[1])
        sm_g_set(g, 1, channel_sum(g, nn_mul(g, dy, s.xhat), r));
    if (g->need[2])
        sm_g_set(g, 2, channel_sum(g, dy, r));
    return g->st;
}

/* ---- normalizations without learned parameters: MeanVarianceNormalization,
 * LpNormalization and LRN ------------------------------------------------ */

/*
 * meanvariancenormalization over axes (default [0, 2, 3]):
 * y = xc / d, xc = x - mean, s = sqrt(mean(xc^2)), d = s + 1e-9:
 *   dx = (dy - mean(dy)) / d - xc * mean(dy * xc) / (s * d^2)
 * (the second term is 0 on a constant group, where s = 0).
 */
smelt_status sm_grad_meanvariancenormalization(sm_grad_ctx *g)
{
    static const int64_t def[3] = {0, 2, 3};
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    sm_attrs at = sm_node_attrs(g->n);
    const int64_t *v;
    int n = sm_attrs_ints(&at, "axes", &v);
    if (n < 0) {
        v = def;
        n = 3;
    }
    int64_t axes[SMELT_MAX_DIMS];
    int na = 0;
    unsigned seen = 0;
    for (int i = 0; i < n && na < SMELT_MAX_DIMS; i++) {
        int a = nn_axis(g, v[i], r);
        if (a < 0)
            return g->st;
        if (!(seen & (1u << a)))
            axes[na++] = a;
        seen |= 1u << a;
    }
    sm_value *mean = nn_reduce(g, SM_OP_ReduceMean, x, axes, na, 1);
    sm_value *xc = nn_sub(g, x, mean);
    sm_value *s = sm_g_op1(
        g, SM_OP_Sqrt,
        nn_reduce(g, SM_OP_ReduceMean, nn_mul(g, xc, xc), axes, na, 1));
    sm_value *zero = sm_g_scalar_like(g, x, 0);
    sm_value *d = nn_add(g, s, sm_g_scalar_like(g, x, 1e-9));
    sm_value *s_safe =
        sm_g_op3(g, SM_OP_Where, sm_g_op2(g, SM_OP_Greater, s, zero), s,
                 sm_g_scalar_like(g, x, 1));
    sm_value *t1 = nn_div(
        g, nn_sub(g, dy, nn_reduce(g, SM_OP_ReduceMean, dy, axes, na, 1)), d);
    sm_value *m =
        nn_reduce(g, SM_OP_ReduceMean, nn_mul(g, dy, xc), axes, na, 1);
    sm_value *t2 =
        nn_div(g, nn_mul(g, xc, m), nn_mul(g, s_safe, nn_mul(g, d, d)));
    sm_g_set(g, 0, nn_sub(g, t1, t2));
    return g->st;
}

/*
 * lpnormalization along axis, y = x / n:
 *   p = 2 (n = sqrt(sum x^2)): dx = (dy - y * sum(dy * y)) / n
 *   p = 1 (n = sum |x|):       dx = (dy - sign(x) * sum(dy * y)) / n
 * and 0 on a line of zeros (whose output the kernel keeps at 0).
 */
smelt_status sm_grad_lpnormalization(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *y = g->n->out[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    sm_attrs at = sm_node_attrs(g->n);
    int64_t ax = nn_axis(g, sm_attrs_int(&at, "axis", -1), r);
    int64_t p = sm_attrs_int(&at, "p", 2);
    if (ax < 0)
        return g->st;
    if (p != 1 && p != 2)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED, "p = %lld (only 1 or 2)",
                         (long long)p);
    int na = r ? 1 : 0;
    sm_value *norm;
    if (p == 2)
        norm = sm_g_op1(
            g, SM_OP_Sqrt,
            nn_reduce(g, SM_OP_ReduceSum, nn_mul(g, x, x), &ax, na, 1));
    else
        norm = nn_reduce(g, SM_OP_ReduceSum, sm_g_op1(g, SM_OP_Abs, x), &ax, na,
                         1);
    sm_value *zero = sm_g_scalar_like(g, x, 0);
    sm_value *pos = sm_g_op2(g, SM_OP_Greater, norm, zero);
    sm_value *safe =
        sm_g_op3(g, SM_OP_Where, pos, norm, sm_g_scalar_like(g, x, 1));
    sm_value *sdy = nn_reduce(g, SM_OP_ReduceSum, nn_mul(g, dy, y), &ax, na, 1);
    sm_value *dir = p == 2 ? y : sm_g_op1(g, SM_OP_Sign, x);
    sm_value *dx = nn_div(g, nn_sub(g, dy, nn_mul(g, dir, sdy)), safe);
    sm_g_set(g, 0, sm_g_op3(g, SM_OP_Where, pos, dx, zero));
    return g->st;
}

/* The sum of x over a window of channels (dim 1) [c - lo, c + hi],
 * clipped to [0, C): x padded with zeros on dim 1 and the shifted slices
 * added. C must be known. */
static sm_value *channel_window(sm_grad_ctx *g, sm_value *x, int64_t lo,
                                int64_t hi, int64_t c_n)
{
    int r = x ? x->type.ndim : 0;
    if (!x)
        return NULL;
    lo = lo < c_n - 1 ? lo : c_n - 1;
    hi = hi < c_n - 1 ? hi : c_n - 1;
    int64_t pads[2 * SMELT_MAX_DIMS] = {0};
    pads[1] = lo;
    pads[r + 1] = hi;
    sm_value *xp = sm_g_op2(g, SM_OP_Pad, x, sm_g_ints(g, pads, 2 * r));
    sm_value *sum = NULL, *one = sm_g_ints(g, (int64_t[]){1}, 1);
    for (int64_t o = 0; o <= lo + hi; o++) {
        int64_t e = o + c_n;
        sm_value *in[4] = {xp, sm_g_ints(g, &o, 1), sm_g_ints(g, &e, 1), one};
        sm_value *sl = sm_g_done(g, sm_g_node(g, SM_OP_Slice, 4, in, 1));
        sum = sum ? nn_add(g, sum, sl) : sl;
    }
    return sum;
}

/*
 * lrn: y = x * S^-beta, S = bias + alpha / size * W(x^2), W the sum over
 * the channel window [c - lo, c + hi]:
 *   dx = dy * S^-beta
 *        - 2 alpha beta / size * x * W'(dy * x * S^(-beta - 1)),
 * W' the transposed window [c - hi, c + lo].
 */
smelt_status sm_grad_lrn(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    if (r < 2 || x->type.dims[1].size < 1)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "needs X of rank >= 2 with its channel count known");
    sm_attrs at = sm_node_attrs(g->n);
    int64_t size = sm_attrs_int(&at, "size", 0);
    double alpha = sm_attrs_float(&at, "alpha", 1e-4);
    double beta = sm_attrs_float(&at, "beta", 0.75);
    double bias = sm_attrs_float(&at, "bias", 1);
    if (size < 1)
        return sm_g_fail(g, SMELT_ERR_INVALID_ARG, "size %lld < 1",
                         (long long)size);
    int64_t c_n = x->type.dims[1].size, lo = (size - 1) / 2, hi = size - 1 - lo;
    sm_value *w = channel_window(g, nn_mul(g, x, x), lo, hi, c_n);
    sm_value *s = nn_add(g, nn_scale(g, w, alpha / (double)size),
                         sm_g_scalar_like(g, x, bias));
    sm_value *sb = sm_g_op2(g, SM_OP_Pow, s, sm_g_scalar_like(g, x, -beta));
    sm_value *u = nn_div(g, nn_mul(g, nn_mul(g, dy, x), sb), s);
    sm_value *wt = channel_window(g, u, hi, lo, c_n);
    sm_value *t =
        nn_scale(g, nn_mul(g, x, wt), -2 * alpha * beta / (double)size);
    sm_g_set(g, 0, nn_add(g, nn_mul(g, dy, sb), t));
    return g->st;
}
