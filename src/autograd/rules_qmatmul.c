/*
 * rules_qmatmul.c - the gradient rule of FusedQMatMul (ops.def, made by
 * the fuse_qmatmul pass; docs/QUANTIZATION.md, docs/AUTOGRAD.md):
 *
 *   y = act(z),  z = f32(acc) * f32(sa * sb_j) + bias_j + residual_ij,
 *   acc = sum_k (qa_ik - za) (B_kj - zb_j)
 *
 * with qa the integer A, or an f32 A quantized inside (its sa and za then
 * computed from A's range). The activation's gradient gives dz as for
 * FusedGemm (rules_act.c). Then, exactly (z is linear in each):
 *
 *   dbias = dz summed to bias's shape,  dresidual = dz
 *   dsb   = (dz * f32(acc) * sa) summed to sb's shape
 *   dsa   = sum(dz * f32(acc) * sb_j)          (an integer A's given scale)
 *
 * the products f32(acc) * sa and f32(acc) * sb_j being FusedQMatMul
 * itself with the other scale 1. An f32 A gets the straight-through
 * gradient: its quantization is piecewise constant (derivative zero
 * almost everywhere), so A is taken as equal to its dequantized value
 * and the product as A times the dequantized weights, as quantization-
 * aware training does (rules_fakequant.c):
 *
 *   dA = dz (f32(B - zb) * sb)^T
 *
 * (the dequantization of A's own range, sa, is left out: it is the
 * DynamicQuantizeLinear's, whose data-derived parameters get no gradient
 * in the unfused chain either). B and the zero points are integers.
 */
#include "autograd/rules_nn.h"
#include "core/dtype.h"

/* Input slots. */
enum { QI_A, QI_B, QI_SB, QI_ZB, QI_BIAS, QI_SA, QI_ZA, QI_RES };

/* Input i of n, NULL when absent. */
static sm_value *q_in(const sm_node *n, int i)
{
    return i < n->n_in ? n->in[i] : NULL;
}

/* FusedQMatMul of g->n's operands, no bias nor activation, with B's
 * scale sb and A's scale sa instead of the node's (NULL: the node's):
 * f32(acc) * f32(sa * sb_j). */
static sm_value *rescaled(sm_grad_ctx *g, sm_value *sb, sm_value *sa)
{
    const sm_node *n = g->n;
    sm_value *in[7] = {q_in(n, QI_A),  q_in(n, QI_B), sb ? sb : n->in[QI_SB],
                       q_in(n, QI_ZB), NULL,          sa ? sa : q_in(n, QI_SA),
                       q_in(n, QI_ZA)};
    int k = 7;
    while (k > 3 && !in[k - 1])
        k--;
    return sm_g_done(g, sm_g_node(g, SM_OP_FusedQMatMul, k, in, 1));
}

smelt_status sm_grad_fusedqmatmul(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *a = n->in[QI_A], *b = n->in[QI_B], *sb = n->in[QI_SB];
    sm_value *zb = q_in(n, QI_ZB), *bias = q_in(n, QI_BIAS);
    sm_value *sa = q_in(n, QI_SA), *res = q_in(n, QI_RES);
    int want_res = res && g->need[QI_RES];
    int want_a = g->need[QI_A] && sm_dtype_is_float(a->type.dtype);
    int want_sb = g->need[QI_SB];
    int want_bias = bias && g->need[QI_BIAS];
    int want_sa = sa && g->need[QI_SA];
    if (!want_a && !want_sb && !want_bias && !want_sa && !want_res)
        return g->st;
    sm_value *dz = sm_gn_node_act_grad(g);
    if (!dz)
        return g->st;
    if (want_bias)
        sm_g_set(g, QI_BIAS, sm_g_unbroadcast(g, dz, bias));
    if (want_res)
        sm_g_set(g, QI_RES, sm_g_unbroadcast(g, dz, res));
    if (want_sb) {
        sm_value *p = rescaled(g, sm_g_scalar(g, SMELT_DTYPE_F32, 1), NULL);
        sm_g_set(g, QI_SB,
                 sm_g_unbroadcast(g, sm_g_op2(g, SM_OP_Mul, dz, p), sb));
    }
    if (want_sa) {
        sm_value *p = rescaled(g, NULL, sm_g_scalar(g, SMELT_DTYPE_F32, 1));
        sm_value *s =
            sm_g_reduce_sum(g, sm_g_op2(g, SM_OP_Mul, dz, p), NULL, 0, 0);
        sm_g_set(g, QI_SA, sm_g_reshape_like(g, s, sa));
    }
    if (want_a) {
        sm_value *w = sm_g_cast(g, b, SMELT_DTYPE_F32);
        if (zb)
            w = sm_g_op2(g, SM_OP_Sub, w, sm_g_cast(g, zb, SMELT_DTYPE_F32));
        w = sm_g_op2(g, SM_OP_Mul, w, sb);
        sm_value *wt = sm_g_op1(g, SM_OP_Transpose, w);
        sm_g_set(g, QI_A, sm_g_op2(g, SM_OP_MatMul, dz, wt));
    }
    return g->st;
}
