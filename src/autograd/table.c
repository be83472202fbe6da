/*
 * table.c - the gradient column of the op table (ir/ops.def), and its
 * three markers: no gradient (integer or boolean results), zero gradient
 * (piecewise-constant functions) and a rule not written yet.
 */
#include "autograd/grad.h"

static const sm_grad_fn rules[SM_OP_COUNT] = {
#define OP(name, cls, imin, imax, omin, omax, nblk, attrs, shape, ref, cost,   \
           grad)                                                               \
    [SM_OP_##name] = grad,
#include "ir/ops.def"
#undef OP
};

sm_grad_fn sm_grad_rule(sm_op op)
{
    return op >= 0 && op < SM_OP_COUNT ? rules[op] : sm_grad_none;
}

/* The engine never calls these two: their outputs never need a gradient
 * (engine.c's marking stops at them). They fail if called all the same. */
smelt_status sm_grad_none(sm_grad_ctx *g)
{
    return sm_g_fail(g, SMELT_ERR_UNSUPPORTED, "%s is not differentiable",
                     sm_op_info_get(g->n->op)->name);
}

smelt_status sm_grad_zero(sm_grad_ctx *g)
{
    (void)g;
    return SMELT_OK; /* every input's gradient is zero: none flows */
}

smelt_status sm_grad_todo(sm_grad_ctx *g)
{
    return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                     "%s has no gradient rule yet (docs/AUTOGRAD.md lists "
                     "the ops without one)",
                     sm_op_info_get(g->n->op)->name);
}
