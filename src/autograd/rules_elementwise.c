/*
 * rules_elementwise.c - gradient rules of the elementwise ops: unary
 * math, casts and Dropout, and the broadcasting binary and n-ary ops,
 * whose input gradients are summed back down to each input's shape. Relu,
 * Sigmoid and Tanh are here; the other activations in rules_activation.c.
 */
#include "autograd/grad.h"
#include "core/alloc.h"
#include "core/attr.h"

/* dy times f'(x) for the unary op whose derivative is `deriv`. */
static smelt_status unary(sm_grad_ctx *g, sm_value *deriv)
{
    sm_g_set(g, 0, sm_g_op2(g, SM_OP_Mul, g->dy[0], deriv));
    return g->st;
}

smelt_status sm_grad_identity(sm_grad_ctx *g)
{
    sm_g_set(g, 0, g->dy[0]);
    return g->st;
}

smelt_status sm_grad_neg(sm_grad_ctx *g)
{
    sm_g_set(g, 0, sm_g_op1(g, SM_OP_Neg, g->dy[0]));
    return g->st;
}

/* exp: dy * y */
smelt_status sm_grad_exp(sm_grad_ctx *g)
{
    return unary(g, g->n->out[0]);
}

/* log: dy / x */
smelt_status sm_grad_log(sm_grad_ctx *g)
{
    sm_g_set(g, 0, sm_g_op2(g, SM_OP_Div, g->dy[0], g->n->in[0]));
    return g->st;
}

/* tanh: dy * (1 - y^2) */
smelt_status sm_grad_tanh(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0];
    sm_value *one = sm_g_scalar_like(g, y, 1.0);
    return unary(g, sm_g_op2(g, SM_OP_Sub, one, sm_g_op2(g, SM_OP_Mul, y, y)));
}

/* sigmoid: dy * y (1 - y) */
smelt_status sm_grad_sigmoid(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0];
    sm_value *one = sm_g_scalar_like(g, y, 1.0);
    return unary(g, sm_g_op2(g, SM_OP_Mul, y, sm_g_op2(g, SM_OP_Sub, one, y)));
}

/* relu: dy where x > 0, else 0 (the subgradient at 0 is 0, as PyTorch) */
smelt_status sm_grad_relu(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    sm_value *pos = sm_g_op2(g, SM_OP_Greater, x, sm_g_scalar_like(g, x, 0));
    sm_g_set(
        g, 0,
        sm_g_op3(g, SM_OP_Where, pos, g->dy[0], sm_g_scalar_like(g, x, 0)));
    return g->st;
}

/* add, sub: dy (negated for b of sub), summed to each input's shape */
static smelt_status add_sub(sm_grad_ctx *g, int sub)
{
    sm_value *dy = g->dy[0];
    if (g->need[0])
        sm_g_set(g, 0, sm_g_unbroadcast(g, dy, g->n->in[0]));
    if (g->need[1]) {
        sm_value *d = sub ? sm_g_op1(g, SM_OP_Neg, dy) : dy;
        sm_g_set(g, 1, sm_g_unbroadcast(g, d, g->n->in[1]));
    }
    return g->st;
}

smelt_status sm_grad_add(sm_grad_ctx *g)
{
    return add_sub(g, 0);
}

smelt_status sm_grad_sub(sm_grad_ctx *g)
{
    return add_sub(g, 1);
}

/* mul: da = dy * b, db = dy * a */
smelt_status sm_grad_mul(sm_grad_ctx *g)
{
    sm_value *a = g->n->in[0], *b = g->n->in[1], *dy = g->dy[0];
    if (g->need[0])
        sm_g_set(g, 0, sm_g_unbroadcast(g, sm_g_op2(g, SM_OP_Mul, dy, b), a));
    if (g->need[1])
        sm_g_set(g, 1, sm_g_unbroadcast(g, sm_g_op2(g, SM_OP_Mul, dy, a), b));
    return g->st;
}

/* div: da = dy / b, db = -dy * y / b */
smelt_status sm_grad_div(sm_grad_ctx *g)
{
    sm_value *a = g->n->in[0], *b = g->n->in[1], *dy = g->dy[0];
    sm_value *da = sm_g_op2(g, SM_OP_Div, dy, b);
    if (g->need[0])
        sm_g_set(g, 0, sm_g_unbroadcast(g, da, a));
    if (g->need[1]) {
        sm_value *t = sm_g_op2(g, SM_OP_Mul, da, g->n->out[0]);
        sm_g_set(g, 1, sm_g_unbroadcast(g, sm_g_op1(g, SM_OP_Neg, t), b));
    }
    return g->st;
}

