/*
 * qdq.c - the qdq pass: a MatMul (or Gemm without transA, alpha and
 * beta 1) of two dequantized operands, the activation per tensor and the
 * weight a constant u8 / s8 matrix per tensor or per column,
 *
 *   MatMul(DequantizeLinear(xq, sx, zx), DequantizeLinear(Wq, sw, zw))
 *
 * (the QDQ form quantizers write, with QuantizeLinear making xq) becomes
 * the integer product and one rescale:
 *
 *   Mul(Cast(MatMulInteger(xq, Wq, zx, zw), f32), sx * sw) [+ C]
 *
 * so the plan runs the int8 kernel (kernels/cpu/quant.c) on the
 * quantized bytes instead of dequantizing the weights and multiplying in
 * f32. The sums are exact integers; the result differs from the
 * dequantized product only by f32 rounding. A Conv of the same form
 * (the weight per tensor or per output channel, axis 0) becomes
 * Mul(Cast(ConvInteger(xq, Wq, zx, zw)), sx * sw) [+ B], the scale and
 * the bias as [1, M, 1, 1] constants. It runs right after
 * inference, before folding would turn the weight's DequantizeLinear
 * into an f32 constant.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "passes/pattern.h"

/* A DequantizeLinear defining v, or NULL. */
static sm_node *dq_of(const sm_value *v)
{
    return v && v->def && v->def->op == SM_OP_DequantizeLinear ? v->def : NULL;
}

static int is_q8(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_U8 || dt == SMELT_DTYPE_I8;
}

/* Input i of n when it is a constant of at most `n_max` values (and of
 * rank <= 1); absent inputs give NULL with *ok kept. */
static const sm_tensor *param(const sm_node *n, int i, int64_t n_max, int *ok)
{
    if (i >= n->n_in || !n->in[i])
        return NULL;
    const sm_value *v = n->in[i];
    if (!v->data || v->data->ndim > 1 ||
        (v->data->numel != 1 && v->data->numel != n_max))
        *ok = 0;
    return v->data;
}

/* The tail both rewrites share: the int32 product acc becomes f32
 * (Cast), is rescaled by sv (Mul) and takes the bias if any (Add); that
 * replaces n's output, and n and the dequantizations da, db that only it
 * read leave the graph. Names derive from base. */
static smelt_status replace_by_rescaled(sm_pass_ctx *pc, sm_rw *rw, sm_node *n,
                                        const char *base, sm_value *acc,
                                        sm_value *sv, sm_value *bias,
                                        sm_node *da, sm_node *db)
{
    char nm[300];
    snprintf(nm, sizeof nm, "%s_cast", base);
    sm_node *cast = sm_rw_node_new(rw, n->owner, n, SM_OP_Cast,
                                   sm_rw_unique_name(rw, nm), 1, &acc, 1, NULL);
    if (!cast || !sm_node_set_int(cast, "to", 1)) /* ONNX FLOAT */
        return sm_err_nomem(pc->ctx);
    SM_TRY(sm_rw_infer_node(rw, cast));
    sm_value *m2[2] = {cast->out[0], sv};
    snprintf(nm, sizeof nm, "%s_rescale", base);
    sm_node *y = sm_rw_node_new(rw, n->owner, n, SM_OP_Mul,
                                sm_rw_unique_name(rw, nm), 2, m2, 1, NULL);
    if (!y)
        return sm_err_nomem(pc->ctx);
    SM_TRY(sm_rw_infer_node(rw, y));
    if (bias) {
        sm_value *a2[2] = {y->out[0], bias};
        snprintf(nm, sizeof nm, "%s_bias", base);
        y = sm_rw_node_new(rw, n->owner, n, SM_OP_Add,
                           sm_rw_unique_name(rw, nm), 2, a2, 1, NULL);
        if (!y)
            return sm_err_nomem(pc->ctx);
        SM_TRY(sm_rw_infer_node(rw, y));
    }
    SM_TRY(sm_rw_forward(rw, n->out[0], y->out[0]));
    sm_rw_remove_node(rw, n);
    pc->stats->removed += 1 + sm_rw_remove_if_dead(rw, da);
    pc->stats->removed += sm_rw_remove_if_dead(rw, db);
    pc->stats->changed = 1;
    return SMELT_OK;
}

