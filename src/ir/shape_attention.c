/*
 * shape_attention.c - shape and dtype inference, and cost, of Attention,
 * Smelt's fused scaled dot-product attention (docs/ATTENTION.md):
 *
 *   Attention(Q [B, Hq, Tq, D], K [B, Hkv, Tk, D], V [B, Hkv, Tk, Dv],
 *             mask?) {scale, causal} -> [B, Hq, Tq, Dv]
 *
 * K is not transposed (its rows are keys). Query head h reads kv head
 * h / (Hq / Hkv), so Hq must be a multiple of Hkv. The mask is additive
 * (Q's dtype) or bool (true = may attend) and broadcasts, numpy style,
 * onto the scores [B, Hq, Tq, Tk]. Every check compares only sizes that
 * are known; symbolic dims are bound before a plan runs, and the
 * reference kernel checks the concrete shapes again.
 */
#include <math.h>

#include "core/dtype.h"
#include "ir/shape_util.h"

/* The inputs' names in messages, by position. */
static const char *const in_name[4] = {"Q", "K", "V", "the mask"};

/* Fails unless t (when its rank is known) is 4-D. */
static smelt_status need_4d(sm_shape_ctx *s, const sm_type *t, int i)
{
    if (t->ndim < 0 || t->ndim == 4)
        return SMELT_OK;
    char buf[160];
    sm_type_str(t, buf, sizeof buf);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s %s must be 4-D [batch, heads, length, dim]",
                  s->op->name, in_name[i], buf);
}

/* Fails when dim da of input ia and dim db of input ib are both known and
 * differ; what names the dimension. */
static smelt_status same_dim(sm_shape_ctx *s, int ia, int da, int ib, int db,
                             const char *what)
{
    int64_t x = sm_type_size(sm_shape_in(s, ia), da);
    int64_t y = sm_type_size(sm_shape_in(s, ib), db);
    if (x < 0 || y < 0 || x == y)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s differs: %s has %lld, %s has %lld", s->op->name, what,
                  in_name[ia], (long long)x, in_name[ib], (long long)y);
}

/* Q f32 or f64; K and V Q's dtype; the mask Q's dtype or bool. */
static smelt_status check_dtypes(sm_shape_ctx *s, smelt_dtype *out)
{
    smelt_dtype dt = sm_shape_in(s, 0)->dtype;
    for (int i = 1; i < 3 && dt == SMELT_DTYPE_UNDEFINED; i++)
        dt = sm_shape_in(s, i)->dtype;
    *out = dt;
    if (dt == SMELT_DTYPE_UNDEFINED)
        return SMELT_OK;
    if (dt != SMELT_DTYPE_F32 && dt != SMELT_DTYPE_F64)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: Q, K and V have dtype %s; expected f32 or f64",
                      s->op->name, smelt_dtype_name(dt));
    for (int i = 0; i < s->n_in; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t || t->dtype == SMELT_DTYPE_UNDEFINED || t->dtype == dt ||
            (i == 3 && t->dtype == SMELT_DTYPE_BOOL))
            continue;
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: %s has dtype %s but Q is %s%s", s->op->name,
                      in_name[i], smelt_dtype_name(t->dtype),
                      smelt_dtype_name(dt),
                      i == 3 ? " (a mask is Q's dtype or bool)" : "");
    }
    return SMELT_OK;
}

/* The mask (input 3, when present with a known rank) must broadcast onto
 * the scores [B, Hq, Tq, Tk]: rank <= 4, each known dim 1 or the scores'. */
static smelt_status check_mask(sm_shape_ctx *s)
{
    const sm_type *m = sm_shape_in(s, 3);
    if (!m || m->ndim < 0)
        return SMELT_OK;
    char buf[160];
    sm_type_str(m, buf, sizeof buf);
    if (m->ndim > 4)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: the mask %s has rank %d; expected at most 4 "
                      "(broadcast onto [batch, heads, q_len, kv_len])",
                      s->op->name, buf, m->ndim);
    const sm_type *q = sm_shape_in(s, 0), *k = sm_shape_in(s, 1);
    int64_t want[4] = {sm_type_size(q, 0), sm_type_size(q, 1),
                       sm_type_size(q, 2), sm_type_size(k, 2)};
    static const char *const axis[4] = {"batch", "heads", "q_len", "kv_len"};
    for (int d = 0; d < m->ndim; d++) {
        int a = d + 4 - m->ndim;
        int64_t got = m->dims[d].size;
        if (got >= 0 && got != 1 && want[a] >= 0 && got != want[a])
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: the mask %s does not broadcast onto the "
                          "scores: its dim %d is %lld, %s is %lld",
                          s->op->name, buf, d, (long long)got, axis[a],
                          (long long)want[a]);
    }
    return SMELT_OK;
}

