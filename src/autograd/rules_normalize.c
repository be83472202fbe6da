/*
 * rules_normalize.c - gradient rules of the normalizations without
 * learned parameters: MeanVarianceNormalization, LpNormalization and LRN.
 */
#include "autograd/rules_nn.h"

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
