/*
 * quantize.c - dynamic int8 quantization of a graph (smelt_graph_quantize,
 * `smelt quantize --dynamic`, docs/QUANTIZATION.md).
 *
 * After the -O1 cleanup (folding makes the weights that exporters pass
 * through Identity or Transpose constants), every MatMul and Gemm whose
 * weight is a constant f32 matrix (and, with
 * `conv`, every 2-D Conv with constant weights) becomes what ONNX
 * Runtime's dynamic quantizer writes, in standard ONNX ops:
 *
 *   x -> DynamicQuantizeLinear -> (xq u8, xs, xz)
 *   MatMulInteger(xq, Wq, xz)  (ConvInteger for Conv)   -> i32
 *   Cast(to f32) -> Mul(., Mul(xs, ws)) [-> Add(., bias)]
 *
 * with Wq the weight quantized symmetrically to s8 in [-127, 127]:
 * ws = max |W| / 127 per tensor, or per output channel (MatMul's columns,
 * Conv's output channels) with `per_channel`. One DynamicQuantizeLinear
 * serves every layer reading the same activation. Layers named in
 * `exclude` stay f32; with `only`, just the layers named there change.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/sized.h"
#include "core/status.h"
#include "core/strbuf.h"
#include "core/tensor.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "ir/rewrite.h"

#define QUANT_OPTIONS_V1 SM_FIELD_END(smelt_quantize_options, only)

smelt_status smelt_quantize_options_init(smelt_quantize_options *o,
                                         size_t struct_size)
{
    smelt_quantize_options d = {sizeof d, 0, 0, NULL, NULL};
    return sm_sized_init(o, struct_size, &d, sizeof d, QUANT_OPTIONS_V1);
}

/* A constant f32 value's data, else NULL. */
static const sm_tensor *const_f32(const sm_value *v)
{
    return v && v->data && v->data->dtype == SMELT_DTYPE_F32 ? v->data : NULL;
}

/*
 * Quantizes w, seen as `ch` channels of `per` values each (channel c's
 * values at c * cs + i * is for i < per), symmetrically to s8: the
 * scales (ch of them per channel, else one) into *scale, the values into
 * a new s8 tensor of dims (ndim, dims) laid out as W's (element (c, i) at
 * c * cs + i * is).
 */
static smelt_status quantize_weight(smelt_ctx_t *ctx, const float *w,
                                    int64_t ch, int64_t per, int64_t cs,
                                    int64_t is, int per_channel, int ndim,
                                    const int64_t *dims, sm_tensor **q,
                                    sm_tensor **scale)
{
    *q = *scale = NULL;
    int64_t ns = per_channel ? ch : 1;
    SM_TRY(sm_tensor_new(ctx, SMELT_DTYPE_I8, ndim, dims, q));
    smelt_status st =
        sm_tensor_new(ctx, SMELT_DTYPE_F32, per_channel ? 1 : 0, &ns, scale);
    if (st != SMELT_OK) {
        sm_tensor_free(*q);
        *q = NULL;
        return st;
    }
    float *sc = (*scale)->data;
    for (int64_t s = 0; s < ns; s++) {
        float m = 0;
        int64_t c0 = per_channel ? s : 0, c1 = per_channel ? s + 1 : ch;
        for (int64_t c = c0; c < c1; c++)
            for (int64_t i = 0; i < per; i++) {
                float a = fabsf(w[c * cs + i * is]);
                m = a > m ? a : m;
            }
        sc[s] = m > 0 && isfinite(m) ? m / 127.0f : 1.0f;
    }
    int8_t *o = (*q)->data;
    for (int64_t c = 0; c < ch; c++) {
        float s = sc[per_channel ? c : 0];
        for (int64_t i = 0; i < per; i++) {
            float v = nearbyintf(w[c * cs + i * is] / s);
            v = v > 127 ? 127 : v < -127 ? -127 : v;
            o[c * cs + i * is] = (int8_t)(isnan(v) ? 0 : v);
        }
    }
    return SMELT_OK;
}

/* t (M values) viewed as [M, 1, 1], to broadcast over an NCHW output. */
static void as_m11(sm_tensor *t, int64_t M)
{
    t->ndim = 3;
    t->dims[0] = M;
    t->dims[1] = t->dims[2] = 1;
}

