/*
 * lower_call.c - calls: helper functions (inlined), the builtins of
 * lower_builtin.c, and any op of the op table by its lowercase name, with
 * methods (x.relu(), x.softmax(-1)) being calls with the receiver first.
 * Also attributes (x.T, x.shape, x.ndim) and indexing (x[i], x[a:b, j]).
 *
 * An op-table call maps positional arguments to the op's inputs; once the
 * op has its required inputs, a positional constant that suits the op's
 * next attribute (in schema order) becomes that attribute, so that
 * softmax(x, 1), leakyrelu(x, 0.2) and concat([a, b], 0) read naturally.
 * Keyword arguments are attributes by their schema names (dim and keepdim
 * are accepted for axis and keepdims). Python scalars and lists given as
 * inputs take the dtype of the first non-bool tensor input, except for
 * data-movement ops and reductions, where lists of ints are i64 shapes or
 * axes.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/script/lower_call.h"

const sm_sv *sm_lw_kwarg(sm_lw_args *a, const char *name, const char *alias)
{
    for (int i = a->npos; i < a->n; i++)
        if (!strcmp(a->kw[i], name) || (alias && !strcmp(a->kw[i], alias))) {
            a->used[i] = 1;
            return &a->v[i];
        }
    return NULL;
}

const sm_sv *sm_lw_arg(sm_lw_args *a, int i, const char *name,
                       const char *alias)
{
    if (i < a->npos)
        return &a->v[i];
    return name ? sm_lw_kwarg(a, name, alias) : NULL;
}

smelt_status sm_lw_args_done(sm_lower *L, sm_lw_args *a, int max_pos)
{
    if (max_pos >= 0 && a->npos > max_pos)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "%s takes at most %d positional argument%s, %d "
                           "given",
                           a->fname, max_pos, max_pos == 1 ? "" : "s", a->npos);
    for (int i = a->npos; i < a->n; i++)
        if (!a->used[i])
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                               "%s has no argument '%s'", a->fname, a->kw[i]);
    return SMELT_OK;
}

smelt_status sm_lw_tensor_arg(sm_lower *L, sm_lw_args *a, int i, sm_value **out)
{
    if (i >= a->npos || a->v[i].kind != SM_SV_TENSOR)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_TYPE, "pass a Tensor",
                           "%s needs a Tensor as argument %d%s%s", a->fname,
                           i + 1, i < a->npos ? ", not a " : "",
                           i < a->npos ? sm_lw_kind_name(a->v[i].kind) : "");
    *out = a->v[i].v;
    return SMELT_OK;
}

smelt_status sm_lw_const_int(sm_lower *L, const sm_lw_args *a, const sm_sv *v,
                             const char *what, int64_t *out)
{
    if ((v->kind != SM_SV_INT && v->kind != SM_SV_BOOL) || v->v)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_TYPE,
                           "use an int literal or an expression of constants",
                           "%s of %s must be a constant int", what, a->fname);
    *out = v->i;
    return SMELT_OK;
}

/* ---- attributes --------------------------------------------------------- */

/* Whether constant v can be the value of an attribute of kind k. */
static int attr_fits(const sm_attr_spec *sp, const sm_sv *v)
{
    if (!sm_lw_is_const(v))
        return 0;
    int num =
        v->kind == SM_SV_INT || v->kind == SM_SV_BOOL || v->kind == SM_SV_FLOAT;
    int seq = v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE;
    int all_int = seq, all_num = seq, all_str = seq;
    for (int i = 0; seq && i < v->n; i++) {
        sm_sv_kind k = v->items[i].kind;
        all_int &= k == SM_SV_INT || k == SM_SV_BOOL;
        all_num &= k == SM_SV_INT || k == SM_SV_BOOL || k == SM_SV_FLOAT;
        all_str &= k == SM_SV_STR;
    }
    switch (sp->kind) {
    case SM_ATTR_INT:
        return v->kind == SM_SV_INT || v->kind == SM_SV_BOOL ||
               (v->kind == SM_SV_STR && !strcmp(sp->name, "to"));
    case SM_ATTR_FLOAT: return num;
    case SM_ATTR_STRING: return v->kind == SM_SV_STR;
    case SM_ATTR_INTS: return v->kind == SM_SV_INT || all_int;
    case SM_ATTR_FLOATS:
    case SM_ATTR_TENSOR: return num || all_num;
    case SM_ATTR_STRINGS: return all_str;
    default: return 0;
    }
}

