/*
 * fuse_epilogue.c - the fuse_epilogue pass: a contraction and the
 * elementwise epilogue that follows it become one fused node,
 *
 *   Conv             -> FusedConv  act(Conv(X, W, B) + R)
 *   MatMul, Gemm     -> FusedGemm  act(alpha * op(A) op(B) + beta * C + R)
 *
 * Starting at each contraction (or a fused node of its kind with no
 * residual and no activation yet), the chain below is absorbed while
 * every intermediate value has exactly one user, in the same block:
 *
 *   Mul or Div by a constant scalar, before any bias  -> alpha (Gemm only)
 *   Add of a bias:                                    -> the third input
 *     Conv: constants with one value per output channel, any number,
 *           merged into B (which must be constant or absent);
 *     Gemm: the first Add of a value that broadcasts onto the result,
 *           when the node has no C yet
 *   Add of a value that broadcasts onto the result    -> residual R
 *   an activation (a row of core/act.def)             -> activation, last
 *
 * What differs between contractions is a few fields of `contraction`;
 * the matching is one. Contractions are fused one kind after the other
 * (all Convs, then all products), each over a fresh snapshot, so that a
 * chain both could take (a Conv whose residual is a product) goes to the
 * Conv. Each place where a chain stops although an Add or an activation
 * follows is a near miss, logged for --why-not-fused.
 */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "passes/pattern.h"

#define MAX_CHAIN 8

/* What a contraction brings to the matcher. */
typedef struct contraction {
    sm_op from[2];    /* the unfused ops that start a chain (COUNT: none) */
    sm_op fused;      /* the op made; a bare one starts a chain too */
    int float_only;   /* only float results start a chain */
    int scales;       /* Mul / Div by a scalar fold into alpha */
    int channel_bias; /* per-channel constants merge into B (else the
                         first Add becomes C) */
} contraction;

static const contraction contractions[] = {
    {{SM_OP_Conv, SM_OP_COUNT}, SM_OP_FusedConv, 0, 0, 1},
    {{SM_OP_MatMul, SM_OP_Gemm}, SM_OP_FusedGemm, 1, 1, 0},
};

typedef struct epi_match {
    const contraction *k;
    sm_node *x;                /* the contraction */
    sm_node *chain[MAX_CHAIN]; /* absorbed nodes after it, in order */
    int n;
    sm_value *c; /* the bias input (B / C), the node's own or an Add's */
    int c_from_add;
    sm_value *adds[MAX_CHAIN]; /* per-channel constants to merge into c */
    int n_adds;
    sm_value *r;  /* residual */
    double alpha; /* the node's alpha times the scalings absorbed */
    int scaled;
    sm_act act;
    sm_value *out; /* what the last absorbed node produces */
} epi_match;

/* Output channels of a conv: W's dim 0, else the result's dim 1. */
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

/* Mul or Div by a constant scalar right after the product, before any
 * bias (which it would scale too): folded into alpha. */
static void match_scale(sm_rw *rw, epi_match *m)
{
    while (!m->c && m->n < 2) {
        sm_node *u = sm_pat_user(rw, m->out);
        if (!u || (u->op != SM_OP_Mul && u->op != SM_OP_Div))
            return;
        sm_value *o = sm_pat_other(u, m->out);
        double s;
        if (!o || !sm_pat_scalar(o, &s) ||
            o->type.dtype != m->out->type.dtype ||
            o->type.ndim > m->out->type.ndim)
            return;
        if (u->op == SM_OP_Div && (u->in[1] != o || s == 0))
            return;
        m->alpha *= u->op == SM_OP_Div ? 1.0 / s : s;
        m->scaled = 1;
        m->chain[m->n++] = u;
        m->out = u->out[0];
    }
}

/* Takes the Adds after m->out: bias terms (per the contraction's rule),
 * then one residual. */
static void match_adds(sm_pass_ctx *pc, sm_rw *rw, epi_match *m)
{
    int64_t ch = m->k->channel_bias ? out_channels(m->x) : -1;
    for (;;) {
        sm_node *u = sm_pat_user(rw, m->out);
        if (!u || u->op != SM_OP_Add || m->n + 3 > MAX_CHAIN)
            return;
        sm_value *o = sm_pat_other(u, m->out);
        if (!o)
            return;
        int fits = o->type.dtype == m->out->type.dtype &&
                   sm_pat_fits_onto(&o->type, &m->out->type);
        if (m->k->channel_bias && per_channel(o, &m->out->type, ch) &&
            (!m->c || m->c->data)) {
            m->adds[m->n_adds++] = o;
        } else if (!m->k->channel_bias && !m->c && fits) {
            m->c = o;
            m->c_from_add = 1;
        } else if (m->r) {
            sm_pat_miss(pc, m->x,
                        "a further Add of %%%s found but the residual "
                        "input is already taken",
                        o->name);
            return;
        } else if (fits) {
            m->r = o;
        } else {
            sm_pat_miss_bcast(pc, m->x, o, m->out);
            return;
        }
        m->chain[m->n++] = u;
        m->out = u->out[0];
    }
}

