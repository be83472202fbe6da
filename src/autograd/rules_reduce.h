/*
 * rules_reduce.h - what a reduction node reduces, for the gradient rules
 * of the reductions (rules_reduce.c) and of any op that reduces the same
 * way: the axes (from the attribute or a constant input, negative ones
 * resolved, sorted), keepdims, and the no-op case.
 */
#ifndef SM_AUTOGRAD_RULES_REDUCE_H
#define SM_AUTOGRAD_RULES_REDUCE_H

#include "autograd/grad.h"

typedef struct sm_g_reduction {
    int noop;   /* empty axes with noop_with_empty_axes: the identity */
    int n_axes; /* the reduced axes (every axis when none were given) */
    int64_t axes[SMELT_MAX_DIMS]; /* sorted, non-negative */
    int keepdims;
    double count; /* elements each output reduces; -1 when not known */
} sm_g_reduction;

/* Reads reduction node g->n (axes as attribute or as constant input 1,
 * keepdims, noop_with_empty_axes) into r. Fails, naming the node, when
 * the input's rank is unknown or the axes are computed at run time.
 * Returns g->st. */
smelt_status sm_g_reduction_get(sm_grad_ctx *g, sm_g_reduction *r);

/* v, a value of the reduction's output shape (its result or gradient),
 * with the reduced axes put back as 1s when keepdims is 0, so that it
 * broadcasts against the input. v itself otherwise. */
sm_value *sm_g_reduction_keep(sm_grad_ctx *g, const sm_g_reduction *r,
                              sm_value *v);

/* The reduction op (ReduceSum, ReduceProd, ...) of x over r's axes,
 * keeping them as 1s: the same grouping as the forward node. */
sm_value *sm_g_reduction_redo(sm_grad_ctx *g, const sm_g_reduction *r, sm_op op,
                              sm_value *x);

#endif