/* A constant number or list of numbers as a 1-D tensor (f32 when any is a
 * float, bool when all are bools, else i64). */
static smelt_status consts_tensor(sm_lower *L, const sm_sv *v, sm_tensor **t)
{
    int seq = v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE;
    int n = seq ? v->n : 1;
    const sm_sv *items = seq ? v->items : v;
    smelt_dtype dt = SMELT_DTYPE_BOOL;
    for (int i = 0; i < n; i++)
        if (items[i].kind == SM_SV_FLOAT)
            dt = SMELT_DTYPE_F32;
        else if (items[i].kind == SM_SV_INT && dt == SMELT_DTYPE_BOOL)
            dt = SMELT_DTYPE_I64;
    int64_t dims[1] = {n};
    if (sm_tensor_new(NULL, dt, 1, dims, t))
        return sm_lw_nomem(L);
    for (int i = 0; i < n; i++) {
        if (items[i].kind == SM_SV_FLOAT)
            sm_store_f64(dt, (*t)->data, i, items[i].f);
        else
            sm_store_i64(dt, (*t)->data, i, items[i].i);
    }
    return SMELT_OK;
}

smelt_status sm_lw_set_attr(sm_lower *L, sm_node *n, const sm_attr_spec *sp,
                            const sm_sv *v, int line, int col)
{
    const char *op = sm_op_info_get(n->op)->name;
    if (!attr_fits(sp, v))
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "attributes are constants: literals or expressions "
                           "of constants",
                           "attribute '%s' of %s takes a constant %s, not %s%s",
                           sp->name, op, sm_attr_kind_name(sp->kind),
                           sm_lw_is_const(v) ? "a " : "a run-time ",
                           sm_lw_kind_name(v->kind));
    int seq = v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE;
    int cnt = seq ? v->n : 1, ok = 1;
    const sm_sv *items = seq ? v->items : v;
    int64_t *iv = sm_lw_alloc(L, sizeof *iv * (size_t)(cnt + 1));
    double *fv = sm_lw_alloc(L, sizeof *fv * (size_t)(cnt + 1));
    const char **sv = sm_lw_alloc(L, sizeof *sv * (size_t)(cnt + 1));
    if (!iv || !fv || !sv)
        return sm_lw_nomem(L);
    for (int i = 0; i < cnt; i++) {
        iv[i] = items[i].i;
        fv[i] = items[i].kind == SM_SV_FLOAT ? items[i].f : (double)items[i].i;
        sv[i] = items[i].s;
    }
    sm_tensor *t;
    switch (sp->kind) {
    case SM_ATTR_INT:
        if (v->kind == SM_SV_STR) { /* Cast(to="f32") */
            smelt_dtype dt = sm_dtype_from_name(v->s, (int)strlen(v->s));
            if (!dt)
                return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                                   "dtypes are f32 f64 f16 bf16 i8 u8 i16 "
                                   "i32 i64 bool",
                                   "unknown dtype '%s'", v->s);
            iv[0] = sm_dtype_to_onnx(dt);
        }
        ok = sm_node_set_int(n, sp->name, iv[0]);
        break;
    case SM_ATTR_FLOAT: ok = sm_node_set_float(n, sp->name, fv[0]); break;
    case SM_ATTR_STRING: ok = sm_node_set_string(n, sp->name, v->s); break;
    case SM_ATTR_INTS: ok = sm_node_set_ints(n, sp->name, iv, cnt); break;
    case SM_ATTR_FLOATS: ok = sm_node_set_floats(n, sp->name, fv, cnt); break;
    case SM_ATTR_STRINGS: ok = sm_node_set_strings(n, sp->name, sv, cnt); break;
    case SM_ATTR_TENSOR:
        SM_TRY(consts_tensor(L, v, &t));
        ok = sm_node_set_tensor(n, sp->name, t);
        break;
    default: ok = 0;
    }
    return ok ? SMELT_OK : sm_lw_nomem(L);
}

smelt_status sm_lw_set_ints(sm_lower *L, sm_node *n, const char *name,
                            const int64_t *v, int cnt)
{
    return sm_node_set_ints(n, name, v, cnt) ? SMELT_OK : sm_lw_nomem(L);
}

/* ---- ops of the op table ------------------------------------------------ */

/* Lowercase letters and digits of s (underscores dropped). */
static void normalize(const char *s, char *out, size_t size)
{
    size_t k = 0;
    for (; *s && k + 1 < size; s++)
        if (isalnum((unsigned char)*s))
            out[k++] = (char)tolower((unsigned char)*s);
    out[k] = 0;
}

