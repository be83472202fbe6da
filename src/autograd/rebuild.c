/*
 * rebuild.c - differentiating a forward node through a copy of it built
 * from other ops (rebuild.h).
 */
#include "autograd/rebuild.h"

#include "autograd/engine.h"
#include "core/alloc.h"

void sm_rebuild_begin(sm_grad_ctx *g, sm_rebuild *rb, unsigned inputs)
{
    const sm_node *n = g->n;
    for (int i = 0; i < SM_REBUILD_MAX_IN; i++)
        rb->leaf[i] = i < n->n_in && n->in[i] && (inputs >> i & 1)
                          ? sm_g_op1(g, SM_OP_Identity, n->in[i])
                          : NULL;
    rb->before = sm_rw_last(g->rw, g->b);
}

/* The nodes built after rb->before, in order, in *out (sm_free it). */
static smelt_status copy_nodes(sm_grad_ctx *g, const sm_rebuild *rb,
                               sm_node ***out, int *n_out)
{
    sm_node *first =
        rb->before ? sm_rw_next(g->rw, rb->before) : sm_rw_first(g->rw, g->b);
    int nn = 0;
    for (sm_node *x = first; x; x = sm_rw_next(g->rw, x))
        nn++;
    sm_node **nodes = sm_calloc((size_t)nn + 1, sizeof *nodes);
    if (!nodes)
        return sm_err_nomem(g->ctx);
    nn = 0;
    for (sm_node *x = first; x; x = sm_rw_next(g->rw, x))
        nodes[nn++] = x;
    *out = nodes;
    *n_out = nn;
    return SMELT_OK;
}

smelt_status sm_rebuild_finish(sm_grad_ctx *g, sm_rebuild *rb,
                               sm_value *const *out, int n_out)
{
    SM_TRY(g->st);
    sm_grad_engine *e = g->eng;
    const sm_node *n = g->n;
    sm_node **nodes = NULL;
    int nn = 0;
    smelt_status st = copy_nodes(g, rb, &nodes, &nn);
    if (st == SMELT_OK)
        st = sm_grad_reserve(e);
    for (int i = 0; st == SMELT_OK && i < SM_REBUILD_MAX_IN; i++)
        sm_grad_set_requires(e, rb->leaf[i], i < n->n_in && g->need[i]);
    if (st == SMELT_OK)
        sm_grad_mark(e, nodes, nn);
    for (int k = 0; st == SMELT_OK && k < n_out && k < n->n_out; k++)
        if (g->dy[k] && out[k] && sm_grad_requires(e, out[k]))
            sm_grad_swap(e, out[k], g->dy[k]);
    if (st == SMELT_OK)
        st = sm_grad_backward(e, g->b, nodes, nn);
    for (int i = 0; st == SMELT_OK && i < SM_REBUILD_MAX_IN; i++)
        if (rb->leaf[i])
            sm_g_set(g, i, sm_grad_get(e, rb->leaf[i]));
    /* the copy's marks and gradients belong to the inner walk alone */
    for (int i = 0; i < SM_REBUILD_MAX_IN; i++) {
        sm_grad_set_requires(e, rb->leaf[i], 0);
        sm_grad_swap(e, rb->leaf[i], NULL);
    }
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < nodes[i]->n_out; k++) {
            sm_grad_set_requires(e, nodes[i]->out[k], 0);
            sm_grad_swap(e, nodes[i]->out[k], NULL);
        }
    sm_free(nodes);
    if (st != SMELT_OK && g->st == SMELT_OK)
        g->st = st;
    return g->st;
}
