/*
 * qat.c - fake quantization for quantization-aware training
 * (smelt_graph_quantize_qat, `smelt quantize --qat`, docs/QUANTIZATION.md).
 *
 * After the -O1 cleanup (as smelt_graph_quantize: weights passed through
 * Identity or Transpose become constants), each layer (MatMul or Gemm
 * with a constant f32 weight; Conv with `conv`) gets fake quantization
 * on both operands, in standard ONNX:
 *
 *   x -> QuantizeLinear(sx, zx u8) -> DequantizeLinear(sx, zx) -> layer
 *   W -> QuantizeLinear(sw, 0 s8)  -> DequantizeLinear(sw, 0)  -> layer
 *
 * The activation's scale and zero point come from the range an observer
 * sees while the reference interpreter runs the model on calibration
 * inputs: min / max, or a percentile of the values (outliers clipped).
 * The weight's are symmetric, max |W| / 127 per tensor or per output
 * channel. Each scale is Exp(log_scale) of an f32 initializer holding
 * its logarithm: positive whatever training does, and moved by ratios
 * (a scale of 0.002 next to weights of 0.1 would otherwise go negative
 * in a few Adam steps of 1e-3). The weights stay f32: `smelt train`
 * learns both (the pair trains as FakeQuantize, autograd/
 * fakequant.c), and smelt_graph_quantize_convert (qat_convert.c) then
 * folds the weights to s8.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/sized.h"
#include "core/status.h"
#include "core/strbuf.h"
#include "core/tensor.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "ir/rewrite.h"

#define QAT_OPTIONS_V1 SM_FIELD_END(smelt_qat_options, percentile)

smelt_status smelt_qat_options_init(smelt_qat_options *o, size_t struct_size)
{
    smelt_qat_options d = {sizeof d, 0, 0, NULL, SMELT_QAT_MINMAX, 99.99};
    return sm_sized_init(o, struct_size, &d, sizeof d, QAT_OPTIONS_V1);
}

/* A layer to fake-quantize: its node, and the weight's channel axis. */
typedef struct layer {
    sm_node *n;
    int axis;
} layer;

/* The state of one insertion. */
typedef struct qat {
    smelt_ctx_t *ctx;
    sm_graph *g;
    sm_rw *rw;
    const smelt_qat_options *o;
    layer *layers;
    int n_layers;
    sm_value **acts; /* distinct activations, in first-use order */
    int n_acts;
    float *lo, *hi;              /* their observed ranges */
    sm_value **done_v, **done_q; /* value -> its dequantized copy */
    int n_done;
} qat;

/* Whether node n is a layer of o: its weight's channel axis, or -1. */
static int layer_axis(const sm_node *n, const smelt_qat_options *o)
{
    int mm = n->op == SM_OP_MatMul || n->op == SM_OP_Gemm;
    if (!(mm || (o->conv && n->op == SM_OP_Conv)) || n->n_in < 2)
        return -1;
    const sm_value *x = n->in[0], *w = n->in[1];
    if (!x || x->type.dtype != SMELT_DTYPE_F32 || !w || !w->data ||
        w->data->dtype != SMELT_DTYPE_F32 || w->data->ndim != (mm ? 2 : 4))
        return -1;
    if (n->op == SM_OP_Gemm) {
        sm_attrs at = sm_node_attrs(n);
        if (sm_attrs_int(&at, "transA", 0))
            return -1;
        return sm_attrs_int(&at, "transB", 0) ? 0 : 1;
    }
    return mm ? 1 : 0;
}

/* Collects the layers and their distinct activations. */
static smelt_status find_layers(qat *z)
{
    int cap = 0;
    for (sm_node *n = sm_rw_first(z->rw, z->g->top); n;
         n = sm_rw_next(z->rw, n))
        cap++;
    z->layers = sm_calloc((size_t)cap + 1, sizeof *z->layers);
    z->acts = sm_calloc((size_t)cap + 1, sizeof *z->acts);
    if (!z->layers || !z->acts)
        return sm_err_nomem(z->ctx);
    for (sm_node *n = sm_rw_first(z->rw, z->g->top); n;
         n = sm_rw_next(z->rw, n)) {
        const char *name = n->name ? n->name : n->out[0]->name;
        int axis = layer_axis(n, z->o);
        if (axis < 0 || sm_str_listed(z->o->exclude, name))
            continue;
        z->layers[z->n_layers++] = (layer){n, axis};
        int seen = 0;
        for (int i = 0; i < z->n_acts && !seen; i++)
            seen = z->acts[i] == n->in[0];
        if (!seen)
            z->acts[z->n_acts++] = n->in[0];
    }
    return SMELT_OK;
}

