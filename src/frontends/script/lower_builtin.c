/*
 * lower_builtin.c - the builtin functions and methods of the script
 * language (docs/SCRIPT.md lists them), in the PyTorch manner: tensor
 * constructors (ones, zeros, full, tensor), conversions (float, int,
 * x.float(), x.long()), reductions with dim/keepdim, softmax with a dim,
 * transpose of two dims, reshape, concat/stack, clamp, and indexing.
 *
 * Each is a small function from evaluated arguments to a script value;
 * one table maps names to them. Names not in the table go to the op table
 * (lower_call.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/script/lower_call.h"

/* Constant tensors up to this many elements are made at compile time;
 * larger ones, or beyond the total budget, become ConstantOfShape. */
#define CONST_MAX_NUMEL ((int64_t)1 << 20)
#define CONST_MAX_TOTAL ((size_t)256 << 20)

typedef smelt_status (*builtin_fn)(sm_lower *L, sm_lw_args *a, int method,
                                   sm_sv *out);

static smelt_status tensor_out(sm_value *v, smelt_status st, sm_sv *out)
{
    *out = (sm_sv){.kind = SM_SV_TENSOR, .v = v};
    return v ? SMELT_OK : st;
}

/* A node with one input, one output and one ints attribute. */
static smelt_status with_ints(sm_lower *L, sm_lw_args *a, sm_op op, sm_value *x,
                              const char *attr, const int64_t *v, int cnt,
                              sm_sv *out)
{
    sm_node *n = sm_lw_node(L, op, 1, &x, 1);
    if (!n || (attr && sm_lw_set_ints(L, n, attr, v, cnt)))
        return sm_lw_nomem(L);
    SM_TRY(sm_lw_finish(L, n, a->line, a->col));
    return tensor_out(n->out[0], SMELT_OK, out);
}

/* An int or a list of ints into v (at most SMELT_MAX_DIMS). */
static smelt_status int_list(sm_lower *L, sm_lw_args *a, const sm_sv *s,
                             const char *what, int64_t *v, int *cnt)
{
    int seq = s->kind == SM_SV_LIST || s->kind == SM_SV_TUPLE;
    int n = seq ? s->n : 1;
    if (n > SMELT_MAX_DIMS)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "%s of %s lists more than %d dims", what, a->fname,
                           SMELT_MAX_DIMS);
    for (int i = 0; i < n; i++)
        SM_TRY(sm_lw_const_int(L, a, seq ? &s->items[i] : s, what, &v[i]));
    *cnt = n;
    return SMELT_OK;
}

/* ---- constructors ------------------------------------------------------- */

/* shape items (ints, constant or not) from positional args from..end, or
 * from one list argument. */
static smelt_status shape_items(sm_lw_args *a, int from, int to,
                                const sm_sv **items, int *n)
{
    if (to - from == 1 &&
        (a->v[from].kind == SM_SV_LIST || a->v[from].kind == SM_SV_TUPLE)) {
        *items = a->v[from].items;
        *n = a->v[from].n;
    } else {
        *items = a->v + from;
        *n = to - from;
    }
    return SMELT_OK;
}

/* A tensor of the given shape filled with value (dtype dt). */
static smelt_status filled(sm_lower *L, sm_lw_args *a, const sm_sv *items,
                           int n, smelt_dtype dt, double value, sm_sv *out)
{
    int64_t dims[SMELT_MAX_DIMS], numel = 1;
    int all_const = n <= SMELT_MAX_DIMS;
    for (int i = 0; i < n && all_const; i++) {
        all_const = (items[i].kind == SM_SV_INT && !items[i].v);
        dims[i] = all_const ? items[i].i : 0;
        if (all_const && dims[i] < 0)
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_SHAPE, NULL,
                               "%s: negative dimension %lld", a->fname,
                               (long long)dims[i]);
    }
    smelt_ctx_t scratch = {0};
    if (all_const &&
        sm_shape_numel(&scratch, n, dims, smelt_dtype_size(dt), &numel) == 0 &&
        numel <= CONST_MAX_NUMEL &&
        L->const_bytes + (size_t)numel * smelt_dtype_size(dt) <=
            CONST_MAX_TOTAL) {
        sm_tensor *t;
        if (sm_tensor_new(NULL, dt, n, dims, &t))
            return sm_lw_nomem(L);
        for (int64_t i = 0; i < numel; i++)
            sm_store_f64(dt, t->data, i, value);
        sm_value *v = sm_lw_const(L, t);
        return v ? tensor_out(v, SMELT_OK, out) : sm_lw_nomem(L);
    }
    if (n > SMELT_MAX_DIMS)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_SHAPE, NULL,
                           "%s: more than %d dims", a->fname, SMELT_MAX_DIMS);
    sm_value *shape;
    SM_TRY(sm_lw_int_list(L, items, n, a->line, a->col, &shape));
    sm_node *c = sm_lw_node(L, SM_OP_ConstantOfShape, 1, &shape, 1);
    sm_tensor *t;
    int64_t one = 1;
    if (!c || sm_tensor_new(NULL, dt, 1, &one, &t))
        return sm_lw_nomem(L);
    sm_store_f64(dt, t->data, 0, value);
    if (!sm_node_set_tensor(c, "value", t))
        return sm_lw_nomem(L);
    SM_TRY(sm_lw_finish(L, c, a->line, a->col));
    return tensor_out(c->out[0], SMELT_OK, out);
}

