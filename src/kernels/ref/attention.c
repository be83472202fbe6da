/*
 * attention.c - the reference kernel of Attention (docs/ATTENTION.md):
 *
 *   O[b,h,i,:] = sum_j softmax_j(s_ij) V[b,h',j,:],  h' = h / (Hq / Hkv)
 *   s_ij = scale * <Q[b,h,i,:], K[b,h',j,:]> + mask[b,h,i,j]   (float)
 *   s_ij = -inf where a bool mask is false or causal hides key j
 *
 * One query row at a time: its Tk scores, then the softmax (ONNX's:
 * the row maximum subtracted), then the weighted sum of V's rows, all in
 * double. The scratch is one row of scores and one output row, O(Tk +
 * Dv); the Tq x Tk matrix the unfused graph materializes never exists,
 * so the oracle runs the sequence lengths the fusion is for.
 *
 * A row whose every score is -inf (fully masked) gives NaN in each of
 * its outputs, as the unfused Softmax does; an empty key range (Tk = 0)
 * gives zeros, as MatMul over an empty inner dimension does.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/ref_util.h"

smelt_status sm_ref_attn_dims(const sm_kargs *a, const sm_tensor *q,
                              const sm_tensor *k, const sm_tensor *v,
                              sm_ref_attn_size *m)
{
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: Q, K and V must be 4-D, got ranks %d, %d and %d",
                      a->op_name, q->ndim, k->ndim, v->ndim);
    *m = (sm_ref_attn_size){q->dims[0], q->dims[1], k->dims[1], q->dims[2],
                            k->dims[2], q->dims[3], v->dims[3]};
    int ok = k->dims[0] == m->b && v->dims[0] == m->b && k->dims[3] == m->d &&
             v->dims[1] == m->hkv && v->dims[2] == m->tk &&
             (m->hkv > 0 ? m->hq % m->hkv == 0 : m->hq == 0);
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: Q [%lld,%lld,%lld,%lld], K [%lld,%lld,%lld,%lld] "
                      "and V [%lld,%lld,%lld,%lld] do not fit together",
                      a->op_name, (long long)q->dims[0], (long long)q->dims[1],
                      (long long)q->dims[2], (long long)q->dims[3],
                      (long long)k->dims[0], (long long)k->dims[1],
                      (long long)k->dims[2], (long long)k->dims[3],
                      (long long)v->dims[0], (long long)v->dims[1],
                      (long long)v->dims[2], (long long)v->dims[3]);
    if (!sm_dtype_is_float(q->dtype) || k->dtype != q->dtype ||
        v->dtype != q->dtype)
        return sm_err(a->ctx, SMELT_ERR_TYPE,
                      "%s: Q, K and V must share one float dtype", a->op_name);
    return SMELT_OK;
}

int sm_ref_attn_is_output(const sm_tensor *t, const sm_ref_attn_size *m,
                          smelt_dtype dt)
{
    return t->ndim == 4 && t->dims[0] == m->b && t->dims[1] == m->hq &&
           t->dims[2] == m->tq && t->dims[3] == m->dv && t->dtype == dt;
}

smelt_status sm_ref_attn_mask_strides(const sm_kargs *a, const sm_tensor *mask,
                                      const sm_ref_attn_size *m, int64_t st[4])
{
    const int64_t want[4] = {m->b, m->hq, m->tq, m->tk};
    int ok = mask->ndim <= 4;
    int64_t step = 1;
    for (int d = 3; d >= 0; d--)
        st[d] = 0;
    for (int d = mask->ndim - 1; ok && d >= 0; d--) {
        int ax = d + 4 - mask->ndim;
        ok = mask->dims[d] == 1 || mask->dims[d] == want[ax];
        st[ax] = mask->dims[d] == 1 ? 0 : step;
        step *= mask->dims[d];
    }
    if (!ok ||
        (mask->dtype != SMELT_DTYPE_BOOL && mask->dtype != a->in[0]->dtype))
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: the mask must be bool or Q's dtype and broadcast "
                      "onto the scores [%lld,%lld,%lld,%lld]",
                      a->op_name, (long long)want[0], (long long)want[1],
                      (long long)want[2], (long long)want[3]);
    return SMELT_OK;
}

/* What one query row needs besides the dims. */
typedef struct attn_call {
    sm_ref_attn_size m;
    double scale;
    int causal;
    const sm_tensor *q, *k, *v, *mask;
    int64_t mst[4];
    sm_tensor *y;
    double *s, *acc; /* scratch: Tk scores, Dv output sums */
} attn_call;

