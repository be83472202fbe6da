/*
 * fuse_gemm.c - the fuse_gemm pass: a MatMul or Gemm and the elementwise
 * epilogue that follows it become one FusedGemm,
 *
 *   act(alpha * op(A) op(B) + beta * C + R).
 *
 * Starting at each float MatMul, Gemm (or FusedGemm with no epilogue
 * yet), the chain below is absorbed while every intermediate value has
 * exactly one user, in the same block:
 *
 *   Mul or Div by a constant scalar (before any Add) -> alpha
 *   Add of a value that broadcasts onto the result -> bias C (when the
 *                                                     node has none yet)
 *   a second such Add                              -> residual R
 *   Relu, Clip (constant bounds), Sigmoid, silu, Tanh, LeakyRelu, Gelu
 *                                                  -> activation (last)
 *
 * An Add whose other operand would broadcast the result to a larger
 * shape stops the chain; so does a value with several users. Both are
 * near misses for --why-not-fused.
 */
#include <string.h>

#include "passes/fuse_util.h"

#define MAX_CHAIN 6

typedef struct gemm_match {
    sm_node *mm;
    sm_node *chain[MAX_CHAIN];
    int n;
    sm_value *c, *r; /* bias and residual (c may be the Gemm's own C) */
    int c_from_add, adds;
    double alpha; /* the node's alpha times the scalings absorbed */
    int scaled;
    sm_act act;
    sm_value *out;
} gemm_match;

/* Mul or Div by a constant scalar right after the product, before any
 * bias (which it would scale too): folded into alpha. */
static void match_scale(sm_rw *rw, gemm_match *m)
{
    while (!m->c && m->n < 2) {
        sm_node *u = sm_fu_user(rw, m->out);
        if (!u || (u->op != SM_OP_Mul && u->op != SM_OP_Div))
            return;
        sm_value *o = sm_fu_other(u, m->out);
        double s;
        if (!o || !sm_fu_scalar(o, &s) || o->type.dtype != m->out->type.dtype ||
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

/* Takes up to two Adds after m->out: the bias (unless the node has one),
 * then the residual. */
static void match_adds(sm_pass_ctx *pc, sm_rw *rw, gemm_match *m)
{
    while (m->adds < 2) {
        sm_node *u = sm_fu_user(rw, m->out);
        if (!u || u->op != SM_OP_Add)
            return;
        sm_value *o = sm_fu_other(u, m->out);
        if (!o)
            return;
        if (o->type.dtype != m->out->type.dtype ||
            !sm_fu_fits_onto(&o->type, &m->out->type)) {
            sm_fu_miss_bcast(pc, m->mm, o, m->out);
            return;
        }
        if (!m->c) {
            m->c = o;
            m->c_from_add = 1;
        } else if (!m->r) {
            m->r = o;
        } else {
            return;
        }
        m->adds++;
        m->chain[m->n++] = u;
        m->out = u->out[0];
    }
}

/* Gemm's attributes onto f; beta becomes 1 when C comes from an Add. */
static int set_attrs(sm_node *f, const gemm_match *m)
{
    if (m->mm->op != SM_OP_MatMul && !sm_fu_copy_attrs(f, m->mm))
        return 0;
    if (m->c_from_add && m->mm->op != SM_OP_MatMul &&
        !sm_node_set_float(f, "beta", 1.0))
        return 0;
    if (m->scaled && !sm_node_set_float(f, "alpha", m->alpha))
        return 0;
    return sm_fu_set_act(f, &m->act);
}

static smelt_status rewrite(sm_pass_ctx *pc, sm_rw *rw, gemm_match *m)
{
    sm_value *in[4] = {m->mm->in[0], m->mm->in[1], m->c, m->r};
    int n_in = m->r ? 4 : m->c ? 3 : 2;
    sm_node *f =
        sm_rw_node_new(rw, m->mm->owner, m->chain[m->n - 1], SM_OP_FusedGemm,
                       m->mm->name, n_in, in, 1, &m->out->name);
    if (!f || !set_attrs(f, m))
        return sm_err_nomem(pc->ctx);
    f->out[0]->type = m->out->type;
    SM_TRY(sm_rw_infer_node(rw, f));
    sm_node *dead[MAX_CHAIN + 1] = {m->mm};
    memcpy(dead + 1, m->chain, sizeof(sm_node *) * (size_t)m->n);
    sm_fu_replace(rw, f, m->out, dead, m->n + 1);
    pc->stats->fused += m->n + 1;
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* A float MatMul or Gemm, or a FusedGemm without residual or
 * activation. */
static int chain_start(const sm_node *n)
{
    if (!sm_fu_is_float(n->out[0]))
        return 0;
    if (n->op == SM_OP_MatMul || n->op == SM_OP_Gemm)
        return 1;
    if (n->op != SM_OP_FusedGemm || (n->n_in > 3 && n->in[3]))
        return 0;
    sm_attrs at = sm_node_attrs(n);
    return strcmp(sm_attrs_string(&at, "activation", "none"), "none") == 0;
}

static smelt_status fuse_one(sm_pass_ctx *pc, sm_rw *rw, const sm_fu_silu *si,
                             sm_node *mm)
{
    gemm_match m = {.mm = mm, .out = mm->out[0]};
    m.act.kind = SM_ACT_NONE;
    sm_attrs at = sm_node_attrs(mm);
    m.alpha = sm_attrs_float(&at, "alpha", 1.0);
    if (mm->n_in > 2 && mm->in[2])
        m.c = mm->in[2];
    match_scale(rw, &m);
    match_adds(pc, rw, &m);
    sm_fu_act act;
    char why[200];
    if (sm_fu_match_act(rw, si, m.out, &act, why, sizeof why)) {
        m.act = act.act;
        for (int k = 0; k < act.n; k++)
            m.chain[m.n++] = act.nodes[k];
        m.out = act.out;
    } else if (why[0]) {
        sm_fu_miss(pc, mm, "%s", why);
    } else {
        sm_fu_miss_users(pc, rw, mm, m.out);
    }
    return m.n ? rewrite(pc, rw, &m) : SMELT_OK;
}

smelt_status sm_pass_fuse_gemm(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_fu_run_chains(pc, g, chain_start, fuse_one);
}
