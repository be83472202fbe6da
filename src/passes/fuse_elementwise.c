/*
 * fuse_elementwise.c - the fuse_elementwise pass: regions of elementwise
 * and broadcasting nodes become one FusedElementwise node whose body
 * holds them.
 *
 * A region grows backwards from its root (the last node, whose output
 * leaves the region): a producer joins when it is elementwise or
 * broadcasting (one output, no sub-blocks), sits in the same block, and
 * every use of its output is an input of a node already in the region.
 * So no value but the root's escapes, the region has no path out and
 * back in, and chains, trees and shared subexpressions such as
 * x * Sigmoid(x) all fit. Regions of one node stay as they are.
 *
 * The body's parameters are the region's inputs (constants included),
 * in first-use order; its one return is the root's value, whose name the
 * FusedElementwise output takes over. The reference kernel runs the body
 * with the reference kernels, so the result is exactly the unfused one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "passes/pattern.h"

#define MAX_REGION 256
/* At most this many region inputs: the executors pass at most 64
 * operands to a node. */
#define MAX_INPUTS 64

/* Nodes the pass may put in a region. */
static int fusible(const sm_node *n)
{
    sm_op_class c = sm_op_info_get(n->op)->cls;
    return (c == SM_CLASS_ELEMWISE || c == SM_CLASS_BROADCAST) &&
           n->n_out == 1 && n->n_blocks == 0 && n->op != SM_OP_Dropout;
}

typedef struct region {
    sm_node *nodes[MAX_REGION]; /* root first, then as they joined */
    int n;
    unsigned char *in; /* by node id: member */
    int ids;           /* node ids below this existed when the pass began */
} region;

/* Whether node p (maybe made by this pass) is in r. */
static int member(const region *r, const sm_node *p)
{
    return p && p->id < r->ids && r->in[p->id];
}

/* How many inputs of region nodes read v. */
static int uses_inside(const region *r, const sm_value *v)
{
    int k = 0;
    for (int i = 0; i < r->n; i++)
        for (int j = 0; j < r->nodes[i]->n_in; j++)
            k += r->nodes[i]->in[j] == v;
    return k;
}

/* Grows r to a fixpoint from its root. */
static void grow(sm_rw *rw, region *r, const unsigned char *taken)
{
    int changed = 1;
    while (changed && r->n < MAX_REGION) {
        changed = 0;
        for (int i = 0; i < r->n && r->n < MAX_REGION; i++)
            for (int j = 0; j < r->nodes[i]->n_in && r->n < MAX_REGION; j++) {
                sm_value *v = r->nodes[i]->in[j];
                sm_node *p = v ? v->def : NULL;
                if (!p || p->id >= r->ids || r->in[p->id] || taken[p->id] ||
                    !fusible(p) || p->owner != r->nodes[0]->owner ||
                    sm_rw_is_removed(rw, p) ||
                    uses_inside(r, v) != sm_rw_uses(rw, v))
                    continue;
                r->in[p->id] = 1;
                r->nodes[r->n++] = p;
                changed = 1;
            }
    }
}

/* Near misses: fusible producers of region inputs, in the same block,
 * left out only because their value is also used elsewhere. */
static void explain(sm_pass_ctx *pc, sm_rw *rw, const region *r,
                    const unsigned char *taken)
{
    if (!pc->opt->why_not_fused)
        return;
    for (int i = 0; i < r->n; i++)
        for (int j = 0; j < r->nodes[i]->n_in; j++) {
            const sm_value *v = r->nodes[i]->in[j];
            const sm_node *p = v ? v->def : NULL;
            if (!p || p->id >= r->ids || r->in[p->id] || taken[p->id] ||
                !fusible(p) || p->owner != r->nodes[0]->owner ||
                sm_rw_is_removed(rw, p))
                continue;
            int inside = uses_inside(r, v), all = sm_rw_uses(rw, v);
            sm_pat_miss(pc, r->nodes[0],
                        "%s producing %%%s stays out of the region: %d of its "
                        "%d uses are outside%s",
                        sm_op_info_get(p->op)->name, v->name, all - inside, all,
                        sm_rw_is_output(rw, v) ? " (a graph output)" : "");
        }
}

/* Snapshot positions of the nodes that existed when the pass began, for
 * sorting a region into block order without rescanning the block. */
static const int *order_pos;

static int by_pos(const void *a, const void *b)
{
    int x = order_pos[(*(sm_node *const *)a)->id];
    int y = order_pos[(*(sm_node *const *)b)->id];
    return (x > y) - (x < y);
}

/* The region's nodes in block order (the order of the snapshot); pos[id]
 * is a node's index in the snapshot. Sorting the few members keeps the
 * pass linear where scanning the snapshot per region made it quadratic. */
static void order_nodes(region *r, const int *pos)
{
    order_pos = pos;
    qsort(r->nodes, (size_t)r->n, sizeof *r->nodes, by_pos);
    order_pos = NULL;
}

/* The values region nodes read that no region node defines, deduplicated,
 * in first-use order; -1 when there are more than cap. */
static int region_inputs(const region *r, sm_value **ext, int cap)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        for (int j = 0; j < r->nodes[i]->n_in; j++) {
            sm_value *v = r->nodes[i]->in[j];
            int dup = 0;
            if (!v || member(r, v->def))
                continue;
            for (int k = 0; k < n && !dup; k++)
                dup = ext[k] == v;
            if (!dup && n == cap)
                return -1;
            if (!dup)
                ext[n++] = v;
        }
    return n;
}

