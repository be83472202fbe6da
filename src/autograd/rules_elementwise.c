/*
 * rules_elementwise.c - gradient rules of the elementwise ops: unary
 * math and activations, and the broadcasting binary ops, whose input
 * gradients are summed back down to each input's shape.
 */
#include "autograd/grad.h"

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
