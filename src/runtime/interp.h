/*
 * interp.h - the reference interpreter: runs any verified graph node by
 * node with the reference kernels. It is the oracle that every
 * optimization is checked against.
 */
#ifndef SM_INTERP_H
#define SM_INTERP_H

#include "ir/ir.h"

/* Runs g on inputs (one per graph input, in order); outputs[] receive new
 * tensors owned by the caller (n_outputs must equal the graph's). */
smelt_status sm_interp_run(smelt_ctx_t *ctx, const sm_graph *g,
                           sm_tensor *const *inputs, int n_inputs,
                           sm_tensor **outputs, int n_outputs);

#endif