/* The value map of build(), by value id: kept for the whole pass and
 * cleared entry by entry, since a fresh one per region costs a pass over
 * every value of the graph each time. */
typedef struct value_map {
    sm_value **map;
    int n;
} value_map;

/* Grows m to cover every value of g, new entries NULL. */
static int map_fit(value_map *m, const sm_graph *g)
{
    if (m->n >= g->n_values)
        return 1;
    int nn = g->n_values + g->n_values / 2 + 16;
    sm_value **p = sm_realloc(m->map, sizeof *p * (size_t)nn);
    if (!p)
        return 0;
    memset(p + m->n, 0, sizeof *p * (size_t)(nn - m->n));
    m->map = p;
    m->n = nn;
    return 1;
}

/* Builds the FusedElementwise of region r (nodes in block order, the root
 * last) and removes the originals. */
static smelt_status build(sm_pass_ctx *pc, sm_rw *rw, sm_graph *g, region *r,
                          value_map *vm)
{
    sm_value *ext[MAX_INPUTS];
    int n_ext = region_inputs(r, ext, MAX_INPUTS);
    sm_node *root = r->nodes[r->n - 1];
    if (n_ext < 0) {
        sm_pat_miss(pc, root,
                    "a region of %d elementwise nodes reads more than %d "
                    "values",
                    r->n, MAX_INPUTS);
        return SMELT_OK;
    }
    sm_value *out = root->out[0];
    sm_value **map = map_fit(vm, g) ? vm->map : NULL;
    int map_n = g->n_values;
    sm_node *f =
        map ? sm_rw_node_new(rw, root->owner, root, SM_OP_FusedElementwise,
                             NULL, n_ext, ext, 1, &out->name)
            : NULL;
    sm_block *body = f ? sm_rw_block_new(rw, f, "body") : NULL;
    smelt_status st = body ? SMELT_OK : sm_err_nomem(pc->ctx);
    for (int i = 0; i < n_ext && st == SMELT_OK; i++) {
        char nm[160];
        snprintf(nm, sizeof nm, "%s_in", ext[i]->name);
        map[ext[i]->id] = sm_rw_add_param(rw, body, nm, &ext[i]->type);
        if (!map[ext[i]->id])
            st = sm_err_nomem(pc->ctx);
    }
    for (int i = 0; i < r->n && st == SMELT_OK; i++)
        if (!sm_rw_clone_node(rw, body, NULL, r->nodes[i], map, map_n, NULL))
            st = sm_err_nomem(pc->ctx);
    if (st == SMELT_OK)
        st = sm_rw_add_ret(rw, body, map[out->id]);
    for (int i = 0; map && i < n_ext; i++)
        map[ext[i]->id] = NULL;
    for (int i = 0; map && i < r->n; i++)
        map[r->nodes[i]->out[0]->id] = NULL;
    SM_TRY(st);
    f->out[0]->type = out->type;
    SM_TRY(sm_rw_infer_node(rw, f));
    sm_pat_replace(rw, f, out, r->nodes, r->n);
    pc->stats->fused += r->n;
    pc->stats->changed = 1;
    return SMELT_OK;
}

smelt_status sm_pass_fuse_elementwise(sm_pass_ctx *pc, sm_graph *g)
{
    sm_rw *rw;
    SM_TRY(sm_rw_new(pc->ctx, g, &rw));
    sm_node **nodes = NULL;
    int n = 0;
    region *r = sm_calloc(1, sizeof *r);
    value_map vm = {0};
    int ids = g->n_nodes_all;
    int *pos = sm_calloc((size_t)ids + 1, sizeof *pos);
    unsigned char *taken = sm_calloc((size_t)ids + 1, 1);
    smelt_status st = SMELT_OK;
    if (r) {
        r->in = sm_calloc((size_t)ids + 1, 1);
        r->ids = ids;
    }
    if (!r || !r->in || !taken || !pos)
        st = sm_err_nomem(pc->ctx);
    if (st == SMELT_OK)
        st = sm_pat_snapshot(pc->ctx, rw, g, &nodes, &n);
    for (int i = 0; i < n; i++)
        if (nodes[i]->id < ids)
            pos[nodes[i]->id] = i;
    /* roots from the end: a node joins the region of the latest user */
    for (int i = n - 1; i >= 0 && st == SMELT_OK; i--) {
        sm_node *root = nodes[i];
        if (root->id >= ids || taken[root->id] || !fusible(root) ||
            sm_rw_is_removed(rw, root))
            continue;
        r->n = 1;
        r->nodes[0] = root;
        r->in[root->id] = 1;
        grow(rw, r, taken);
        explain(pc, rw, r, taken);
        for (int k = 0; k < r->n; k++) {
            taken[r->nodes[k]->id] = 1;
            r->in[r->nodes[k]->id] = 0;
        }
        if (r->n < 2)
            continue;
        for (int k = 0; k < r->n; k++)
            r->in[r->nodes[k]->id] = 1;
        order_nodes(r, pos);
        st = build(pc, rw, g, r, &vm);
        for (int k = 0; k < r->n; k++)
            r->in[r->nodes[k]->id] = 0;
    }
    if (r)
        sm_free(r->in);
    sm_free(r);
    sm_free(taken);
    sm_free(pos);
    sm_free(vm.map);
    sm_free(nodes);
    sm_rw_free(rw);
    return st;
}
