/*
 * rules_attention.c - the gradient rule of Attention (docs/ATTENTION.md,
 * "The gradient"): one AttentionGrad node, which recomputes the scores
 * tile by tile from Q, K, V and the mask as FlashAttention-2's backward
 * does, instead of a graph that would hold the Tq x Tk probabilities the
 * fused forward never made. The forward saves nothing beyond its inputs
 * and output O (dO . O gives each row's softmax correction term).
 *
 * A float mask that needs a gradient (a learned bias) gets the node's
 * fourth output, the score gradient summed to the mask's shape; a bool
 * mask and the causal rule have none.
 */
#include "autograd/grad.h"

/* Attention(Q, K, V, mask?) {scale, causal} -> O. */
smelt_status sm_grad_attention(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *dy = g->dy[0];
    if (!dy)
        return g->st;
    sm_value *mask = n->n_in > 3 ? n->in[3] : NULL;
    int dmask = mask && g->need[3] && mask->type.dtype != SMELT_DTYPE_BOOL;
    sm_value *in[6] = {n->in[0], n->in[1], n->in[2], n->out[0], dy, mask};
    sm_node *bw =
        sm_g_node(g, SM_OP_AttentionGrad, mask ? 6 : 5, in, dmask ? 4 : 3);
    if (bw) {
        const sm_attr *sc = sm_node_attr(n, "scale");
        const sm_attr *ca = sm_node_attr(n, "causal");
        sm_attrs at = sm_node_attrs(n);
        if (!sc ||
            !sm_node_set_float(bw, "scale", sm_attrs_float(&at, "scale", 1)) ||
            (ca &&
             !sm_node_set_int(bw, "causal", sm_attrs_int(&at, "causal", 0))))
            return sm_g_fail(g, SMELT_ERR_INVALID_ARG,
                             "cannot copy the scale and causal attributes "
                             "onto the gradient node");
    }
    if (!sm_g_done(g, bw))
        return g->st;
    for (int i = 0; i < 3; i++)
        sm_g_set(g, i, bw->out[i]);
    if (dmask)
        sm_g_set(g, 3, bw->out[3]);
    return g->st;
}