/* The live value of g's top block named name (a parameter or a node's
 * output), or NULL. */
static sm_value *find_value(sm_rw *rw, sm_block *top, const char *name)
{
    for (int i = 0; i < top->n_params; i++)
        if (!strcmp(top->params[i]->name, name))
            return top->params[i];
    for (sm_node *n = sm_rw_first(rw, top); n; n = sm_rw_next(rw, n))
        for (int i = 0; i < n->n_out; i++)
            if (n->out[i] && !strcmp(n->out[i]->name, name))
                return n->out[i];
    return NULL;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The range of t's finite values the observer keeps, in lo / hi. */
static smelt_status observe(qat *z, const sm_tensor *t, float *lo, float *hi)
{
    const float *v = t->data;
    int64_t n = 0;
    float mn = 0, mx = 0;
    for (int64_t i = 0; i < t->numel; i++)
        if (isfinite(v[i])) {
            mn = n == 0 || v[i] < mn ? v[i] : mn;
            mx = n == 0 || v[i] > mx ? v[i] : mx;
            n++;
        }
    *lo = mn;
    *hi = mx;
    if (z->o->observer != SMELT_QAT_PERCENTILE || n < 2)
        return SMELT_OK;
    float *s = sm_malloc((size_t)n * sizeof *s);
    if (!s)
        return sm_err_nomem(z->ctx);
    int64_t k = 0;
    for (int64_t i = 0; i < t->numel; i++)
        if (isfinite(v[i]))
            s[k++] = v[i];
    qsort(s, (size_t)n, sizeof *s, cmp_float);
    double f = z->o->percentile / 100.0;
    int64_t ih = (int64_t)floor(f * (double)(n - 1) + 0.5);
    int64_t il = (n - 1) - ih;
    *lo = s[il < 0 ? 0 : il];
    *hi = s[ih >= n ? n - 1 : ih];
    sm_free(s);
    return SMELT_OK;
}

/* Runs a copy of the graph with every activation as an extra output on
 * the calibration inputs and records each one's range. */
static smelt_status calibrate(qat *z, smelt_tensor_t *const *inputs,
                              int n_inputs)
{
    z->lo = sm_calloc((size_t)z->n_acts + 1, sizeof *z->lo);
    z->hi = sm_calloc((size_t)z->n_acts + 1, sizeof *z->hi);
    if (!z->lo || !z->hi)
        return sm_err_nomem(z->ctx);
    if (!z->n_acts)
        return SMELT_OK;
    if (n_inputs != z->g->top->n_params || !inputs)
        return sm_err(z->ctx, SMELT_ERR_INVALID_ARG,
                      "quantize --qat: the model has %d inputs, %d "
                      "calibration inputs given",
                      z->g->top->n_params, n_inputs);
    sm_graph *c = NULL;
    sm_rw *rw = NULL;
    SM_TRY(sm_graph_clone(z->ctx, z->g, &c));
    int n_out0 = c->top->n_ret, n_out = n_out0 + z->n_acts;
    smelt_tensor_t **outs = sm_calloc((size_t)n_out, sizeof *outs);
    smelt_status st = outs ? sm_rw_new(z->ctx, c, &rw) : sm_err_nomem(z->ctx);
    for (int i = 0; st == SMELT_OK && i < z->n_acts; i++) {
        sm_value *v = find_value(rw, c->top, z->acts[i]->name);
        st = v ? sm_rw_add_ret(rw, c->top, v)
               : sm_err(z->ctx, SMELT_ERR_VERIFY,
                        "quantize --qat: activation '%s' lost in the copy",
                        z->acts[i]->name);
    }
    if (rw)
        sm_rw_free(rw);
    if (st == SMELT_OK)
        st =
            smelt_graph_run_reference(z->ctx, c, inputs, n_inputs, outs, n_out);
    for (int i = 0; st == SMELT_OK && i < z->n_acts; i++) {
        const sm_tensor *t = outs[n_out0 + i];
        if (t->dtype != SMELT_DTYPE_F32)
            st = sm_err(z->ctx, SMELT_ERR_VERIFY,
                        "quantize --qat: activation '%s' is not f32",
                        z->acts[i]->name);
        else
            st = observe(z, t, &z->lo[i], &z->hi[i]);
    }
    for (int i = 0; outs && i < n_out; i++)
        smelt_tensor_free(outs[i]);
    sm_free(outs);
    sm_graph_free(c);
    return st;
}

/* A new scalar-or-[n] constant tensor of dtype dt. */
static smelt_status param(qat *z, smelt_dtype dt, int64_t n, sm_tensor **t)
{
    return sm_tensor_new(z->ctx, dt, n > 1 ? 1 : 0, &n, t);
}

/* Adds QuantizeLinear -> DequantizeLinear of v (scale s, zero point zp,
 * both taken) before node `before`; the dequantized value in *out. */
static smelt_status add_pair(qat *z, sm_value *v, sm_node *before, sm_tensor *s,
                             sm_tensor *zp, int axis, sm_value **out)
{
    char nm[300], on[300];
    /* the scale is learned through its logarithm: Exp keeps it positive,
     * and an optimizer's step moves it by a ratio, whatever its size */
    float *sd = s->data;
    for (int64_t i = 0; i < s->numel; i++)
        sd[i] = logf(sd[i]);
    snprintf(nm, sizeof nm, "%s_qat_log_scale", v->name);
    sm_value *lv = sm_rw_add_const(z->rw, z->g->top, nm, s);
    if (!lv) {
        sm_tensor_free(zp);
        return sm_err_nomem(z->ctx);
    }
    snprintf(nm, sizeof nm, "%s_qat_Exp", v->name);
    snprintf(on, sizeof on, "%s_qat_scale", v->name);
    const char *sn[1] = {on};
    sm_node *e = sm_rw_node_new(z->rw, z->g->top, before, SM_OP_Exp,
                                sm_rw_unique_name(z->rw, nm), 1, &lv, 1, sn);
    if (!e) {
        sm_tensor_free(zp);
        return sm_err_nomem(z->ctx);
    }
    SM_TRY(sm_rw_infer_node(z->rw, e));
    sm_value *sv = e->out[0];
    snprintf(nm, sizeof nm, "%s_qat_zero_point", v->name);
    sm_value *zv = sm_rw_add_const(z->rw, z->g->top, nm, zp);
    if (!zv)
        return sm_err_nomem(z->ctx);
    sm_value *in[3] = {v, sv, zv};
    snprintf(nm, sizeof nm, "%s_QuantizeLinear", v->name);
    snprintf(on, sizeof on, "%s_quantized", v->name);
    const char *names[1] = {on};
    sm_node *q = sm_rw_node_new(z->rw, z->g->top, before, SM_OP_QuantizeLinear,
                                sm_rw_unique_name(z->rw, nm), 3, in, 1, names);
    if (!q || !sm_node_set_int(q, "axis", axis))
        return sm_err_nomem(z->ctx);
    SM_TRY(sm_rw_infer_node(z->rw, q));
    in[0] = q->out[0];
    snprintf(nm, sizeof nm, "%s_DequantizeLinear", v->name);
    snprintf(on, sizeof on, "%s_dequantized", v->name);
    sm_node *d =
        sm_rw_node_new(z->rw, z->g->top, before, SM_OP_DequantizeLinear,
                       sm_rw_unique_name(z->rw, nm), 3, in, 1, names);
    if (!d || !sm_node_set_int(d, "axis", axis))
        return sm_err_nomem(z->ctx);
    SM_TRY(sm_rw_infer_node(z->rw, d));
    *out = d->out[0];
    return SMELT_OK;
}

/* The dequantized copy of v already made, or NULL. */
static sm_value *done(const qat *z, const sm_value *v)
{
    for (int i = 0; i < z->n_done; i++)
        if (z->done_v[i] == v)
            return z->done_q[i];
    return NULL;
}

/* Fake quantization of activation act (index a) before `before`. */
static smelt_status quantize_act(qat *z, int a, sm_node *before, sm_value **out)
{
    double lo = z->lo[a] < 0 ? z->lo[a] : 0, hi = z->hi[a] > 0 ? z->hi[a] : 0;
    float s = (float)((hi - lo) / 255.0);
    if (!(s > 0) || !isfinite(s))
        s = 1;
    double zq = nearbyint(-lo / s);
    zq = zq < 0 ? 0 : zq > 255 ? 255 : zq;
    sm_tensor *st = NULL, *zt = NULL;
    SM_TRY(param(z, SMELT_DTYPE_F32, 1, &st));
    smelt_status r = param(z, SMELT_DTYPE_U8, 1, &zt);
    if (r != SMELT_OK) {
        sm_tensor_free(st);
        return r;
    }
    ((float *)st->data)[0] = s;
    ((uint8_t *)zt->data)[0] = (uint8_t)zq;
    return add_pair(z, z->acts[a], before, st, zt, 1, out);
}

/* Fake quantization of the constant weight w (channel axis `axis`)
 * before `before`: s8, symmetric, per tensor or per channel. */
static smelt_status quantize_weight(qat *z, sm_value *w, int axis,
                                    sm_node *before, sm_value **out)
{
    const sm_tensor *t = w->data;
    const float *v = t->data;
    int per = z->o->per_channel;
    int64_t ch = t->dims[axis], inner = 1;
    for (int d = axis + 1; d < t->ndim; d++)
        inner *= t->dims[d];
    sm_tensor *st = NULL, *zt = NULL;
    SM_TRY(param(z, SMELT_DTYPE_F32, per ? ch : 1, &st));
    smelt_status r = param(z, SMELT_DTYPE_I8, per ? ch : 1, &zt);
    if (r != SMELT_OK) {
        sm_tensor_free(st);
        return r;
    }
    float *sc = st->data;
    for (int64_t c = 0; c < (per ? ch : 1); c++)
        sc[c] = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        int64_t c = per ? (i / inner) % ch : 0;
        float a = fabsf(v[i]);
        sc[c] = isfinite(a) && a > sc[c] ? a : sc[c];
    }
    for (int64_t c = 0; c < (per ? ch : 1); c++)
        sc[c] = sc[c] > 0 ? sc[c] / 127.0f : 1.0f;
    memset(zt->data, 0, (size_t)zt->numel);
    return add_pair(z, w, before, st, zt, axis, out);
}

