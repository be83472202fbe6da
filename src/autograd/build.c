/*
 * build.c - the helpers gradient rules build backward graphs with
 * (grad.h): nodes inferred as they are made, constants, and the shape
 * work every rule family needs (summing a broadcast gradient back down,
 * zeros, reshaping to a forward value's shape).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "autograd/grad.h"
#include "core/dtype.h"
#include "ir/infer.h"

smelt_status sm_g_fail(sm_grad_ctx *g, smelt_status code, const char *fmt, ...)
{
    if (g->st != SMELT_OK)
        return g->st;
    char where[256] = "the loss", msg[512];
    if (g->n)
        sm_node_where(g->n, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g->st = sm_err(g->ctx, code, "gradient of %s: %s", where, msg);
    return g->st;
}

/* Keeps the context's own message (out of memory, a shape error) as the
 * first failure. */
static void failed(sm_grad_ctx *g, smelt_status st)
{
    if (g->st == SMELT_OK)
        g->st = st;
}

sm_node *sm_g_node(sm_grad_ctx *g, sm_op op, int n_in, sm_value *const *in,
                   int n_out)
{
    if (g->st != SMELT_OK)
        return NULL;
    for (int i = 0; i < n_in; i++)
        if (!in[i] && i < sm_op_info_get(op)->in_min)
            return NULL; /* an earlier helper failed */
    sm_node *n =
        sm_rw_node_new(g->rw, g->b, NULL, op, NULL, n_in, in, n_out, NULL);
    if (!n)
        failed(g, sm_err_nomem(g->ctx));
    return n;
}

sm_value *sm_g_done(sm_grad_ctx *g, sm_node *n)
{
    if (!n || g->st != SMELT_OK)
        return NULL;
    smelt_status st = sm_rw_infer_node(g->rw, n);
    if (st != SMELT_OK) {
        failed(g, st);
        return NULL;
    }
    return n->out[0];
}

sm_value *sm_g_op1(sm_grad_ctx *g, sm_op op, sm_value *a)
{
    return sm_g_done(g, sm_g_node(g, op, 1, &a, 1));
}

sm_value *sm_g_op2(sm_grad_ctx *g, sm_op op, sm_value *a, sm_value *b)
{
    sm_value *in[2] = {a, b};
    return sm_g_done(g, sm_g_node(g, op, 2, in, 1));
}

sm_value *sm_g_op3(sm_grad_ctx *g, sm_op op, sm_value *a, sm_value *b,
                   sm_value *c)
{
    sm_value *in[3] = {a, b, c};
    return sm_g_done(g, sm_g_node(g, op, 3, in, 1));
}

/* Adds tensor t (taken, also on failure) as a constant of g->b. */
static sm_value *add_const(sm_grad_ctx *g, const char *name, sm_tensor *t)
{
    sm_value *v = sm_rw_add_const(g->rw, g->b, name, t);
    if (!v)
        failed(g, sm_err_nomem(g->ctx));
    return v;
}

sm_value *sm_g_scalar(sm_grad_ctx *g, smelt_dtype dt, double v)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_tensor *t;
    smelt_status st = sm_tensor_new(g->ctx, dt, 0, NULL, &t);
    if (st != SMELT_OK) {
        failed(g, st);
        return NULL;
    }
    sm_store_f64(dt, t->data, 0, v);
    return add_const(g, "g_scalar", t);
}

sm_value *sm_g_scalar_like(sm_grad_ctx *g, const sm_value *like, double v)
{
    return like ? sm_g_scalar(g, like->type.dtype, v) : NULL;
}

sm_value *sm_g_ints(sm_grad_ctx *g, const int64_t *v, int n)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_tensor *t;
    int64_t dims[1] = {n};
    smelt_status st = sm_tensor_new(g->ctx, SMELT_DTYPE_I64, 1, dims, &t);
    if (st != SMELT_OK) {
        failed(g, st);
        return NULL;
    }
    if (n)
        memcpy(t->data, v, (size_t)n * sizeof *v);
    return add_const(g, "g_ints", t);
}

sm_value *sm_g_shape_of(sm_grad_ctx *g, const sm_value *v)
{
    if (!v || v->type.ndim < 0)
        return v ? sm_g_op1(g, SM_OP_Shape, (sm_value *)v) : NULL;
    int64_t dims[SMELT_MAX_DIMS];
    for (int i = 0; i < v->type.ndim; i++) {
        if (v->type.dims[i].size < 0)
            return sm_g_op1(g, SM_OP_Shape, (sm_value *)v);
        dims[i] = v->type.dims[i].size;
    }
    return sm_g_ints(g, dims, v->type.ndim);
}

