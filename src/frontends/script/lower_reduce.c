/*
 * lower_reduce.c - builtins that take a dim in the PyTorch manner
 * (sum/mean/amax/amin/max/min/argmax with dim and keepdim, softmax and
 * log_softmax with a dim), clamp, the dispatcher of every call by name,
 * and indexing of tensors and lists.
 *
 * PyTorch's defaults apply: a reduction without a dim reduces everything
 * to a scalar, keepdim defaults to False, max(x, dim) gives the values
 * only (not the indices).
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/script/lower_call.h"

static smelt_status one_out(sm_lower *L, sm_lw_args *a, sm_node *n, sm_sv *out)
{
    SM_TRY(sm_lw_finish(L, n, a->line, a->col));
    *out = (sm_sv){.kind = SM_SV_TENSOR, .v = n->out[0]};
    return SMELT_OK;
}

/* The constant int or list of ints of argument d into v. */
static smelt_status dims_of(sm_lower *L, sm_lw_args *a, const sm_sv *d,
                            int64_t *v, int *n)
{
    int seq = d->kind == SM_SV_LIST || d->kind == SM_SV_TUPLE;
    *n = seq ? d->n : 1;
    if (*n > SMELT_MAX_DIMS)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "%s: too many dims", a->fname);
    for (int i = 0; i < *n; i++)
        SM_TRY(sm_lw_const_int(L, a, seq ? &d->items[i] : d, "the dim", &v[i]));
    return SMELT_OK;
}

static smelt_status keepdim(sm_lower *L, sm_lw_args *a, int pos, int64_t *k)
{
    const sm_sv *v = sm_lw_arg(a, pos, "keepdim", "keepdims");
    *k = 0;
    return v ? sm_lw_const_int(L, a, v, "keepdim", k) : SMELT_OK;
}

/* ReduceX(x, axes=dim, keepdims=keepdim); no dim reduces everything. */
static smelt_status reduce(sm_lower *L, sm_lw_args *a, sm_op op, sm_sv *out)
{
    sm_value *x;
    int64_t axes[SMELT_MAX_DIMS], keep;
    int n = 0;
    const sm_sv *d = sm_lw_arg(a, 1, "dim", "axis");
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(keepdim(L, a, 2, &keep));
    SM_TRY(sm_lw_args_done(L, a, 3));
    if (d && d->kind != SM_SV_NONE)
        SM_TRY(dims_of(L, a, d, axes, &n));
    sm_node *node = sm_lw_node(L, op, 1, &x, 1);
    if (!node || (n && sm_lw_set_ints(L, node, "axes", axes, n)) ||
        !sm_node_set_int(node, "keepdims", keep != 0))
        return sm_lw_nomem(L);
    return one_out(L, a, node, out);
}

#define REDUCER(fn, op)                                                        \
    static smelt_status fn(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)      \
    {                                                                          \
        (void)m;                                                               \
        return reduce(L, a, op, out);                                          \
    }
REDUCER(b_sum, SM_OP_ReduceSum)
REDUCER(b_mean, SM_OP_ReduceMean)
REDUCER(b_amax, SM_OP_ReduceMax)
REDUCER(b_amin, SM_OP_ReduceMin)

/* max and min: of Python constants, elementwise of several values, or a
 * reduction of one tensor (along an int dim). */
static smelt_status extremum(sm_lower *L, sm_lw_args *a, int is_max, sm_sv *out)
{
    int all_const = a->npos > 0;
    for (int i = 0; i < a->npos; i++)
        all_const &= sm_lw_is_const(&a->v[i]) && a->v[i].kind <= SM_SV_BOOL;
    if (all_const && a->npos >= 2) {
        SM_TRY(sm_lw_args_done(L, a, -1));
        *out = a->v[0];
        for (int i = 1; i < a->npos; i++) {
            sm_sv c;
            SM_TRY(sm_lw_binop(L, is_max ? SM_AOP_GT : SM_AOP_LT, &a->v[i], out,
                               a->line, a->col, &c));
            if (c.i)
                *out = a->v[i];
        }
        return SMELT_OK;
    }
    const sm_sv *d = a->npos >= 2 ? &a->v[1] : NULL;
    if (a->npos == 1 || (a->npos >= 2 && a->v[0].kind == SM_SV_TENSOR &&
                         d->kind == SM_SV_INT && !d->v))
        return reduce(L, a, is_max ? SM_OP_ReduceMax : SM_OP_ReduceMin, out);
    return sm_lw_op_call(L, a, is_max ? SM_OP_Max : SM_OP_Min, out);
}

static smelt_status b_max(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return extremum(L, a, 1, out);
}

static smelt_status b_min(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return extremum(L, a, 0, out);
}