/* Remembers that v's fake-quantized copy is q. */
static smelt_status remember(qat *z, sm_value *v, sm_value *q, int cap)
{
    if (z->n_done >= cap)
        return sm_err(z->ctx, SMELT_ERR_VERIFY, "quantize --qat: overflow");
    z->done_v[z->n_done] = v;
    z->done_q[z->n_done++] = q;
    return SMELT_OK;
}

/* Inserts the pairs and points every layer at the dequantized values. */
static smelt_status insert(qat *z, sm_strbuf *names)
{
    int cap = 2 * z->n_layers + 1;
    z->done_v = sm_calloc((size_t)cap, sizeof *z->done_v);
    z->done_q = sm_calloc((size_t)cap, sizeof *z->done_q);
    if (!z->done_v || !z->done_q)
        return sm_err_nomem(z->ctx);
    for (int i = 0; i < z->n_layers; i++) {
        sm_node *n = z->layers[i].n;
        sm_value *x = n->in[0], *w = n->in[1], *xq = done(z, x),
                 *wq = done(z, w);
        if (!xq) {
            int a = 0;
            while (z->acts[a] != x)
                a++;
            SM_TRY(quantize_act(z, a, n, &xq));
            SM_TRY(remember(z, x, xq, cap));
        }
        if (!wq) {
            SM_TRY(quantize_weight(z, w, z->layers[i].axis, n, &wq));
            SM_TRY(remember(z, w, wq, cap));
        }
        SM_TRY(sm_rw_set_input(z->rw, n, 0, xq));
        SM_TRY(sm_rw_set_input(z->rw, n, 1, wq));
        sm_strbuf_appendf(names, "%s%s", i ? "," : "",
                          n->name ? n->name : n->out[0]->name);
    }
    return SMELT_OK;
}

