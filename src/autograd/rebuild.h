/*
 * rebuild.h - a rule that rebuilds its forward node from other ops of the
 * table and lets the engine differentiate that copy (the recurrent ops,
 * GridSample, RoiAlign; docs/AUTOGRAD.md).
 *
 * The copy reads Identity copies of the node's inputs (its leaves), so
 * the engine's inner walk sums the gradients into the leaves' slots and
 * never into the outer graph's values; the rule hands the leaves'
 * gradients back as its input gradients. An input read directly, not
 * through a leaf, gets no gradient from the copy.
 */
#ifndef SM_AUTOGRAD_REBUILD_H
#define SM_AUTOGRAD_REBUILD_H

#include "autograd/grad.h"

#define SM_REBUILD_MAX_IN 8

typedef struct sm_rebuild {
    sm_value *leaf[SM_REBUILD_MAX_IN]; /* by input; NULL: none */
    sm_node *before; /* the block's last node before the copy */
} sm_rebuild;

/* Makes a leaf for each present input i of g->n whose bit (1 << i) is set
 * in inputs, then marks where the copy's nodes start. */
void sm_rebuild_begin(sm_grad_ctx *g, sm_rebuild *rb, unsigned inputs);

/* Differentiates the nodes built since sm_rebuild_begin: out[k] (the
 * copy's output k, NULL: not rebuilt) is seeded with g->dy[k], the engine
 * walks the copy backwards, and each leaf's gradient becomes the input
 * gradient (sm_g_set). The copy's marks and gradients are cleared after. */
smelt_status sm_rebuild_finish(sm_grad_ctx *g, sm_rebuild *rb,
                               sm_value *const *out, int n_out);

#endif