/* argmax(x) of the flattened tensor, or argmax(x, dim, keepdim). */
static smelt_status b_argmax(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *x;
    int64_t axis = 0, keep;
    const sm_sv *d = sm_lw_arg(a, 1, "dim", "axis");
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(keepdim(L, a, 2, &keep));
    SM_TRY(sm_lw_args_done(L, a, 3));
    if (d && d->kind != SM_SV_NONE) {
        SM_TRY(sm_lw_const_int(L, a, d, "the dim", &axis));
    } else {
        sm_sv flat = {.kind = SM_SV_INT, .i = -1};
        sm_value *in[2] = {x, NULL};
        smelt_status st;
        SM_TRY(sm_lw_int_list(L, &flat, 1, a->line, a->col, &in[1]));
        if (!(x = sm_lw_emit(L, SM_OP_Reshape, 2, in, a->line, a->col, &st)))
            return st;
    }
    sm_node *n = sm_lw_node(L, SM_OP_ArgMax, 1, &x, 1);
    if (!n || !sm_node_set_int(n, "axis", axis) ||
        !sm_node_set_int(n, "keepdims", keep != 0))
        return sm_lw_nomem(L);
    return one_out(L, a, n, out);
}

/* softmax(x, dim=-1), log_softmax(x, dim=-1). */
static smelt_status softmax(sm_lower *L, sm_lw_args *a, sm_op op, sm_sv *out)
{
    sm_value *x;
    int64_t axis = -1;
    const sm_sv *d = sm_lw_arg(a, 1, "dim", "axis");
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(sm_lw_args_done(L, a, 2));
    if (d)
        SM_TRY(sm_lw_const_int(L, a, d, "the dim", &axis));
    sm_node *n = sm_lw_node(L, op, 1, &x, 1);
    if (!n || !sm_node_set_int(n, "axis", axis))
        return sm_lw_nomem(L);
    return one_out(L, a, n, out);
}

static smelt_status b_softmax(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return softmax(L, a, SM_OP_Softmax, out);
}

static smelt_status b_log_softmax(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return softmax(L, a, SM_OP_LogSoftmax, out);
}

/* clamp(x, min=None, max=None): Clip with bounds in x's dtype. */
static smelt_status b_clamp(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *in[3] = {NULL, NULL, NULL};
    const sm_sv *lo = sm_lw_arg(a, 1, "min", NULL);
    const sm_sv *hi = sm_lw_arg(a, 2, "max", NULL);
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &in[0]));
    SM_TRY(sm_lw_args_done(L, a, 3));
    smelt_dtype dt = in[0]->type.dtype;
    if (lo && lo->kind != SM_SV_NONE)
        SM_TRY(sm_lw_value(L, lo, dt, a->line, a->col, &in[1]));
    if (hi && hi->kind != SM_SV_NONE)
        SM_TRY(sm_lw_value(L, hi, dt, a->line, a->col, &in[2]));
    smelt_status st;
    sm_value *v = sm_lw_emit(L, SM_OP_Clip,
                             in[2]   ? 3
                             : in[1] ? 2
                                     : 1,
                             in, a->line, a->col, &st);
    *out = (sm_sv){.kind = SM_SV_TENSOR, .v = v};
    return v ? SMELT_OK : st;
}

/* abs of a Python constant folds; of anything else it is the op. */
static smelt_status b_abs(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    if (a->npos == 1 && a->n == 1 && sm_lw_is_const(&a->v[0]) &&
        a->v[0].kind <= SM_SV_BOOL) {
        *out = a->v[0];
        if (out->kind == SM_SV_FLOAT)
            out->f = out->f < 0 ? -out->f : out->f;
        else if (out->i == INT64_MIN)
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                               "integer overflow in abs");
        else
            out->i = out->i < 0 ? -out->i : out->i;
        out->kind = out->kind == SM_SV_BOOL ? SM_SV_INT : out->kind;
        return SMELT_OK;
    }
    return sm_lw_op_call(L, a, SM_OP_Abs, out);
}

static smelt_status b_range(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    (void)out;
    return sm_lw_error(
        L, a->line, a->col, SMELT_ERR_UNSUPPORTED,
        "write for i in range(n):", "range() can only be used in a for loop");
}

static smelt_status b_print(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    (void)out;
    return sm_lw_error(L, a->line, a->col, SMELT_ERR_UNSUPPORTED,
                       "remove it; `smelt run` shows the outputs",
                       "print is not supported");
}

typedef smelt_status (*builtin_fn)(sm_lower *L, sm_lw_args *a, int method,
                                   sm_sv *out);

static const struct {
    const char *name;
    builtin_fn fn;
} table[] = {
    {"sum", b_sum},
    {"mean", b_mean},
    {"amax", b_amax},
    {"amin", b_amin},
    {"max", b_max},
    {"min", b_min},
    {"argmax", b_argmax},
    {"softmax", b_softmax},
    {"log_softmax", b_log_softmax},
    {"clamp", b_clamp},
    {"abs", b_abs},
    {"range", b_range},
    {"print", b_print},
};