smelt_status smelt_graph_quantize_qat(smelt_ctx_t *ctx, smelt_graph_t *g,
                                      const smelt_qat_options *opt,
                                      smelt_tensor_t *const *inputs,
                                      int n_inputs, char **layers)
{
    if (layers)
        *layers = NULL;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_quantize_qat: NULL graph");
    smelt_qat_options o;
    smelt_qat_options_default(&o);
    if (opt)
        SM_TRY(sm_sized_in(ctx, "smelt_qat_options", &o, sizeof o,
                           QAT_OPTIONS_V1, opt));
    if (o.observer != SMELT_QAT_MINMAX && o.observer != SMELT_QAT_PERCENTILE)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_quantize_qat: unknown observer %d",
                      (int)o.observer);
    if (!(o.percentile > 50 && o.percentile <= 100))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_quantize_qat: percentile %g is not in "
                      "(50, 100]",
                      o.percentile);
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.level = 1;
    SM_TRY(smelt_graph_optimize(ctx, g, &oo, NULL));
    qat z = {.ctx = ctx, .g = g, .o = &o};
    sm_strbuf names;
    sm_strbuf_init(&names);
    smelt_status st = sm_rw_new(ctx, g, &z.rw);
    if (st == SMELT_OK)
        st = find_layers(&z);
    if (st == SMELT_OK)
        st = calibrate(&z, inputs, n_inputs);
    if (st == SMELT_OK)
        st = insert(&z, &names);
    if (z.rw)
        sm_rw_free(z.rw);
    if (st == SMELT_OK)
        st = sm_graph_infer(ctx, g);
    if (st == SMELT_OK && layers)
        st = sm_strbuf_take(&names, ctx, layers);
    sm_strbuf_free(&names);
    sm_free(z.layers);
    sm_free(z.acts);
    sm_free(z.lo);
    sm_free(z.hi);
    sm_free(z.done_v);
    sm_free(z.done_q);
    return st;
}