sm_op sm_lw_find_op(const char *name)
{
    static const char *const alias[][2] = {
        {"mm", "MatMul"},      {"bmm", "MatMul"},   {"maximum", "Max"},
        {"minimum", "Min"},    {"negative", "Neg"}, {"logicalnot", "Not"},
        {"logicaland", "And"}, {"logicalor", "Or"}};
    char want[64], have[64];
    normalize(name, want, sizeof want);
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (!strcmp(want, alias[i][0]))
            return sm_op_from_name(alias[i][1], (int)strlen(alias[i][1]));
    for (int op = 0; op < SM_OP_COUNT; op++) {
        normalize(sm_op_info_get((sm_op)op)->name, have, sizeof have);
        if (!strcmp(want, have))
            return (sm_op)op;
    }
    return SM_OP_COUNT;
}

/* The dtype Python scalars and lists take as inputs of op: the first
 * non-bool tensor input's, except for data-movement ops and reductions, whose
 * list inputs are shapes, axes and indices. */
static smelt_dtype scalar_input_dtype(sm_op op, const sm_sv *const *in, int n)
{
    sm_op_class c = sm_op_info_get(op)->cls;
    if (c == SM_CLASS_MOVEMENT || c == SM_CLASS_REDUCTION ||
        c == SM_CLASS_CONTROL)
        return SMELT_DTYPE_UNDEFINED;
    for (int i = 0; i < n; i++) {
        if (!in[i] || in[i]->kind != SM_SV_TENSOR)
            continue;
        smelt_dtype d = in[i]->v->type.dtype;
        if (d != SMELT_DTYPE_BOOL && d != SMELT_DTYPE_UNDEFINED)
            return d;
    }
    return SMELT_DTYPE_UNDEFINED;
}

/* One input of an op from a script value: tensors as they are, scalars in
 * dtype dt, lists as constant tensors of dtype dt (lists of ints, which may
 * hold run-time ints, as i64 when dt is not set), None as absent. */
static smelt_status input_value(sm_lower *L, const sm_lw_args *a,
                                const sm_sv *v, smelt_dtype dt, sm_value **out)
{
    *out = NULL;
    if (v->kind == SM_SV_NONE)
        return SMELT_OK;
    if (v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE) {
        int all_const = sm_lw_is_const(v), all_int = 1;
        for (int i = 0; i < v->n; i++)
            all_int &=
                v->items[i].kind == SM_SV_INT || v->items[i].kind == SM_SV_BOOL;
        if (all_int && (!dt || !all_const))
            return sm_lw_int_list(L, v->items, v->n, a->line, a->col, out);
        if (all_const)
            return sm_lw_nested_const(L, v, dt, a->line, a->col, out);
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_TYPE,
                           "a list argument is a list of ints (a shape) or of "
                           "tensors for ops that take many inputs",
                           "%s cannot take this list as an input", a->fname);
    }
    return sm_lw_value(L, v, dt, a->line, a->col, out);
}

/* How many outputs op makes at this call (Split: from its attributes). */
static int op_outputs(sm_op op, int n_attr, const sm_attr_spec *const *as,
                      const sm_sv *const *av)
{
    int n = sm_op_info_get(op)->out_min;
    for (int i = 0; op == SM_OP_Split && i < n_attr; i++) {
        const sm_sv *v = av[i];
        if (!strcmp(as[i]->name, "num_outputs") && v->kind == SM_SV_INT)
            n = v->i > 0 && v->i <= 64 ? (int)v->i : 0;
        else if (!strcmp(as[i]->name, "split") &&
                 (v->kind == SM_SV_LIST || v->kind == SM_SV_TUPLE))
            n = v->n <= 64 ? v->n : 0;
    }
    return n;
}

