/*
 * build_move.c - the helpers of build_move.h: constant integer inputs,
 * attribute setters, replaying a forward node, and the index map that
 * sends a gradient back through any op that only moves elements.
 */
#include "autograd/build_move.h"

#include "core/dtype.h"

int mv_const_ints(const sm_value *v, int64_t *out, int max)
{
    const sm_tensor *t = v ? v->data : NULL;
    if (!t || !sm_dtype_is_int(t->dtype) || t->numel > max)
        return -1;
    for (int64_t i = 0; i < t->numel; i++)
        out[i] = sm_load_i64(t->dtype, t->data, i);
    return (int)t->numel;
}

int64_t mv_attr_int(const sm_node *n, const char *name, int64_t def)
{
    sm_attrs at = sm_node_attrs(n);
    return sm_attrs_int(&at, name, def);
}

void mv_set_int(sm_grad_ctx *g, sm_node *n, const char *name, int64_t v)
{
    if (n && !sm_node_set_int(n, name, v) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
}

void mv_set_ints(sm_grad_ctx *g, sm_node *n, const char *name, const int64_t *v,
                 int cnt)
{
    if (n && !sm_node_set_ints(n, name, v, cnt) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
}

void mv_set_string(sm_grad_ctx *g, sm_node *n, const char *name, const char *s)
{
    if (n && !sm_node_set_string(n, name, s) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
}

/* Copies attribute a onto n; 0 when out of memory. */
static int copy_attr(smelt_ctx_t *ctx, sm_node *n, const sm_attr *a)
{
    switch (a->kind) {
    case SM_ATTR_INT: return sm_node_set_int(n, a->name, a->v.i);
    case SM_ATTR_FLOAT: return sm_node_set_float(n, a->name, a->v.f);
    case SM_ATTR_STRING: return sm_node_set_string(n, a->name, a->v.s);
    case SM_ATTR_INTS: return sm_node_set_ints(n, a->name, a->v.ints, a->n);
    case SM_ATTR_FLOATS:
        return sm_node_set_floats(n, a->name, a->v.floats, a->n);
    case SM_ATTR_STRINGS:
        return sm_node_set_strings(n, a->name, a->v.strs, a->n);
    case SM_ATTR_TENSOR: {
        sm_tensor *t;
        if (sm_tensor_clone(ctx, a->v.t, &t) != SMELT_OK)
            return 0;
        return sm_node_set_tensor(n, a->name, t);
    }
    case SM_ATTR_KIND_COUNT: break;
    }
    return 1;
}

sm_value *mv_replay(sm_grad_ctx *g, sm_value *const *in, int n_in)
{
    sm_node *n = sm_g_node(g, g->n->op, n_in, in, g->n->n_out);
    for (int i = 0; n && i < g->n->n_attr; i++)
        if (!copy_attr(g->ctx, n, &g->n->attrs[i])) {
            if (g->st == SMELT_OK)
                g->st = sm_err_nomem(g->ctx);
            return NULL;
        }
    return sm_g_done(g, n);
}

sm_value *mv_transpose(sm_grad_ctx *g, sm_value *x, const int64_t *perm, int r)
{
    sm_node *n = sm_g_node(g, SM_OP_Transpose, 1, &x, 1);
    mv_set_ints(g, n, "perm", perm, r);
    return sm_g_done(g, n);
}

sm_value *mv_slice(sm_grad_ctx *g, sm_value *x, const int64_t *starts,
                   const int64_t *ends, const int64_t *axes,
                   const int64_t *steps, int n)
{
    sm_value *in[5] = {x, sm_g_ints(g, starts, n), sm_g_ints(g, ends, n),
                       sm_g_ints(g, axes, n),
                       steps ? sm_g_ints(g, steps, n) : NULL};
    return sm_g_done(g, sm_g_node(g, SM_OP_Slice, steps ? 5 : 4, in, 1));
}

sm_value *mv_fill(sm_grad_ctx *g, sm_value *shape, smelt_dtype dt, double v)
{
    sm_node *n = sm_g_node(g, SM_OP_ConstantOfShape, 1, &shape, 1);
    if (!n)
        return NULL;
    sm_tensor *t;
    int64_t one[1] = {1};
    smelt_status st = sm_tensor_new(g->ctx, dt, 1, one, &t);
    if (st != SMELT_OK) {
        if (g->st == SMELT_OK)
            g->st = st;
        return NULL;
    }
    sm_store_f64(dt, t->data, 0, v);
    if (!sm_node_set_tensor(n, "value", t)) {
        if (g->st == SMELT_OK)
            g->st = sm_err_nomem(g->ctx);
        return NULL;
    }
    return sm_g_done(g, n);
}

sm_value *mv_concat(sm_grad_ctx *g, sm_value *const *x, int n, int axis)
{
    for (int i = 0; i < n; i++)
        if (!x[i])
            return NULL; /* an earlier helper failed */
    sm_node *c = sm_g_node(g, SM_OP_Concat, n, x, 1);
    mv_set_int(g, c, "axis", axis);
    return sm_g_done(g, c);
}

sm_value *mv_iota(sm_grad_ctx *g, const sm_value *x)
{
    sm_value *count = sm_g_op1(g, SM_OP_Size, (sm_value *)x);
    sm_value *r = sm_g_op3(g, SM_OP_Range, sm_g_scalar(g, SMELT_DTYPE_I64, 0),
                           count, sm_g_scalar(g, SMELT_DTYPE_I64, 1));
    return sm_g_reshape_like(g, r, x);
}

sm_value *mv_scatter_back(sm_grad_ctx *g, const sm_value *x, sm_value *map,
                          sm_value *dy)
{
    static const int64_t flat[1] = {-1};
    sm_value *count = sm_g_op1(g, SM_OP_Size, (sm_value *)x);
    sm_value *shape = sm_g_op2(g, SM_OP_Reshape, count, sm_g_ints(g, flat, 1));
    sm_value *in[3] = {
        mv_fill(g, shape, dy ? dy->type.dtype : SMELT_DTYPE_F32, 0),
        sm_g_op2(g, SM_OP_Reshape, map, sm_g_ints(g, flat, 1)),
        sm_g_op2(g, SM_OP_Reshape, dy, sm_g_ints(g, flat, 1))};
    sm_node *n = sm_g_node(g, SM_OP_ScatterElements, 3, in, 1);
    mv_set_int(g, n, "axis", 0);
    mv_set_string(g, n, "reduction", "add");
    return sm_g_reshape_like(g, sm_g_done(g, n), x);
}

sm_value *mv_gradient_by_map(sm_grad_ctx *g, const unsigned char *drop)
{
    const sm_node *n = g->n;
    sm_value *in_st[8];
    if (n->n_in > 8) {
        sm_g_fail(g, SMELT_ERR_UNSUPPORTED, "more than 8 inputs");
        return NULL;
    }
    for (int i = 0; i < n->n_in; i++)
        in_st[i] = drop && drop[i] ? NULL : n->in[i];
    in_st[0] = mv_iota(g, n->in[0]);
    sm_value *map = mv_replay(g, in_st, n->n_in);
    return mv_scatter_back(g, n->in[0], map, g->dy[0]);
}

sm_value *mv_float_pair(sm_grad_ctx *g, smelt_dtype dt, double a, double b)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_tensor *t;
    int64_t two[1] = {2};
    smelt_status st = sm_tensor_new(g->ctx, dt, 1, two, &t);
    if (st != SMELT_OK) {
        g->st = st;
        return NULL;
    }
    sm_store_f64(dt, t->data, 0, a);
    sm_store_f64(dt, t->data, 1, b);
    sm_value *v = sm_rw_add_const(g->rw, g->b, "g_pair", t);
    if (!v)
        g->st = sm_err_nomem(g->ctx);
    return v;
}

sm_value *mv_axis_len(sm_grad_ctx *g, sm_value *v, int axis)
{
    int64_t d = v && v->type.ndim > axis ? v->type.dims[axis].size : -1;
    if (d >= 0)
        return sm_g_ints(g, &d, 1);
    sm_node *n = sm_g_node(g, SM_OP_Shape, 1, &v, 1);
    mv_set_int(g, n, "start", axis);
    mv_set_int(g, n, "end", axis + 1);
    return sm_g_done(g, n);
}
