/*
 * fuse_conv.c - the fuse_conv pass: a Conv and the elementwise epilogue
 * that follows it become one FusedConv.
 *
 * Starting at each Conv (or a FusedConv that has no epilogue yet), the
 * chain below is absorbed while every intermediate value has exactly one
 * user, in the same block:
 *
 *   Add of a constant with one value per output channel -> merged into B
 *   Add of a value that broadcasts onto the result      -> residual R
 *   Relu, Clip (constant bounds), Sigmoid, silu (x * Sigmoid(x)), Tanh,
 *   LeakyRelu or Gelu                                    -> activation
 *
 * The activation ends the chain. Each place where a chain stops although
 * an Add or an activation follows is a near miss, logged for
 * --why-not-fused.
 */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "passes/fuse_util.h"

#define MAX_CHAIN 8

typedef struct conv_match {
    sm_node *conv;
    sm_node *chain[MAX_CHAIN]; /* absorbed nodes after the conv, in order */
    int n;
    sm_value *adds[MAX_CHAIN]; /* per-channel constants to merge into B */
    int n_adds;
    sm_value *residual;
    sm_act act;
    sm_value *out; /* what the last absorbed node produces */
} conv_match;

/* Output channels of the conv: W's dim 0, else the result's dim 1. */
static int64_t out_channels(const sm_node *conv)
{
    const sm_type *w = &conv->in[1]->type, *y = &conv->out[0]->type;
    if (w->ndim > 0 && w->dims[0].size >= 0)
        return w->dims[0].size;
    return y->ndim > 1 ? y->dims[1].size : -1;
}

/* Whether constant c, added to y ([N, M, ...]), adds one value per output
 * channel (or one value to everything). */
static int per_channel(const sm_value *c, const sm_type *y, int64_t m)
{
    if (!c || !c->data || m < 0 || y->ndim < 2 || c->data->ndim > y->ndim ||
        c->type.dtype != y->dtype)
        return 0;
    int k = 1 - (y->ndim - c->data->ndim); /* c's dim facing the channels */
    for (int d = 0; d < c->data->ndim; d++) {
        int64_t s = c->data->dims[d];
        if (d == k ? s != 1 && s != m : s != 1)
            return 0;
    }
    return 1;
}

/* Takes the Adds after m->out: per-channel constants, then a residual. */
static void match_adds(sm_pass_ctx *pc, sm_rw *rw, conv_match *m)
{
    int64_t ch = out_channels(m->conv);
    const sm_value *b = m->conv->n_in > 2 ? m->conv->in[2] : NULL;
    for (;;) {
        sm_node *u = sm_fu_user(rw, m->out);
        if (!u || u->op != SM_OP_Add || m->n + 3 > MAX_CHAIN)
            return;
        sm_value *o = sm_fu_other(u, m->out);
        if (!o)
            return;
        if (per_channel(o, &m->out->type, ch) && (!b || b->data)) {
            m->adds[m->n_adds++] = o;
        } else if (m->residual) {
            sm_fu_miss(pc, m->conv,
                       "a second Add of a non-constant %%%s found but the "
                       "residual input is already taken",
                       o->name);
            return;
        } else if (o->type.dtype == m->out->type.dtype &&
                   sm_fu_fits_onto(&o->type, &m->out->type)) {
            m->residual = o;
        } else {
            sm_fu_miss_bcast(pc, m->conv, o, m->out);
            return;
        }
        m->chain[m->n++] = u;
        m->out = u->out[0];
    }
}

/* The new bias: B (or zeros) plus every per-channel constant, in double. */
static sm_value *merged_bias(sm_rw *rw, const conv_match *m, int64_t ch)
{
    sm_value *b = m->conv->n_in > 2 ? m->conv->in[2] : NULL;
    if (!m->n_adds)
        return b;
    smelt_dtype dt = m->out->type.dtype;
    sm_tensor *t;
    if (sm_tensor_new(NULL, dt, 1, &ch, &t) != SMELT_OK)
        return NULL;
    for (int64_t c = 0; c < ch; c++) {
        double v = b ? sm_load_f64(b->data->dtype, b->data->data, c) : 0;
        for (int k = 0; k < m->n_adds; k++) {
            const sm_tensor *a = m->adds[k]->data;
            v += sm_load_f64(a->dtype, a->data, a->numel == 1 ? 0 : c);
        }
        sm_store_f64(dt, t->data, c, v);
    }
    char base[160];
    snprintf(base, sizeof base, "%s_bias",
             m->conv->name ? m->conv->name : m->conv->out[0]->name);
    return sm_rw_add_const(rw, m->conv->owner, base, t);
}

/* Builds the FusedConv for a match and retires the nodes it absorbs. */
static smelt_status rewrite(sm_pass_ctx *pc, sm_rw *rw, conv_match *m)
{
    sm_node *conv = m->conv;
    int64_t ch = out_channels(conv);
    sm_value *b = merged_bias(rw, m, ch);
    if (m->n_adds && !b)
        return sm_err_nomem(pc->ctx);
    sm_value *in[4] = {conv->in[0], conv->in[1], b, m->residual};
    int n_in = m->residual ? 4 : b ? 3 : 2;
    sm_node *last = m->chain[m->n - 1];
    sm_node *f = sm_rw_node_new(rw, conv->owner, last, SM_OP_FusedConv,
                                conv->name, n_in, in, 1, &m->out->name);
    if (!f || !sm_fu_copy_attrs(f, conv) || !sm_fu_set_act(f, &m->act))
        return sm_err_nomem(pc->ctx);
    f->out[0]->type = m->out->type;
    SM_TRY(sm_rw_infer_node(rw, f));
    sm_node *dead[MAX_CHAIN + 1] = {conv};
    memcpy(dead + 1, m->chain, sizeof(sm_node *) * (size_t)m->n);
    sm_fu_replace(rw, f, m->out, dead, m->n + 1);
    pc->stats->fused += m->n + 1;
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* Whether n may start a chain: a Conv, or a FusedConv with no residual
 * and no activation yet. */
static int chain_start(const sm_node *n)
{
    if (n->op == SM_OP_Conv)
        return 1;
    if (n->op != SM_OP_FusedConv || (n->n_in > 3 && n->in[3]))
        return 0;
    sm_attrs at = sm_node_attrs(n);
    return strcmp(sm_attrs_string(&at, "activation", "none"), "none") == 0;
}

static smelt_status fuse_one(sm_pass_ctx *pc, sm_rw *rw, const sm_fu_silu *si,
                             sm_node *conv)
{
    conv_match m = {.conv = conv, .out = conv->out[0]};
    m.act.kind = SM_ACT_NONE;
    match_adds(pc, rw, &m);
    sm_fu_act act;
    char why[200];
    if (sm_fu_match_act(rw, si, m.out, &act, why, sizeof why)) {
        m.act = act.act;
        for (int k = 0; k < act.n; k++)
            m.chain[m.n++] = act.nodes[k];
        m.out = act.out;
    } else if (why[0]) {
        sm_fu_miss(pc, conv, "%s", why);
    } else {
        sm_fu_miss_users(pc, rw, conv, m.out);
    }
    if (m.n == 0)
        return SMELT_OK;
    return rewrite(pc, rw, &m);
}

smelt_status sm_pass_fuse_conv(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_fu_run_chains(pc, g, chain_start, fuse_one);
}
