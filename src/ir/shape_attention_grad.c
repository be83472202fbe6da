/*
 * shape_attention_grad.c - shape and dtype inference, and cost, of
 * AttentionGrad, the backward of Attention (docs/ATTENTION.md, "The
 * gradient"):
 *
 *   AttentionGrad(Q, K, V, O, dO, mask?) {scale, causal}
 *       -> dQ (Q's type), dK (K's), dV (V's), dMask? (the mask's)
 *
 * Q, K, V and the mask are checked as Attention checks them (the forward
 * node's own shape function runs on them); O and dO must have the
 * forward output's type. A fourth output is the gradient of a float
 * mask, so it needs one.
 */
#include "ir/shape_util.h"

/* The names of O and dO in messages, by position - 3. */
static const char *const out_name[2] = {"O", "dO"};

/* Fails unless input i (O or dO) has the forward output's type where
 * both are known: Q's dtype, [B, Hq, Tq, Dv]. */
static smelt_status check_like_output(sm_shape_ctx *s, int i, const sm_type *y)
{
    const sm_type *t;
    SM_TRY(sm_shape_need(s, i, &t));
    int bad = t->dtype != SMELT_DTYPE_UNDEFINED &&
              y->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != y->dtype;
    bad |= t->ndim >= 0 && y->ndim >= 0 && t->ndim != y->ndim;
    for (int d = 0; !bad && t->ndim >= 0 && d < t->ndim && d < y->ndim; d++)
        bad = t->dims[d].size >= 0 && y->dims[d].size >= 0 &&
              t->dims[d].size != y->dims[d].size;
    if (!bad)
        return SMELT_OK;
    char got[160], want[160];
    sm_type_str(t, got, sizeof got);
    sm_type_str(y, want, sizeof want);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s is %s; expected the forward output's type %s",
                  s->op->name, out_name[i - 3], got, want);
}

/*
 * AttentionGrad(Q, K, V, O, dO, mask?): runs Attention's shape function
 * on (Q, K, V, mask) with the same attributes, which checks them and
 * gives the type O and dO must have; the gradients take their inputs'
 * types.
 */
smelt_status sm_shape_attention_grad(sm_shape_ctx *s)
{
    const sm_type *q, *k, *v;
    SM_TRY(sm_shape_need(s, 0, &q));
    SM_TRY(sm_shape_need(s, 1, &k));
    SM_TRY(sm_shape_need(s, 2, &v));
    const sm_type *m = s->n_in > 5 ? sm_shape_in(s, 5) : NULL;
    sm_operand fin[4] = {s->in[0], s->in[1], s->in[2], {0}};
    if (m)
        fin[3] = s->in[5];
    sm_type y;
    sm_shape_ctx fs = *s;
    fs.in = fin;
    fs.n_in = m ? 4 : 3;
    fs.n_out = 1;
    fs.out = &y;
    SM_TRY(sm_shape_attention(&fs));
    SM_TRY(check_like_output(s, 3, &y));
    SM_TRY(check_like_output(s, 4, &y));
    s->out[0] = *q;
    s->out[1] = *k;
    s->out[2] = *v;
    s->out[0].dtype = s->out[1].dtype = s->out[2].dtype = y.dtype;
    if (s->n_out > 3) {
        if (!m || (m->dtype != SMELT_DTYPE_UNDEFINED && m->dtype != y.dtype))
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: a fourth output (the mask's gradient) needs "
                          "a float mask of Q's dtype",
                          s->op->name);
        s->out[3] = *m;
    }
    return SMELT_OK;
}

/*
 * Per score, recomputed twice (once for the row statistics, once for
 * the gradients): the Q.K dot products (2D each time) and the softmax
 * (about 7), then dO.V (2Dv), dS (3), dV += P dO (2Dv), dQ += dS K and
 * dK += dS Q (4D). Bytes: every input once, the gradients written once.
 */
void sm_cost_attention_grad(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *q = sm_shape_in(s, 0), *k = sm_shape_in(s, 1);
    const sm_type *v = sm_shape_in(s, 2);
    double d = q ? sm_type_factor(q, 3) : 1, dv = v ? sm_type_factor(v, 3) : 1;
    double scores =
        (q ? sm_type_factor(q, 0) * sm_type_factor(q, 1) * sm_type_factor(q, 2)
           : 1) *
        (k ? sm_type_factor(k, 2) : 1);
    sm_cost_io(s, c, scores * (8 * d + 4 * dv + 17));
}
