/*
 * attention_grad.c - the reference kernel of AttentionGrad, Attention's
 * backward (docs/ATTENTION.md, "The gradient"). For each query row, in
 * double:
 *
 *   s_j  = scale <Q_i, K_j> + mask_ij  (-inf where hidden), as the forward
 *   P_j  = softmax_j(s)                      recomputed, never saved
 *   dP_j = <dO_i, V_j>
 *   Di   = sum_j P_j dP_j                    (= <dO_i, O_i>)
 *   dS_j = P_j (dP_j - Di)
 *   dQ_i = scale sum_j dS_j K_j,  dK_j += scale dS_j Q_i,
 *   dV_j += P_j dO_i,             dMask_ij += dS_j (summed where broadcast)
 *
 * Grouped heads add every query head's dK and dV into its kv head's. A
 * fully masked row (every s_j -inf: its forward output is NaN) has no
 * key it depends on: its dQ row is 0 and it adds nothing elsewhere. The
 * scratch is one row of scores and dK, dV and dMask accumulators of their
 * outputs' sizes: linear in the lengths, never the Tq x Tk matrix. The
 * oracle computes Di from the recomputed P rather than from the O input,
 * so it does not depend on the forward kernel's rounding.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/ref_util.h"

/* One call's operands and accumulators. */
typedef struct grad_call {
    sm_ref_attn_size m;
    double scale;
    int causal;
    const sm_tensor *q, *k, *v, *dy, *mask;
    int64_t mst[4];
    sm_tensor *dq;
    double *s, *dp, *dqr;   /* one row: Tk scores, Tk dP, D of dQ */
    double *dk, *dv, *dmsk; /* whole outputs (dmsk NULL: not asked) */
} grad_call;

/* Query row i of head h in batch b: recomputes its scores and softmax,
 * then adds its part to every gradient. */
static void grad_row(grad_call *c, int64_t b, int64_t h, int64_t i)
{
    const sm_ref_attn_size *m = &c->m;
    smelt_dtype dt = c->q->dtype;
    int64_t kh = h / (m->hq / m->hkv);
    int64_t qoff = ((b * m->hq + h) * m->tq + i) * m->d;
    int64_t ooff = ((b * m->hq + h) * m->tq + i) * m->dv;
    int64_t kbase = (b * m->hkv + kh) * m->tk;
    int64_t moff = b * c->mst[0] + h * c->mst[1] + i * c->mst[2];
    int64_t last = i + (m->tk - m->tq);
    double mx = -INFINITY, sum = 0, di = 0;
    for (int64_t j = 0; j < m->tk; j++) {
        double sj = 0;
        for (int64_t t = 0; t < m->d; t++)
            sj += sm_load_f64(dt, c->q->data, qoff + t) *
                  sm_load_f64(dt, c->k->data, (kbase + j) * m->d + t);
        sj *= c->scale;
        if (c->mask) {
            double mv = sm_load_f64(c->mask->dtype, c->mask->data,
                                    moff + j * c->mst[3]);
            if (c->mask->dtype == SMELT_DTYPE_BOOL)
                sj = mv != 0 ? sj : -INFINITY;
            else
                sj += mv;
        }
        if (c->causal && j > last)
            sj = -INFINITY;
        c->s[j] = sj;
        if (sj > mx)
            mx = sj;
    }
    memset(c->dqr, 0, (size_t)m->d * sizeof *c->dqr);
    if (mx == -INFINITY)
        return; /* fully masked: no key to differentiate through */
    for (int64_t j = 0; j < m->tk; j++) {
        c->s[j] = exp(c->s[j] - mx);
        sum += c->s[j];
    }
    for (int64_t j = 0; j < m->tk; j++) {
        double dp = 0;
        c->s[j] /= sum;
        for (int64_t t = 0; t < m->dv; t++)
            dp += sm_load_f64(dt, c->dy->data, ooff + t) *
                  sm_load_f64(dt, c->v->data, (kbase + j) * m->dv + t);
        c->dp[j] = dp;
        di += c->s[j] * dp;
    }
    for (int64_t j = 0; j < m->tk; j++) {
        double p = c->s[j], ds = p * (c->dp[j] - di);
        if (p == 0)
            continue; /* hidden, or underflowed: adds nothing */
        for (int64_t t = 0; t < m->dv; t++)
            c->dv[(kbase + j) * m->dv + t] +=
                p * sm_load_f64(dt, c->dy->data, ooff + t);
        for (int64_t t = 0; t < m->d; t++) {
            c->dqr[t] += c->scale * ds *
                         sm_load_f64(dt, c->k->data, (kbase + j) * m->d + t);
            c->dk[(kbase + j) * m->d + t] +=
                c->scale * ds * sm_load_f64(dt, c->q->data, qoff + t);
        }
        if (c->dmsk)
            c->dmsk[moff + j * c->mst[3]] += ds;
    }
}

