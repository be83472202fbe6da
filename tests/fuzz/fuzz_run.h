/*
 * fuzz_run.h - what every model harness does with a graph that loaded:
 * infer, optimize at -O3, compile a plan and run it on small inputs,
 * all under a size budget (docs/FUZZING.md).
 */
#ifndef SMELT_FUZZ_RUN_H
#define SMELT_FUZZ_RUN_H

#include "smelt.h"

/* Takes g (frees it). A model over the budget is refused quietly; a
 * failing step must leave an error message, or the harness traps. */
void fuzz_run_graph(smelt_ctx_t *ctx, smelt_graph_t *g);

#endif
