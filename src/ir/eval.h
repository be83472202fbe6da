/*
 * eval.h - evaluating one node on concrete tensors with its reference
 * kernel: an IR service (the node's shape function sizes the outputs, the
 * op table's reference kernel fills them) for shape inference, constant
 * folding, eager ops and the runtime's block walker alike. It lives in
 * the IR, not the runtime, so those callers keep the layers one-way.
 */
#ifndef SM_EVAL_H
#define SM_EVAL_H

#include <stddef.h>

#include "ir/ir.h"

/* Runs n (not a control op) on args (one per input, NULL for absent
 * optional inputs): the op's shape function sizes the outputs from the
 * concrete inputs, then the reference kernel fills them. outs[] (n->n_out
 * entries) receive new tensors owned by the caller; on failure they are
 * all NULL. When max_bytes > 0 and an output would be larger, nothing is
 * allocated and the result is SMELT_ERR_LIMIT. Control ops give
 * SMELT_ERR_UNSUPPORTED (they need a sub-block runner). */
smelt_status sm_eval_node(smelt_ctx_t *ctx, const sm_node *n,
                          sm_tensor *const *args, sm_tensor **outs,
                          size_t max_bytes);

/* For integer arithmetic evaluated ahead of time (shape computations:
 * Shape -> Mul -> Reshape), checks outs[0], computed by n from args,
 * against the same node evaluated in f64: a result that wrapped around
 * its dtype gives SMELT_ERR_LIMIT naming the op, the exact value and the
 * inputs. The kernels wrap as ONNX allows; a folded shape that wrapped
 * would be a wrong model, reported later as something else. */
smelt_status sm_eval_check_exact(smelt_ctx_t *ctx, const sm_node *n,
                                 sm_tensor *const *args,
                                 sm_tensor *const *outs);

#endif
