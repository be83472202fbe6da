/*
 * rules_fused_elementwise.c - the gradient rule of FusedElementwise. Its body
 * is a block of elementwise ops whose parameters are the node's inputs: the
 * rule copies the body into the backward graph (each parameter an
 * Identity of the node's input, so its gradient is kept apart from the
 * input's own), seeds the copies of the returns with the output
 * gradients, and runs the engine's backward walk over the copied nodes
 * (engine.h), whose rules are then those of the body's ops. The body's
 * intermediates are recomputed: the fused node keeps none of them.
 */
#include "autograd/engine.h"
#include "core/alloc.h"

/* Copies the body of g->n into g->b: params[i] receives the copy of
 * parameter i, nodes[0..*n_nodes) the copied nodes, map[id] (map_n ids)
 * each body value's copy. */
static smelt_status copy_body(sm_grad_ctx *g, const sm_block *body,
                              sm_value **params, sm_value **map, int map_n,
                              sm_node **nodes, int *n_nodes)
{
    for (int i = 0; i < body->n_params; i++) {
        params[i] = sm_g_op1(g, SM_OP_Identity, g->n->in[i]);
        if (!params[i])
            return g->st;
        map[body->params[i]->id] = params[i];
    }
    for (int i = 0; i < body->n_consts; i++) {
        const sm_value *c = body->consts[i];
        sm_tensor *t;
        smelt_status st = sm_tensor_clone(g->ctx, c->data, &t);
        if (st != SMELT_OK)
            return g->st = st;
        sm_value *q = sm_rw_add_const(g->rw, g->b, c->name, t);
        if (!q)
            return g->st = sm_err_nomem(g->ctx);
        map[c->id] = q;
    }
    int k = 0;
    for (sm_node *s = sm_rw_first(g->rw, body); s; s = sm_rw_next(g->rw, s)) {
        nodes[k] = sm_rw_clone_node(g->rw, g->b, NULL, s, map, map_n, "_bw");
        if (!nodes[k])
            return g->st = sm_err_nomem(g->ctx);
        k++;
    }
    *n_nodes = k;
    return SMELT_OK;
}

/* fusedelementwise: the engine's backward walk over a copy of the body */
smelt_status sm_grad_fusedelementwise(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_grad_engine *e = g->eng;
    if (n->n_blocks != 1 || n->blocks[0]->n_params != n->n_in ||
        n->blocks[0]->n_ret != n->n_out)
        return sm_g_fail(g, SMELT_ERR_VERIFY,
                         "the body does not match the node's inputs and "
                         "outputs");
    const sm_block *body = n->blocks[0];
    int count = 0;
    for (sm_node *s = sm_rw_first(g->rw, body); s; s = sm_rw_next(g->rw, s))
        count++;
    int map_n = e->g->n_values;
    sm_value **map = sm_calloc((size_t)map_n, sizeof *map);
    sm_value **params = sm_calloc((size_t)n->n_in + 1, sizeof *params);
    sm_node **nodes = sm_calloc((size_t)count + 1, sizeof *nodes);
    if (!map || !params || !nodes) {
        g->st = sm_err_nomem(g->ctx);
        goto done;
    }
    int n_nodes = 0;
    if (copy_body(g, body, params, map, map_n, nodes, &n_nodes) != SMELT_OK)
        goto done;
    if ((g->st = sm_grad_reserve(e)) != SMELT_OK)
        goto done;
    for (int i = 0; i < n->n_in; i++)
        sm_grad_set_requires(e, params[i], g->need[i]);
    sm_grad_mark(e, nodes, n_nodes);
    for (int k = 0; k < n->n_out && g->st == SMELT_OK; k++) {
        sm_value *r = body->ret[k];
        r = r->id < map_n && map[r->id] ? map[r->id] : r;
        sm_grad_accumulate(e, g, r, g->dy[k]);
    }
    if (g->st == SMELT_OK)
        g->st = sm_grad_backward(e, g->b, nodes, n_nodes);
    for (int i = 0; g->st == SMELT_OK && i < n->n_in; i++)
        sm_g_set(g, i, sm_grad_get(e, params[i]));
done:
    sm_free(map);
    sm_free(params);
    sm_free(nodes);
    return g->st;
}