static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *n)
{
    if (n->op != SM_OP_MatMul && n->op != SM_OP_Gemm)
        return SMELT_OK;
    sm_node *da = dq_of(n->in[0]), *db = dq_of(n->in[1]);
    if (!da || !db)
        return SMELT_OK;
    sm_value *c = n->op == SM_OP_Gemm && n->n_in > 2 ? n->in[2] : NULL;
    if (n->op == SM_OP_Gemm) {
        sm_attrs at = sm_node_attrs(n);
        if (sm_attrs_int(&at, "transA", 0) || sm_attrs_int(&at, "transB", 0) ||
            sm_attrs_float(&at, "alpha", 1) != 1 ||
            (c && sm_attrs_float(&at, "beta", 1) != 1))
            return SMELT_OK;
    }
    sm_value *xq = da->in[0], *wq = db->in[0];
    if (!is_q8(xq->type.dtype) || !wq->data || !is_q8(wq->data->dtype) ||
        wq->data->ndim != 2 || n->out[0]->type.dtype != SMELT_DTYPE_F32)
        return SMELT_OK;
    int64_t N = wq->data->dims[1];
    sm_attrs bat = sm_node_attrs(db);
    int ok = 1;
    const sm_tensor *sx = param(da, 1, 1, &ok), *zx = param(da, 2, 1, &ok);
    const sm_tensor *sw = param(db, 1, N, &ok), *zw = param(db, 2, N, &ok);
    int64_t axis = sm_attrs_int(&bat, "axis", 1);
    if (!ok || !sx || !sw || sx->dtype != SMELT_DTYPE_F32 ||
        sw->dtype != SMELT_DTYPE_F32 ||
        ((sw->numel > 1 || (zw && zw->numel > 1)) && axis != 1 && axis != -1))
        return SMELT_OK;
    /* the rescale: sx * sw, one value or one per column */
    sm_tensor *s;
    int64_t ns = sw->numel;
    SM_TRY(sm_tensor_new(pc->ctx, SMELT_DTYPE_F32, sw->ndim, &ns, &s));
    for (int64_t j = 0; j < ns; j++)
        ((float *)s->data)[j] =
            ((const float *)sx->data)[0] * ((const float *)sw->data)[j];
    const char *base = n->name ? n->name : n->out[0]->name;
    char nm[300];
    snprintf(nm, sizeof nm, "%s_scale", base);
    sm_value *sv = sm_rw_add_const(rw, n->owner, nm, s);
    if (!sv)
        return sm_err_nomem(pc->ctx);
    sm_value *in4[4] = {xq, wq, zx ? da->in[2] : NULL, zw ? db->in[2] : NULL};
    snprintf(nm, sizeof nm, "%s_MatMulInteger", base);
    sm_node *mi = sm_rw_node_new(rw, n->owner, n, SM_OP_MatMulInteger,
                                 sm_rw_unique_name(rw, nm),
                                 zw   ? 4
                                 : zx ? 3
                                      : 2,
                                 in4, 1, NULL);
    if (!mi)
        return sm_err_nomem(pc->ctx);
    SM_TRY(sm_rw_infer_node(rw, mi));
    return replace_by_rescaled(pc, rw, n, base, mi->out[0], sv, c, da, db);
}

/* A new constant [1, m, 1, 1] (f32) of values v[0..n) (n 1 or m, one
 * repeated when 1), named after base + suffix; NULL when out of memory
 * (recorded). */
static sm_value *channel_const(sm_pass_ctx *pc, sm_rw *rw, sm_node *n,
                               const char *suffix, const float *v, int64_t n_v,
                               int64_t m)
{
    int64_t dims[4] = {1, m, 1, 1};
    sm_tensor *t;
    if (sm_tensor_new(pc->ctx, SMELT_DTYPE_F32, 4, dims, &t) != SMELT_OK)
        return NULL;
    for (int64_t j = 0; j < m; j++)
        ((float *)t->data)[j] = v[n_v == 1 ? 0 : j];
    char nm[300];
    snprintf(nm, sizeof nm, "%s%s", n->name ? n->name : n->out[0]->name,
             suffix);
    sm_value *c = sm_rw_add_const(rw, n->owner, nm, t);
    if (!c)
        sm_err_nomem(pc->ctx);
    return c;
}

