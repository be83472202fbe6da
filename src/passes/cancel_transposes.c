/*
 * cancel_transposes.c - the cancel_transposes pass: Transpose pairs that
 * undo each other across elementwise ops.
 *
 * Transpose(p1) -> unary elementwise ops (or binary ones with a
 * one-element constant) -> Transpose(p2) where p2 undoes p1 becomes the
 * elementwise ops alone, applied to the untransposed tensor: an exported
 * model that goes channels-last around an activation and back (TF-style
 * NHWC islands) then moves no data at all, and the activation may sit
 * right after a convolution, where fuse_epilogue takes it. Direct Transpose
 * pairs are simplify's. The graph says nothing about memory layout; that
 * is the plan's choice (plan/layout.c).
 */
#include "core/alloc.h"
#include "passes/pattern.h"

#define MAX_CHAIN 64

/* The permutation of Transpose n (reversed dims by default), or 0. */
static int perm_of(const sm_node *n, int *p)
{
    int rank = n->in[0]->type.ndim;
    if (rank < 1)
        return 0;
    sm_attrs at = sm_node_attrs(n);
    const int64_t *v;
    int cnt = sm_attrs_ints(&at, "perm", &v);
    if (cnt >= 0 && cnt != rank)
        return 0;
    for (int i = 0; i < rank; i++) {
        p[i] = cnt < 0 ? rank - 1 - i : (int)v[i];
        if (p[i] < 0 || p[i] >= rank)
            return 0;
    }
    return rank;
}

/* Whether e, fed by v, keeps computing elementwise when v is permuted:
 * its other inputs hold one element. */
static int transparent(const sm_node *e, const sm_value *v)
{
    sm_op_class c = sm_op_info_get(e->op)->cls;
    if ((c != SM_CLASS_ELEMWISE && c != SM_CLASS_BROADCAST) || e->n_out != 1 ||
        e->n_blocks || e->op == SM_OP_Dropout || e->n_in > 3)
        return 0;
    int seen = 0;
    for (int i = 0; i < e->n_in; i++) {
        const sm_value *o = e->in[i];
        if (o == v) {
            seen++;
            continue;
        }
        if (o &&
            !(o->data && o->data->numel == 1 && o->type.ndim <= v->type.ndim))
            return 0;
    }
    return seen == 1;
}

/* Cancels the pair ending at Transpose t2 when there is one. */
static smelt_status cancel_at(sm_pass_ctx *pc, sm_rw *rw, sm_node *t2)
{
    sm_node *chain[MAX_CHAIN];
    int k = 0;
    sm_value *cur = t2->in[0];
    while (cur->def && k < MAX_CHAIN && cur->def->op != SM_OP_Transpose &&
           cur->def->owner == t2->owner && sm_rw_uses(rw, cur) == 1) {
        sm_node *e = cur->def;
        sm_value *feed = NULL;
        for (int i = 0; i < e->n_in && !feed; i++)
            if (e->in[i] && !e->in[i]->data)
                feed = e->in[i];
        if (!feed || !transparent(e, feed))
            return SMELT_OK;
        chain[k++] = e;
        cur = feed;
    }
    sm_node *t1 = cur->def;
    int p1[SMELT_MAX_DIMS], p2[SMELT_MAX_DIMS];
    if (k == 0 || !t1 || t1->op != SM_OP_Transpose || t1->owner != t2->owner ||
        sm_rw_uses(rw, cur) != 1)
        return SMELT_OK;
    int r1 = perm_of(t1, p1), r2 = perm_of(t2, p2);
    if (!r1 || r1 != r2)
        return SMELT_OK;
    for (int j = 0; j < r1; j++)
        if (p1[p2[j]] != j) {
            sm_pat_miss(pc, t2,
                        "Transpose pair across %d elementwise ops does not "
                        "cancel (the permutations do not compose to identity)",
                        k);
            return SMELT_OK;
        }
    sm_node *first = chain[k - 1];
    for (int i = 0; i < first->n_in; i++)
        if (first->in[i] == cur)
            SM_TRY(sm_rw_set_input(rw, first, i, t1->in[0]));
    for (int i = k - 1; i >= 0; i--) {
        sm_type_unknown(&chain[i]->out[0]->type);
        SM_TRY(sm_rw_infer_node(rw, chain[i]));
    }
    sm_pat_replace(rw, chain[0], t2->out[0], &t2, 1);
    sm_rw_remove_if_dead(rw, t1);
    sm_pass_log(pc, "cancelled a Transpose pair across %d elementwise ops", k);
    pc->stats->removed += 2;
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* Cancels every pair, in node order; the snapshot keeps the walk valid
 * while the rewriter removes nodes. */
smelt_status sm_pass_cancel_transposes(sm_pass_ctx *pc, sm_graph *g)
{
    sm_rw *rw;
    SM_TRY(sm_rw_new(pc->ctx, g, &rw));
    sm_node **nodes = NULL;
    int n = 0;
    smelt_status st = sm_pat_snapshot(pc->ctx, rw, g, &nodes, &n);
    for (int i = 0; i < n && st == SMELT_OK; i++)
        if (nodes[i]->op == SM_OP_Transpose && !sm_rw_is_removed(rw, nodes[i]))
            st = cancel_at(pc, rw, nodes[i]);
    sm_free(nodes);
    sm_rw_free(rw);
    return st;
}
