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

/* gelu and its tanh form: the Gelu op's derivative (rules_activation.c)
 * at the rebuilt z. */
sm_value *sm_act_grad_gelu(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                           sm_value *dy)
{
    (void)a, (void)y;
    return mul(g, dy, sm_g_gelu_deriv(g, sm_gn_preact(g), 0));
}

sm_value *sm_act_grad_gelu_tanh(sm_grad_ctx *g, const sm_act *a, sm_value *y,
                                sm_value *dy)
{
    (void)a, (void)y;
    return mul(g, dy, sm_g_gelu_deriv(g, sm_gn_preact(g), 1));
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

sm_value *sm_gn_node_act_grad(sm_grad_ctx *g)
{
    sm_act a;
    sm_attrs at = sm_node_attrs(g->n);
    smelt_status st =
        sm_act_read(g->ctx, sm_op_info_get(g->n->op)->name, &at, &a);
    if (st != SMELT_OK) {
        if (g->st == SMELT_OK)
            g->st = st;
        return NULL;
    }
    return sm_gn_act_grad(g, &a, g->dy[0]);
}