/* dtype="i64" keyword, else def. */
static smelt_status dtype_kw(sm_lower *L, sm_lw_args *a, smelt_dtype def,
                             smelt_dtype *dt)
{
    const sm_sv *d = sm_lw_kwarg(a, "dtype", NULL);
    *dt = def;
    if (!d)
        return SMELT_OK;
    if (d->kind != SM_SV_STR ||
        !(*dt = sm_dtype_from_name(d->s, (int)strlen(d->s))))
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_TYPE,
                           "dtypes are \"f32\" \"f64\" \"f16\" \"bf16\" \"i8\" "
                           "\"u8\" \"i16\" \"i32\" \"i64\" \"bool\"",
                           "unknown dtype for %s", a->fname);
    return SMELT_OK;
}

static smelt_status b_fill(sm_lower *L, sm_lw_args *a, double value, sm_sv *out)
{
    const sm_sv *items;
    int n;
    smelt_dtype dt;
    SM_TRY(dtype_kw(L, a, SMELT_DTYPE_F32, &dt));
    SM_TRY(sm_lw_args_done(L, a, -1));
    shape_items(a, 0, a->npos, &items, &n);
    return filled(L, a, items, n, dt, value, out);
}

static smelt_status b_ones(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return b_fill(L, a, 1.0, out);
}

static smelt_status b_zeros(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return b_fill(L, a, 0.0, out);
}

/* full(shape, value): the value's own type gives the dtype. */
static smelt_status b_full(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    const sm_sv *items, *v = sm_lw_arg(a, 1, "fill_value", "value");
    int n;
    if (a->npos < 1 || !v || !sm_lw_is_const(v) || v->kind > SM_SV_BOOL)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG,
                           "write full(shape, value) with a constant value",
                           "full needs a shape and a constant value");
    smelt_dtype dt;
    SM_TRY(dtype_kw(L, a, sm_lw_natural_dtype(v->kind), &dt));
    SM_TRY(sm_lw_args_done(L, a, 2));
    shape_items(a, 0, 1, &items, &n);
    return filled(L, a, items, n, dt,
                  v->kind == SM_SV_FLOAT ? v->f : (double)v->i, out);
}

/* Shape of nested constant lists; fails unless rectangular. */
static int nested_shape(const sm_sv *v, int depth, int64_t *dims, int *nd)
{
    if (v->kind != SM_SV_LIST && v->kind != SM_SV_TUPLE) {
        if (*nd < 0)
            *nd = depth;
        return *nd == depth && v->kind <= SM_SV_BOOL &&
               v->kind != SM_SV_TENSOR && !v->v;
    }
    if (depth >= SMELT_MAX_DIMS)
        return 0;
    if (*nd >= 0 && (depth >= *nd || dims[depth] != v->n))
        return 0;
    if (*nd < 0) {
        dims[depth] = v->n;
        if (v->n == 0)
            *nd = depth + 1;
    }
    for (int i = 0; i < v->n; i++)
        if (!nested_shape(&v->items[i], depth + 1, dims, nd))
            return 0;
    return 1;
}

static void nested_fill(const sm_sv *v, sm_tensor *t, int64_t *k)
{
    if (v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE) {
        for (int i = 0; i < v->n; i++)
            nested_fill(&v->items[i], t, k);
        return;
    }
    if (sm_dtype_is_float(t->dtype))
        sm_store_f64(t->dtype, t->data, (*k)++,
                     v->kind == SM_SV_FLOAT ? v->f : (double)v->i);
    else if (v->kind != SM_SV_FLOAT)
        sm_store_i64(t->dtype, t->data, (*k)++, v->i);
    else /* a float into an integer tensor: truncated, when it fits */
        sm_store_i64(t->dtype, t->data, (*k)++,
                     v->f > -9.2e18 && v->f < 9.2e18 ? (int64_t)v->f : 0);
}