sm_value *sm_g_zeros_like(sm_grad_ctx *g, sm_value *v)
{
    sm_value *shape = sm_g_shape_of(g, v);
    sm_node *n = sm_g_node(g, SM_OP_ConstantOfShape, 1, &shape, 1);
    if (!n)
        return NULL;
    sm_tensor *t;
    int64_t one[1] = {1};
    smelt_status st = sm_tensor_new(g->ctx, v->type.dtype, 1, one, &t);
    if (st != SMELT_OK) {
        failed(g, st);
        return NULL;
    }
    if (!sm_node_set_tensor(n, "value", t)) {
        failed(g, sm_err_nomem(g->ctx));
        return NULL;
    }
    return sm_g_done(g, n);
}

sm_value *sm_g_reduce_sum(sm_grad_ctx *g, sm_value *x, const int64_t *axes,
                          int n_axes, int keepdims)
{
    sm_value *in[2] = {x, sm_g_ints(g, axes, n_axes)};
    sm_node *n = sm_g_node(g, SM_OP_ReduceSum, 2, in, 1);
    if (n && !sm_node_set_int(n, "keepdims", keepdims)) {
        failed(g, sm_err_nomem(g->ctx));
        return NULL;
    }
    return sm_g_done(g, n);
}

/* Whether dimension a (of the gradient) may differ from b (of the
 * input it goes back to): 1 when b is 1 and a is not known to be, 0 when
 * they agree, -1 when the types cannot tell. */
static int stretched(const sm_dim *a, const sm_dim *b)
{
    if (b->size == 1)
        return a->size != 1;
    if (b->size > 1 || b->size == 0)
        return 0; /* broadcasting kept it (0 too): a equals it */
    if (b->sym && a->sym && strcmp(a->sym, b->sym) == 0)
        return 0;
    if (a->size == 1)
        return 0; /* b is 1 at run time too */
    return -1;
}

sm_value *sm_g_unbroadcast(sm_grad_ctx *g, sm_value *d, const sm_value *x)
{
    if (!d || !x || g->st != SMELT_OK)
        return NULL;
    int rd = d->type.ndim, rx = x->type.ndim;
    if (rd < 0 || rx < 0 || rx > rd) {
        sm_g_fail(g, SMELT_ERR_SHAPE,
                  "the rank of '%s' is unknown (run shape inference with "
                  "every input's rank known)",
                  x->name);
        return NULL;
    }
    int64_t lead[SMELT_MAX_DIMS], keep[SMELT_MAX_DIMS];
    int n_lead = 0, n_keep = 0;
    for (int i = 0; i < rd; i++) {
        int j = i - (rd - rx);
        if (j < 0) {
            lead[n_lead++] = i;
            continue;
        }
        int s = stretched(&d->type.dims[i], &x->type.dims[j]);
        if (s < 0) {
            sm_g_fail(g, SMELT_ERR_SHAPE,
                      "cannot tell whether dimension %d of '%s' is "
                      "broadcast; give its size (--dim)",
                      j, x->name);
            return NULL;
        }
        if (s)
            keep[n_keep++] = i;
    }
    sm_value *r = d;
    if (n_keep)
        r = sm_g_reduce_sum(g, r, keep, n_keep, 1);
    if (n_lead)
        r = sm_g_reduce_sum(g, r, lead, n_lead, 0);
    return r;
}

sm_value *sm_g_reshape_like(sm_grad_ctx *g, sm_value *x, const sm_value *like)
{
    return sm_g_op2(g, SM_OP_Reshape, x, sm_g_shape_of(g, like));
}

sm_value *sm_g_cast(sm_grad_ctx *g, sm_value *x, smelt_dtype dt)
{
    if (!x || x->type.dtype == dt)
        return x;
    sm_node *n = sm_g_node(g, SM_OP_Cast, 1, &x, 1);
    if (n && !sm_node_set_int(n, "to", sm_dtype_to_onnx(dt))) {
        failed(g, sm_err_nomem(g->ctx));
        return NULL;
    }
    return sm_g_done(g, n);
}

void sm_g_set(sm_grad_ctx *g, int i, sm_value *d)
{
    if (i < g->n->n_in && g->need[i])
        g->dx[i] = d;
}

sm_value *sm_g_expand_like(sm_grad_ctx *g, sm_value *x, const sm_value *like)
{
    return sm_g_op2(g, SM_OP_Expand, x, sm_g_shape_of(g, like));
}
