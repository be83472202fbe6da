/*
 * rules_norm.c - gradient rules of Softmax, LogSoftmax and the
 * normalizations that scale and shift (LayerNormalization,
 * BatchNormalization in both modes, InstanceNormalization).
 *
 * Softmax's rules use the forward output (y), never exp of a large x.
 * The normalizations recompute their statistics in the backward graph in
 * X's own dtype (LayerNormalization's stashed Mean/InvStdDev may be f32
 * for an f64 X) and share one formula: with x^ = (x - mean) * inv over
 * the normalized axes and g = dy * scale,
 *
 *     dx = inv * (g - mean(g) - x^ * mean(g * x^)).
 */
#include "autograd/rules_nn.h"

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
