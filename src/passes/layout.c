/*
 * layout.c - the layout pass: which memory layout each convolution's CPU
 * kernel should use, and Transpose pairs cancelled across elementwise ops.
 *
 * Layout is advice, not a change of tensors: every tensor stays NCHW, so
 * every reference kernel and every pass keeps its meaning, and the CPU
 * backend reorders into the chosen layout inside the convolution (or
 * keeps a blocked layout between convolutions that agree). A 2-D
 * convolution gets, in FusedConv's `layout` attribute:
 *
 *   NHWC    depthwise (group = C = M > 1): channels innermost vectorize
 *   NCHWc8  group 1 with M a multiple of 8: output channels in blocks of
 *           8 (one AVX2 register of f32) fill the SIMD lanes
 *   NCHW    everything else
 *
 * A plain Conv that gets another layout than NCHW becomes a FusedConv with
 * no activation (Conv has no layout attribute). The log counts the values
 * that would need a reorder at the boundary of blocked regions.
 *
 * Transposes: Transpose(p1) -> unary elementwise ops (or binary ones with
 * a one-element constant) -> Transpose(p2) where p2 undoes p1 becomes the
 * elementwise ops alone, applied to the untransposed tensor. Direct
 * Transpose pairs are simplify's.
 */
#include <string.h>

#include "core/alloc.h"
#include "passes/pattern.h"

#define MAX_CHAIN 64

/* ---- convolution layout ----------------------------------------------------
 */

/* The layout for a 2-D Conv or FusedConv, NULL when it cannot tell. */
static const char *choose(const sm_node *n)
{
    const sm_type *x = &n->in[0]->type, *w = &n->in[1]->type;
    if (x->ndim != 4 || w->ndim != 4 || x->dims[1].size < 0 ||
        w->dims[0].size < 0)
        return NULL;
    sm_attrs at = sm_node_attrs(n);
    int64_t group = sm_attrs_int(&at, "group", 1);
    int64_t c = x->dims[1].size, m = w->dims[0].size;
    if (group > 1 && group == c && group == m)
        return "NHWC";
    if (group == 1 && m % 8 == 0)
        return "NCHWc8";
    return "NCHW";
}

static const char *layout_of(const sm_node *n)
{
    sm_attrs at = sm_node_attrs(n);
    return n->op == SM_OP_FusedConv ? sm_attrs_string(&at, "layout", "NCHW")
                                    : "NCHW";
}

/* A Conv with a layout becomes a FusedConv without an epilogue. */
static smelt_status to_fused(sm_pass_ctx *pc, sm_rw *rw, sm_node *conv,
                             const char *layout, sm_node **out)
{
    sm_node *f =
        sm_rw_node_new(rw, conv->owner, conv, SM_OP_FusedConv, conv->name,
                       conv->n_in, conv->in, 1, &conv->out[0]->name);
    if (!f || !sm_pat_copy_attrs(f, conv) ||
        !sm_node_set_string(f, "layout", layout))
        return sm_err_nomem(pc->ctx);
    f->out[0]->type = conv->out[0]->type;
    SM_TRY(sm_rw_infer_node(rw, f));
    sm_pat_replace(rw, f, conv->out[0], &conv, 1);
    *out = f;
    return SMELT_OK;
}

/*
 * Values the CPU backend would reorder: each value's layout is its
 * convolution's, or, through elementwise ops (which run in any layout),
 * their first data input's; a value read in another layout than its own
 * (by a convolution, an elementwise op whose inputs disagree, any other
 * op unless NCHW, or the graph's return) counts once. Constants and
 * weights are laid out ahead of time and do not count.
 */
