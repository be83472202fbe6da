/*
 * if_const.c - the `if_const` pass: an If whose condition is a constant is
 * replaced by the branch it takes. The branch's constants and nodes move
 * (they are not copied) to just before the If, its returns take the place
 * of the If's outputs, and the other branch goes with the If.
 */
#include "core/dtype.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

typedef struct ifc {
    sm_rw *rw;
    int inlined;
} ifc;

static smelt_status inline_branch(ifc *f, sm_node *n)
{
    const sm_tensor *c = n->in[0]->data;
    int taken = sm_load_f64(c->dtype, c->data, 0) != 0 ? 0 : 1;
    sm_block *b = n->blocks[taken];
    for (int i = 0; i < b->n_consts; i++)
        if (b->consts[i]->block == b && b->consts[i]->data)
            SM_TRY(sm_rw_move_const(f->rw, b->consts[i], n->owner));
    sm_node *m = sm_rw_first(f->rw, b);
    while (m) {
        sm_node *next = sm_rw_next(f->rw, m);
        SM_TRY(sm_rw_move_node(f->rw, m, n));
        m = next;
    }
    for (int j = 0; j < n->n_out; j++)
        SM_TRY(sm_rw_forward(f->rw, n->out[j], b->ret[j]));
    sm_rw_remove_node(f->rw, n);
    f->inlined++;
    return SMELT_OK;
}

static smelt_status walk(ifc *f, sm_block *b)
{
    sm_node *n = sm_rw_first(f->rw, b);
    while (n) {
        sm_node *next = sm_rw_next(f->rw, n);
        for (int i = 0; i < n->n_blocks; i++)
            SM_TRY(walk(f, n->blocks[i]));
        if (n->op == SM_OP_If && n->in[0]->data && n->in[0]->data->numel >= 1)
            SM_TRY(inline_branch(f, n));
        n = next;
    }
    return SMELT_OK;
}

smelt_status sm_pass_if_const(sm_pass_ctx *pc, sm_graph *g)
{
    ifc f = {NULL, 0};
    SM_TRY(sm_rw_new(pc->ctx, g, &f.rw));
    smelt_status st = walk(&f, g->top);
    pc->stats->removed = sm_rw_removed(f.rw);
    pc->stats->changed = f.inlined > 0;
    if (f.inlined)
        sm_pass_log(pc, "inlined %d If(s) with a constant condition",
                    f.inlined);
    sm_rw_free(f.rw);
    return st;
}