smelt_status sm_lw_op_call(sm_lower *L, sm_lw_args *a, sm_op op, sm_sv *out)
{
    const sm_op_info *info = sm_op_info_get(op);
    if (info->cls == SM_CLASS_CONTROL || op == SM_OP_Constant)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_UNSUPPORTED,
                           "write if/for/while statements, and literals for "
                           "constants",
                           "%s cannot be called from a script", info->name);
    int cap = a->n + 1, n_in = 0, n_attr = 0, next_attr = 0;
    const sm_sv **in = sm_lw_alloc(L, sizeof(sm_sv *) * (size_t)cap);
    const sm_sv **av = sm_lw_alloc(L, sizeof(sm_sv *) * (size_t)cap);
    const sm_attr_spec **as = sm_lw_alloc(L, sizeof(void *) * (size_t)cap);
    if (!in || !av || !as)
        return sm_lw_nomem(L);
    for (int i = 0; i < a->npos; i++) {
        const sm_sv *p = &a->v[i];
        int seq = p->kind == SM_SV_LIST || p->kind == SM_SV_TUPLE;
        if (seq && info->in_max < 0 && !sm_lw_is_const(p)) {
            const sm_sv **grown =
                sm_lw_alloc(L, sizeof(sm_sv *) * (size_t)(cap + p->n));
            if (!grown)
                return sm_lw_nomem(L);
            memcpy(grown, in, sizeof(sm_sv *) * (size_t)n_in);
            in = grown;
            cap += p->n;
            for (int j = 0; j < p->n; j++)
                in[n_in++] = &p->items[j];
        } else if (n_in >= info->in_min && next_attr < info->n_spec &&
                   attr_fits(&info->spec[next_attr], p)) {
            as[n_attr] = &info->spec[next_attr++];
            av[n_attr++] = p;
        } else if (info->in_max >= 0 && n_in >= info->in_max) {
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                               "%s takes at most %d input%s", a->fname,
                               info->in_max, info->in_max == 1 ? "" : "s");
        } else {
            in[n_in++] = p;
        }
    }
    for (int i = a->npos; i < a->n; i++) {
        const char *k = a->kw[i];
        const char *name = !strcmp(k, "dim")       ? "axis"
                           : !strcmp(k, "keepdim") ? "keepdims"
                                                   : k;
        const sm_attr_spec *sp = sm_op_attr_spec(op, name);
        if (!sp)
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG,
                               info->schema[0] ? info->schema
                                               : "this op has no attributes",
                               "%s has no attribute '%s'", info->name, k);
        as[n_attr] = sp;
        av[n_attr++] = &a->v[i];
    }
    if (n_in < info->in_min)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                           "%s takes at least %d input%s, %d given", a->fname,
                           info->in_min, info->in_min == 1 ? "" : "s", n_in);
    smelt_dtype dt = scalar_input_dtype(op, in, n_in);
    sm_value **vals = sm_lw_alloc(L, sizeof(sm_value *) * (size_t)(n_in + 1));
    if (!vals)
        return sm_lw_nomem(L);
    for (int i = 0; i < n_in; i++)
        SM_TRY(input_value(L, a, in[i], dt, &vals[i]));
    for (int i = 0; i < info->in_min; i++)
        if (!vals[i])
            return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG, NULL,
                               "input %d of %s cannot be None", i + 1,
                               info->name);
    int n_out = op_outputs(op, n_attr, as, av);
    if (n_out <= 0)
        return sm_lw_error(L, a->line, a->col, SMELT_ERR_INVALID_ARG,
                           "give num_outputs=k or split=[sizes]",
                           "%s needs to know how many outputs to make",
                           info->name);
    sm_node *n = sm_lw_node(L, op, n_in, vals, n_out);
    if (!n)
        return sm_lw_nomem(L);
    for (int i = 0; i < n_attr; i++)
        SM_TRY(sm_lw_set_attr(L, n, as[i], av[i], a->line, a->col));
    SM_TRY(sm_lw_finish(L, n, a->line, a->col));
    if (n_out == 1) {
        *out = (sm_sv){.kind = SM_SV_TENSOR, .v = n->out[0]};
        return SMELT_OK;
    }
    sm_sv *items = sm_lw_alloc(L, sizeof *items * (size_t)n_out);
    if (!items)
        return sm_lw_nomem(L);
    for (int i = 0; i < n_out; i++)
        items[i] = (sm_sv){.kind = SM_SV_TENSOR, .v = n->out[i]};
    *out = (sm_sv){.kind = SM_SV_TUPLE, .n = n_out, .items = items};
    return SMELT_OK;
}

/* ---- calls -------------------------------------------------------------- */

