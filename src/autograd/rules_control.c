/*
 * rules_control.c - gradient rules of the control-flow ops If and Loop
 * (docs/AUTOGRAD.md, "Rules: control flow").
 *
 * A sub-block reads the values of the blocks around it directly (it
 * captures them), so the gradient of an If or a Loop reaches, besides
 * the Loop's carried inputs, every outer value its blocks read. Both
 * rules build a backward control node of the same kind whose blocks
 * recompute the forward block (a copy of its nodes, "replayed"), run the
 * engine over the copy from the output gradients, and return the
 * gradients of the outer values; the rule adds those to the outer
 * values' gradients. The engine's tables are by value id, so the outer
 * values' slots are emptied while a block is differentiated and put back
 * after: a block's result is its own contribution only.
 */
#include <stdio.h>
#include <string.h>

#include "autograd/engine.h"
#include "autograd/rules_control.h"
#include "core/alloc.h"

/* Appends v to l unless it is there already; 0 when out of memory. */
static int vlist_add(sm_vlist *l, sm_value *v)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return 1;
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 8;
        sm_value **p = sm_realloc(l->v, (size_t)nc * sizeof *p);
        if (!p)
            return 0;
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n++] = v;
    return 1;
}

void sm_vlist_free(sm_vlist *l)
{
    sm_free(l->v);
    *l = (sm_vlist){0};
}

/* Whether v is defined in b or in a block nested in b. */
static int defined_within(const sm_value *v, const sm_block *b)
{
    for (const sm_block *at = v->block; at;
         at = at->parent ? at->parent->owner : NULL)
        if (at == b)
            return 1;
    return 0;
}

/* Adds to l the values read in blk (nested blocks included) that are
 * defined outside root and need a gradient, in the order of first use. */
static int outer_walk(const sm_grad_engine *e, sm_rw *rw, const sm_block *blk,
                      const sm_block *root, sm_vlist *l)
{
    for (sm_node *n = sm_rw_first(rw, blk); n; n = sm_rw_next(rw, n)) {
        /* An input only a non-differentiable op reads (a loop's stopping
         * test) gets no gradient from the block. */
        sm_grad_fn rule = sm_grad_rule(n->op);
        int reads = rule != sm_grad_none && rule != sm_grad_zero;
        for (int i = 0; reads && i < n->n_in; i++) {
            sm_value *v = n->in[i];
            if (v && sm_grad_requires(e, v) &&
                sm_grad_dtype_ok(v->type.dtype) && !defined_within(v, root) &&
                !vlist_add(l, v))
                return 0;
        }
        for (int b = 0; b < n->n_blocks; b++)
            if (!outer_walk(e, rw, n->blocks[b], root, l))
                return 0;
    }
    for (int i = 0; i < blk->n_ret; i++) {
        sm_value *v = blk->ret[i];
        if (sm_grad_requires(e, v) && sm_grad_dtype_ok(v->type.dtype) &&
            !defined_within(v, root) && !vlist_add(l, v))
            return 0;
    }
    return 1;
}

smelt_status sm_grad_outer_reads(sm_grad_ctx *g, const sm_block *blk,
                                 sm_vlist *l)
{
    if (!outer_walk(g->eng, g->rw, blk, blk, l))
        return sm_err_nomem(g->ctx);
    return SMELT_OK;
}

/* Copies src's constants and nodes to the end of dst (their inputs
 * through map); the copied nodes, in order, in *out (sm_free it). */
static smelt_status copy_nodes(sm_grad_ctx *g, sm_block *dst,
                               const sm_block *src, sm_value **map, int map_n,
                               sm_node ***out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    for (int i = 0; i < src->n_consts; i++) {
        const sm_value *c = src->consts[i];
        sm_tensor *t;
        SM_TRY(sm_tensor_clone(g->ctx, c->data, &t));
        sm_value *q = sm_rw_add_const(g->rw, dst, c->name, t);
        if (!q)
            return sm_err_nomem(g->ctx);
        if (c->id < map_n)
            map[c->id] = q;
    }
    int cnt = 0, cap = 0;
    sm_node **list = NULL;
    for (sm_node *s = sm_rw_first(g->rw, src); s; s = sm_rw_next(g->rw, s)) {
        if (cnt == cap) {
            int nc = cap ? cap * 2 : 16;
            sm_node **p = sm_realloc(list, (size_t)nc * sizeof *p);
            if (!p) {
                sm_free(list);
                return sm_err_nomem(g->ctx);
            }
            list = p;
            cap = nc;
        }
        list[cnt] = sm_rw_clone_node(g->rw, dst, NULL, s, map, map_n, ".re");
        if (!list[cnt]) {
            sm_free(list);
            return sm_err_nomem(g->ctx);
        }
        cnt++;
    }
    *out = list;
    *n_out = cnt;
    return SMELT_OK;
}

/* v's copy under map, or v itself when the copy did not define it. */
static sm_value *mapped(sm_value *v, sm_value *const *map, int map_n)
{
    return v && v->id < map_n && map[v->id] ? map[v->id] : v;
}