smelt_status sm_lw_builtin(sm_lower *L, const char *name, int method,
                           sm_lw_args *a, sm_sv *out)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].name, name))
            return table[i].fn(L, a, method, out);
    int found;
    smelt_status st = sm_lw_builtin_shape(L, name, method, a, out, &found);
    if (found)
        return st;
    sm_op op = sm_lw_find_op(name);
    if (op != SM_OP_COUNT)
        return sm_lw_op_call(L, a, op, out);
    if (method)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_NOT_FOUND,
                           "methods are builtins (x.sum(1), x.softmax(-1), "
                           "x.transpose(0, 1), ...) and ops of the op table "
                           "(x.relu(), x.exp(), ...)",
                           "%s has no method '%s'", sm_lw_a_kind(a->v[0].kind),
                           name);
    return sm_lw_error(L, a->line, a->col, SMELT_ERR_NOT_FOUND,
                       "define it with def in this file, or call an op of "
                       "the op table (relu, matmul, softmax, ...)",
                       "unknown function '%s'", name);
}

/* ---- indexing ----------------------------------------------------------- */

static smelt_status list_index(sm_lower *L, const sm_ast_expr *e,
                               const sm_sv *x, const sm_sv *i, sm_sv *out)
{
    if (i->kind != SM_SV_INT && i->kind != SM_SV_BOOL)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, NULL,
                           "%s indices must be constant ints",
                           sm_lw_kind_name(x->kind));
    if (i->v)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_UNSUPPORTED,
                           "index lists with constants; lists exist only at "
                           "compile time",
                           "a %s cannot be indexed by a run-time int",
                           sm_lw_kind_name(x->kind));
    int64_t k = i->i < 0 ? i->i + x->n : i->i;
    if (k < 0 || k >= x->n)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_INVALID_ARG, NULL,
                           "index %lld is out of range for a %s of length %d",
                           (long long)i->i, sm_lw_kind_name(x->kind), x->n);
    *out = x->items[k];
    return SMELT_OK;
}

typedef struct slicing {
    int n; /* Slice axes */
    sm_sv starts[SMELT_MAX_DIMS], ends[SMELT_MAX_DIMS], steps[SMELT_MAX_DIMS];
    sm_sv axes[SMELT_MAX_DIMS];
    int n_take; /* Gather axes */
    int64_t take_axis[SMELT_MAX_DIMS];
    sm_sv take[SMELT_MAX_DIMS];
} slicing;

/* One a:b:c of a tensor index into the Slice arrays. */
static smelt_status slice_part(sm_lower *L, const sm_ast_expr *s, int axis,
                               slicing *sl)
{
    sm_sv v[3];
    int64_t step = 1;
    for (int k = 0; k < 3; k++) {
        const sm_ast_expr *p = k == 0 ? s->a : k == 1 ? s->b : s->c;
        v[k] = (sm_sv){.kind = SM_SV_NONE};
        if (p)
            SM_TRY(sm_lw_expr(L, p, &v[k]));
        if (v[k].kind == SM_SV_BOOL)
            v[k].kind = SM_SV_INT;
        if (v[k].kind != SM_SV_NONE && v[k].kind != SM_SV_INT)
            return sm_lw_error(L, s->line, s->col, SMELT_ERR_TYPE, NULL,
                               "slice bounds must be ints, not a %s",
                               sm_lw_kind_name(v[k].kind));
    }
    if (v[2].kind == SM_SV_INT) {
        if (v[2].v || v[2].i == 0)
            return sm_lw_error(L, s->line, s->col, SMELT_ERR_UNSUPPORTED, NULL,
                               "a slice step must be a nonzero constant");
        step = v[2].i;
    }
    if (v[0].kind == SM_SV_NONE && v[1].kind == SM_SV_NONE && step == 1)
        return SMELT_OK; /* x[:] on this axis */
    int k = sl->n++;
    sl->starts[k] =
        v[0].kind == SM_SV_INT
            ? v[0]
            : (sm_sv){.kind = SM_SV_INT, .i = step > 0 ? 0 : INT64_MAX};
    sl->ends[k] =
        v[1].kind == SM_SV_INT
            ? v[1]
            : (sm_sv){.kind = SM_SV_INT, .i = step > 0 ? INT64_MAX : INT64_MIN};
    sl->steps[k] = (sm_sv){.kind = SM_SV_INT, .i = step};
    sl->axes[k] = (sm_sv){.kind = SM_SV_INT, .i = axis};
    return SMELT_OK;
}

