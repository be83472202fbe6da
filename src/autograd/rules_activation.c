/*
 * rules_activation.c - gradient rules of the activations: the piecewise
 * ones (LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, HardSigmoid,
 * HardSwish, Shrink, Clip, PRelu), whose derivative is chosen per element
 * with Where, and the smooth ones (Softplus, Softsign, Mish, Gelu).
 *
 * At a kink the subgradient is PyTorch's, so that a model trained here
 * and there takes the same steps: the comparisons below are the ones its
 * backward formulas make (docs/AUTOGRAD.md, "Rules: pointwise").
 */
#include <string.h>

#include "autograd/grad.h"
#include "core/attr.h"

/* A scalar constant of the forward input's dtype. */
static sm_value *k(sm_grad_ctx *g, double v)
{
    return sm_g_scalar_like(g, g->n->in[0], v);
}

static sm_value *mul(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Mul, a, b);
}

static sm_value *add(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Add, a, b);
}

static sm_value *where(sm_grad_ctx *g, sm_value *c, sm_value *a, sm_value *b)
{
    return sm_g_op3(g, SM_OP_Where, c, a, b);
}

static double attr_f(const sm_grad_ctx *g, const char *name, double def)
{
    sm_attrs at = sm_node_attrs(g->n);
    return sm_attrs_float(&at, name, def);
}

/* x > t, a boolean mask of x's shape. */
static sm_value *above(sm_grad_ctx *g, double t)
{
    return sm_g_op2(g, SM_OP_Greater, g->n->in[0], k(g, t));
}

/* Sets input 0's gradient to dy * deriv. */
static smelt_status times(sm_grad_ctx *g, sm_value *deriv)
{
    sm_g_set(g, 0, mul(g, g->dy[0], deriv));
    return g->st;
}

/* Sets input 0's gradient to dy where mask holds, dy * other elsewhere
 * (other NULL: 0 elsewhere). */
static smelt_status pick(sm_grad_ctx *g, sm_value *mask, sm_value *other)
{
    sm_value *dy = g->dy[0];
    sm_g_set(g, 0, where(g, mask, dy, other ? mul(g, dy, other) : k(g, 0)));
    return g->st;
}

/* softplus: dy * sigmoid(x) */
smelt_status sm_grad_softplus(sm_grad_ctx *g)
{
    return times(g, sm_g_op1(g, SM_OP_Sigmoid, g->n->in[0]));
}

/* leakyrelu: dy where x > 0, dy * alpha elsewhere */
smelt_status sm_grad_leakyrelu(sm_grad_ctx *g)
{
    return pick(g, above(g, 0), k(g, attr_f(g, "alpha", 0.01)));
}

/* elu: dy where x > 0, dy * (y + alpha) = dy * alpha e^x elsewhere */
smelt_status sm_grad_elu(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0];
    return pick(g, above(g, 0), add(g, y, k(g, attr_f(g, "alpha", 1))));
}

/* selu: dy * gamma where x > 0, dy * (y + gamma alpha) elsewhere */
smelt_status sm_grad_selu(sm_grad_ctx *g)
{
    double alpha = attr_f(g, "alpha", 1.67326319217681884765625);
    double gamma = attr_f(g, "gamma", 1.05070102214813232421875);
    sm_value *y = g->n->out[0], *dy = g->dy[0];
    sm_value *neg = mul(g, dy, add(g, y, k(g, gamma * alpha)));
    sm_g_set(g, 0, where(g, above(g, 0), mul(g, dy, k(g, gamma)), neg));
    return g->st;
}

/* celu: dy where x > 0, dy * e^(x/alpha) = dy * (y/alpha + 1) elsewhere */
smelt_status sm_grad_celu(sm_grad_ctx *g)
{
    double alpha = attr_f(g, "alpha", 1);
    sm_value *y = g->n->out[0];
    return pick(g, above(g, 0), add(g, mul(g, y, k(g, 1 / alpha)), k(g, 1)));
}

/* thresholdedrelu: dy where x > alpha, else 0 */
smelt_status sm_grad_thresholdedrelu(sm_grad_ctx *g)
{
    return pick(g, above(g, attr_f(g, "alpha", 1)), NULL);
}

/* hardsigmoid: dy * alpha where 0 < alpha x + beta < 1, else 0 (strict,
 * as PyTorch's hardsigmoid_backward) */