/* One DynamicQuantizeLinear per activation: value id -> its node. */
typedef struct dql_map {
    int n, cap;
    int *id;
    sm_node **node;
} dql_map;

/* The rewrite of one graph. */
typedef struct qz {
    smelt_ctx_t *ctx;
    sm_rw *rw;
    sm_block *top;
    const smelt_quantize_options *o;
    dql_map dq;
    sm_strbuf layers;
    int count;
} qz;

/* The DynamicQuantizeLinear of x, made before `before` the first time. */
static sm_node *dql_of(qz *z, sm_value *x, sm_node *before)
{
    for (int i = 0; i < z->dq.n; i++)
        if (z->dq.id[i] == x->id)
            return z->dq.node[i];
    if (z->dq.n == z->dq.cap) {
        int cap = z->dq.cap ? 2 * z->dq.cap : 8;
        int *id = sm_realloc(z->dq.id, sizeof(int) * (size_t)cap);
        if (!id)
            return NULL;
        z->dq.id = id;
        sm_node **nd = sm_realloc(z->dq.node, sizeof(sm_node *) * (size_t)cap);
        if (!nd)
            return NULL;
        z->dq.node = nd;
        z->dq.cap = cap;
    }
    char base[3][256];
    snprintf(base[0], sizeof base[0], "%s_quantized", x->name);
    snprintf(base[1], sizeof base[1], "%s_scale", x->name);
    snprintf(base[2], sizeof base[2], "%s_zero_point", x->name);
    const char *names[3] = {base[0], base[1], base[2]};
    char nm[280];
    snprintf(nm, sizeof nm, "%s_QuantizeLinear", x->name);
    sm_node *n =
        sm_rw_node_new(z->rw, z->top, before, SM_OP_DynamicQuantizeLinear,
                       sm_rw_unique_name(z->rw, nm), 1, &x, 3, names);
    if (!n || sm_rw_infer_node(z->rw, n) != SMELT_OK)
        return NULL;
    z->dq.id[z->dq.n] = x->id;
    z->dq.node[z->dq.n++] = n;
    return n;
}

/* A new node of op on in[0..n_in) before `before`, one output named after
 * `out`, inferred. */
static sm_node *add(qz *z, sm_node *before, sm_op op, const char *name,
                    int n_in, sm_value *const *in, const char *out)
{
    const char *names[1] = {out};
    sm_node *n =
        sm_rw_node_new(z->rw, z->top, before, op,
                       sm_rw_unique_name(z->rw, name), n_in, in, 1, names);
    if (n && op == SM_OP_Cast && !sm_node_set_int(n, "to", 1))
        return NULL; /* ONNX FLOAT */
    if (!n || sm_rw_infer_node(z->rw, n) != SMELT_OK)
        return NULL;
    return n;
}

/*
 * Replaces node n (computing y from activation x and weights, with an
 * optional bias, already shaped to broadcast onto y) by the integer
 * product `iop` (MatMulInteger or ConvInteger, attributes copied from n
 * for a Conv), its Cast and the rescaling.
 */