/* ---- helpers of the rules below ------------------------------------------ */

/* Records an allocation failure (unless an earlier failure is kept). */
static smelt_status nomem(sm_grad_ctx *g)
{
    if (g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return g->st;
}

/* A scalar constant of the forward input's dtype. */
static sm_value *k(sm_grad_ctx *g, double v)
{
    return sm_g_scalar_like(g, g->n->in[0], v);
}

static sm_value *mul(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Mul, a, b);
}

/* ---- unary math -------------------------------------------------------- */

/* 1 - x^2 (sign = -1) or x^2 + 1 (sign = 1) or x^2 - 1 (sign = 0), of
 * the forward input x. */
static sm_value *one_x2(sm_grad_ctx *g, int sign)
{
    sm_value *x = g->n->in[0], *x2 = mul(g, x, x);
    if (sign < 0)
        return sm_g_op2(g, SM_OP_Sub, k(g, 1), x2);
    return sm_g_op2(g, sign ? SM_OP_Add : SM_OP_Sub, x2, k(g, 1));
}

/* dy / den, negated when neg. */
static smelt_status over(sm_grad_ctx *g, sm_value *den, int neg)
{
    sm_value *d = sm_g_op2(g, SM_OP_Div, g->dy[0], den);
    sm_g_set(g, 0, neg ? sm_g_op1(g, SM_OP_Neg, d) : d);
    return g->st;
}

/* abs: dy * sign(x) (0 at 0, as PyTorch) */
smelt_status sm_grad_abs(sm_grad_ctx *g)
{
    return unary(g, sm_g_op1(g, SM_OP_Sign, g->n->in[0]));
}

/* sqrt: dy / (2 y) */
smelt_status sm_grad_sqrt(sm_grad_ctx *g)
{
    return over(g, mul(g, g->n->out[0], k(g, 2)), 0);
}

/* erf: dy * 2/sqrt(pi) e^(-x^2) */
smelt_status sm_grad_erf(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    sm_value *e = sm_g_op1(g, SM_OP_Exp, mul(g, mul(g, x, x), k(g, -1)));
    return unary(g, mul(g, e, k(g, 1.12837916709551257390)));
}

/* reciprocal: -dy * y^2 */
smelt_status sm_grad_reciprocal(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0];
    return unary(g, sm_g_op1(g, SM_OP_Neg, mul(g, y, y)));
}

/* sin: dy * cos(x) */
smelt_status sm_grad_sin(sm_grad_ctx *g)
{
    return unary(g, sm_g_op1(g, SM_OP_Cos, g->n->in[0]));
}

/* cos: -dy * sin(x) */
smelt_status sm_grad_cos(sm_grad_ctx *g)
{
    return unary(g,
                 sm_g_op1(g, SM_OP_Neg, sm_g_op1(g, SM_OP_Sin, g->n->in[0])));
}

/* tan: dy * (1 + y^2) */
smelt_status sm_grad_tan(sm_grad_ctx *g)
{
    sm_value *y = g->n->out[0];
    return unary(g, sm_g_op2(g, SM_OP_Add, mul(g, y, y), k(g, 1)));
}

/* asin: dy / sqrt(1 - x^2) */
smelt_status sm_grad_asin(sm_grad_ctx *g)
{
    return over(g, sm_g_op1(g, SM_OP_Sqrt, one_x2(g, -1)), 0);
}

/* acos: -dy / sqrt(1 - x^2) */
smelt_status sm_grad_acos(sm_grad_ctx *g)
{
    return over(g, sm_g_op1(g, SM_OP_Sqrt, one_x2(g, -1)), 1);
}

/* atan: dy / (1 + x^2) */
smelt_status sm_grad_atan(sm_grad_ctx *g)
{
    return over(g, one_x2(g, 1), 0);
}

/* sinh: dy * cosh(x) */
smelt_status sm_grad_sinh(sm_grad_ctx *g)
{
    return unary(g, sm_g_op1(g, SM_OP_Cosh, g->n->in[0]));
}

/* cosh: dy * sinh(x) */
smelt_status sm_grad_cosh(sm_grad_ctx *g)
{
    return unary(g, sm_g_op1(g, SM_OP_Sinh, g->n->in[0]));
}

/* asinh: dy / sqrt(x^2 + 1) */
smelt_status sm_grad_asinh(sm_grad_ctx *g)
{
    return over(g, sm_g_op1(g, SM_OP_Sqrt, one_x2(g, 1)), 0);
}