static smelt_dtype nested_dtype(const sm_sv *v, smelt_dtype dt)
{
    if (v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE) {
        for (int i = 0; i < v->n; i++)
            dt = nested_dtype(&v->items[i], dt);
        return dt;
    }
    if (v->kind == SM_SV_FLOAT)
        return SMELT_DTYPE_F32;
    return v->kind == SM_SV_INT && dt == SMELT_DTYPE_BOOL ? SMELT_DTYPE_I64
                                                          : dt;
}

/* tensor(data): nested lists of constants, or one scalar (which may be
 * known only at run time). */
static smelt_status b_tensor(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    const sm_sv *d = sm_lw_arg(a, 0, "data", NULL);
    if (!d)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "tensor needs data");
    smelt_dtype dt, nat = nested_dtype(d, SMELT_DTYPE_BOOL);
    SM_TRY(dtype_kw(L, a, nat, &dt));
    SM_TRY(sm_lw_args_done(L, a, 1));
    if (d->kind == SM_SV_TENSOR || (d->kind <= SM_SV_BOOL && d->v)) {
        smelt_status st;
        sm_value *v = sm_lw_cast(
            L, d->v,
            d->kind == SM_SV_TENSOR
                ? (sm_lw_kwarg(a, "dtype", NULL) ? dt : d->v->type.dtype)
                : dt,
            a->line, a->col, &st);
        return tensor_out(v, st, out);
    }
    sm_value *v;
    SM_TRY(sm_lw_nested_const(L, d, dt, a->line, a->col, &v));
    return tensor_out(v, SMELT_OK, out);
}

smelt_status sm_lw_nested_const(sm_lower *L, const sm_sv *d, smelt_dtype dt,
                                int line, int col, sm_value **out)
{
    int64_t dims[SMELT_MAX_DIMS], numel;
    int nd = -1;
    smelt_ctx_t scratch = {0};
    if (!dt)
        dt = nested_dtype(d, SMELT_DTYPE_BOOL);
    if (!nested_shape(d, 0, dims, &nd) ||
        sm_shape_numel(&scratch, nd, dims, smelt_dtype_size(dt), &numel) ||
        numel > CONST_MAX_NUMEL)
        return sm_lw_error(L, line, col, SMELT_ERR_SHAPE,
                           "give nested lists of equal length holding "
                           "constant numbers",
                           "tensor data must be a rectangular list of "
                           "constants");
    sm_tensor *t;
    if (sm_tensor_new(NULL, dt, nd, dims, &t))
        return sm_lw_nomem(L);
    int64_t k = 0;
    nested_fill(d, t, &k);
    return (*out = sm_lw_const(L, t)) ? SMELT_OK : sm_lw_nomem(L);
}

/* ---- conversions -------------------------------------------------------- */

/* float(x), int(x), bool(x) give Python scalars; the methods x.float(),
 * x.long(), x.int(), x.bool(), x.double(), x.half() give tensors. */
static smelt_status convert(sm_lower *L, sm_lw_args *a, int method,
                            sm_sv_kind kind, smelt_dtype dt, sm_sv *out)
{
    SM_TRY(sm_lw_args_done(L, a, 1));
    if (a->npos != 1)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "%s takes one argument", a->fname);
    const sm_sv *x = &a->v[0];
    if (x->kind > SM_SV_BOOL)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_TYPE, NULL,
                           "%s of a %s is not supported", a->fname,
                           sm_lw_kind_name(x->kind));
    if (sm_lw_is_const(x)) {
        double f = x->kind == SM_SV_FLOAT ? x->f : (double)x->i;
        if (kind == SM_SV_INT && !(f > -9.2e18 && f < 9.2e18))
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                               "cannot convert %g to int", f);
        *out = (sm_sv){.kind = kind,
                       .f = f,
                       .i = kind == SM_SV_BOOL ? f != 0 : (int64_t)f};
        return SMELT_OK;
    }
    smelt_status st;
    sm_value *v = sm_lw_cast(L, x->v, dt, a->line, a->col, &st);
    *out =
        (sm_sv){.kind = method && x->kind == SM_SV_TENSOR ? SM_SV_TENSOR : kind,
                .v = v};
    return v ? SMELT_OK : st;
}

#define CONVERTER(fn, kind, dt)                                                \
    static smelt_status fn(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)      \
    {                                                                          \
        return convert(L, a, m, kind, dt, out);                                \
    }