/* Stores n doubles into t from element 0. */
static void store_all(sm_tensor *t, const double *x, int64_t n)
{
    for (int64_t e = 0; e < n; e++)
        sm_store_f64(t->dtype, t->data, e, x[e]);
}

/* Checks the outputs against the inputs: dQ, dK, dV of Q, K and V's
 * shapes and dtype, dMask of the mask's. */
static smelt_status check_outputs(const sm_kargs *a, const sm_tensor *mask)
{
    for (int o = 0; o < 3; o++) {
        const sm_tensor *x = a->in[o], *y = a->out[o];
        int ok = y->ndim == x->ndim && y->dtype == x->dtype;
        for (int d = 0; ok && d < x->ndim; d++)
            ok = y->dims[d] == x->dims[d];
        if (!ok)
            return sm_bad_output(a, "dQ, dK and dV of Q, K and V's shapes");
    }
    if (a->n_out > 3) {
        const sm_tensor *y = a->out[3];
        int ok = mask && mask->dtype == a->in[0]->dtype &&
                 y->ndim == mask->ndim && y->dtype == mask->dtype;
        for (int d = 0; ok && d < mask->ndim; d++)
            ok = y->dims[d] == mask->dims[d];
        if (!ok)
            return sm_bad_output(a, "dMask of a float mask's shape");
    }
    return SMELT_OK;
}

/* AttentionGrad(Q, K, V, O, dO, mask?) {scale, causal} -> dQ, dK, dV,
 * dMask?. */
smelt_status sm_ref_attention_grad(const sm_kargs *a)
{
    grad_call c = {0};
    SM_TRY(sm_ref_attn_dims(a, a->in[0], a->in[1], a->in[2], &c.m));
    c.q = a->in[0];
    c.k = a->in[1];
    c.v = a->in[2];
    c.dy = a->in[4];
    c.mask = a->n_in > 5 ? a->in[5] : NULL;
    if (!sm_ref_attn_is_output(a->in[3], &c.m, c.q->dtype) ||
        !sm_ref_attn_is_output(a->in[4], &c.m, c.q->dtype))
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: O and dO must be [batch, q_heads, q_len, v_dim] "
                      "of Q's dtype",
                      a->op_name);
    if (c.mask)
        SM_TRY(sm_ref_attn_mask_strides(a, c.mask, &c.m, c.mst));
    SM_TRY(check_outputs(a, c.mask));
    c.dq = a->out[0];
    c.scale = sm_attrs_float(&a->attrs, "scale", 1);
    c.causal = sm_attrs_int(&a->attrs, "causal", 0) != 0;
    const sm_ref_attn_size *m = &c.m;
    int64_t nk = a->out[1]->numel, nv = a->out[2]->numel;
    int64_t nm = a->n_out > 3 ? a->out[3]->numel : 0;
    size_t n = (size_t)(2 * m->tk + m->d + nk + nv + nm);
    double *buf = sm_malloc((n ? n : 1) * sizeof *buf);
    if (!buf)
        return sm_err_nomem(a->ctx);
    memset(buf, 0, (n ? n : 1) * sizeof *buf);
    c.s = buf;
    c.dp = c.s + m->tk;
    c.dqr = c.dp + m->tk;
    c.dk = c.dqr + m->d;
    c.dv = c.dk + nk;
    c.dmsk = a->n_out > 3 ? c.dv + nv : NULL;
    for (int64_t b = 0; b < m->b; b++)
        for (int64_t h = 0; h < m->hq; h++)
            for (int64_t i = 0; i < m->tq; i++) {
                grad_row(&c, b, h, i);
                int64_t qoff = ((b * m->hq + h) * m->tq + i) * m->d;
                for (int64_t t = 0; t < m->d; t++)
                    sm_store_f64(c.dq->dtype, c.dq->data, qoff + t, c.dqr[t]);
            }
    store_all(a->out[1], c.dk, nk);
    store_all(a->out[2], c.dv, nv);
    if (c.dmsk)
        store_all(a->out[3], c.dmsk, nm);
    sm_free(buf);
    return SMELT_OK;
}
