/*
 * rules_reduce.c - gradient rules of the reductions. The output gradient
 * gets its reduced axes back (Unsqueeze when keepdims is 0) and then
 * broadcasts over them against a per-element factor: 1 for a sum, 1/n
 * for a mean, sign(x) for L1, the arg-max indicator for ReduceMax...
 * The reading of axes and keepdims (rules_reduce.h) is shared with every
 * rule that reduces like these ops.
 */
#include "autograd/rules_reduce.h"
#include "core/attr.h"
#include "core/dtype.h"

/* Sorts the first n of v ascending (n <= SMELT_MAX_DIMS). */
static void sort_axes(int64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
            int64_t t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
}

smelt_status sm_g_reduction_get(sm_grad_ctx *g, sm_g_reduction *r)
{
    const sm_node *n = g->n;
    const sm_value *x = n->in[0];
    int rank = x->type.ndim, cnt = 0;
    sm_attrs at = sm_node_attrs(n);
    *r = (sm_g_reduction){.keepdims = (int)sm_attrs_int(&at, "keepdims", 1),
                          .count = 1};
    if (rank < 0)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "the input's rank is unknown");
    if (n->n_in > 1 && n->in[1]) {
        const sm_tensor *t = n->in[1]->data;
        if (!t)
            return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                             "the axes are computed at run time; only "
                             "constant axes are differentiated");
        for (int64_t i = 0; i < t->numel && cnt < SMELT_MAX_DIMS; i++)
            r->axes[cnt++] = sm_load_i64(t->dtype, t->data, i);
    } else {
        const int64_t *v = NULL;
        int k = sm_attrs_ints(&at, "axes", &v);
        for (int i = 0; i < k && cnt < SMELT_MAX_DIMS; i++)
            r->axes[cnt++] = v[i];
    }
    if (cnt == 0) {
        if (sm_attrs_int(&at, "noop_with_empty_axes", 0)) {
            r->noop = 1;
            return g->st;
        }
        for (int i = 0; i < rank; i++)
            r->axes[cnt++] = i;
    }
    for (int i = 0; i < cnt; i++) {
        int64_t a = r->axes[i] < 0 ? r->axes[i] + rank : r->axes[i];
        if (a < 0 || a >= rank)
            return sm_g_fail(g, SMELT_ERR_SHAPE,
                             "axis %lld is out of range for rank %d",
                             (long long)r->axes[i], rank);
        r->axes[i] = a;
        int64_t d = x->type.dims[a].size;
        r->count = d < 0 || r->count < 0 ? -1 : r->count * (double)d;
    }
    sort_axes(r->axes, cnt);
    r->n_axes = cnt;
    return g->st;
}

sm_value *sm_g_reduction_keep(sm_grad_ctx *g, const sm_g_reduction *r,
                              sm_value *v)
{
    if (r->noop || r->keepdims || r->n_axes == 0)
        return v;
    return sm_g_op2(g, SM_OP_Unsqueeze, v, sm_g_ints(g, r->axes, r->n_axes));
}