/* The bias input: c plus every per-channel constant, in double, as a new
 * constant; c itself when there are none. */
static sm_value *merged_bias(sm_rw *rw, const epi_match *m)
{
    if (!m->n_adds)
        return m->c;
    int64_t ch = out_channels(m->x);
    smelt_dtype dt = m->out->type.dtype;
    sm_tensor *t;
    if (sm_tensor_new(NULL, dt, 1, &ch, &t) != SMELT_OK)
        return NULL;
    const sm_tensor *b = m->c ? m->c->data : NULL;
    for (int64_t c = 0; c < ch; c++) {
        double v = b ? sm_load_f64(b->dtype, b->data, c) : 0;
        for (int k = 0; k < m->n_adds; k++) {
            const sm_tensor *a = m->adds[k]->data;
            v += sm_load_f64(a->dtype, a->data, a->numel == 1 ? 0 : c);
        }
        sm_store_f64(dt, t->data, c, v);
    }
    char base[160];
    snprintf(base, sizeof base, "%s_bias",
             m->x->name ? m->x->name : m->x->out[0]->name);
    return sm_rw_add_const(rw, m->x->owner, base, t);
}

/* The contraction's attributes onto f; beta becomes 1 when C comes from
 * an Add, alpha takes the scalings absorbed. */
static int set_attrs(sm_node *f, const epi_match *m)
{
    if (!sm_pat_copy_attrs(f, m->x))
        return 0;
    if (m->c_from_add && m->x->op != SM_OP_MatMul &&
        !sm_node_set_float(f, "beta", 1.0))
        return 0;
    if (m->scaled && !sm_node_set_float(f, "alpha", m->alpha))
        return 0;
    return sm_pat_set_act(f, &m->act);
}

/* Builds the fused node for a match and retires the nodes it absorbs. */
static smelt_status rewrite(sm_pass_ctx *pc, sm_rw *rw, epi_match *m)
{
    sm_value *c = merged_bias(rw, m);
    if (m->n_adds && !c)
        return sm_err_nomem(pc->ctx);
    sm_value *in[4] = {m->x->in[0], m->x->in[1], c, m->r};
    int n_in = m->r ? 4 : c ? 3 : 2;
    sm_node *f =
        sm_rw_node_new(rw, m->x->owner, m->chain[m->n - 1], m->k->fused,
                       m->x->name, n_in, in, 1, &m->out->name);
    if (!f || !set_attrs(f, m))
        return sm_err_nomem(pc->ctx);
    f->out[0]->type = m->out->type;
    SM_TRY(sm_rw_infer_node(rw, f));
    sm_node *dead[MAX_CHAIN + 1] = {m->x};
    memcpy(dead + 1, m->chain, sizeof(sm_node *) * (size_t)m->n);
    sm_pat_replace(rw, f, m->out, dead, m->n + 1);
    pc->stats->fused += m->n + 1;
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* Whether n starts a chain of contraction k: one of its ops, or its
 * fused op with no residual and no activation yet. */
static int chain_start(const void *arg, const sm_node *n)
{
    const contraction *k = arg;
    int from = n->op == k->from[0] || n->op == k->from[1];
    if (!from && n->op != k->fused)
        return 0;
    if (k->float_only && !sm_pat_is_float(n->out[0]))
        return 0;
    if (from)
        return 1;
    if (n->n_in > 3 && n->in[3])
        return 0;
    sm_attrs at = sm_node_attrs(n);
    return strcmp(sm_attrs_string(&at, "activation", "none"), "none") == 0;
}

/* Matches the longest epilogue after x and fuses it, if any. */
static smelt_status fuse_one(sm_pass_ctx *pc, sm_rw *rw, const sm_pat_silu *si,
                             const void *arg, sm_node *x)
{
    epi_match m = {.k = arg, .x = x, .out = x->out[0]};
    m.act.kind = SM_ACT_NONE;
    sm_attrs at = sm_node_attrs(x);
    m.alpha = sm_attrs_float(&at, "alpha", 1.0);
    if (x->n_in > 2 && x->in[2])
        m.c = x->in[2];
    if (m.k->scales)
        match_scale(rw, &m);
    match_adds(pc, rw, &m);
    sm_pat_act_match act;
    char why[200];
    if (sm_pat_match_act(rw, si, m.out, &act, why, sizeof why)) {
        m.act = act.act;
        for (int k = 0; k < act.n; k++)
            m.chain[m.n++] = act.nodes[k];
        m.out = act.out;
    } else if (why[0]) {
        sm_pat_miss(pc, x, "%s", why);
    } else {
        sm_pat_miss_users(pc, rw, x, m.out);
    }
    return m.n ? rewrite(pc, rw, &m) : SMELT_OK;
}

smelt_status sm_pass_fuse_epilogue(sm_pass_ctx *pc, sm_graph *g)
{
    for (size_t i = 0; i < sizeof contractions / sizeof *contractions; i++)
        SM_TRY(
            sm_pat_run_chains(pc, g, chain_start, fuse_one, &contractions[i]));
    return SMELT_OK;
}
