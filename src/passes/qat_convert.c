/*
 * qat_convert.c - a trained QAT model to its int8 form
 * (smelt_graph_quantize_convert, `smelt quantize --convert`,
 * docs/QUANTIZATION.md).
 *
 * Each fake-quantize pair QuantizeLinear -> DequantizeLinear whose input
 * is a constant f32 weight becomes the quantized constant itself, read by
 * the DequantizeLinear: W_q = saturate(round(W / s) + z), computed as
 * QuantizeLinear's reference kernel does (the division in f32, halves to
 * even), so the int8 model computes exactly what the QAT model did.
 * Scales computed from constants (the Exp of the logarithm --qat
 * trains) are folded first. Activation pairs stay: with the weights'
 * DequantizeLinear of constant s8 they are the QDQ form that the `qdq`
 * pass runs on the int8 GEMM and that ONNX Runtime runs as int8. A Gemm
 * with transB then reads its weight transposed, per column, as the qdq
 * pass wants it (untranspose). Conv keeps the QDQ form, which Smelt runs
 * dequantized (the qdq pass takes MatMul and Gemm).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/eval.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "ir/rewrite.h"
#include "passes/qat_pair.h"

/* Fails unless the scale (input 1) of q, a QuantizeLinear or
 * DequantizeLinear, is a constant of positive finite values. */
static smelt_status check_scale(smelt_ctx_t *ctx, const sm_node *q)
{
    char where[256];
    sm_node_where(q, where, sizeof where);
    const sm_value *s = q->in[1];
    if (!s->data)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: the scale '%s' of a fake-quantize pair is not a "
                      "constant",
                      where, s->name);
    for (int64_t k = 0; k < s->data->numel; k++) {
        double v = sm_load_f64(s->data->dtype, s->data->data, k);
        if (!(v > 0) || !isfinite(v))
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: scale '%s' element %lld is %g; a scale must be "
                          "positive and finite",
                          where, s->name, (long long)k, v);
    }
    return SMELT_OK;
}

/* Parameter element i of p (per tensor, or per axis with `inner`
 * elements per step); def when p is absent. */
static double at(const sm_tensor *p, int64_t i, int64_t inner, double def)
{
    if (!p || !p->numel)
        return def;
    int64_t k = p->numel == 1 ? 0 : (i / inner) % p->numel;
    return sm_load_f64(p->dtype, p->data, k);
}

/* The quantized copy of q's constant input, in *out. */
static smelt_status quantize_const(smelt_ctx_t *ctx, const sm_node *q,
                                   sm_tensor **out)
{
    const sm_tensor *x = q->in[0]->data, *s = q->in[1]->data;
    const sm_tensor *z = q->n_in > 2 && q->in[2] ? q->in[2]->data : NULL;
    smelt_dtype qt = z ? z->dtype : SMELT_DTYPE_U8;
    int64_t inner = 1;
    if (s->numel > 1) {
        sm_attrs a = sm_node_attrs(q);
        int64_t ax = sm_attrs_int(&a, "axis", 1);
        ax = ax < 0 ? ax + x->ndim : ax;
        for (int d = (int)ax + 1; d < x->ndim; d++)
            inner *= x->dims[d];
    }
    SM_TRY(sm_tensor_new(ctx, qt, x->ndim, x->dims, out));
    double lo = qt == SMELT_DTYPE_I8 ? -128 : 0;
    double hi = qt == SMELT_DTYPE_I8 ? 127 : 255;
    for (int64_t i = 0; i < x->numel; i++) {
        double u = sm_load_f64(x->dtype, x->data, i) / at(s, i, inner, 1);
        if (x->dtype == SMELT_DTYPE_F32)
            u = (double)(float)u;
        double v = nearbyint(u) + at(z, i, inner, 0);
        v = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
        sm_store_i64(qt, (*out)->data, i, (int64_t)v);
    }
    return SMELT_OK;
}

/*
 * Evaluates the nodes that compute a QuantizeLinear's or
 * DequantizeLinear's scale from constants alone (the Exp of the
 * logarithm --qat trains) into constants. Only those: a general -O1
 * cleanup would also fold the weights' DequantizeLinear into f32.
 */
static smelt_status fold_scales(smelt_ctx_t *ctx, sm_graph *g, sm_rw *rw)
{
    for (int round = 0, again = 1; again && round < 8; round++) {
        again = 0;
        for (sm_node *n = sm_rw_first(rw, g->top); n; n = sm_rw_next(rw, n)) {
            int qdq = n->op == SM_OP_QuantizeLinear ||
                      n->op == SM_OP_DequantizeLinear;
            sm_node *d = qdq && n->n_in > 1 && n->in[1] ? n->in[1]->def : NULL;
            if (!d || d->n_out != 1 || d->n_blocks || d->n_in > 8)
                continue;
            sm_tensor *args[8] = {0}, *out[1] = {0};
            int all = 1;
            for (int i = 0; i < d->n_in; i++) {
                all &= !d->in[i] || d->in[i]->data != NULL;
                args[i] = d->in[i] ? d->in[i]->data : NULL;
            }
            if (!all)
                continue;
            sm_value *in[8] = {0};
            for (int i = 0; i < d->n_in; i++)
                in[i] = d->in[i];
            int n_in = d->n_in;
            SM_TRY(sm_eval_node(ctx, d, args, out, 0));
            SM_TRY(sm_rw_node_to_consts(rw, d, out));
            for (int i = 0; i < n_in; i++)
                if (in[i])
                    sm_rw_drop_const_if_dead(rw, in[i]);
            again = 1;
        }
    }
    return SMELT_OK;
}

