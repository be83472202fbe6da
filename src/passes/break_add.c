/*
 * break_add.c - a deliberately wrong pass for the tests: it turns every Add
 * into Sub. The graph stays valid (same types), only the numbers change,
 * which is what `smelt check`'s bisection must catch. It is not in
 * passes.def; sm_pass_find offers it only while SMELT_TEST_BROKEN_PASS=1.
 */
#include "passes/pass.h"

static int break_block(sm_block *b)
{
    int k = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        sm_node *n = b->nodes[i];
        if (n->op == SM_OP_Add) {
            n->op = SM_OP_Sub;
            k++;
        }
        for (int j = 0; j < n->n_blocks; j++)
            k += break_block(n->blocks[j]);
    }
    return k;
}

smelt_status sm_pass_break_add(sm_pass_ctx *pc, sm_graph *g)
{
    int k = break_block(g->top);
    pc->stats->changed = k > 0;
    sm_pass_log(pc, "turned %d Add(s) into Sub", k);
    return SMELT_OK;
}