sm_value *sm_g_reduction_redo(sm_grad_ctx *g, const sm_g_reduction *r, sm_op op,
                              sm_value *x)
{
    if (r->noop)
        return x;
    sm_value *in[2] = {x, sm_g_ints(g, r->axes, r->n_axes)};
    sm_node *n = sm_g_node(g, op, 2, in, 1);
    if (n && !sm_node_set_int(n, "keepdims", 1) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return sm_g_done(g, n);
}

/* The rule's common frame: reads the reduction into r and returns dy
 * with the reduced axes kept (NULL on failure). For the identity (no
 * axes with noop_with_empty_axes) it sets dx = dy itself and returns
 * NULL with g->st still SMELT_OK: the caller then only returns. */
static sm_value *begin(sm_grad_ctx *g, sm_g_reduction *r)
{
    if (sm_g_reduction_get(g, r) != SMELT_OK)
        return NULL;
    if (r->noop) {
        sm_g_set(g, 0, g->dy[0]);
        return NULL;
    }
    return sm_g_reduction_keep(g, r, g->dy[0]);
}

/* Sets input 0's gradient to dyk (dy, reduced axes kept) times factor
 * (of x's shape), or dyk broadcast to x's shape when factor is NULL. */
static smelt_status finish(sm_grad_ctx *g, sm_value *dyk, sm_value *factor)
{
    sm_value *x = g->n->in[0];
    sm_g_set(g, 0,
             factor ? sm_g_op2(g, SM_OP_Mul, dyk, factor)
                    : sm_g_expand_like(g, dyk, x));
    return g->st;
}

/* reducesum: dy broadcast over the reduced axes */
smelt_status sm_grad_reducesum(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    return dyk ? finish(g, dyk, NULL) : g->st;
}

/* reducemean: dy / n broadcast over the reduced axes (n elements each) */
smelt_status sm_grad_reducemean(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    if (r.count < 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the reduced dimensions are not known before "
                         "running (bind them with --dim)");
    if (r.count != 1)
        dyk =
            sm_g_op2(g, SM_OP_Mul, dyk, sm_g_scalar_like(g, dyk, 1 / r.count));
    return finish(g, dyk, NULL);
}

/* reducemax, reducemin: dy to the elements equal to the result, split
 * evenly among ties (PyTorch's amax / amin): dy [x == y] / c with
 * c = sum over the group of [x == y] */
static smelt_status extremum(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    sm_value *x = g->n->in[0];
    sm_value *yk = sm_g_reduction_keep(g, &r, g->n->out[0]);
    sm_value *hit =
        sm_g_cast(g, sm_g_op2(g, SM_OP_Equal, x, yk), x->type.dtype);
    sm_value *cnt = sm_g_reduction_redo(g, &r, SM_OP_ReduceSum, hit);
    return finish(g, sm_g_op2(g, SM_OP_Div, dyk, cnt), hit);
}

smelt_status sm_grad_reducemax(sm_grad_ctx *g)
{
    return extremum(g);
}

smelt_status sm_grad_reducemin(sm_grad_ctx *g)
{
    return extremum(g);
}

/*
 * reduceprod: dy times the product of the other elements of the group.
 * Where x != 0 that is y / x (0 when another element is 0); at a zero it
 * is the product of the group's nonzeros when that zero is the only one,
 * else 0. No division by zero, so groups with zeros get exact gradients.
 */
smelt_status sm_grad_reduceprod(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    sm_value *x = g->n->in[0];
    sm_value *zero = sm_g_scalar_like(g, x, 0),
             *one = sm_g_scalar_like(g, x, 1);
    sm_value *yk = sm_g_reduction_keep(g, &r, g->n->out[0]);
    sm_value *isz = sm_g_op2(g, SM_OP_Equal, x, zero);
    sm_value *safe = sm_g_op3(g, SM_OP_Where, isz, one, x);
    sm_value *others = sm_g_op2(g, SM_OP_Div, yk, safe);
    sm_value *nz = sm_g_reduction_redo(g, &r, SM_OP_ReduceSum,
                                       sm_g_cast(g, isz, x->type.dtype));
    sm_value *pnz = sm_g_reduction_redo(g, &r, SM_OP_ReduceProd, safe);
    sm_value *atz =
        sm_g_op3(g, SM_OP_Where, sm_g_op2(g, SM_OP_Equal, nz, one), pnz, zero);
    return finish(g, dyk, sm_g_op3(g, SM_OP_Where, isz, atz, others));
}

/* reducel1: dy * sign(x) */
smelt_status sm_grad_reducel1(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    return dyk ? finish(g, dyk, sm_g_op1(g, SM_OP_Sign, g->n->in[0])) : g->st;
}

/* reducel2: dy * x / y, and 0 for a group whose norm is 0 (as PyTorch's
 * norm backward) */
smelt_status sm_grad_reducel2(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    sm_value *x = g->n->in[0];
    sm_value *yk = sm_g_reduction_keep(g, &r, g->n->out[0]);
    sm_value *zy = sm_g_op2(g, SM_OP_Equal, yk, sm_g_scalar_like(g, yk, 0));
    sm_value *den =
        sm_g_op3(g, SM_OP_Where, zy, sm_g_scalar_like(g, yk, 1), yk);
    return finish(g, dyk, sm_g_op2(g, SM_OP_Div, x, den));
}

/* reducelogsum: dy / sum(x), the sum taken again over the same group */
smelt_status sm_grad_reducelogsum(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    sm_value *x = g->n->in[0];
    sm_value *s = sm_g_reduction_redo(g, &r, SM_OP_ReduceSum, x);
    return finish(g, sm_g_op2(g, SM_OP_Div, dyk, s), NULL);
}

/* reducelogsumexp: dy * exp(x - y), the softmax of the group */
smelt_status sm_grad_reducelogsumexp(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    sm_value *x = g->n->in[0];
    sm_value *yk = sm_g_reduction_keep(g, &r, g->n->out[0]);
    return finish(g, dyk,
                  sm_g_op1(g, SM_OP_Exp, sm_g_op2(g, SM_OP_Sub, x, yk)));
}

/* reducesumsquare: dy * 2x */
smelt_status sm_grad_reducesumsquare(sm_grad_ctx *g)
{
    sm_g_reduction r;
    sm_value *dyk = begin(g, &r);
    if (!dyk)
        return g->st;
    sm_value *x = g->n->in[0];
    return finish(g, dyk, sm_g_op2(g, SM_OP_Mul, x, sm_g_scalar_like(g, x, 2)));
}
