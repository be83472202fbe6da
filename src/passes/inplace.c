/*
 * inplace.c - the inplace pass: marks the nodes whose output may be
 * written over one of their inputs.
 *
 * An elementwise node (or a FusedElementwise) reads element i of each
 * input before it writes element i of its output, so when an input of the
 * output's dtype and shape is not read by any later node and is not a
 * graph input, constant or output, the output can take that input's
 * buffer. The mark is node->inplace (1 + the input's index), a side table
 * on the node that the text form does not show; the memory plan
 * (memplan.c) reads it and re-checks the rule, so a pass that runs in
 * between can make a mark useless but never unsafe.
 */
#include "core/alloc.h"
#include "passes/memplan.h"
#include "passes/pass.h"

/* Same dtype and the same known dims. */
static int same_known(const sm_type *a, const sm_type *b)
{
    if (!sm_type_known(a) || !sm_type_known(b) || a->dtype != b->dtype ||
        a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d].size != b->dims[d].size)
            return 0;
    return 1;
}

int sm_inplace_ok(const sm_graph *g, const sm_node *n, int j, int i,
                  const int *last)
{
    sm_op_class c = sm_op_info_get(n->op)->cls;
    int pointwise = c == SM_CLASS_ELEMWISE || c == SM_CLASS_BROADCAST ||
                    n->op == SM_OP_FusedElementwise;
    if (!pointwise || n->n_out != 1 || n->op == SM_OP_Dropout || i < 0 ||
        i >= n->n_in)
        return 0;
    const sm_value *v = n->in[i], *y = n->out[0];
    if (!v || !v->def || v->block != g->top || v->def->owner != g->top ||
        last[v->id] != j)
        return 0;
    return same_known(&v->type, &y->type);
}

smelt_status sm_pass_inplace(sm_pass_ctx *pc, sm_graph *g)
{
    int *last;
    SM_TRY(sm_liveness_last_use(pc->ctx, g, &last));
    int marked = 0;
    for (int j = 0; j < g->top->n_nodes; j++) {
        sm_node *n = g->top->nodes[j];
        int was = n->inplace;
        n->inplace = 0;
        for (int i = 0; i < n->n_in && !n->inplace; i++)
            if (sm_inplace_ok(g, n, j, i, last))
                n->inplace = i + 1;
        marked += n->inplace != 0;
        if (n->inplace != was)
            pc->stats->changed = 1;
    }
    sm_free(last);
    if (marked)
        sm_pass_log(pc, "%d nodes may write their output in place", marked);
    return SMELT_OK;
}
