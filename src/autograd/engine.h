/*
 * engine.h - reverse-mode differentiation of a list of nodes: which
 * values need a gradient, and the backward walk that calls each node's
 * rule and sums the gradients of values used more than once.
 *
 * engine.c's smelt_graph_grad runs it over the top block. The rules of
 * the control-flow ops (If, Loop) run it again over copies of their
 * sub-blocks placed inside the backward node's own blocks; the engine's
 * tables are by value id and grow with the graph, so one engine serves
 * every level.
 */
#ifndef SM_AUTOGRAD_ENGINE_H
#define SM_AUTOGRAD_ENGINE_H

#include "autograd/grad.h"

typedef struct sm_grad_engine {
    smelt_ctx_t *ctx;
    sm_graph *g;
    sm_rw *rw;
    int cap;
    unsigned char *req; /* by value id: needs a gradient */
    sm_value **grad;    /* by value id: its gradient so far */
} sm_grad_engine;

/* Whether values of dtype dt carry gradients (the floating dtypes). */
int sm_grad_dtype_ok(smelt_dtype dt);

/* Grows the tables to every value the graph has now; nonzero status when
 * out of memory. */
smelt_status sm_grad_reserve(sm_grad_engine *e);

int sm_grad_requires(const sm_grad_engine *e, const sm_value *v);
void sm_grad_set_requires(sm_grad_engine *e, const sm_value *v, int on);
sm_value *sm_grad_get(const sm_grad_engine *e, const sm_value *v);
/* Replaces v's gradient (NULL clears it), returning the old one. */
sm_value *sm_grad_swap(sm_grad_engine *e, const sm_value *v, sm_value *d);

/* Marks, in order, the float outputs of nodes[0..n) that depend through
 * differentiable ops on a value already marked. */
void sm_grad_mark(sm_grad_engine *e, sm_node *const *nodes, int n);

/* Adds d to v's gradient (an Add node when v has one already), built in
 * at->b with at's node named in errors. Checks that d's type is v's. */
smelt_status sm_grad_accumulate(sm_grad_engine *e, sm_grad_ctx *at, sm_value *v,
                                sm_value *d);

/* Calls the rules of nodes[n-1] down to nodes[0], each one whose outputs
 * have gradients and whose inputs need them, placing the backward nodes
 * at the end of dst. */
smelt_status sm_grad_backward(sm_grad_engine *e, sm_block *dst,
                              sm_node *const *nodes, int n);

#endif
