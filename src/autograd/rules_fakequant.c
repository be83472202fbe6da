/*
 * rules_fakequant.c - the gradient rule of FakeQuantize, the fake
 * quantization of quantization-aware training (docs/QUANTIZATION.md,
 * docs/AUTOGRAD.md).
 *
 * y = (clamp(round(x / s) + z, qmin, qmax) - z) * s is piecewise
 * constant in x, so its true derivative is zero almost everywhere; QAT
 * trains through it with the straight-through estimator instead: round
 * is taken to have derivative 1. With u = x / s, q = round(u) + z and
 * qc = clamp(q, qmin, qmax), m = 1 where q lies inside [qmin, qmax]:
 *
 *   dx = dy * m
 *   ds = sum(dy * ((qc - z) - m * u))      (LSQ, Esser et al. 2020)
 *
 * the second being d/ds of (round(x/s) + z - z) * s with round's
 * derivative 1 inside the range, and of (qc - z) * s outside it. The sum
 * runs over every axis but the quantization axis (all of them for a
 * per-tensor scale). LSQ's extra gradient factor 1 / sqrt(n qmax) is not
 * applied: the optimizers Smelt has (Adam, AdamW) normalize the step.
 * The zero point is an integer and gets no gradient.
 */
#include "autograd/build_move.h"
#include "autograd/grad.h"

/* p (a per-axis parameter of n values for an x of rank r quantized along
 * axis a) reshaped to [n, 1, ..., 1] so that it broadcasts onto x. */
static sm_value *along_axis(sm_grad_ctx *g, sm_value *p, int a, int r)
{
    int64_t shape[SMELT_MAX_DIMS];
    int k = 0;
    shape[k++] = -1;
    for (int i = a + 1; i < r; i++)
        shape[k++] = 1;
    return sm_g_reshape(g, p, sm_g_ints(g, shape, k));
}

smelt_status sm_grad_fakequantize(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *s = n->in[1];
    sm_value *z = n->n_in > 2 ? n->in[2] : NULL;
    if (!g->need[0] && !g->need[1])
        return g->st;
    int r = x->type.ndim, rs = s->type.ndim;
    if (r < 0 || rs < 0)
        return sm_g_fail(g, SMELT_ERR_SHAPE,
                         "the rank of '%s' or of its scale is unknown",
                         x->name);
    if (rs > 1)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "a scale of rank %d (blocked quantization)", rs);
    smelt_dtype dt = x->type.dtype;
    smelt_dtype qt = z ? z->type.dtype : SMELT_DTYPE_U8;
    double qmin = qt == SMELT_DTYPE_I8 ? -128 : 0;
    double qmax = qt == SMELT_DTYPE_I8 ? 127 : 255;
    int per_axis = rs == 1 && s->type.dims[0].size != 1;
    int a = -1;
    if (per_axis) {
        int64_t ax = mv_attr_int(n, "axis", 1);
        if (ax < -r || ax >= r)
            return sm_g_fail(g, SMELT_ERR_SHAPE,
                             "axis %lld is out of range for rank %d",
                             (long long)ax, r);
        a = (int)(ax < 0 ? ax + r : ax);
    }
    sm_value *sb = sm_g_cast(g, s, dt);
    sm_value *zb = z ? sm_g_cast(g, z, dt) : sm_g_scalar(g, dt, 0);
    if (per_axis) {
        sb = along_axis(g, sb, a, r);
        if (z)
            zb = along_axis(g, zb, a, r);
    }
    sm_value *u = sm_g_op2(g, SM_OP_Div, x, sb);
    sm_value *q = sm_g_op2(g, SM_OP_Add, sm_g_op1(g, SM_OP_Round, u), zb);
    sm_value *qc = sm_g_op3(g, SM_OP_Clip, q, sm_g_scalar(g, dt, qmin),
                            sm_g_scalar(g, dt, qmax));
    sm_value *m = sm_g_cast(g, sm_g_op2(g, SM_OP_Equal, q, qc), dt);
    sm_value *dy = g->dy[0];
    if (g->need[0])
        sm_g_set(g, 0, sm_g_op2(g, SM_OP_Mul, dy, m));
    if (!g->need[1])
        return g->st;
    sm_value *inner = sm_g_op2(g, SM_OP_Sub, sm_g_op2(g, SM_OP_Sub, qc, zb),
                               sm_g_op2(g, SM_OP_Mul, m, u));
    sm_value *p = sm_g_op2(g, SM_OP_Mul, dy, inner);
    sm_value *ds;
    if (per_axis) {
        int64_t axes[SMELT_MAX_DIMS];
        int k = 0;
        for (int i = 0; i < r; i++)
            if (i != a)
                axes[k++] = i;
        ds = k ? sm_g_reduce_sum(g, p, axes, k, 0) : p;
    } else {
        ds = sm_g_reshape_like(g, sm_g_reduce_sum(g, p, NULL, 0, 0), s);
    }
    sm_g_set(g, 1, sm_g_cast(g, ds, s->type.dtype));
    return g->st;
}