smelt_status sm_grad_hardsigmoid(sm_grad_ctx *g)
{
    double alpha = attr_f(g, "alpha", 0.2), beta = attr_f(g, "beta", 0.5);
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    sm_value *t = add(g, mul(g, x, k(g, alpha)), k(g, beta));
    sm_value *in =
        sm_g_op2(g, SM_OP_And, sm_g_op2(g, SM_OP_Greater, t, k(g, 0)),
                 sm_g_op2(g, SM_OP_Less, t, k(g, 1)));
    sm_g_set(g, 0, where(g, in, mul(g, dy, k(g, alpha)), k(g, 0)));
    return g->st;
}

/* hardswish (x * hardsigmoid(x, 1/6, 1/2)): 0 for x < -3, dy (x/3 + 1/2)
 * for -3 <= x <= 3, dy above */
smelt_status sm_grad_hardswish(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    sm_value *mid = mul(g, dy, add(g, mul(g, x, k(g, 1.0 / 3)), k(g, 0.5)));
    sm_value *upper =
        where(g, sm_g_op2(g, SM_OP_LessOrEqual, x, k(g, 3)), mid, dy);
    sm_g_set(g, 0,
             where(g, sm_g_op2(g, SM_OP_Less, x, k(g, -3)), k(g, 0), upper));
    return g->st;
}

/* softsign: dy / (1 + |x|)^2 */
smelt_status sm_grad_softsign(sm_grad_ctx *g)
{
    sm_value *s = add(g, sm_g_op1(g, SM_OP_Abs, g->n->in[0]), k(g, 1));
    sm_g_set(g, 0, sm_g_op2(g, SM_OP_Div, g->dy[0], mul(g, s, s)));
    return g->st;
}

/* mish (x tanh(softplus(x))): dy (t + x sigmoid(x) (1 - t^2)), t =
 * tanh(softplus(x)) */
smelt_status sm_grad_mish(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    sm_value *t = sm_g_op1(g, SM_OP_Tanh, sm_g_op1(g, SM_OP_Softplus, x));
    sm_value *dt = sm_g_op2(g, SM_OP_Sub, k(g, 1), mul(g, t, t));
    sm_value *s = mul(g, x, sm_g_op1(g, SM_OP_Sigmoid, x));
    return times(g, add(g, t, mul(g, s, dt)));
}

/* shrink: dy where |x| > lambd, else 0 (the bias only shifts) */
smelt_status sm_grad_shrink(sm_grad_ctx *g)
{
    sm_value *ax = sm_g_op1(g, SM_OP_Abs, g->n->in[0]);
    sm_value *m = sm_g_op2(g, SM_OP_Greater, ax, k(g, attr_f(g, "lambd", 0.5)));
    return pick(g, m, NULL);
}

/*
 * gelu's derivative at x, approximate = "none": Phi(x) + x phi(x) with
 * Phi(x) = (1 + erf(x/sqrt2))/2 and phi(x) = e^(-x^2/2)/sqrt(2 pi).
 * approximate = "tanh": with u = c (x + a x^3), t = tanh(u),
 * (1 + t)/2 + x/2 (1 - t^2) c (1 + 3 a x^2), c = sqrt(2/pi),
 * a = 0.044715. The Gelu op's rule and the fused epilogues' share it.
 */
sm_value *sm_g_gelu_deriv(sm_grad_ctx *g, sm_value *x, int tanh_approx)
{
    sm_value *x2 = mul(g, x, x);
    if (tanh_approx) {
        const double c = 0.79788456080286535588, a = 0.044715;
        sm_value *u = mul(g,
                          mul(g, x,
                              add(g, mul(g, x2, sm_g_scalar_like(g, x, a)),
                                  sm_g_scalar_like(g, x, 1))),
                          sm_g_scalar_like(g, x, c));
        sm_value *t = sm_g_op1(g, SM_OP_Tanh, u);
        sm_value *half1 = mul(g, add(g, t, sm_g_scalar_like(g, x, 1)),
                              sm_g_scalar_like(g, x, 0.5));
        sm_value *dt =
            sm_g_op2(g, SM_OP_Sub, sm_g_scalar_like(g, x, 1), mul(g, t, t));
        sm_value *du = add(g, mul(g, x2, sm_g_scalar_like(g, x, 3 * a * c)),
                           sm_g_scalar_like(g, x, c));
        return add(
            g, half1,
            mul(g, mul(g, x, sm_g_scalar_like(g, x, 0.5)), mul(g, dt, du)));
    }
    sm_value *e =
        sm_g_op1(g, SM_OP_Erf,
                 mul(g, x, sm_g_scalar_like(g, x, 0.70710678118654752440)));
    sm_value *cdf = mul(g, add(g, e, sm_g_scalar_like(g, x, 1)),
                        sm_g_scalar_like(g, x, 0.5));
    sm_value *pdf =
        mul(g, sm_g_op1(g, SM_OP_Exp, mul(g, x2, sm_g_scalar_like(g, x, -0.5))),
            sm_g_scalar_like(g, x, 0.39894228040143267794));
    return add(g, cdf, mul(g, x, pdf));
}

