/*
 * rules_act.c - gradients of the activations a fused epilogue applies
 * (core/act.def's grad column), for the rules of FusedConv and FusedGemm.
 *
 * Each builds dz = act'(z) * dy from the fused node's output y where y
 * tells the derivative (the piecewise-linear ones by where y lies,
 * sigmoid and tanh by y itself); silu and the gelus need z, which
 * sm_gn_preact rebuilds as the same fused node without its activation.
 */
#include <math.h>

#include "autograd/rules_nn.h"

/* Shorthands over the sm_g_* builders. */
static sm_value *mul(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Mul, a, b);
}

static sm_value *add(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Add, a, b);
}

static sm_value *k(sm_grad_ctx *g, const sm_value *like, double v)
{
    return sm_g_scalar_like(g, like, v);
}

/* dy where y lies strictly between lo and hi (either may be infinite,
 * then not tested), 0 elsewhere. */
static sm_value *pass_between(sm_grad_ctx *g, sm_value *y, sm_value *dy,
                              double lo, double hi)
{
    sm_value *m = NULL;
    if (lo > -INFINITY)
        m = sm_g_op2(g, SM_OP_Greater, y, k(g, y, lo));
    if (hi < INFINITY) {
        sm_value *u = sm_g_op2(g, SM_OP_Less, y, k(g, y, hi));
        m = m ? sm_g_op2(g, SM_OP_And, m, u) : u;
    }
    return m ? sm_g_op3(g, SM_OP_Where, m, dy, k(g, dy, 0)) : dy;
}

sm_value *sm_gn_preact(sm_grad_ctx *g)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_node *m = sm_rw_clone_node(g->rw, g->b, NULL, g->n, NULL, 0, "_preact");
    if (!m || !sm_node_set_string(m, "activation", "none")) {
        sm_g_fail(g, SMELT_ERR_NOMEM, "no memory to rebuild the node");
        return NULL;
    }
    return sm_g_done(g, m);
}

sm_value *sm_act_grad_none(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    (void)g, (void)a, (void)y;
    return dy;
}

sm_value *sm_act_grad_relu(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    (void)a;
    return pass_between(g, y, dy, 0, INFINITY);
}

sm_value *sm_act_grad_relu6(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                            sm_value *dy)
{
    (void)a;
    return pass_between(g, y, dy, 0, 6);
}

sm_value *sm_act_grad_clip(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    return pass_between(g, y, dy, a->alpha, a->beta);
}

/* sigmoid' = y (1 - y) */
sm_value *sm_act_grad_sigmoid(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                              sm_value *dy)
{
    (void)a;
    return mul(g, dy, mul(g, y, sm_g_op2(g, SM_OP_Sub, k(g, y, 1), y)));
}

/* tanh' = 1 - y^2 */
sm_value *sm_act_grad_tanh(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    (void)a;
    return mul(g, dy, sm_g_op2(g, SM_OP_Sub, k(g, y, 1), mul(g, y, y)));
}

/* silu(z) = z s(z): silu' = s (1 + z (1 - s)) */
sm_value *sm_act_grad_silu(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    (void)a, (void)y;
    sm_value *z = sm_gn_preact(g);
    sm_value *s = sm_g_op1(g, SM_OP_Sigmoid, z);
    sm_value *t = mul(g, z, sm_g_op2(g, SM_OP_Sub, k(g, z, 1), s));
    return mul(g, dy, mul(g, s, add(g, k(g, z, 1), t)));
}

/* gelu(z) = z Phi(z): gelu' = Phi(z) + z phi(z), Phi the normal CDF
 * 0.5 (1 + erf(z / sqrt 2)), phi its density exp(-z^2 / 2) / sqrt(2 pi) */
sm_value *sm_act_grad_gelu(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    (void)a, (void)y;
    sm_value *z = sm_gn_preact(g);
    sm_value *cdf =
        mul(g, k(g, z, 0.5),
            add(g, k(g, z, 1),
                sm_g_op1(g, SM_OP_Erf,
                         mul(g, z, k(g, z, 0.70710678118654752440)))));
    sm_value *pdf =
        mul(g, k(g, z, 0.39894228040143267794), /* 1/sqrt(2pi) */
            sm_g_op1(g, SM_OP_Exp, mul(g, mul(g, z, z), k(g, z, -0.5))));
    return mul(g, dy, add(g, cdf, mul(g, z, pdf)));
}

/* gelu_tanh(z) = 0.5 z (1 + t), t = tanh(c (z + 0.044715 z^3)):
 * derivative 0.5 (1 + t) + 0.5 z (1 - t^2) c (1 + 3 * 0.044715 z^2) */
sm_value *sm_act_grad_gelu_tanh(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                                sm_value *dy)
{
    (void)a, (void)y;
    const double c = 0.79788456080286535588; /* sqrt(2 / pi) */
    sm_value *z = sm_gn_preact(g);
    sm_value *z2 = mul(g, z, z);
    sm_value *u =
        mul(g, mul(g, z, add(g, k(g, z, 1), mul(g, z2, k(g, z, 0.044715)))),
            k(g, z, c));
    sm_value *t = sm_g_op1(g, SM_OP_Tanh, u);
    sm_value *half1 = mul(g, k(g, z, 0.5), add(g, k(g, z, 1), t));
    sm_value *du = mul(g, k(g, z, c),
                       add(g, k(g, z, 1), mul(g, z2, k(g, z, 3 * 0.044715))));
    sm_value *sech2 = sm_g_op2(g, SM_OP_Sub, k(g, z, 1), mul(g, t, t));
    sm_value *half2 = mul(g, mul(g, k(g, z, 0.5), z), mul(g, sech2, du));
    return mul(g, dy, add(g, half1, half2));
}

/* leakyrelu' = 1 where z > 0, the slope elsewhere; with a positive slope
 * y > 0 exactly where z > 0, otherwise z is rebuilt. */
sm_value *sm_act_grad_leakyrelu(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                                sm_value *dy)
{
    sm_value *z = a->alpha > 0 ? y : sm_gn_preact(g);
    sm_value *pos = sm_g_op2(g, SM_OP_Greater, z, k(g, z, 0));
    return sm_g_op3(g, SM_OP_Where, pos, dy, mul(g, dy, k(g, dy, a->alpha)));
}

sm_value *sm_gn_act_grad(sm_grad_ctx *g, const sm_act *a, sm_value *dy)
{
    static const sm_act_grad_fn rows[] = {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex) grad,
#include "core/act.def"
#undef ACT
    };
    if ((unsigned)a->kind >= SM_ACT_COUNT) {
        sm_g_fail(g, SMELT_ERR_INVALID_ARG, "unknown activation");
        return NULL;
    }
    return rows[a->kind](g, a, g->n->out[0], dy);
}