/* x[i], x[a:b], x[i, a:b, ...]: one Slice for the slices, then a Gather
 * per int index from the last axis back. */
static smelt_status tensor_index(sm_lower *L, const sm_ast_expr *e, sm_value *x,
                                 sm_sv *out)
{
    const sm_ast_expr *idx = e->b;
    int n = idx->kind == SM_EX_TUPLE ? idx->n : 1;
    const sm_ast_expr *const *items =
        idx->kind == SM_EX_TUPLE ? (const sm_ast_expr *const *)idx->items
                                 : &idx;
    slicing sl;
    sl.n = sl.n_take = 0;
    if (n > SMELT_MAX_DIMS || (x->type.ndim >= 0 && n > x->type.ndim))
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_INVALID_ARG, NULL,
                           "too many indices for a tensor of rank %d",
                           x->type.ndim);
    for (int i = 0; i < n; i++) {
        if (items[i]->kind == SM_EX_SLICE) {
            SM_TRY(slice_part(L, items[i], i, &sl));
            continue;
        }
        sm_sv v;
        SM_TRY(sm_lw_expr(L, items[i], &v));
        if (v.kind != SM_SV_INT && v.kind != SM_SV_BOOL)
            return sm_lw_error(
                L, items[i]->line, items[i]->col, SMELT_ERR_UNSUPPORTED,
                "index with ints and slices (a:b); use "
                "gather(x, indices, axis=k) for tensors",
                "a tensor cannot be indexed by a %s", sm_lw_kind_name(v.kind));
        v.kind = SM_SV_INT;
        sl.take_axis[sl.n_take] = i;
        sl.take[sl.n_take++] = v;
    }
    smelt_status st;
    if (sl.n) {
        sm_value *in[5] = {x};
        SM_TRY(sm_lw_int_list(L, sl.starts, sl.n, e->line, e->col, &in[1]));
        SM_TRY(sm_lw_int_list(L, sl.ends, sl.n, e->line, e->col, &in[2]));
        SM_TRY(sm_lw_int_list(L, sl.axes, sl.n, e->line, e->col, &in[3]));
        SM_TRY(sm_lw_int_list(L, sl.steps, sl.n, e->line, e->col, &in[4]));
        if (!(x = sm_lw_emit(L, SM_OP_Slice, 5, in, e->line, e->col, &st)))
            return st;
    }
    for (int i = sl.n_take - 1; i >= 0; i--) {
        sm_value *in[2] = {x};
        SM_TRY(sm_lw_value(L, &sl.take[i], SMELT_DTYPE_I64, e->line, e->col,
                           &in[1]));
        sm_node *g = sm_lw_node(L, SM_OP_Gather, 2, in, 1);
        if (!g || !sm_node_set_int(g, "axis", sl.take_axis[i]))
            return sm_lw_nomem(L);
        SM_TRY(sm_lw_finish(L, g, e->line, e->col));
        x = g->out[0];
    }
    *out = (sm_sv){.kind = SM_SV_TENSOR, .v = x};
    return SMELT_OK;
}

smelt_status sm_lw_index(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    sm_sv x, i;
    const sm_ast_expr *s = e->a;
    if (s->kind == SM_EX_ATTR && !strcmp(s->name, "shape") &&
        e->b->kind != SM_EX_SLICE && e->b->kind != SM_EX_TUPLE) {
        /* x.shape[i]: only that dimension, not the whole list */
        SM_TRY(sm_lw_expr(L, s->a, &x));
        SM_TRY(sm_lw_expr(L, e->b, &i));
        if (x.kind != SM_SV_TENSOR)
            return sm_lw_error(L, s->line, s->col, SMELT_ERR_UNSUPPORTED, NULL,
                               "attribute 'shape' of %s is not "
                               "supported",
                               sm_lw_a_kind(x.kind));
        if (i.kind == SM_SV_INT && !i.v)
            return sm_lw_dim(L, x.v, i.i, e->line, e->col, out);
        SM_TRY(sm_lw_shape(L, x.v, e->line, e->col, &x));
        return list_index(L, e, &x, &i, out);
    }
    SM_TRY(sm_lw_expr(L, e->a, &x));
    if (x.kind == SM_SV_TENSOR)
        return tensor_index(L, e, x.v, out);
    if (x.kind != SM_SV_LIST && x.kind != SM_SV_TUPLE)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, NULL,
                           "%s cannot be indexed", sm_lw_a_kind(x.kind));
    if (e->b->kind == SM_EX_SLICE || e->b->kind == SM_EX_TUPLE)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_UNSUPPORTED,
                           "index lists with one constant int",
                           "slicing a %s is not supported",
                           sm_lw_kind_name(x.kind));
    SM_TRY(sm_lw_expr(L, e->b, &i));
    return list_index(L, e, &x, &i, out);
}