smelt_status sm_grad_replay(sm_grad_ctx *g, sm_replay *r)
{
    sm_grad_engine *e = g->eng;
    sm_grad_ctx sub = *g;
    sub.b = r->dst;
    sm_node **copies = NULL;
    int n = 0;
    smelt_status st =
        copy_nodes(&sub, r->dst, r->src, r->map, r->map_n, &copies, &n);
    if (st == SMELT_OK)
        st = sm_grad_reserve(e);
    if (st != SMELT_OK) {
        sm_free(copies);
        return st;
    }
    for (int i = 0; i < r->n_mark; i++)
        if (sm_grad_dtype_ok(r->mark[i]->type.dtype))
            sm_grad_set_requires(e, r->mark[i], 1);
    sm_grad_mark(e, copies, n);
    /* The outer values' slots start empty: what gathers there is this
     * block's contribution. */
    const sm_vlist *o = r->outer;
    sm_value *saved_st[8], **saved = saved_st;
    if (o->n > 8 && !(saved = sm_calloc((size_t)o->n, sizeof *saved))) {
        sm_free(copies);
        return sm_err_nomem(g->ctx);
    }
    for (int k = 0; k < o->n; k++)
        saved[k] = sm_grad_swap(e, o->v[k], NULL);
    for (int i = 0; st == SMELT_OK && i < r->n_seed; i++)
        if (r->seed_d[i])
            st = sm_grad_accumulate(
                e, &sub, mapped(r->seed_v[i], r->map, r->map_n), r->seed_d[i]);
    if (st == SMELT_OK)
        st = sm_grad_backward(e, r->dst, copies, n);
    for (int k = 0; k < o->n; k++)
        r->outer_d[k] = sm_grad_swap(e, o->v[k], saved[k]);
    if (saved != saved_st)
        sm_free(saved);
    sm_free(copies);
    if (st == SMELT_OK)
        st = sub.st;
    if (st != SMELT_OK && g->st == SMELT_OK)
        g->st = st;
    return st;
}

void sm_grad_names_free(char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        sm_free(names[i]);
    sm_free(names);
}

smelt_status sm_grad_names(sm_grad_ctx *g, int n_first, sm_value *const *first,
                           const sm_vlist *outer, char ***out)
{
    int n = n_first + outer->n;
    char **names = sm_calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    if (!names)
        return sm_err_nomem(g->ctx);
    for (int i = 0; i < n; i++) {
        const sm_value *v = i < n_first ? first[i] : outer->v[i - n_first];
        size_t len = strlen(v->name) + 3;
        if (!(names[i] = sm_malloc(len))) {
            sm_grad_names_free(names, i);
            return sm_err_nomem(g->ctx);
        }
        snprintf(names[i], len, "%s.d", v->name);
    }
    *out = names;
    return SMELT_OK;
}

/*
 * If: the backward is an If on the same condition. Each branch recomputes
 * its forward branch, seeds the copies of the branch's results with the
 * If's output gradients and returns, for every outer value either branch
 * reads that needs a gradient (one list, the same order in both), the
 * gradient the branch gives it (zeros where it gives none).
 */
static smelt_status if_branch(sm_grad_ctx *g, sm_node *bn, int b,
                              const sm_vlist *outer, sm_value **d)
{
    const sm_node *n = g->n;
    const sm_block *src = n->blocks[b];
    sm_block *dst = sm_rw_block_new(g->rw, bn, src->label);
    if (!dst)
        return sm_err_nomem(g->ctx);
    int map_n = g->eng->g->n_values;
    sm_value **map = sm_calloc((size_t)map_n + 1, sizeof *map);
    if (!map)
        return sm_err_nomem(g->ctx);
    sm_replay r = {.dst = dst,
                   .src = src,
                   .map = map,
                   .map_n = map_n,
                   .n_seed = src->n_ret < n->n_out ? src->n_ret : n->n_out,
                   .seed_v = src->ret,
                   .seed_d = g->dy,
                   .outer = outer,
                   .outer_d = d};
    smelt_status st = sm_grad_replay(g, &r);
    sm_free(map);
    sm_grad_ctx sub = *g;
    sub.b = dst;
    for (int k = 0; st == SMELT_OK && k < outer->n; k++) {
        sm_value *v = d[k] ? d[k] : sm_g_zeros_like(&sub, outer->v[k]);
        st = v ? sm_rw_add_ret(g->rw, dst, v) : sub.st;
    }
    if (st != SMELT_OK && g->st == SMELT_OK)
        g->st = st;
    return st;
}

smelt_status sm_grad_if(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_vlist outer = {0};
    smelt_status st = SMELT_OK;
    for (int b = 0; st == SMELT_OK && b < 2; b++)
        st = sm_grad_outer_reads(g, n->blocks[b], &outer);
    if (st != SMELT_OK || outer.n == 0) {
        sm_vlist_free(&outer);
        return st;
    }
    char **names = NULL;
    sm_value **d = sm_calloc((size_t)outer.n, sizeof *d);
    st = d ? sm_grad_names(g, 0, NULL, &outer, &names) : sm_err_nomem(g->ctx);
    sm_node *bn = NULL;
    if (st == SMELT_OK) {
        bn = sm_rw_node_new(g->rw, g->b, NULL, SM_OP_If, NULL, 1, n->in,
                            outer.n, (const char *const *)names);
        st = bn ? SMELT_OK : sm_err_nomem(g->ctx);
    }
    for (int b = 0; st == SMELT_OK && b < 2; b++)
        st = if_branch(g, bn, b, &outer, d);
    if (st == SMELT_OK)
        st = sm_rw_infer_node(g->rw, bn);
    for (int k = 0; st == SMELT_OK && k < outer.n; k++)
        st = sm_grad_accumulate(g->eng, g, outer.v[k], bn->out[k]);
    sm_grad_names_free(names, outer.n);
    sm_free(d);
    sm_vlist_free(&outer);
    return st;
}