static int count_reorders(sm_rw *rw, sm_graph *g, sm_node *const *nodes, int n)
{
    const char **lay = sm_calloc((size_t)g->n_values + 1, sizeof *lay);
    unsigned char *seen = sm_calloc((size_t)g->n_values + 1, 1);
    int k = 0;
    for (int i = 0; i < n && lay && seen; i++) {
        const sm_node *u = nodes[i];
        if (sm_rw_is_removed(rw, u))
            continue;
        sm_op_class c = sm_op_info_get(u->op)->cls;
        int conv = u->op == SM_OP_Conv || u->op == SM_OP_FusedConv;
        int pointwise = c == SM_CLASS_ELEMWISE || c == SM_CLASS_BROADCAST;
        const char *want = conv ? layout_of(u) : NULL;
        for (int j = 0; j < u->n_in; j++) {
            const sm_value *v = u->in[j];
            if (!v || v->data || v->id >= g->n_values ||
                (conv && (j == 1 || j == 2)))
                continue;
            const char *have = lay[v->id] ? lay[v->id] : "NCHW";
            if (pointwise && !want)
                want = have;
            if (strcmp(have, want ? want : "NCHW") && !seen[v->id]) {
                seen[v->id] = 1;
                k++;
            }
        }
        for (int j = 0; j < u->n_out && (conv || pointwise); j++)
            if (u->out[j]->id < g->n_values)
                lay[u->out[j]->id] = want;
    }
    for (int i = 0; lay && seen && i < g->top->n_ret; i++) {
        const sm_value *v = g->top->ret[i];
        if (v->id < g->n_values && lay[v->id] && strcmp(lay[v->id], "NCHW") &&
            !seen[v->id]) {
            seen[v->id] = 1;
            k++;
        }
    }
    sm_free(lay);
    sm_free(seen);
    return k;
}

static smelt_status choose_layouts(sm_pass_ctx *pc, sm_rw *rw,
                                   sm_node *const *nodes, int n)
{
    int counts[3] = {0};
    for (int i = 0; i < n; i++) {
        sm_node *c = nodes[i];
        if ((c->op != SM_OP_Conv && c->op != SM_OP_FusedConv) ||
            sm_rw_is_removed(rw, c))
            continue;
        const char *l = choose(c);
        if (!l || strcmp(l, layout_of(c)) == 0)
            continue;
        counts[l[4] ? 1 : l[1] == 'H' ? 2 : 0]++;
        if (c->op == SM_OP_Conv) {
            sm_node *f;
            SM_TRY(to_fused(pc, rw, c, l, &f));
        } else if (!sm_node_set_string(c, "layout", l)) {
            return sm_err_nomem(pc->ctx);
        }
        pc->stats->changed = 1;
    }
    if (counts[1] || counts[2])
        sm_pass_log(pc,
                    "layout: %d convolutions blocked (NCHWc8), %d "
                    "depthwise (NHWC)",
                    counts[1], counts[2]);
    return SMELT_OK;
}

/* ---- transposes
 * -------------------------------------------------------------- */

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

smelt_status sm_pass_layout(sm_pass_ctx *pc, sm_graph *g)
{
    sm_rw *rw;
    SM_TRY(sm_rw_new(pc->ctx, g, &rw));
    sm_node **nodes = NULL;
    int n = 0;
    smelt_status st = sm_pat_snapshot(pc->ctx, rw, g, &nodes, &n);
    for (int i = 0; i < n && st == SMELT_OK; i++)
        if (nodes[i]->op == SM_OP_Transpose && !sm_rw_is_removed(rw, nodes[i]))
            st = cancel_at(pc, rw, nodes[i]);
    if (st == SMELT_OK)
        st = choose_layouts(pc, rw, nodes, n);
    sm_free(nodes);
    if (st == SMELT_OK) {
        sm_node **now = NULL;
        st = sm_pat_snapshot(pc->ctx, rw, g, &now, &n);
        int k = st == SMELT_OK ? count_reorders(rw, g, now, n) : 0;
        if (k)
            sm_pass_log(pc,
                        "layout: %d values cross a layout boundary (the "
                        "CPU backend reorders them)",
                        k);
        sm_free(now);
    }
    sm_rw_free(rw);
    return st;
}
