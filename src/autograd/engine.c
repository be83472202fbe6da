/*
 * engine.c - reverse-mode differentiation over a list of nodes
 * (engine.h): marking what needs a gradient, the backward walk, and the
 * summing of gradients of values read more than once.
 */
#include <string.h>

#include "autograd/engine.h"
#include "core/alloc.h"
#include "core/dtype.h"

int sm_grad_dtype_ok(smelt_dtype dt)
{
    return sm_dtype_is_float(dt);
}

smelt_status sm_grad_reserve(sm_grad_engine *e)
{
    int need = e->g->n_values;
    if (need <= e->cap)
        return SMELT_OK;
    int cap = e->cap ? e->cap : 64;
    while (cap < need)
        cap *= 2;
    unsigned char *req = sm_realloc(e->req, (size_t)cap);
    if (!req)
        return sm_err_nomem(e->ctx);
    e->req = req;
    sm_value **grad = sm_realloc(e->grad, (size_t)cap * sizeof *grad);
    if (!grad)
        return sm_err_nomem(e->ctx);
    e->grad = grad;
    memset(e->req + e->cap, 0, (size_t)(cap - e->cap));
    memset(e->grad + e->cap, 0, (size_t)(cap - e->cap) * sizeof *grad);
    e->cap = cap;
    return SMELT_OK;
}

int sm_grad_requires(const sm_grad_engine *e, const sm_value *v)
{
    return v && v->id < e->cap && e->req[v->id];
}

void sm_grad_set_requires(sm_grad_engine *e, const sm_value *v, int on)
{
    if (v && v->id < e->cap)
        e->req[v->id] = (unsigned char)(on != 0);
}

sm_value *sm_grad_get(const sm_grad_engine *e, const sm_value *v)
{
    return v && v->id < e->cap ? e->grad[v->id] : NULL;
}

sm_value *sm_grad_swap(sm_grad_engine *e, const sm_value *v, sm_value *d)
{
    if (!v || v->id >= e->cap)
        return NULL;
    sm_value *old = e->grad[v->id];
    e->grad[v->id] = d;
    return old;
}

/* Whether block b (and its sub-blocks) reads a value marked as needing a
 * gradient: the values a sub-block captures from outside are marked
 * already, its own never are (marking does not enter sub-blocks). */
static int block_reads_marked(const sm_grad_engine *e, const sm_block *b)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (sm_grad_requires(e, n->in[j]))
                return 1;
        for (int j = 0; j < n->n_blocks; j++)
            if (block_reads_marked(e, n->blocks[j]))
                return 1;
    }
    for (int i = 0; i < b->n_ret; i++)
        if (sm_grad_requires(e, b->ret[i]))
            return 1;
    return 0;
}

/* Whether an output of n depends on a marked value through n. */
static int node_reads_marked(const sm_grad_engine *e, const sm_node *n)
{
    sm_grad_fn rule = sm_grad_rule(n->op);
    if (rule == sm_grad_none || rule == sm_grad_zero)
        return 0;
    for (int j = 0; j < n->n_in; j++)
        if (sm_grad_requires(e, n->in[j]) &&
            sm_grad_dtype_ok(n->in[j]->type.dtype))
            return 1;
    for (int j = 0; j < n->n_blocks; j++)
        if (block_reads_marked(e, n->blocks[j]))
            return 1;
    return 0;
}

void sm_grad_mark(sm_grad_engine *e, sm_node *const *nodes, int n)
{
    for (int i = 0; i < n; i++) {
        if (!node_reads_marked(e, nodes[i]))
            continue;
        for (int k = 0; k < nodes[i]->n_out; k++)
            if (sm_grad_dtype_ok(nodes[i]->out[k]->type.dtype))
                sm_grad_set_requires(e, nodes[i]->out[k], 1);
    }
}

smelt_status sm_grad_accumulate(sm_grad_engine *e, sm_grad_ctx *at, sm_value *v,
                                sm_value *d)
{
    if (!d || !sm_grad_requires(e, v))
        return SMELT_OK;
    if (d->type.dtype != v->type.dtype ||
        (sm_type_known(&d->type) && sm_type_known(&v->type) &&
         !sm_type_equal(&d->type, &v->type))) {
        char a[128], b[128];
        sm_type_str(&d->type, a, sizeof a);
        sm_type_str(&v->type, b, sizeof b);
        return sm_g_fail(at, SMELT_ERR_VERIFY,
                         "the rule gave %s for '%s' of %s (a bug in the "
                         "rule)",
                         a, v->name, b);
    }
    sm_value *old = e->grad[v->id];
    if (old) {
        d = sm_g_op2(at, SM_OP_Add, old, d);
        if (!d)
            return at->st;
    }
    e->grad[v->id] = d;
    return SMELT_OK;
}

/* Runs the rule of node n, whose outputs' gradients are dy. */
static smelt_status backward_node(sm_grad_engine *e, sm_block *dst, sm_node *n,
                                  sm_value **dy)
{
    unsigned char need_st[8], *need = need_st;
    sm_value *dx_st[8], **dx = dx_st;
    if (n->n_in > 8) {
        need = sm_calloc((size_t)n->n_in, 1);
        dx = sm_calloc((size_t)n->n_in, sizeof *dx);
        if (!need || !dx) {
            if (need != need_st)
                sm_free(need);
            return sm_err_nomem(e->ctx);
        }
    }
    int any = 0;
    for (int i = 0; i < n->n_in; i++) {
        need[i] = (unsigned char)(sm_grad_requires(e, n->in[i]) &&
                                  sm_grad_dtype_ok(n->in[i]->type.dtype));
        dx[i] = NULL;
        any |= need[i];
    }
    sm_grad_ctx g = {.ctx = e->ctx,
                     .rw = e->rw,
                     .b = dst,
                     .n = n,
                     .dy = dy,
                     .need = need,
                     .dx = dx,
                     .st = SMELT_OK,
                     .eng = e};
    smelt_status st = SMELT_OK;
    /* Control-flow rules read captured values too: call them even when
     * no input needs a gradient. */
    if (any || n->n_blocks) {
        st = sm_grad_rule(n->op)(&g);
        if (st == SMELT_OK)
            st = g.st;
    }
    for (int i = 0; st == SMELT_OK && i < n->n_in; i++)
        if (dx[i] && need[i])
            st = sm_grad_accumulate(e, &g, n->in[i], dx[i]);
    if (need != need_st) {
        sm_free(need);
        sm_free(dx);
    }
    return st;
}

smelt_status sm_grad_backward(sm_grad_engine *e, sm_block *dst,
                              sm_node *const *nodes, int n)
{
    sm_value *dy_st[8];
    for (int i = n - 1; i >= 0; i--) {
        sm_node *nd = nodes[i];
        sm_value **dy = dy_st;
        if (nd->n_out > 8 && !(dy = sm_calloc((size_t)nd->n_out, sizeof *dy)))
            return sm_err_nomem(e->ctx);
        int any = 0;
        for (int k = 0; k < nd->n_out; k++) {
            dy[k] = sm_grad_get(e, nd->out[k]);
            any |= dy[k] != NULL;
        }
        smelt_status st = any ? backward_node(e, dst, nd, dy) : SMELT_OK;
        if (st == SMELT_OK)
            st = sm_grad_reserve(e);
        if (dy != dy_st)
            sm_free(dy);
        if (st != SMELT_OK)
            return st;
    }
    return SMELT_OK;
}
