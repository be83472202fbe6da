/*
 * rules_nn.h - small building blocks shared by the gradient rules of the
 * normalizations, softmax, losses and einsum (rules_norm.c,
 * rules_normalize.c, rules_loss.c, rules_einsum.c): reductions over
 * constant axes, arithmetic shorthands and axis resolution. Static
 * inline so each rule file stays self-contained.
 */
#ifndef SM_AUTOGRAD_RULES_NN_H
#define SM_AUTOGRAD_RULES_NN_H

#include "autograd/grad.h"

/* Records running out of memory as the rule's failure; returns NULL. */
static inline sm_value *nn_nomem(sm_grad_ctx *g)
{
    if (g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return NULL;
}

static inline sm_value *nn_mul(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Mul, a, b);
}

static inline sm_value *nn_add(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Add, a, b);
}

static inline sm_value *nn_sub(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Sub, a, b);
}

static inline sm_value *nn_div(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    return sm_g_op2(g, SM_OP_Div, a, b);
}

/* x times the constant c (x itself when c is 1). */
static inline sm_value *nn_scale(sm_grad_ctx *g, sm_value *x, double c)
{
    return c == 1 ? x : nn_mul(g, x, sm_g_scalar_like(g, x, c));
}

/* ReduceSum or ReduceMean (op) of x over axes; no axes is the identity
 * (noop_with_empty_axes), never "every axis". */
static inline sm_value *nn_reduce(sm_grad_ctx *g, sm_op op, sm_value *x,
                                  const int64_t *axes, int n, int keepdims)
{
    sm_value *in[2] = {x, sm_g_ints(g, axes, n)};
    sm_node *nd = sm_g_node(g, op, 2, in, 1);
    if (nd && (!sm_node_set_int(nd, "keepdims", keepdims) ||
               !sm_node_set_int(nd, "noop_with_empty_axes", n == 0))) {
        return nn_nomem(g);
    }
    return sm_g_done(g, nd);
}

/* A one-input node of op with one integer attribute. */
static inline sm_value *nn_op1_int(sm_grad_ctx *g, sm_op op, sm_value *x,
                                   const char *name, int64_t v)
{
    sm_node *nd = sm_g_node(g, op, 1, &x, 1);
    if (nd && !sm_node_set_int(nd, name, v)) {
        return nn_nomem(g);
    }
    return sm_g_done(g, nd);
}

/* Unsqueeze of x at the constant axes. */
static inline sm_value *nn_unsqueeze(sm_grad_ctx *g, sm_value *x,
                                     const int64_t *axes, int n)
{
    return n ? sm_g_op2(g, SM_OP_Unsqueeze, x, sm_g_ints(g, axes, n)) : x;
}

/* The forward node's rank of input i, failing (-1) when unknown. */
static inline int nn_rank(sm_grad_ctx *g, int i)
{
    int r = g->n->in[i]->type.ndim;
    if (r < 0)
        sm_g_fail(g, SMELT_ERR_SHAPE, "the rank of input %d is unknown", i);
    return r;
}

/* axis resolved against rank (a rank-0 tensor takes 0 or -1); -1 after
 * recording a failure when out of range. */
static inline int nn_axis(sm_grad_ctx *g, int64_t axis, int rank)
{
    int r = rank ? rank : 1;
    if (axis < -r || axis >= r) {
        sm_g_fail(g, SMELT_ERR_SHAPE, "axis %lld is out of range for rank %d",
                  (long long)axis, rank);
        return -1;
    }
    return (int)(axis < 0 ? axis + r : axis);
}

/* The number of elements of v over axes; -1 when one is unknown. */
static inline double nn_count(const sm_value *v, const int64_t *axes, int n)
{
    double c = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = v->type.dims[axes[i]].size;
        if (d < 0)
            return -1;
        c *= (double)d;
    }
    return c;
}

/* acc + t, where t broadcasts onto like's shape (t expanded to it when
 * there is no acc yet). */
static inline sm_value *nn_accum(sm_grad_ctx *g, sm_value *acc, sm_value *t,
                                 const sm_value *like)
{
    if (!t)
        return acc;
    return acc ? nn_add(g, acc, t) : sm_g_expand_like(g, t, like);
}

#endif