/*
 * Gemm(x, DequantizeLinear(Wq [N, K], s, z)) {transB = 1}, the weight
 * folded from a pair, becomes Gemm(x, DequantizeLinear(Wq^T [K, N], s,
 * z) {axis = 1}) without transB: the same product, in the form the qdq
 * pass runs on the int8 GEMM (a weight per tensor or per column).
 */
static smelt_status untranspose(smelt_ctx_t *ctx, sm_graph *g, sm_rw *rw,
                                sm_node *n)
{
    sm_attrs at = sm_node_attrs(n);
    sm_node *d = n->n_in > 1 && n->in[1] ? n->in[1]->def : NULL;
    if (!sm_attrs_int(&at, "transB", 0) || sm_attrs_int(&at, "transA", 0) ||
        !d || d->op != SM_OP_DequantizeLinear || d->n_in < 2 ||
        sm_rw_single_user(rw, d->out[0]) != n || sm_rw_is_output(rw, d->out[0]))
        return SMELT_OK;
    sm_value *w = d->in[0];
    const sm_tensor *t = w->data;
    if (!t || t->ndim != 2 || smelt_dtype_size(t->dtype) != 1)
        return SMELT_OK;
    int64_t N = t->dims[0], K = t->dims[1];
    const sm_value *s = d->in[1], *z = d->n_in > 2 ? d->in[2] : NULL;
    sm_attrs dat = sm_node_attrs(d);
    int64_t axis = sm_attrs_int(&dat, "axis", 1);
    int per_row =
        (s->data && s->data->numel > 1) || (z && z->data && z->data->numel > 1);
    if (!s->data || (z && !z->data) || (per_row && axis != 0 && axis != -2))
        return SMELT_OK;
    int64_t kn[2] = {K, N};
    sm_tensor *tt = NULL;
    SM_TRY(sm_tensor_new(ctx, t->dtype, 2, kn, &tt));
    const uint8_t *src = t->data;
    uint8_t *dst = tt->data;
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < K; k++)
            dst[k * N + i] = src[i * K + k];
    char nm[300];
    snprintf(nm, sizeof nm, "%s_t", w->name);
    sm_value *c = sm_rw_add_const(rw, g->top, nm, tt);
    if (!c)
        return sm_err_nomem(ctx);
    sm_value *in[3] = {c, d->in[1], z ? d->in[2] : NULL};
    const char *names[1] = {d->out[0]->name};
    sm_node *d2 = sm_rw_node_new(rw, g->top, n, SM_OP_DequantizeLinear, d->name,
                                 z ? 3 : 2, in, 1, names);
    if (!d2 || !sm_node_set_int(d2, "axis", 1) ||
        !sm_node_set_int(n, "transB", 0))
        return sm_err_nomem(ctx);
    SM_TRY(sm_rw_infer_node(rw, d2));
    SM_TRY(sm_rw_set_input(rw, n, 1, d2->out[0]));
    sm_rw_remove_node(rw, d);
    sm_rw_drop_const_if_dead(rw, w);
    return sm_rw_infer_node(rw, n);
}

smelt_status smelt_graph_quantize_convert(smelt_ctx_t *ctx, smelt_graph_t *g,
                                          int *weights, int *activations)
{
    int nw = 0, na = 0;
    if (weights)
        *weights = 0;
    if (activations)
        *activations = 0;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_quantize_convert: NULL graph");
    SM_TRY(sm_graph_infer(ctx, g));
    sm_rw *rw = NULL;
    SM_TRY(sm_rw_new(ctx, g, &rw));
    smelt_status st = fold_scales(ctx, g, rw);
    for (sm_node *n = sm_rw_first(rw, g->top); n && st == SMELT_OK;) {
        sm_node *next = sm_rw_next(rw, n);
        sm_node *q = sm_fakequant_pair(n);
        if (q)
            st = check_scale(ctx, q);
        if (q && st == SMELT_OK && q->in[0]->data &&
            q->in[0]->data->dtype == SMELT_DTYPE_F32) {
            sm_value *w = q->in[0];
            sm_tensor *t = NULL;
            char nm[300];
            snprintf(nm, sizeof nm, "%s_qweight", w->name);
            st = quantize_const(ctx, q, &t);
            sm_value *c =
                st == SMELT_OK ? sm_rw_add_const(rw, g->top, nm, t) : NULL;
            if (st == SMELT_OK && !c)
                st = sm_err_nomem(ctx);
            if (st == SMELT_OK)
                st = sm_rw_set_input(rw, n, 0, c);
            if (st == SMELT_OK && sm_rw_remove_if_dead(rw, q))
                sm_rw_drop_const_if_dead(rw, w);
            nw++;
        } else if (q && st == SMELT_OK) {
            na++;
        } else if (!q && n->op == SM_OP_DequantizeLinear && n->n_in > 1 &&
                   n->in[0] && n->in[0]->data) {
            /* a weight the cleanup folded already (QuantizeLinear of a
             * constant is a constant) */
            st = check_scale(ctx, n);
            nw++;
        }
        n = next;
    }
    for (sm_node *n = sm_rw_first(rw, g->top); n && st == SMELT_OK;) {
        sm_node *next = sm_rw_next(rw, n);
        if (n->op == SM_OP_Gemm)
            st = untranspose(ctx, g, rw, n);
        n = next;
    }
    sm_rw_free(rw);
    if (st == SMELT_OK && nw + na == 0)
        st = sm_err(ctx, SMELT_ERR_INVALID_ARG,
                    "the model has no fake-quantize pair (QuantizeLinear -> "
                    "DequantizeLinear with the same scale and zero point): "
                    "make one with smelt quantize --qat");
    if (st == SMELT_OK)
        st = sm_graph_infer(ctx, g);
    if (st == SMELT_OK && weights)
        *weights = nw;
    if (st == SMELT_OK && activations)
        *activations = na;
    return st;
}
