/*
 * infer.h - dtype and shape inference over a graph, and the per-node check
 * the verifier uses.
 */
#ifndef SM_INFER_H
#define SM_INFER_H

#include "ir/ir.h"

#define SM_MAX_BLOCK_DEPTH 64
/* Values up to this many elements are evaluated during inference when all
 * their inputs are known, so Shape -> Gather -> Reshape chains resolve. */
#define SM_INFER_EVAL_MAX 4096

smelt_status sm_graph_verify(smelt_ctx_t *ctx, const sm_graph *g);
smelt_status sm_graph_infer(smelt_ctx_t *ctx, sm_graph *g);

/* Runs n's shape function on its inputs' current types (and constant data)
 * into out[] (n->n_out entries). */
smelt_status sm_node_shape(smelt_ctx_t *ctx, const sm_node *n,
                           const sm_tensor *const *known, sm_type *out);
/* Shape node `shape` evaluated from its input's type (start and end
 * attributes applied) into *out, an i64 tensor with -1 for each unknown
 * dim; *out stays NULL when the input's rank is unknown. */
smelt_status sm_node_shape_dims(smelt_ctx_t *ctx, const sm_node *shape,
                                sm_tensor **out);
/* Fails when n's declared output types contradict what its shape function
 * infers. */
smelt_status sm_infer_check_node(smelt_ctx_t *ctx, const sm_node *n);
/* Merges inferred type `t` into `into`: fills what `into` lacks; fails
 * (returning nonzero) on a contradiction between known facts. */
int sm_type_merge(sm_type *into, const sm_type *t);

#endif