CONVERTER(b_float, SM_SV_FLOAT, SMELT_DTYPE_F32)
CONVERTER(b_int, SM_SV_INT, m ? SMELT_DTYPE_I32 : SMELT_DTYPE_I64)
CONVERTER(b_long, SM_SV_INT, SMELT_DTYPE_I64)
CONVERTER(b_bool, SM_SV_BOOL, SMELT_DTYPE_BOOL)
CONVERTER(b_double, SM_SV_FLOAT, SMELT_DTYPE_F64)
CONVERTER(b_half, SM_SV_FLOAT, SMELT_DTYPE_F16)

/* ---- shapes ------------------------------------------------------------- */

static smelt_status b_len(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    SM_TRY(sm_lw_args_done(L, a, 1));
    const sm_sv *x = sm_lw_arg(a, 0, NULL, NULL);
    if (x && (x->kind == SM_SV_LIST || x->kind == SM_SV_TUPLE ||
              x->kind == SM_SV_STR)) {
        int64_t n = x->kind == SM_SV_STR ? (int64_t)strlen(x->s) : x->n;
        *out = (sm_sv){.kind = SM_SV_INT, .i = n};
        return SMELT_OK;
    }
    sm_value *t;
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &t));
    return sm_lw_dim(L, t, 0, a->line, a->col, out);
}

/* x.size() is x.shape; x.size(d) one dim. */
static smelt_status b_size(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *x;
    int64_t d;
    const sm_sv *dim = sm_lw_arg(a, 1, "dim", NULL);
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(sm_lw_args_done(L, a, 2));
    if (!dim)
        return sm_lw_shape(L, x, a->line, a->col, out);
    SM_TRY(sm_lw_const_int(L, a, dim, "the dim", &d));
    return sm_lw_dim(L, x, d, a->line, a->col, out);
}

static smelt_status b_dim(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *x;
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(sm_lw_args_done(L, a, 1));
    if (x->type.ndim < 0)
        return sm_lw_dim(L, x, 0, a->line, a->col, out);
    *out = (sm_sv){.kind = SM_SV_INT, .i = x->type.ndim};
    return SMELT_OK;
}

/* reshape(x, a, b) or reshape(x, [a, b]); view is the same. */
static smelt_status b_reshape(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *in[2];
    const sm_sv *items;
    int n;
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &in[0]));
    SM_TRY(sm_lw_args_done(L, a, -1));
    if (a->npos < 2)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "%s needs a shape", a->fname);
    shape_items(a, 1, a->npos, &items, &n);
    SM_TRY(sm_lw_int_list(L, items, n, a->line, a->col, &in[1]));
    smelt_status st;
    return tensor_out(sm_lw_emit(L, SM_OP_Reshape, 2, in, a->line, a->col, &st),
                      st, out);
}

/* transpose(x), transpose(x, [perm]) or transpose(x, d0, d1); the last
 * needs the rank to build the permutation. */
static smelt_status b_transpose(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *x;
    int64_t perm[SMELT_MAX_DIMS], d[2];
    int n = 0;
    const sm_sv *p = sm_lw_kwarg(a, "perm", NULL);
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(sm_lw_args_done(L, a, 3));
    if (!p && a->npos == 2)
        p = &a->v[1];
    if (p) {
        SM_TRY(int_list(L, a, p, "the permutation", perm, &n));
        return with_ints(L, a, SM_OP_Transpose, x, "perm", perm, n, out);
    }
    if (a->npos == 1)
        return with_ints(L, a, SM_OP_Transpose, x, NULL, NULL, 0, out);
    int r = x->type.ndim;
    SM_TRY(sm_lw_const_int(L, a, &a->v[1], "dim0", &d[0]));
    SM_TRY(sm_lw_const_int(L, a, &a->v[2], "dim1", &d[1]));
    if (r < 0)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_UNSUPPORTED,
                           "annotate the tensor's rank (x: Tensor[f32, n, m]) "
                           "or give the whole permutation: transpose(x, [1, "
                           "0])",
                           "transpose(x, %lld, %lld) needs the rank of x, "
                           "which is not known at compile time",
                           (long long)d[0], (long long)d[1]);
    for (int i = 0; i < 2; i++) {
        if (d[i] < -r || d[i] >= r)
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                               "transpose: dim %lld is out of range for rank "
                               "%d",
                               (long long)d[i], r);
        d[i] = d[i] < 0 ? d[i] + r : d[i];
    }
    for (int i = 0; i < r; i++)
        perm[i] = i;
    perm[d[0]] = d[1];
    perm[d[1]] = d[0];
    return with_ints(L, a, SM_OP_Transpose, x, "perm", perm, r, out);
}

