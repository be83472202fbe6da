/*
 * infer_pass.c - the `infer` pass: shape and dtype inference (ir/infer.c)
 * over the whole graph, through If branches and Loop bodies, reporting
 * how many facts (dtypes, ranks, dimensions) it learned.
 */
#include "ir/infer.h"
#include "passes/pass.h"

/* Known facts about a type: its dtype, its rank, each known or symbolic
 * dimension. */
static long type_facts(const sm_type *t)
{
    long k = t->dtype != SMELT_DTYPE_UNDEFINED;
    if (t->ndim >= 0) {
        k++;
        for (int i = 0; i < t->ndim; i++)
            k += (t->dims[i].size >= 0) + (t->dims[i].sym != NULL);
    }
    return k;
}

static long graph_facts(const sm_graph *g)
{
    long k = 0;
    for (int i = 0; i < g->n_values; i++)
        k += type_facts(&g->values[i]->type);
    return k;
}

smelt_status sm_pass_infer(sm_pass_ctx *pc, sm_graph *g)
{
    long before = graph_facts(g);
    SM_TRY(sm_graph_infer(pc->ctx, g));
    long learned = graph_facts(g) - before;
    if (learned > 0) {
        pc->stats->changed = 1;
        sm_pass_log(pc, "learned %ld type facts", learned);
    }
    return SMELT_OK;
}