/* acosh: dy / sqrt(x^2 - 1) */
smelt_status sm_grad_acosh(sm_grad_ctx *g)
{
    return over(g, sm_g_op1(g, SM_OP_Sqrt, one_x2(g, 0)), 0);
}

/* atanh: dy / (1 - x^2) */
smelt_status sm_grad_atanh(sm_grad_ctx *g)
{
    return over(g, one_x2(g, -1), 0);
}

/* ---- casts and dropout --------------------------------------------------- */

/* cast: dy cast back to the input's dtype. Only float-to-float casts get
 * here: an integer or boolean result never carries a gradient, and an
 * integer input never asks for one. */
smelt_status sm_grad_cast(sm_grad_ctx *g)
{
    sm_g_set(g, 0, sm_g_cast(g, g->dy[0], g->n->in[0]->type.dtype));
    return g->st;
}

/* castlike: as cast for input 0; the dtype donor (input 1) gets none,
 * its values do not reach the result. */
smelt_status sm_grad_castlike(sm_grad_ctx *g)
{
    return sm_grad_cast(g);
}

/*
 * dropout: the same Dropout applied to dy. The reference kernel draws the
 * keep mask from a stream seeded by `seed` alone, so a second Dropout
 * with the same seed, ratio and training_mode keeps the same elements and
 * scales them by the same 1/(1 - ratio): dx = dy * mask / (1 - ratio),
 * and dx = dy in inference mode or at ratio 0, without the mask output
 * being needed. The mask (boolean) has no gradient.
 * The ratio, when it is a float value that needs one, gets the
 * derivative of the scale (the mask is piecewise constant in it):
 * dratio = sum(dy * y) / (1 - ratio) in training mode, 0 otherwise.
 */
smelt_status sm_grad_dropout(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *dy = g->dy[0], *y = n->out[0];
    sm_value *ratio = n->n_in > 1 ? n->in[1] : NULL;
    sm_value *train = n->n_in > 2 ? n->in[2] : NULL;
    if (!dy)
        return g->st;
    if (g->need[0]) {
        sm_value *in[3] = {dy, ratio, train};
        sm_node *d = sm_g_node(g, SM_OP_Dropout, n->n_in, in, 1);
        sm_attrs at = sm_node_attrs(n);
        if (d && !sm_node_set_int(d, "seed", sm_attrs_int(&at, "seed", 0)))
            return nomem(g);
        sm_g_set(g, 0, sm_g_done(g, d));
    }
    if (ratio && train && g->need[1]) {
        sm_value *s = sm_g_reduce_sum(g, mul(g, dy, y), NULL, 0, 0);
        sm_value *r = sm_g_cast(g, ratio, y->type.dtype);
        s = sm_g_op2(g, SM_OP_Div, s,
                     sm_g_op2(g, SM_OP_Sub, sm_g_scalar_like(g, y, 1), r));
        s = sm_g_op3(g, SM_OP_Where, train, s, sm_g_scalar_like(g, y, 0));
        s = sm_g_cast(g, sm_g_reshape_like(g, s, ratio), ratio->type.dtype);
        sm_g_set(g, 1, s);
    }
    return g->st;
}

/* ---- broadcasting binary and n-ary ops ----------------------------------- */

/*
 * pow(a, b) = a^b, PyTorch's conventions at the edges:
 *   da = dy * b * a^(b-1), 0 where b == 0
 *   db = dy * y * log(a), 0 where a == 0 and b >= 0
 * each summed to its input's shape (and cast to it: the exponent may
 * have a dtype of its own).
 */
smelt_status sm_grad_pow(sm_grad_ctx *g)
{
    sm_value *a = g->n->in[0], *b = g->n->in[1], *y = g->n->out[0];
    sm_value *dy = g->dy[0], *zero = k(g, 0);
    if (g->need[0]) {
        sm_value *bf = sm_g_cast(g, b, a->type.dtype);
        sm_value *p =
            sm_g_op2(g, SM_OP_Pow, a, sm_g_op2(g, SM_OP_Sub, bf, k(g, 1)));
        sm_value *d = mul(g, dy, mul(g, bf, p));
        d = sm_g_op3(g, SM_OP_Where, sm_g_op2(g, SM_OP_Equal, bf, zero), zero,
                     d);
        sm_g_set(g, 0, sm_g_unbroadcast(g, d, a));
    }
    if (g->need[1]) {
        sm_value *d = mul(g, dy, mul(g, y, sm_g_op1(g, SM_OP_Log, a)));
        sm_value *edge = sm_g_op2(
            g, SM_OP_And, sm_g_op2(g, SM_OP_Equal, a, zero),
            sm_g_op2(g, SM_OP_GreaterOrEqual, b, sm_g_scalar_like(g, b, 0)));
        d = sm_g_op3(g, SM_OP_Where, edge, zero, d);
        sm_g_set(g, 1, sm_g_unbroadcast(g, sm_g_cast(g, d, b->type.dtype), b));
    }
    return g->st;
}

