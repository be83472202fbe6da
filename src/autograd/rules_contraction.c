/*
 * rules_contraction.c - gradient rules of the contractions. MatMul's
 * gradients are MatMuls by the transposed other operand, summed over the
 * batch dimensions that broadcasting added.
 */
#include "autograd/grad.h"

/* x with its last two axes swapped. */
static sm_value *swap_last(sm_grad_ctx *g, sm_value *x)
{
    if (!x)
        return NULL;
    int r = x->type.ndim;
    int64_t perm[SMELT_MAX_DIMS];
    for (int i = 0; i < r; i++)
        perm[i] = i;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    sm_node *n = sm_g_node(g, SM_OP_Transpose, 1, &x, 1);
    if (n && !sm_node_set_ints(n, "perm", perm, r) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return sm_g_done(g, n);
}

/* x with a trailing (end) or leading axis of 1 added. */
static sm_value *unsqueeze(sm_grad_ctx *g, sm_value *x, int end)
{
    int64_t axis = end ? -1 : 0;
    return sm_g_op2(g, SM_OP_Unsqueeze, x, sm_g_ints(g, &axis, 1));
}

/* matmul: dA = dY B^T, dB = A^T dY, with 1-D operands made 2-D first
 * (as numpy does) and the result summed down to each operand's shape. */
smelt_status sm_grad_matmul(sm_grad_ctx *g)
{
    sm_value *a = g->n->in[0], *b = g->n->in[1], *dy = g->dy[0];
    if (a->type.ndim < 1 || b->type.ndim < 1)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "operand ranks are unknown");
    sm_value *a2 = a->type.ndim == 1 ? unsqueeze(g, a, 0) : a;
    sm_value *b2 = b->type.ndim == 1 ? unsqueeze(g, b, 1) : b;
    sm_value *dy2 = dy;
    if (a->type.ndim == 1)
        dy2 = sm_g_op2(
            g, SM_OP_Unsqueeze, dy2,
            sm_g_ints(g,
                      (int64_t[]){dy->type.ndim - (b->type.ndim == 1 ? 0 : 1)},
                      1));
    if (b->type.ndim == 1)
        dy2 = unsqueeze(g, dy2, 1);
    if (g->need[0]) {
        sm_value *d = sm_g_op2(g, SM_OP_MatMul, dy2, swap_last(g, b2));
        d = sm_g_unbroadcast(g, d, a2);
        sm_g_set(g, 0, a2 != a ? sm_g_reshape_like(g, d, a) : d);
    }
    if (g->need[1]) {
        sm_value *d = sm_g_op2(g, SM_OP_MatMul, swap_last(g, a2), dy2);
        d = sm_g_unbroadcast(g, d, b2);
        sm_g_set(g, 1, b2 != b ? sm_g_reshape_like(g, d, b) : d);
    }
    return g->st;
}
