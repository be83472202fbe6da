/*
 * rules_select.c - gradient rules of the ops that pick elements by value
 * or by a given position: Unique and MaxUnpool. Each output element is
 * one input element, so the input gradient gathers the output gradient
 * back at the positions the forward used.
 */
#include "autograd/build_move.h"
#include "kernels/ref/select.h"

/*
 * unique: Y's element (slice along axis) j is the input's elements whose
 * inverse index is j, so dx = Gather(dY, inverse) along the axis: each
 * copy of a repeated value gets the gradient of its one output (Y
 * follows each of them; at a tie the forward is not differentiable).
 * The inverse comes from a fresh Unique of x (the node may not return
 * it); without an axis x is flattened.
 */
smelt_status sm_grad_unique(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0];
    if (!g->dy[0])
        return SMELT_OK; /* indices and counts carry no gradient */
    const sm_attr *ax = sm_node_attr(n, "axis");
    sm_node *u = sm_g_node(g, SM_OP_Unique, 1, &x, 4);
    if (u && ax)
        mv_set_int(g, u, "axis", ax->v.i);
    if (u)
        mv_set_int(g, u, "sorted", mv_attr_int(n, "sorted", 1));
    if (!sm_g_done(g, u))
        return g->st;
    sm_value *in[2] = {g->dy[0], u->out[2]};
    sm_node *gat = sm_g_node(g, SM_OP_Gather, 2, in, 1);
    if (gat && ax)
        mv_set_int(g, gat, "axis", ax->v.i);
    sm_value *d = sm_g_done(g, gat);
    sm_g_set(g, 0, ax ? d : sm_g_reshape_like(g, d, x));
    return g->st;
}

/*
 * maxunpool: x[i] went to flat position I[i] of the unpooled shape at
 * the output's start, so dx = Gather(flat(dY[:un]), I). Where two inputs
 * share a position the later one's value stays (the kernel writes in
 * order, as ScatterElements does), so only it gets the gradient: the
 * inputs' ids scattered to their positions tell each whether it won.
 */
smelt_status sm_grad_maxunpool(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *dy = g->dy[0];
    int r = x->type.ndim;
    int64_t dims[SMELT_MAX_DIMS], un[SMELT_MAX_DIMS];
    if (r < 3)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "the input's rank is unknown");
    for (int d = 0; d < r; d++)
        dims[d] = x->type.dims[d].size;
    sm_attrs at = sm_node_attrs(n);
    smelt_status st =
        sm_unpool_shape(g->ctx, SMELT_ERR_SHAPE, &at, r, dims, un);
    if (st != SMELT_OK)
        return g->st = st;
    for (int d = 0; d < r; d++)
        if (un[d] < 0)
            return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                             "the unpooled shape is not known before running");
    int64_t zero[SMELT_MAX_DIMS] = {0}, axes[SMELT_MAX_DIMS], flat[1] = {-1};
    for (int d = 0; d < r; d++)
        axes[d] = d;
    sm_value *v = mv_slice(g, dy, zero, un, axes, NULL, r);
    v = sm_g_reshape(g, v, sm_g_ints(g, flat, 1));
    sm_value *ind = sm_g_reshape(g, sm_g_cast(g, n->in[1], SMELT_DTYPE_I64),
                                 sm_g_ints(g, flat, 1));
    int64_t total = 1;
    for (int d = 0; d < r; d++)
        total *= un[d];
    sm_value *id = mv_iota(g, ind);
    sm_value *sc[3] = {mv_fill(g, sm_g_ints(g, &total, 1), SMELT_DTYPE_I64, -1),
                       ind, id};
    sm_value *won = sm_g_op2(
        g, SM_OP_Equal,
        sm_g_op2(g, SM_OP_Gather,
                 sm_g_done(g, sm_g_node(g, SM_OP_ScatterElements, 3, sc, 1)),
                 ind),
        id);
    v = sm_g_op3(g, SM_OP_Where, won, sm_g_op2(g, SM_OP_Gather, v, ind),
                 sm_g_scalar_like(g, x, 0));
    sm_g_set(g, 0, sm_g_reshape_like(g, v, x));
    return g->st;
}