/* Evaluates the arguments of call e (after the receiver, for a method). */
static smelt_status eval_args(sm_lower *L, const sm_ast_expr *e,
                              const sm_sv *recv, const char *fname,
                              sm_lw_args *a)
{
    int extra = recv ? 1 : 0;
    memset(a, 0, sizeof *a);
    a->n = e->n + extra;
    a->v = sm_lw_alloc(L, sizeof(sm_sv) * (size_t)(a->n + 1));
    a->kw = sm_lw_alloc(L, sizeof(char *) * (size_t)(a->n + 1));
    a->used = sm_lw_alloc(L, (size_t)a->n + 1);
    if (!a->v || !a->kw || !a->used)
        return sm_lw_nomem(L);
    a->line = e->line;
    a->col = e->col;
    a->fname = fname;
    if (recv) {
        a->v[0] = *recv;
        a->npos = 1;
    }
    for (int i = 0; i < e->n; i++) {
        SM_TRY(sm_lw_expr(L, e->items[i], &a->v[i + extra]));
        a->kw[i + extra] = e->kw[i];
        if (!e->kw[i])
            a->npos++;
    }
    return SMELT_OK;
}

smelt_status sm_lw_call(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    const sm_ast_expr *f = e->a, *root = f;
    sm_sv recv;
    sm_lw_args a;
    while (root->kind == SM_EX_ATTR)
        root = root->a;
    int module = f->kind == SM_EX_ATTR && root->kind == SM_EX_NAME &&
                 sm_lw_is_import(L, root->name) &&
                 !sm_lw_var(L->env, root->name);
    if (f->kind == SM_EX_NAME || module) {
        const sm_ast_func *fn = module ? NULL : sm_lw_func(L, f->name);
        SM_TRY(eval_args(L, e, NULL, f->name, &a));
        if (fn)
            return sm_lw_inline(L, fn, a.n, a.v, a.kw, e->line, e->col, out);
        return sm_lw_builtin(L, f->name, 0, &a, out);
    }
    if (f->kind != SM_EX_ATTR)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE,
                           "call functions, ops and methods by name",
                           "this expression cannot be called");
    SM_TRY(sm_lw_expr(L, f->a, &recv));
    if (recv.kind != SM_SV_TENSOR && recv.kind != SM_SV_INT &&
        recv.kind != SM_SV_FLOAT && recv.kind != SM_SV_BOOL)
        return sm_lw_error(L, f->line, f->col, SMELT_ERR_UNSUPPORTED,
                           "lists and strings cannot change; build new ones "
                           "with +",
                           "methods of %s are not supported",
                           sm_lw_a_kind(recv.kind));
    SM_TRY(eval_args(L, e, &recv, f->name, &a));
    a.line = f->line;
    a.col = f->col;
    return sm_lw_builtin(L, f->name, 1, &a, out);
}

/* ---- lists of ints as tensors, attributes, indexing ---------------------- */

smelt_status sm_lw_int_list(sm_lower *L, const sm_sv *items, int n, int line,
                            int col, sm_value **out)
{
    int all_const = 1;
    for (int i = 0; i < n; i++) {
        if (items[i].kind != SM_SV_INT && items[i].kind != SM_SV_BOOL)
            return sm_lw_error(L, line, col, SMELT_ERR_TYPE, NULL,
                               "expected ints in this list, got a %s",
                               sm_lw_kind_name(items[i].kind));
        all_const &= items[i].v == NULL;
    }
    int64_t one = 1, dims[1] = {n};
    sm_tensor *t;
    if (all_const) {
        if (sm_tensor_new(NULL, SMELT_DTYPE_I64, 1, dims, &t))
            return sm_lw_nomem(L);
        for (int i = 0; i < n; i++)
            ((int64_t *)t->data)[i] = items[i].i;
        return (*out = sm_lw_const(L, t)) ? SMELT_OK : sm_lw_nomem(L);
    }
    sm_value **parts = sm_lw_alloc(L, sizeof(sm_value *) * (size_t)(n + 1));
    if (!parts)
        return sm_lw_nomem(L);
    smelt_status st;
    for (int i = 0; i < n; i++) {
        sm_value *v;
        if (!items[i].v) {
            if (sm_tensor_new(NULL, SMELT_DTYPE_I64, 1, &one, &t))
                return sm_lw_nomem(L);
            ((int64_t *)t->data)[0] = items[i].i;
            if (!(parts[i] = sm_lw_const(L, t)))
                return sm_lw_nomem(L);
            continue;
        }
        if (!(v = sm_lw_cast(L, items[i].v, SMELT_DTYPE_I64, line, col, &st)))
            return st;
        sm_node *u = sm_lw_node(L, SM_OP_Unsqueeze, 1, &v, 1);
        int64_t zero = 0;
        if (!u || sm_lw_set_ints(L, u, "axes", &zero, 1))
            return sm_lw_nomem(L);
        SM_TRY(sm_lw_finish(L, u, line, col));
        parts[i] = u->out[0];
    }
    if (n == 1) {
        *out = parts[0];
        return SMELT_OK;
    }
    sm_node *c = sm_lw_node(L, SM_OP_Concat, n, parts, 1);
    if (!c || !sm_node_set_int(c, "axis", 0))
        return sm_lw_nomem(L);
    SM_TRY(sm_lw_finish(L, c, line, col));
    *out = c->out[0];
    return SMELT_OK;
}