/*
 * Conv(DequantizeLinear(xq, sx, zx), DequantizeLinear(Wq, sw, zw), B?)
 * -> Mul(Cast(ConvInteger(xq, Wq, zx, zw)), sx * sw) [+ B], the scale
 * and the bias as [1, M, 1, 1] constants: x per tensor, W (constant u8
 * / s8, 4-D) per tensor or per output channel (axis 0), B a constant.
 */
static smelt_status visit_conv(sm_pass_ctx *pc, sm_rw *rw, sm_node *n)
{
    sm_node *da = dq_of(n->in[0]), *db = n->n_in > 1 ? dq_of(n->in[1]) : NULL;
    if (n->op != SM_OP_Conv || !da || !db)
        return SMELT_OK;
    sm_value *b = n->n_in > 2 ? n->in[2] : NULL;
    sm_value *xq = da->in[0], *wq = db->in[0];
    if (!is_q8(xq->type.dtype) || !wq->data || !is_q8(wq->data->dtype) ||
        wq->data->ndim != 4 || n->out[0]->type.dtype != SMELT_DTYPE_F32 ||
        (b && (!b->data || b->data->dtype != SMELT_DTYPE_F32)))
        return SMELT_OK;
    int64_t M = wq->data->dims[0];
    sm_attrs bat = sm_node_attrs(db);
    int ok = 1;
    const sm_tensor *sx = param(da, 1, 1, &ok), *zx = param(da, 2, 1, &ok);
    const sm_tensor *sw = param(db, 1, M, &ok), *zw = param(db, 2, M, &ok);
    if (!ok || !sx || !sw || sx->dtype != SMELT_DTYPE_F32 ||
        sw->dtype != SMELT_DTYPE_F32 ||
        ((sw->numel > 1 || (zw && zw->numel > 1)) &&
         sm_attrs_int(&bat, "axis", 1) != 0) ||
        (b && b->data->numel != M))
        return SMELT_OK;
    float prod[4096], *pp = prod;
    if (sw->numel > 4096 &&
        !(pp = sm_malloc(sizeof(float) * (size_t)sw->numel)))
        return sm_err_nomem(pc->ctx);
    for (int64_t j = 0; j < sw->numel; j++)
        pp[j] = ((const float *)sx->data)[0] * ((const float *)sw->data)[j];
    sm_value *sv = channel_const(pc, rw, n, "_scale", pp, sw->numel, M);
    if (pp != prod)
        sm_free(pp);
    sm_value *bv =
        b ? channel_const(pc, rw, n, "_bias", b->data->data, M, M) : NULL;
    if (!sv || (b && !bv))
        return sm_err_nomem(pc->ctx);
    const char *base = n->name ? n->name : n->out[0]->name;
    char nm[300];
    sm_value *in4[4] = {xq, wq, zx ? da->in[2] : NULL, zw ? db->in[2] : NULL};
    snprintf(nm, sizeof nm, "%s_ConvInteger", base);
    sm_node *ci = sm_rw_node_new(rw, n->owner, n, SM_OP_ConvInteger,
                                 sm_rw_unique_name(rw, nm),
                                 zw   ? 4
                                 : zx ? 3
                                      : 2,
                                 in4, 1, NULL);
    if (!ci || !sm_pat_copy_attrs(ci, n))
        return sm_err_nomem(pc->ctx);
    SM_TRY(sm_rw_infer_node(rw, ci));
    SM_TRY(replace_by_rescaled(pc, rw, n, base, ci->out[0], sv, bv, da, db));
    if (b)
        sm_rw_drop_const_if_dead(rw, b);
    return SMELT_OK;
}

static smelt_status visit_any(sm_pass_ctx *pc, sm_rw *rw, sm_node *n)
{
    return n->op == SM_OP_Conv ? visit_conv(pc, rw, n) : visit(pc, rw, n);
}

smelt_status sm_pass_qdq(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit_any);
}