static smelt_status b_permute(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    sm_value *x;
    int64_t perm[SMELT_MAX_DIMS];
    int n;
    const sm_sv *items;
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(sm_lw_args_done(L, a, 1 + SMELT_MAX_DIMS));
    shape_items(a, 1, a->npos, &items, &n);
    sm_sv list = {.kind = SM_SV_LIST, .n = n, .items = (sm_sv *)items};
    SM_TRY(int_list(L, a, &list, "the permutation", perm, &n));
    return with_ints(L, a, SM_OP_Transpose, x, "perm", perm, n, out);
}

/* squeeze(x[, dim]) and unsqueeze(x, dim). */
static smelt_status squeeze_like(sm_lower *L, sm_lw_args *a, sm_op op,
                                 sm_sv *out)
{
    sm_value *x;
    int64_t axes[SMELT_MAX_DIMS];
    int n = 0;
    const sm_sv *d = sm_lw_arg(a, 1, "dim", "axis");
    SM_TRY(sm_lw_tensor_arg(L, a, 0, &x));
    SM_TRY(sm_lw_args_done(L, a, 2));
    if (!d && op == SM_OP_Unsqueeze)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "unsqueeze needs a dim");
    if (d)
        SM_TRY(int_list(L, a, d, "the dim", axes, &n));
    return with_ints(L, a, op, x, d ? "axes" : NULL, axes, n, out);
}

static smelt_status b_squeeze(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return squeeze_like(L, a, SM_OP_Squeeze, out);
}

static smelt_status b_unsqueeze(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return squeeze_like(L, a, SM_OP_Unsqueeze, out);
}

/* cat(list, dim=0) and stack(list, dim=0). */
static smelt_status join(sm_lower *L, sm_lw_args *a, int stack, sm_sv *out)
{
    const sm_sv *l = sm_lw_arg(a, 0, "tensors", NULL);
    const sm_sv *d = sm_lw_arg(a, 1, "dim", "axis");
    int64_t axis = 0;
    SM_TRY(sm_lw_args_done(L, a, 2));
    if (!l || (l->kind != SM_SV_LIST && l->kind != SM_SV_TUPLE) || !l->n)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG,
                           "write cat([a, b], dim)",
                           "%s needs a non-empty list of tensors", a->fname);
    if (d)
        SM_TRY(sm_lw_const_int(L, a, d, "the dim", &axis));
    sm_value **in = sm_lw_alloc(L, sizeof(sm_value *) * (size_t)l->n);
    if (!in)
        return sm_lw_nomem(L);
    for (int i = 0; i < l->n; i++) {
        if (l->items[i].kind != SM_SV_TENSOR)
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_TYPE, NULL,
                               "%s joins tensors, not %s", a->fname,
                               sm_lw_a_kind(l->items[i].kind));
        in[i] = l->items[i].v;
        sm_sv u = {0};
        if (stack) {
            SM_TRY(
                with_ints(L, a, SM_OP_Unsqueeze, in[i], "axes", &axis, 1, &u));
            in[i] = u.v;
        }
    }
    sm_node *n = sm_lw_node(L, SM_OP_Concat, l->n, in, 1);
    if (!n || !sm_node_set_int(n, "axis", axis))
        return sm_lw_nomem(L);
    SM_TRY(sm_lw_finish(L, n, a->line, a->col));
    return tensor_out(n->out[0], SMELT_OK, out);
}

static smelt_status b_cat(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return join(L, a, 0, out);
}

static smelt_status b_stack(sm_lower *L, sm_lw_args *a, int m, sm_sv *out)
{
    (void)m;
    return join(L, a, 1, out);
}

static const struct {
    const char *name;
    builtin_fn fn;
} table[] = {
    {"ones", b_ones},
    {"zeros", b_zeros},
    {"full", b_full},
    {"tensor", b_tensor},
    {"float", b_float},
    {"int", b_int},
    {"long", b_long},
    {"bool", b_bool},
    {"double", b_double},
    {"half", b_half},
    {"len", b_len},
    {"size", b_size},
    {"dim", b_dim},
    {"reshape", b_reshape},
    {"view", b_reshape},
    {"transpose", b_transpose},
    {"permute", b_permute},
    {"squeeze", b_squeeze},
    {"unsqueeze", b_unsqueeze},
    {"cat", b_cat},
    {"concat", b_cat},
    {"stack", b_stack},
};

smelt_status sm_lw_builtin_shape(sm_lower *L, const char *name, int method,
                                 sm_lw_args *a, sm_sv *out, int *found)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].name, name)) {
            *found = 1;
            return table[i].fn(L, a, method, out);
        }
    *found = 0;
    return SMELT_OK;
}