/* gelu: dy times sm_g_gelu_deriv (approximate none or tanh). */
smelt_status sm_grad_gelu(sm_grad_ctx *g)
{
    sm_attrs at = sm_node_attrs(g->n);
    const char *ap = sm_attrs_string(&at, "approximate", "none");
    int tanh_approx = strcmp(ap, "tanh") == 0;
    if (!tanh_approx && strcmp(ap, "none") != 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "approximate is '%s'; expected none or tanh", ap);
    return times(g, sm_g_gelu_deriv(g, g->n->in[0], tanh_approx));
}

/* And of two masks, either of which may be NULL (absent: true). */
static sm_value *both(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return !a ? b : !b ? a : sm_g_op2(g, SM_OP_And, a, b);
}

/* The sum of dy where mask holds, shaped as bound v (one element). */
static sm_value *masked_sum(sm_grad_ctx *g, sm_value *mask, const sm_value *v)
{
    sm_value *d = where(g, mask, g->dy[0], k(g, 0));
    return sm_g_reshape_like(g, sm_g_reduce_sum(g, d, NULL, 0, 0), v);
}

/*
 * clip(x, lo?, hi?) = min(max(x, lo), hi), PyTorch's clamp convention:
 *   dx  = dy where lo <= x <= hi (both ends included)
 *   dlo = sum of dy where x < lo and lo < hi
 *   dhi = sum of dy where x > hi, or everywhere when hi < lo (hi wins)
 * The bounds hold one element; their gradients take their shapes.
 */
smelt_status sm_grad_clip(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0];
    sm_value *lo = n->n_in > 1 ? n->in[1] : NULL;
    sm_value *hi = n->n_in > 2 ? n->in[2] : NULL;
    if (g->need[0]) {
        sm_value *m =
            both(g, lo ? sm_g_op2(g, SM_OP_GreaterOrEqual, x, lo) : NULL,
                 hi ? sm_g_op2(g, SM_OP_LessOrEqual, x, hi) : NULL);
        sm_g_set(g, 0, m ? where(g, m, g->dy[0], k(g, 0)) : g->dy[0]);
    }
    if (lo && g->need[1]) {
        sm_value *m = both(g, sm_g_op2(g, SM_OP_Less, x, lo),
                           hi ? sm_g_op2(g, SM_OP_Less, lo, hi) : NULL);
        sm_g_set(g, 1, masked_sum(g, m, lo));
    }
    if (hi && g->need[2]) {
        sm_value *m = sm_g_op2(g, SM_OP_Greater, x, hi);
        if (lo)
            m = sm_g_op2(g, SM_OP_Or, m, sm_g_op2(g, SM_OP_Less, hi, lo));
        sm_g_set(g, 2, masked_sum(g, m, hi));
    }
    return g->st;
}

/* prelu(x, slope): dx = dy where x > 0, dy * slope elsewhere;
 * dslope = dy * x where x <= 0, summed to slope's shape */
smelt_status sm_grad_prelu(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *s = g->n->in[1], *dy = g->dy[0];
    sm_value *pos = above(g, 0);
    if (g->need[0])
        sm_g_set(g, 0, where(g, pos, dy, mul(g, dy, s)));
    if (g->need[1])
        sm_g_set(g, 1,
                 sm_g_unbroadcast(g, where(g, pos, k(g, 0), mul(g, dy, x)), s));
    return g->st;
}