/* The attributes: a finite scale, causal 0 or 1. */
static smelt_status check_attrs(sm_shape_ctx *s)
{
    double scale = sm_attrs_float(&s->attrs, "scale", NAN);
    if (!isfinite(scale))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: scale must be a finite float, got %g", s->op->name,
                      scale);
    int64_t causal = sm_attrs_int(&s->attrs, "causal", 0);
    if (causal != 0 && causal != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: causal is %lld; expected 0 or 1", s->op->name,
                      (long long)causal);
    return SMELT_OK;
}

/*
 * Attention(Q, K, V, mask?) -> [B, Hq, Tq, Dv]: checks the ranks, dtypes,
 * the dims the inputs share (B; D of Q and K; Hkv and Tk of K and V),
 * grouped heads (Hq a multiple of Hkv) and the mask's broadcast.
 */
smelt_status sm_shape_attention(sm_shape_ctx *s)
{
    const sm_type *q, *k, *v;
    SM_TRY(sm_shape_need(s, 0, &q));
    SM_TRY(sm_shape_need(s, 1, &k));
    SM_TRY(sm_shape_need(s, 2, &v));
    SM_TRY(check_attrs(s));
    sm_type *y = &s->out[0];
    SM_TRY(check_dtypes(s, &y->dtype));
    SM_TRY(need_4d(s, q, 0));
    SM_TRY(need_4d(s, k, 1));
    SM_TRY(need_4d(s, v, 2));
    SM_TRY(same_dim(s, 0, 0, 1, 0, "the batch"));
    SM_TRY(same_dim(s, 0, 0, 2, 0, "the batch"));
    SM_TRY(same_dim(s, 0, 3, 1, 3, "the head dim D"));
    SM_TRY(same_dim(s, 1, 1, 2, 1, "the number of kv heads"));
    SM_TRY(same_dim(s, 1, 2, 2, 2, "the kv length"));
    int64_t hq = sm_type_size(q, 1), hkv = sm_type_size(k, 1);
    if (hkv < 0)
        hkv = sm_type_size(v, 1);
    if (hq >= 0 && hkv >= 0 && (hkv == 0 ? hq != 0 : hq % hkv != 0))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: Q has %lld heads, not a multiple of K and V's "
                      "%lld",
                      s->op->name, (long long)hq, (long long)hkv);
    SM_TRY(check_mask(s));
    if (q->ndim < 0 || v->ndim < 0) {
        y->ndim = SM_RANK_UNKNOWN;
        return SMELT_OK;
    }
    y->ndim = 4;
    y->dims[0] = q->dims[0];
    y->dims[1] = q->dims[1];
    y->dims[2] = q->dims[2];
    y->dims[3] = v->dims[3];
    if (y->dims[0].size < 0 && k->ndim == 4 && k->dims[0].size >= 0)
        y->dims[0] = k->dims[0];
    return SMELT_OK;
}

/*
 * Per score: D multiply-adds for Q.K, the scale and mask, about 5 for the
 * softmax (max, exp, sum, divide), Dv multiply-adds for P.V. Bytes: the
 * inputs once and the output, what a kernel that never materializes the
 * score matrix moves at best.
 */
void sm_cost_attention(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *q = sm_shape_in(s, 0), *k = sm_shape_in(s, 1);
    const sm_type *v = sm_shape_in(s, 2);
    double d = q ? sm_type_factor(q, 3) : 1, dv = v ? sm_type_factor(v, 3) : 1;
    double scores =
        (q ? sm_type_factor(q, 0) * sm_type_factor(q, 1) * sm_type_factor(q, 2)
           : 1) *
        (k ? sm_type_factor(k, 2) : 1);
    sm_cost_io(s, c, scores * (2 * d + 2 * dv + 7));
}