/* sum, mean: dy (divided by the count for mean) summed to each input's
 * shape */
static smelt_status sum_mean(sm_grad_ctx *g, int mean)
{
    sm_value *d = g->dy[0];
    if (mean && g->n->n_in > 1)
        d = mul(g, d, sm_g_scalar_like(g, d, 1.0 / g->n->n_in));
    for (int i = 0; i < g->n->n_in; i++)
        if (g->need[i])
            sm_g_set(g, i, sm_g_unbroadcast(g, d, g->n->in[i]));
    return g->st;
}

smelt_status sm_grad_sum(sm_grad_ctx *g)
{
    return sum_mean(g, 0);
}

smelt_status sm_grad_mean(sm_grad_ctx *g)
{
    return sum_mean(g, 1);
}

/*
 * min, max (n inputs): the gradient goes to the inputs equal to the
 * result, split evenly among those tied: dx_i = dy * [x_i == y] / c with
 * c = sum_j [x_j == y], summed to x_i's shape. For two inputs this is
 * PyTorch's torch.maximum / torch.minimum rule (half each on a tie).
 */
static smelt_status min_max(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *y = n->out[0], *dy = g->dy[0];
    if (n->n_in == 1) {
        sm_g_set(g, 0, dy);
        return g->st;
    }
    sm_value *eq_st[8], **eq = eq_st;
    if (n->n_in > 8) {
        eq = sm_calloc((size_t)n->n_in, sizeof *eq);
        if (!eq)
            return nomem(g);
    }
    for (int i = 0; i < n->n_in; i++)
        eq[i] =
            sm_g_cast(g, sm_g_op2(g, SM_OP_Equal, n->in[i], y), y->type.dtype);
    sm_value *cnt = NULL;
    if (g->st == SMELT_OK)
        cnt = sm_g_done(g, sm_g_node(g, SM_OP_Sum, n->n_in, eq, 1));
    sm_value *share = sm_g_op2(g, SM_OP_Div, dy, cnt);
    for (int i = 0; i < n->n_in; i++)
        if (g->need[i])
            sm_g_set(g, i, sm_g_unbroadcast(g, mul(g, share, eq[i]), n->in[i]));
    if (eq != eq_st)
        sm_free(eq);
    return g->st;
}

smelt_status sm_grad_min(sm_grad_ctx *g)
{
    return min_max(g);
}

smelt_status sm_grad_max(sm_grad_ctx *g)
{
    return min_max(g);
}

/* where(c, a, b): da = dy where c, db = dy where not c, each summed to
 * its input's shape; the condition is boolean and gets none */
smelt_status sm_grad_where(sm_grad_ctx *g)
{
    sm_value *c = g->n->in[0], *dy = g->dy[0];
    sm_value *zero = sm_g_scalar_like(g, dy, 0);
    if (g->need[1])
        sm_g_set(g, 1,
                 sm_g_unbroadcast(g, sm_g_op3(g, SM_OP_Where, c, dy, zero),
                                  g->n->in[1]));
    if (g->need[2])
        sm_g_set(g, 2,
                 sm_g_unbroadcast(g, sm_g_op3(g, SM_OP_Where, c, zero, dy),
                                  g->n->in[2]));
    return g->st;
}

/*
 * mod (fmod = 1 on floats: y = a - b trunc(a/b)): da = dy,
 * db = -dy * trunc(a/b), with trunc(a/b) read off the result as
 * round((a - y) / b) so that it is the quotient the kernel took.
 */
smelt_status sm_grad_mod(sm_grad_ctx *g)
{
    sm_value *a = g->n->in[0], *b = g->n->in[1], *dy = g->dy[0];
    if (g->need[0])
        sm_g_set(g, 0, sm_g_unbroadcast(g, dy, a));
    if (g->need[1]) {
        sm_value *q =
            sm_g_op2(g, SM_OP_Div, sm_g_op2(g, SM_OP_Sub, a, g->n->out[0]), b);
        sm_value *d = mul(g, dy, sm_g_op1(g, SM_OP_Round, q));
        sm_g_set(g, 1, sm_g_unbroadcast(g, sm_g_op1(g, SM_OP_Neg, d), b));
    }
    return g->st;
}