/* Query row i of head h in batch b: scores, softmax, weighted sum of V. */
static void attend_row(attn_call *c, int64_t b, int64_t h, int64_t i)
{
    const sm_ref_attn_size *m = &c->m;
    int64_t kh = h / (m->hq / m->hkv);
    int64_t qoff = ((b * m->hq + h) * m->tq + i) * m->d;
    int64_t kbase = (b * m->hkv + kh) * m->tk;
    int64_t moff = b * c->mst[0] + h * c->mst[1] + i * c->mst[2];
    int64_t last = i + (m->tk - m->tq); /* the last key causal shows */
    smelt_dtype dt = c->q->dtype;
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < m->tk; j++) {
        double sj = 0;
        for (int64_t t = 0; t < m->d; t++)
            sj += sm_load_f64(dt, c->q->data, qoff + t) *
                  sm_load_f64(dt, c->k->data, (kbase + j) * m->d + t);
        sj *= c->scale;
        if (c->mask) {
            int64_t mo = moff + j * c->mst[3];
            double mv = sm_load_f64(c->mask->dtype, c->mask->data, mo);
            if (c->mask->dtype == SMELT_DTYPE_BOOL)
                sj = mv != 0 ? sj : -INFINITY;
            else
                sj += mv;
        }
        if (c->causal && j > last)
            sj = -INFINITY;
        c->s[j] = sj;
        if (sj > mx || isnan(sj))
            mx = sj;
    }
    memset(c->acc, 0, (size_t)m->dv * sizeof *c->acc);
    for (int64_t j = 0; j < m->tk; j++) {
        double p = exp(c->s[j] - mx); /* NaN for a fully masked row */
        sum += p;
        for (int64_t t = 0; t < m->dv; t++)
            c->acc[t] +=
                p * sm_load_f64(dt, c->v->data, (kbase + j) * m->dv + t);
    }
    int64_t yoff = ((b * m->hq + h) * m->tq + i) * m->dv;
    for (int64_t t = 0; t < m->dv; t++)
        sm_store_f64(dt, c->y->data, yoff + t, m->tk ? c->acc[t] / sum : 0.0);
}

/* Attention(Q, K, V, mask?) {scale, causal}. */
smelt_status sm_ref_attention(const sm_kargs *a)
{
    attn_call c = {0};
    SM_TRY(sm_ref_attn_dims(a, a->in[0], a->in[1], a->in[2], &c.m));
    if (!sm_ref_attn_is_output(a->out[0], &c.m, a->in[0]->dtype))
        return sm_bad_output(a, "[batch, q_heads, q_len, v_dim]");
    c.q = a->in[0];
    c.k = a->in[1];
    c.v = a->in[2];
    c.mask = a->n_in > 3 ? a->in[3] : NULL;
    c.y = a->out[0];
    c.scale = sm_attrs_float(&a->attrs, "scale", 1);
    c.causal = sm_attrs_int(&a->attrs, "causal", 0) != 0;
    if (c.mask)
        SM_TRY(sm_ref_attn_mask_strides(a, c.mask, &c.m, c.mst));
    if (c.y->numel == 0)
        return SMELT_OK;
    c.s = sm_malloc((size_t)(c.m.tk + c.m.dv) * sizeof *c.s);
    if (!c.s)
        return sm_err_nomem(a->ctx);
    c.acc = c.s + c.m.tk;
    for (int64_t b = 0; b < c.m.b; b++)
        for (int64_t h = 0; h < c.m.hq; h++)
            for (int64_t i = 0; i < c.m.tq; i++)
                attend_row(&c, b, h, i);
    sm_free(c.s);
    return SMELT_OK;
}
