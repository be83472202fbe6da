/*
 * rules_fused.c - gradient rules of the ops the fusion passes make from
 * a contraction and its epilogue: FusedConv and FusedGemm are split back
 * apart. The activation's gradient (rules_act.c) turns dY into the
 * gradient dZ of the epilogue's input Z = contraction + bias + residual;
 * the residual's gradient is dZ summed to its shape, and the
 * contraction's inputs get the Conv, Gemm or MatMul gradients of dZ.
 *
 * So a graph differentiates the same before or after fusion; the
 * backward graph itself holds only unfused ops, which the passes then
 * fuse as they do any graph.
 */
#include "autograd/rules_nn.h"

/* The residual input r (slot 3) gets dz summed to its shape. */
static void residual_grad(sm_grad_ctx *g, sm_value *dz)
{
    if (g->n->n_in > 3 && g->n->in[3] && g->need[3])
        sm_g_set(g, 3, sm_g_unbroadcast(g, dz, g->n->in[3]));
}

/* FusedConv(X, W, B?, R?) = act(Conv(X, W, B) + R). */
smelt_status sm_grad_fusedconv(sm_grad_ctx *g)
{
    sm_value *dz = sm_gn_node_act_grad(g);
    if (!dz)
        return g->st;
    residual_grad(g, dz);
    return sm_gn_conv_grads(g, dz);
}

/* FusedGemm(A, B, C?, R?) = act(alpha op(A) op(B) + beta C + R): with a
 * transposition the product is Gemm's (2-D), else MatMul's (batched,
 * broadcast), whose rule then runs on alpha dZ. */
smelt_status sm_grad_fusedgemm(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *dz = sm_gn_node_act_grad(g);
    if (!dz)
        return g->st;
    residual_grad(g, dz);
    sm_attrs at = sm_node_attrs(n);
    if (sm_attrs_int(&at, "transA", 0) || sm_attrs_int(&at, "transB", 0))
        return sm_gn_gemm_grads(g, dz);
    double alpha = sm_attrs_float(&at, "alpha", 1);
    double beta = sm_attrs_float(&at, "beta", 1);
    if (n->n_in > 2 && n->in[2] && g->need[2]) {
        sm_value *d = sm_g_unbroadcast(g, dz, n->in[2]);
        if (beta != 1)
            d = sm_g_op2(g, SM_OP_Mul, d, sm_g_scalar_like(g, dz, beta));
        sm_g_set(g, 2, d);
    }
    if (!g->need[0] && !g->need[1])
        return g->st;
    sm_value *scaled[1] = {
        alpha == 1
            ? dz
            : sm_g_op2(g, SM_OP_Mul, dz, sm_g_scalar_like(g, dz, alpha))};
    if (!scaled[0])
        return g->st;
    sm_value *const *keep = g->dy;
    g->dy = scaled;
    sm_grad_matmul(g);
    g->dy = keep;
    return g->st;
}