static smelt_status rewrite(qz *z, sm_node *n, sm_op iop, sm_value *x,
                            sm_tensor *wq, sm_tensor *ws, sm_tensor *bias)
{
    char nm[300];
    const char *base = n->name ? n->name : n->out[0]->name;
    snprintf(nm, sizeof nm, "%s_quantized", base);
    sm_value *wv = sm_rw_add_const(z->rw, z->top, nm, wq);
    snprintf(nm, sizeof nm, "%s_scale", base);
    sm_value *sv = wv ? sm_rw_add_const(z->rw, z->top, nm, ws) : NULL;
    if (!sv) {
        if (!wv)
            sm_tensor_free(ws);
        sm_tensor_free(bias);
        return sm_err_nomem(z->ctx);
    }
    sm_value *bv = NULL;
    if (bias) {
        snprintf(nm, sizeof nm, "%s_bias", base);
        if (!(bv = sm_rw_add_const(z->rw, z->top, nm, bias)))
            return sm_err_nomem(z->ctx);
    }
    sm_node *dq = dql_of(z, x, n);
    if (!dq)
        return sm_err_nomem(z->ctx);
    sm_value *in3[3] = {dq->out[0], wv, dq->out[2]};
    snprintf(nm, sizeof nm, "%s_%s", base,
             iop == SM_OP_ConvInteger ? "ConvInteger" : "MatMulInteger");
    const char *names[1] = {NULL};
    sm_node *ip = sm_rw_node_new(
        z->rw, z->top, n, iop, sm_rw_unique_name(z->rw, nm), 3, in3, 1, names);
    if (!ip)
        return sm_err_nomem(z->ctx);
    for (int i = 0; iop == SM_OP_ConvInteger && i < n->n_attr; i++) {
        const sm_attr *a = &n->attrs[i];
        int bad = 0;
        if (a->kind == SM_ATTR_INTS)
            bad = !sm_node_set_ints(ip, a->name, a->v.ints, a->n);
        else if (a->kind == SM_ATTR_INT)
            bad = !sm_node_set_int(ip, a->name, a->v.i);
        else if (a->kind == SM_ATTR_STRING)
            bad = !sm_node_set_string(ip, a->name, a->v.s);
        if (bad)
            return sm_err_nomem(z->ctx);
    }
    SM_TRY(sm_rw_infer_node(z->rw, ip));
    snprintf(nm, sizeof nm, "%s_cast", base);
    sm_node *cast = add(z, n, SM_OP_Cast, nm, 1, &ip->out[0], NULL);
    sm_value *sc2[2] = {dq->out[1], sv};
    snprintf(nm, sizeof nm, "%s_scales_mul", base);
    sm_node *scm = cast ? add(z, n, SM_OP_Mul, nm, 2, sc2, NULL) : NULL;
    if (!scm)
        return sm_err_nomem(z->ctx);
    sm_value *m2[2] = {cast->out[0], scm->out[0]};
    snprintf(nm, sizeof nm, "%s_output_scale_mul", base);
    sm_node *y = add(z, n, SM_OP_Mul, nm, 2, m2, NULL);
    if (y && bv) {
        sm_value *a2[2] = {y->out[0], bv};
        snprintf(nm, sizeof nm, "%s_bias_add", base);
        y = add(z, n, SM_OP_Add, nm, 2, a2, NULL);
    }
    if (!y)
        return sm_err_nomem(z->ctx);
    SM_TRY(sm_rw_forward(z->rw, n->out[0], y->out[0]));
    /* the f32 weights and bias go with the node unless others read them */
    sm_value *old[2] = {n->in[1], n->n_in > 2 ? n->in[2] : NULL};
    sm_rw_remove_node(z->rw, n);
    for (int i = 0; i < 2; i++)
        if (old[i] && old[i]->data)
            sm_rw_drop_const_if_dead(z->rw, old[i]);
    sm_strbuf_appendf(&z->layers, "%s%s", z->count ? "," : "", base);
    z->count++;
    return SMELT_OK;
}

/* MatMul(x, W) or Gemm(x, W, C) (no transA, alpha 1, beta 1) with W a
 * constant f32 [K, N] (Gemm: [N, K] with transB). */
static smelt_status try_matmul(qz *z, sm_node *n)
{
    const sm_tensor *w = n->n_in > 1 ? const_f32(n->in[1]) : NULL;
    sm_value *x = n->in[0];
    if (!w || w->ndim != 2 || !x || x->type.dtype != SMELT_DTYPE_F32)
        return SMELT_OK;
    int tb = 0;
    const sm_tensor *c = NULL;
    if (n->op == SM_OP_Gemm) {
        sm_attrs at = sm_node_attrs(n);
        if (sm_attrs_int(&at, "transA", 0) ||
            sm_attrs_float(&at, "alpha", 1) != 1 ||
            (n->n_in > 2 && n->in[2] && sm_attrs_float(&at, "beta", 1) != 1))
            return SMELT_OK;
        tb = sm_attrs_int(&at, "transB", 0) != 0;
        if (n->n_in > 2 && n->in[2] && !(c = const_f32(n->in[2])))
            return SMELT_OK;
    }
    int64_t K = w->dims[tb], N = w->dims[!tb];
    /* channel j (a column of W^T-less [K, N]) at j * cs, depth i at i * is */
    int64_t cs = tb ? K : 1, is = tb ? 1 : N;
    sm_tensor *wq, *ws, *bias = NULL;
    int64_t kn[2] = {K, N};
    SM_TRY(quantize_weight(z->ctx, w->data, N, K, cs, is, z->o->per_channel, 2,
                           w->dims, &wq, &ws));
    if (tb) { /* MatMulInteger wants [K, N] */
        sm_tensor *t;
        smelt_status st = sm_tensor_new(z->ctx, SMELT_DTYPE_I8, 2, kn, &t);
        if (st != SMELT_OK) {
            sm_tensor_free(wq);
            sm_tensor_free(ws);
            return st;
        }
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                ((int8_t *)t->data)[k * N + j] =
                    ((int8_t *)wq->data)[j * K + k];
        sm_tensor_free(wq);
        wq = t;
    }
    if (c && sm_tensor_clone(z->ctx, c, &bias) != SMELT_OK) {
        sm_tensor_free(wq);
        sm_tensor_free(ws);
        return sm_err_nomem(z->ctx);
    }
    return rewrite(z, n, SM_OP_MatMulInteger, x, wq, ws, bias);
}

