/*
 * rules_reduce.c - gradient rules of the reductions: the output gradient
 * put back on the reduced axes (Unsqueeze when keepdims is 0) and
 * broadcast over them, scaled for a mean.
 */
#include "autograd/grad.h"
#include "core/dtype.h"

/* The reduced axes of reduction node n (sorted, non-negative) into axes;
 * their count, 0 for "all" handled by the caller as every axis, -1 when
 * the node is a no-op (empty axes with noop_with_empty_axes), -2 when the
 * axes are not known before running. */
static int reduced_axes(sm_grad_ctx *g, int64_t *axes)
{
    const sm_node *n = g->n;
    int r = n->in[0]->type.ndim, cnt = 0;
    sm_attrs at = sm_node_attrs(n);
    if (n->n_in > 1 && n->in[1]) {
        const sm_tensor *t = n->in[1]->data;
        if (!t)
            return -2;
        for (int64_t i = 0; i < t->numel && cnt < SMELT_MAX_DIMS; i++)
            axes[cnt++] = sm_load_i64(t->dtype, t->data, i);
    } else {
        const int64_t *v = NULL;
        int k = sm_attrs_ints(&at, "axes", &v);
        for (int i = 0; i < k && cnt < SMELT_MAX_DIMS; i++)
            axes[cnt++] = v[i];
    }
    if (cnt == 0) {
        if (sm_attrs_int(&at, "noop_with_empty_axes", 0))
            return -1;
        for (int i = 0; i < r; i++)
            axes[i] = i;
        return r;
    }
    for (int i = 0; i < cnt; i++)
        if (axes[i] < 0)
            axes[i] += r;
    /* sort (at most SMELT_MAX_DIMS) */
    for (int i = 1; i < cnt; i++)
        for (int k = i; k > 0 && axes[k - 1] > axes[k]; k--) {
            int64_t t = axes[k];
            axes[k] = axes[k - 1];
            axes[k - 1] = t;
        }
    return cnt;
}

/* dy spread back over x: dy with the reduced axes restored, expanded to
 * x's shape. *count receives the number of elements each output reduced
 * (-1 when not known before running). NULL on failure. */
static sm_value *spread(sm_grad_ctx *g, double *count)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *dy = g->dy[0];
    int64_t axes[SMELT_MAX_DIMS];
    if (x->type.ndim < 0) {
        sm_g_fail(g, SMELT_ERR_SHAPE, "the input's rank is unknown");
        return NULL;
    }
    int cnt = reduced_axes(g, axes);
    *count = 1;
    if (cnt == -1)
        return dy;
    if (cnt == -2) {
        sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                  "the axes are computed at run time; only constant axes "
                  "are differentiated");
        return NULL;
    }
    for (int i = 0; i < cnt; i++) {
        int64_t d = x->type.dims[axes[i]].size;
        *count = d < 0 || *count < 0 ? -1 : *count * (double)d;
    }
    sm_attrs at = sm_node_attrs(n);
    if (!sm_attrs_int(&at, "keepdims", 1) && cnt)
        dy = sm_g_op2(g, SM_OP_Unsqueeze, dy, sm_g_ints(g, axes, cnt));
    return sm_g_expand_like(g, dy, x);
}

smelt_status sm_grad_reducesum(sm_grad_ctx *g)
{
    double count;
    sm_g_set(g, 0, spread(g, &count));
    return g->st;
}

smelt_status sm_grad_reducemean(sm_grad_ctx *g)
{
    double count;
    sm_value *d = spread(g, &count);
    if (d && count < 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the reduced dimensions are not known before "
                         "running (bind them with --dim)");
    if (d && count != 1)
        d = sm_g_op2(g, SM_OP_Mul, d, sm_g_scalar_like(g, d, 1.0 / count));
    sm_g_set(g, 0, d);
    return g->st;
}