smelt_status sm_lw_dim(sm_lower *L, sm_value *x, int64_t axis, int line,
                       int col, sm_sv *out)
{
    int r = x->type.ndim;
    if (r < 0)
        return sm_lw_error(L, line, col, SMELT_ERR_UNSUPPORTED,
                           "annotate the tensor's rank: x: Tensor[f32, n, m]",
                           "the rank of this tensor is not known at compile "
                           "time");
    if (axis < -r || axis >= r)
        return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                           "dimension %lld is out of range for a tensor of "
                           "rank %d",
                           (long long)axis, r);
    if (axis < 0)
        axis += r;
    if (x->type.dims[axis].size >= 0) {
        *out = (sm_sv){.kind = SM_SV_INT, .i = x->type.dims[axis].size};
        return SMELT_OK;
    }
    sm_node *s = sm_lw_node(L, SM_OP_Shape, 1, &x, 1);
    if (!s || !sm_node_set_int(s, "start", axis) ||
        !sm_node_set_int(s, "end", axis + 1))
        return sm_lw_nomem(L);
    SM_TRY(sm_lw_finish(L, s, line, col));
    int64_t zero = 0;
    sm_node *q = sm_lw_node(L, SM_OP_Squeeze, 1, &s->out[0], 1);
    if (!q || sm_lw_set_ints(L, q, "axes", &zero, 1))
        return sm_lw_nomem(L);
    SM_TRY(sm_lw_finish(L, q, line, col));
    *out = (sm_sv){.kind = SM_SV_INT, .v = q->out[0]};
    return SMELT_OK;
}

smelt_status sm_lw_shape(sm_lower *L, sm_value *x, int line, int col,
                         sm_sv *out)
{
    int r = x->type.ndim;
    if (r < 0)
        return sm_lw_dim(L, x, 0, line, col, out); /* reports the error */
    sm_sv *items = sm_lw_alloc(L, sizeof *items * (size_t)(r + 1));
    if (!items)
        return sm_lw_nomem(L);
    for (int i = 0; i < r; i++)
        SM_TRY(sm_lw_dim(L, x, i, line, col, &items[i]));
    *out = (sm_sv){.kind = SM_SV_LIST, .n = r, .items = items};
    return SMELT_OK;
}

smelt_status sm_lw_attr(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    const char *hint = "only .T, .shape and .ndim are attributes; call "
                       "methods (x.relu()) or ops (relu(x))";
    if (e->a->kind == SM_EX_NAME && sm_lw_is_import(L, e->a->name) &&
        !sm_lw_var(L->env, e->a->name))
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_UNSUPPORTED,
                           "call a function of the module instead",
                           "module attribute '%s.%s' is not supported",
                           e->a->name, e->name);
    sm_sv x;
    SM_TRY(sm_lw_expr(L, e->a, &x));
    if (x.kind != SM_SV_TENSOR)
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_UNSUPPORTED, hint,
                           "attribute '%s' of %s is not supported", e->name,
                           sm_lw_a_kind(x.kind));
    if (!strcmp(e->name, "shape"))
        return sm_lw_shape(L, x.v, e->line, e->col, out);
    if (!strcmp(e->name, "ndim")) {
        if (x.v->type.ndim < 0)
            return sm_lw_dim(L, x.v, 0, e->line, e->col, out);
        *out = (sm_sv){.kind = SM_SV_INT, .i = x.v->type.ndim};
        return SMELT_OK;
    }
    if (!strcmp(e->name, "T")) {
        smelt_status st;
        out->kind = SM_SV_TENSOR;
        out->v = sm_lw_emit(L, SM_OP_Transpose, 1, &x.v, e->line, e->col, &st);
        return out->v ? SMELT_OK : st;
    }
    return sm_lw_error(L, e->line, e->col, SMELT_ERR_UNSUPPORTED, hint,
                       "attribute '%s' of a Tensor is not supported "
                       "(dynamic attributes are not part of the language)",
                       e->name);
}