/* Conv(x, W[, B]) with W a constant f32 [M, C/g, kh, kw]: ConvInteger,
 * the scales and bias shaped [M, 1, 1] to broadcast over NCHW. */
static smelt_status try_conv(qz *z, sm_node *n)
{
    const sm_tensor *w = n->n_in > 1 ? const_f32(n->in[1]) : NULL;
    sm_value *x = n->in[0];
    if (!w || w->ndim != 4 || !x || x->type.dtype != SMELT_DTYPE_F32)
        return SMELT_OK;
    const sm_tensor *b = n->n_in > 2 && n->in[2] ? const_f32(n->in[2]) : NULL;
    if (n->n_in > 2 && n->in[2] && !b)
        return SMELT_OK;
    int64_t M = w->dims[0], per = w->numel / (M ? M : 1);
    sm_tensor *wq, *ws, *bias = NULL;
    SM_TRY(quantize_weight(z->ctx, w->data, M, per, per, 1, z->o->per_channel,
                           4, w->dims, &wq, &ws));
    smelt_status st = SMELT_OK;
    if (z->o->per_channel)
        as_m11(ws, M);
    if (b && b->numel == M) {
        st = sm_tensor_clone(z->ctx, b, &bias);
        if (st == SMELT_OK)
            as_m11(bias, M);
    }
    if (st != SMELT_OK) {
        sm_tensor_free(wq);
        sm_tensor_free(ws);
        sm_tensor_free(bias);
        return st;
    }
    return rewrite(z, n, SM_OP_ConvInteger, x, wq, ws, bias);
}

smelt_status smelt_graph_quantize(smelt_ctx_t *ctx, smelt_graph_t *g,
                                  const smelt_quantize_options *opt,
                                  char **layers)
{
    if (layers)
        *layers = NULL;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_quantize: NULL graph");
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    if (opt)
        SM_TRY(sm_sized_in(ctx, "smelt_quantize_options", &o, sizeof o,
                           QUANT_OPTIONS_V1, opt));
    /* the cleanup (-O1) first: weights an exporter passes through
     * Identity or Transpose become the constants the rewrite looks for */
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.level = 1;
    SM_TRY(smelt_graph_optimize(ctx, g, &oo, NULL));
    qz z = {.ctx = ctx, .top = g->top, .o = &o};
    sm_strbuf_init(&z.layers);
    smelt_status st = sm_rw_new(ctx, g, &z.rw);
    for (sm_node *n = st == SMELT_OK ? sm_rw_first(z.rw, g->top) : NULL;
         n && st == SMELT_OK;) {
        sm_node *next = sm_rw_next(z.rw, n);
        const char *name = n->name ? n->name : n->out[0]->name;
        int want = !sm_str_listed(o.exclude, name) &&
                   (!o.only || sm_str_listed(o.only, name));
        if (want && (n->op == SM_OP_MatMul || n->op == SM_OP_Gemm))
            st = try_matmul(&z, n);
        else if (want && o.conv && n->op == SM_OP_Conv)
            st = try_conv(&z, n);
        n = next;
    }
    if (z.rw)
        sm_rw_free(z.rw);
    sm_free(z.dq.id);
    sm_free(z.dq.node);
    if (st == SMELT_OK)
        st = sm_graph_infer(ctx, g);
    if (st == SMELT_OK && layers)
        st = sm_strbuf_take(&z.layers, ctx, layers);
    sm_strbuf_free(&z.layers);
    return st;
}
