/*
 * lower.c - lowering one function of a script into a graph: parameters and
 * their annotations, variables, statements, returns (also from inside an
 * if), module constants, and the inlining of helper functions.
 *
 * Lowering is symbolic execution of the function: every variable holds a
 * script value (lower.h), Python constants fold as the code runs, and
 * every operation on a run-time value appends a node to the block being
 * filled. Helpers are inlined by running their body on the caller's
 * values; nothing is left of them in the graph.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/script/lower.h"
#include "ir/infer.h"
#include "ir/shape_util.h"

smelt_status sm_lw_error(sm_lower *L, int line, int col, smelt_status code,
                         const char *hint, const char *fmt, ...)
{
    if (code == SMELT_ERR_NOMEM)
        return sm_lw_nomem(L);
    char msg[SM_ERR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sm_script_error(L->src, line, col, code, hint, "%s", msg);
}

smelt_status sm_lw_nomem(sm_lower *L)
{
    return sm_err_nomem(L->ctx);
}

smelt_status sm_lw_step(sm_lower *L, int line, int col)
{
    L->line = line;
    L->col = col;
    if (++L->steps <= SM_SCRIPT_MAX_STEPS)
        return SMELT_OK;
    return sm_lw_error(L, line, col, SMELT_ERR_LIMIT,
                       "loops over range(n) with n > 16, or a run-time n, "
                       "stay Loops instead of being unrolled",
                       "the script does too much work at compile time "
                       "(inlining and unrolling)");
}

void *sm_lw_alloc(sm_lower *L, size_t size)
{
    return sm_arena_alloc(&L->arena, size);
}

const char *sm_lw_a_kind(sm_sv_kind k)
{
    static const char *const names[] = {"a Tensor", "an int", "a float",
                                        "a bool",   "a str",  "None",
                                        "a list",   "a tuple"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

const char *sm_lw_kind_name(sm_sv_kind k)
{
    static const char *const names[] = {"Tensor", "int",  "float", "bool",
                                        "str",    "None", "list",  "tuple"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* ---- variables --------------------------------------------------------- */

sm_var *sm_lw_var(sm_env *env, const char *name)
{
    for (int i = env->n - 1; i >= 0; i--)
        if (!strcmp(env->vars[i].name, name))
            return &env->vars[i];
    return NULL;
}

sm_env *sm_lw_env_copy(sm_lower *L, const sm_env *env)
{
    if (env)
        L->steps += env->n; /* copies count as work: they take memory */
    sm_env *c = sm_lw_alloc(L, sizeof *c);
    if (!c)
        return NULL;
    c->cap = env ? env->n + 4 : 8;
    c->n = env ? env->n : 0;
    if (!(c->vars = sm_lw_alloc(L, sizeof(sm_var) * (size_t)c->cap)))
        return NULL;
    if (c->n)
        memcpy(c->vars, env->vars, sizeof(sm_var) * (size_t)c->n);
    return c;
}

smelt_status sm_lw_assign(sm_lower *L, const char *name, const sm_sv *val)
{
    sm_env *env = L->env;
    L->steps += env->n / 32; /* the search below is linear */
    sm_var *v = sm_lw_var(env, name);
    if (!v) {
        if (env->n >= SM_SCRIPT_MAX_VARS)
            return sm_lw_error(L, L->line, L->col, SMELT_ERR_LIMIT, NULL,
                               "a function has more than %d variables",
                               SM_SCRIPT_MAX_VARS);
        if (env->n == env->cap) {
            int nc = env->cap * 2;
            sm_var *p = sm_lw_alloc(L, sizeof *p * (size_t)nc);
            if (!p)
                return sm_lw_nomem(L);
            memcpy(p, env->vars, sizeof *p * (size_t)env->n);
            env->vars = p;
            env->cap = nc;
        }
        v = &env->vars[env->n++];
        memset(v, 0, sizeof *v);
        v->name = name;
    }
    v->val = *val;
    v->state = SM_VAR_DEF;
    return SMELT_OK;
}

/* A module constant, evaluated once on first use, in the top block (which
 * every block can see) and with no local variables in scope. */
typedef struct sm_lw_global {
    const sm_ast_global *g;
    sm_sv val;
    int state; /* 0 not yet, 1 being evaluated, 2 done */
} sm_lw_global;

static smelt_status global_value(sm_lower *L, sm_lw_global *gl, int line,
                                 int col, sm_sv *out)
{
    if (gl->state == 1)
        return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                           "module constant '%s' is defined in terms of "
                           "itself",
                           gl->g->name);
    if (gl->state == 0) {
        if (L->depth > SM_SCRIPT_MAX_BLOCKS)
            return sm_lw_error(L, line, col, SMELT_ERR_LIMIT, NULL,
                               "module constants refer to each other too "
                               "deeply");
        sm_env *env = L->env, *empty = sm_lw_env_copy(L, NULL);
        if (!empty)
            return sm_lw_nomem(L);
        int base = L->base, in_loop = L->in_loop;
        L->blocks[L->depth] = L->g->top;
        L->base = L->depth++;
        L->env = empty;
        L->in_loop = 0;
        gl->state = 1;
        smelt_status st = sm_lw_expr(L, gl->g->value, &gl->val);
        L->depth--;
        L->base = base;
        L->env = env;
        L->in_loop = in_loop;
        if (st)
            return st;
        if (gl->val.kind == SM_SV_TENSOR)
            sm_lw_rename(L, gl->val.v, gl->g->name);
        gl->state = 2;
    }
    *out = gl->val;
    return SMELT_OK;
}

const sm_ast_func *sm_lw_func(const sm_lower *L, const char *name)
{
    return sm_strmap_get(&L->funcs, name, strlen(name));
}

int sm_lw_is_import(const sm_lower *L, const char *name)
{
    return sm_strmap_get(&L->imports, name, strlen(name)) != NULL;
}

smelt_status sm_lw_lookup(sm_lower *L, const char *name, int line, int col,
                          sm_sv *out)
{
    L->steps += L->env->n / 32; /* the search is linear */
    sm_var *v = sm_lw_var(L->env, name);
    char hint[160];
    if (v && v->state == SM_VAR_DEF) {
        *out = v->val;
        return SMELT_OK;
    }
    if (v) {
        int br = v->state == SM_VAR_BRANCH;
        snprintf(hint, sizeof hint, "assign '%.40s' before the %s%s", name,
                 br ? "if" : "loop", br ? ", or in every branch" : "");
        return sm_lw_error(L, line, col, SMELT_ERR_NOT_FOUND, hint,
                           br ? "'%s' is assigned in only one branch of the "
                                "if at line %d, so it may be undefined here"
                              : "'%s' is assigned only inside the loop at "
                                "line %d and is not defined after it",
                           name, v->line);
    }
    sm_lw_global *gl = sm_strmap_get(&L->globals, name, strlen(name));
    if (gl)
        return global_value(L, gl, line, col, out);
    if (sm_lw_func(L, name))
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "call it: name(arguments)",
                           "'%s' is a function, not a value", name);
    if (sm_lw_is_import(L, name))
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "call a function of it: module.relu(x)",
                           "module '%s' is not a value", name);
    return sm_lw_error(L, line, col, SMELT_ERR_NOT_FOUND,
                       "assign it before use, or make it a parameter of the "
                       "function",
                       "name '%s' is not defined", name);
}

/* ---- annotations ------------------------------------------------------- */

static const char *ann_hint =
    "annotate with Tensor, int, float or bool; Tensor[f32, n, 4] gives a "
    "tensor's dtype and shape";

static int ann_name(const sm_ast_expr *e, const char *name)
{
    while (e->kind == SM_EX_ATTR && strcmp(e->name, name))
        e = e->a; /* torch.Tensor is Tensor */
    return (e->kind == SM_EX_NAME || e->kind == SM_EX_ATTR ||
            e->kind == SM_EX_STR) &&
           !strcmp(e->name, name);
}

/* Tensor[dtype, dims...]: dims are ints, names (symbolic) or None. */
static smelt_status tensor_ann(sm_lower *L, const sm_ast_expr *idx, sm_type *t)
{
    int n = idx->kind == SM_EX_TUPLE ? idx->n : 1;
    const sm_ast_expr *const *items =
        idx->kind == SM_EX_TUPLE ? (const sm_ast_expr *const *)idx->items
                                 : &idx;
    const sm_ast_expr *d = n ? items[0] : idx;
    if (n == 0 || (d->kind != SM_EX_NAME && d->kind != SM_EX_STR) ||
        !(t->dtype = sm_dtype_from_name(d->name, (int)strlen(d->name))))
        return sm_lw_error(L, d->line, d->col, SMELT_ERR_TYPE,
                           "dtypes are f32 f64 f16 bf16 i8 u8 i16 i32 i64 "
                           "bool",
                           "expected a dtype as the first item of Tensor[...]");
    if (n == 1)
        return SMELT_OK;
    if (n == 2 && items[1]->kind == SM_EX_TUPLE && items[1]->n == 0) {
        t->ndim = 0; /* Tensor[f32, ()] : a scalar */
        return SMELT_OK;
    }
    if (n - 1 > SMELT_MAX_DIMS)
        return sm_lw_error(L, idx->line, idx->col, SMELT_ERR_SHAPE, NULL,
                           "a tensor has at most %d dims", SMELT_MAX_DIMS);
    t->ndim = n - 1;
    for (int i = 1; i < n; i++) {
        const sm_ast_expr *e = items[i];
        sm_dim *dim = &t->dims[i - 1];
        dim->size = -1;
        sm_lw_global *gl =
            e->kind == SM_EX_NAME
                ? sm_strmap_get(&L->globals, e->name, strlen(e->name))
                : NULL;
        sm_sv g = {.kind = SM_SV_NONE};
        if (gl) /* a module constant: its value */
            SM_TRY(global_value(L, gl, e->line, e->col, &g));
        if (g.kind == SM_SV_INT && !g.v && g.i >= 0) {
            dim->size = g.i;
        } else if (gl) {
            return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, ann_hint,
                               "'%s' is not a constant size", e->name);
        } else if (e->kind == SM_EX_INT && e->i >= 0) {
            dim->size = e->i;
        } else if (e->kind == SM_EX_NAME || e->kind == SM_EX_STR) {
            if (!(dim->sym = sm_arena_strdup(&L->g->arena, e->name)))
                return sm_lw_nomem(L);
        } else if (e->kind != SM_EX_NONE) {
            return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, ann_hint,
                               "a dimension is a size, a name or None");
        }
    }
    return SMELT_OK;
}

/* The kind (and for a Tensor, the type) an annotation names. */
static smelt_status annotation(sm_lower *L, const sm_ast_expr *e,
                               sm_sv_kind *kind, sm_type *t)
{
    static const char *const scalars[] = {"int", "float", "bool"};
    static const sm_sv_kind kinds[] = {SM_SV_INT, SM_SV_FLOAT, SM_SV_BOOL};
    sm_type_unknown(t);
    *kind = SM_SV_TENSOR;
    t->dtype = SMELT_DTYPE_F32;
    if (!e)
        return SMELT_OK;
    for (int i = 0; i < 3; i++)
        if (e->kind == SM_EX_NAME && !strcmp(e->name, scalars[i])) {
            *kind = kinds[i];
            sm_type_set(t, sm_lw_natural_dtype(kinds[i]), 0, NULL);
            return SMELT_OK;
        }
    if (ann_name(e, "Tensor"))
        return SMELT_OK;
    if (e->kind == SM_EX_INDEX && ann_name(e->a, "Tensor"))
        return tensor_ann(L, e->b, t);
    return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, ann_hint,
                       "unsupported type annotation");
}

/* Checks v against an annotation of kind want (and dtype, for a Tensor)
 * and converts ints and bools where Python would. */
static smelt_status check_kind(sm_lower *L, sm_sv_kind want, const sm_type *t,
                               sm_sv *v, const char *what, int line, int col)
{
    int ok = v->kind == want || (want == SM_SV_INT && v->kind == SM_SV_BOOL) ||
             (want == SM_SV_FLOAT &&
              (v->kind == SM_SV_INT || v->kind == SM_SV_BOOL));
    if (!ok)
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "pass a value of the annotated type, or change "
                           "the annotation",
                           "%s is annotated %s but gets %s", what,
                           sm_lw_kind_name(want), sm_lw_a_kind(v->kind));
    if (want == SM_SV_TENSOR && t && t->dtype &&
        v->v->type.dtype != SMELT_DTYPE_UNDEFINED &&
        v->v->type.dtype != t->dtype)
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "convert it with .float(), .long() or .bool()",
                           "%s is annotated %s but gets a %s tensor", what,
                           smelt_dtype_name(t->dtype),
                           smelt_dtype_name(v->v->type.dtype));
    if (v->kind != want) {
        smelt_status st = SMELT_OK;
        if (v->v)
            v->v =
                sm_lw_cast(L, v->v, sm_lw_natural_dtype(want), line, col, &st);
        else if (want == SM_SV_FLOAT)
            v->f = (double)v->i;
        v->kind = want;
        SM_TRY(st);
    }
    return SMELT_OK;
}

/* Checks the values a function returns against its -> annotation. */
static smelt_status check_returns(sm_lower *L, const sm_ast_func *f,
                                  sm_flow *flow)
{
    const sm_ast_expr *r = f->ret;
    if (!r)
        return SMELT_OK;
    int n = 1;
    sm_ast_expr *const *items = &f->ret;
    if (r->kind == SM_EX_INDEX &&
        (ann_name(r->a, "Tuple") || ann_name(r->a, "tuple"))) {
        n = r->b->kind == SM_EX_TUPLE ? r->b->n : 1;
        items = r->b->kind == SM_EX_TUPLE ? (sm_ast_expr *const *)r->b->items
                                          : &r->b;
    }
    if (n != flow->n)
        return sm_lw_error(L, flow->line, flow->col, SMELT_ERR_TYPE,
                           "return as many values as the annotation lists",
                           "'%s' is annotated to return %d value%s but "
                           "returns %d",
                           f->name, n, n == 1 ? "" : "s", flow->n);
    for (int i = 0; i < n; i++) {
        sm_sv_kind kind;
        sm_type t;
        SM_TRY(annotation(L, items[i], &kind, &t));
        char what[96];
        sm_sv_kind k = flow->vals[i].kind;
        if (k != kind && !(kind == SM_SV_INT && k == SM_SV_BOOL) &&
            !(kind == SM_SV_FLOAT && (k == SM_SV_INT || k == SM_SV_BOOL)))
            return sm_lw_error(L, flow->line, flow->col, SMELT_ERR_TYPE,
                               "return a value of the annotated type, or "
                               "change the annotation",
                               "'%s' is annotated to return %s but returns "
                               "%s",
                               f->name, sm_lw_kind_name(kind), sm_lw_a_kind(k));
        snprintf(what, sizeof what, "the result of '%.40s'", f->name);
        SM_TRY(check_kind(L, kind, items[i]->kind == SM_EX_INDEX ? &t : NULL,
                          &flow->vals[i], what, flow->line, flow->col));
    }
    return SMELT_OK;
}

/* ---- statements -------------------------------------------------------- */

/* Binds a target (a name, or a tuple of names) to v. */
static smelt_status bind(sm_lower *L, const sm_ast_expr *t, const sm_sv *v)
{
    if (t->kind == SM_EX_NAME) {
        if (v->v)
            sm_lw_rename(L, v->v, t->name);
        return sm_lw_assign(L, t->name, v);
    }
    int seq = v->kind == SM_SV_TUPLE || v->kind == SM_SV_LIST;
    if (!seq || v->n != t->n)
        return sm_lw_error(
            L, t->line, t->col, SMELT_ERR_TYPE,
            v->kind == SM_SV_TENSOR
                ? "a Tensor is one value; split it with split() first"
                : "unpack a tuple of the same length",
            seq ? "cannot unpack %s of %d items into %d names"
                : "cannot unpack %s into %d names",
            sm_lw_a_kind(v->kind), seq ? v->n : t->n, t->n);
    for (int i = 0; i < t->n; i++)
        SM_TRY(bind(L, t->items[i], &v->items[i]));
    return SMELT_OK;
}

static smelt_status stmt(sm_lower *L, const sm_ast_stmt *s)
{
    SM_TRY(sm_lw_step(L, s->line, s->col));
    sm_sv v, old, r;
    switch (s->kind) {
    case SM_ST_PASS: return SMELT_OK;
    case SM_ST_EXPR: return sm_lw_expr(L, s->value, &v);
    case SM_ST_ASSIGN:
        SM_TRY(sm_lw_expr(L, s->value, &v));
        if (s->ann) {
            sm_sv_kind kind;
            sm_type t;
            SM_TRY(annotation(L, s->ann, &kind, &t));
            char what[80];
            snprintf(what, sizeof what, "'%.40s'", s->targets[0]->name);
            SM_TRY(check_kind(L, kind, s->ann->kind == SM_EX_INDEX ? &t : NULL,
                              &v, what, s->line, s->col));
        }
        for (int i = 0; i < s->n_targets; i++)
            SM_TRY(bind(L, s->targets[i], &v));
        return SMELT_OK;
    case SM_ST_AUG:
        SM_TRY(sm_lw_lookup(L, s->targets[0]->name, s->line, s->col, &old));
        SM_TRY(sm_lw_expr(L, s->value, &v));
        SM_TRY(sm_lw_binop(L, s->op, &old, &v, s->line, s->col, &r));
        return bind(L, s->targets[0], &r);
    case SM_ST_IF: return sm_lw_if(L, s);
    case SM_ST_FOR: return sm_lw_for(L, s);
    case SM_ST_WHILE: return sm_lw_while(L, s);
    case SM_ST_RETURN: break; /* handled by sm_lw_seq */
    }
    return SMELT_OK;
}

int sm_lw_returns(const sm_ast_stmt *s)
{
    if (s->kind == SM_ST_RETURN)
        return 1;
    if (s->kind != SM_ST_IF && s->kind != SM_ST_FOR && s->kind != SM_ST_WHILE)
        return 0;
    for (const sm_ast_stmt *b = s->body; b; b = b->next)
        if (sm_lw_returns(b))
            return 1;
    for (const sm_ast_stmt *b = s->orelse; b; b = b->next)
        if (sm_lw_returns(b))
            return 1;
    return 0;
}

/* The first return statement inside s (which has one). */
static const sm_ast_stmt *first_return(const sm_ast_stmt *s)
{
    if (s->kind == SM_ST_RETURN)
        return s;
    for (int k = 0; k < 2; k++)
        for (const sm_ast_stmt *b = k ? s->orelse : s->body; b; b = b->next)
            if (sm_lw_returns(b))
                return first_return(b);
    return s;
}

static smelt_status do_return(sm_lower *L, const sm_ast_stmt *s, sm_flow *flow)
{
    if (L->in_loop)
        return sm_lw_error(L, s->line, s->col, SMELT_ERR_UNSUPPORTED,
                           "assign the result to a variable and return it "
                           "after the loop",
                           "return inside a loop is not supported");
    if (s->next)
        return sm_lw_error(L, s->next->line, s->next->col, SMELT_ERR_PARSE,
                           "remove the unreachable code",
                           "code after return never runs");
    if (!s->value)
        return sm_lw_error(L, s->line, s->col, SMELT_ERR_TYPE,
                           "return a Tensor, or several separated by commas",
                           "a function must return a value");
    sm_sv v;
    SM_TRY(sm_lw_expr(L, s->value, &v));
    flow->returned = 1;
    flow->line = s->line;
    flow->col = s->col;
    if (v.kind == SM_SV_TUPLE) {
        flow->n = v.n;
        flow->vals = v.items;
        return SMELT_OK;
    }
    flow->n = 1;
    if (!(flow->vals = sm_lw_alloc(L, sizeof v)))
        return sm_lw_nomem(L);
    flow->vals[0] = v;
    return SMELT_OK;
}

smelt_status sm_lw_seq(sm_lower *L, const sm_ast_stmt *s, const sm_cont *k,
                       sm_flow *flow)
{
    for (; s; s = s->next) {
        if (s->kind == SM_ST_RETURN)
            return do_return(L, s, flow);
        if (s->kind == SM_ST_IF && sm_lw_returns(s)) {
            const sm_ast_stmt *r = first_return(s);
            if (L->in_loop)
                return sm_lw_error(L, r->line, r->col, SMELT_ERR_UNSUPPORTED,
                                   "assign the result to a variable and "
                                   "return it after the loop",
                                   "return inside a loop is not supported");
            sm_cont rest = {s->next, k};
            SM_TRY(sm_lw_step(L, s->line, s->col));
            return sm_lw_if_return(L, s, s->next ? &rest : k, flow);
        }
        SM_TRY(stmt(L, s));
    }
    if (k)
        return sm_lw_seq(L, k->s, k->next, flow);
    flow->returned = 0;
    return SMELT_OK;
}

/* ---- helper functions -------------------------------------------------- */

/* Binds arguments to f's parameters: positional, then keywords, then
 * defaults (evaluated with no local variables in scope, as Python
 * evaluates them where the function is defined). */
static smelt_status bind_args(sm_lower *L, const sm_ast_func *f, int n,
                              const sm_sv *args, const char *const *kw,
                              int line, int col, sm_sv *vals)
{
    char *given = sm_lw_alloc(L, (size_t)f->n_params + 1);
    if (!given)
        return sm_lw_nomem(L);
    int pos = 0;
    for (int i = 0; i < n; i++) {
        int p = kw && kw[i] ? -1 : pos++;
        for (int j = 0; kw && kw[i] && j < f->n_params; j++)
            if (!strcmp(f->params[j].name, kw[i]))
                p = j;
        if (kw && kw[i] && p < 0)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "'%s' has no parameter '%s'", f->name, kw[i]);
        if (p >= f->n_params)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "'%s' takes %d argument%s but %d were given",
                               f->name, f->n_params,
                               f->n_params == 1 ? "" : "s", pos);
        if (given[p])
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "'%s' got several values for '%s'", f->name,
                               f->params[p].name);
        given[p] = 1;
        vals[p] = args[i];
    }
    for (int j = 0; j < f->n_params; j++) {
        const sm_ast_param *p = &f->params[j];
        if (!given[j] && !p->def)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "'%s' is missing its argument '%s'", f->name,
                               p->name);
        if (!given[j]) {
            sm_env *env = L->env;
            if (!(L->env = sm_lw_env_copy(L, NULL))) {
                L->env = env;
                return sm_lw_nomem(L);
            }
            smelt_status st = sm_lw_expr(L, p->def, &vals[j]);
            L->env = env;
            SM_TRY(st);
        }
        if (p->type) {
            sm_sv_kind kind;
            sm_type t;
            char what[96];
            SM_TRY(annotation(L, p->type, &kind, &t));
            snprintf(what, sizeof what, "argument '%.30s' of '%.30s'", p->name,
                     f->name);
            SM_TRY(check_kind(L, kind, p->type->kind == SM_EX_INDEX ? &t : NULL,
                              &vals[j], what, line, col));
        }
    }
    return SMELT_OK;
}

smelt_status sm_lw_inline(sm_lower *L, const sm_ast_func *f, int n,
                          const sm_sv *args, const char *const *kw, int line,
                          int col, sm_sv *out)
{
    for (int i = 0; i < L->n_calls; i++)
        if (L->calls[i] == f)
            return sm_lw_error(L, line, col, SMELT_ERR_UNSUPPORTED,
                               "helpers are inlined; rewrite the recursion "
                               "as a loop",
                               "recursive call of '%s' is not supported",
                               f->name);
    if (L->n_calls >= SM_SCRIPT_MAX_INLINE)
        return sm_lw_error(L, line, col, SMELT_ERR_LIMIT, NULL,
                           "helper calls nest deeper than %d",
                           SM_SCRIPT_MAX_INLINE);
    sm_sv *vals = sm_lw_alloc(L, sizeof *vals * (size_t)(f->n_params + 1));
    sm_env *env = sm_lw_env_copy(L, NULL), *saved = L->env;
    if (!vals || !env)
        return sm_lw_nomem(L);
    SM_TRY(bind_args(L, f, n, args, kw, line, col, vals));
    L->env = env;
    for (int j = 0; j < f->n_params; j++) {
        smelt_status st = sm_lw_assign(L, f->params[j].name, &vals[j]);
        if (st) {
            L->env = saved;
            return st;
        }
    }
    int in_loop = L->in_loop;
    L->in_loop = 0;
    L->calls[L->n_calls++] = f;
    sm_flow flow = {0};
    smelt_status st = sm_lw_seq(L, f->body, NULL, &flow);
    L->n_calls--;
    L->in_loop = in_loop;
    L->env = saved;
    SM_TRY(st);
    if (!flow.returned)
        return sm_lw_error(L, f->line, f->col, SMELT_ERR_TYPE,
                           "end the function with a return statement",
                           "'%s' does not return a value", f->name);
    SM_TRY(check_returns(L, f, &flow));
    if (flow.n == 1) {
        *out = flow.vals[0];
        return SMELT_OK;
    }
    *out = (sm_sv){.kind = SM_SV_TUPLE, .n = flow.n, .items = flow.vals};
    return SMELT_OK;
}

/* ---- the entry function ------------------------------------------------ */

static smelt_status add_params(sm_lower *L, const sm_ast_func *f)
{
    for (int i = 0; i < f->n_params; i++) {
        const sm_ast_param *p = &f->params[i];
        sm_sv v = {0};
        sm_type t;
        SM_TRY(annotation(L, p->type, &v.kind, &t));
        const char *name = sm_lw_name(L, p->name);
        if (!name || !(v.v = sm_block_add_param(L->g->top, name, &t)))
            return sm_lw_nomem(L);
        SM_TRY(sm_lw_assign(L, p->name, &v));
    }
    return SMELT_OK;
}

/* Gives returned value x the variable name the user wrote: a variable
 * assigned more than once has versions y, y.1, y.2, and the returned one
 * is named y (the first version takes a fresh y.N). A graph input keeps
 * its name, so `return x` after reassigning input x stays x.N. */
static smelt_status claim_var_name(sm_lower *L, sm_value *x)
{
    const char *dot = strrchr(x->name, '.');
    if (!dot || dot == x->name || !dot[1] ||
        strspn(dot + 1, "0123456789") != strlen(dot + 1))
        return SMELT_OK;
    size_t n = (size_t)(dot - x->name);
    sm_value *holder = NULL;
    for (int i = 0; i < L->g->n_values; i++) {
        sm_value *v = L->g->values[i];
        if (v && v != x && v->name && strlen(v->name) == n &&
            !strncmp(v->name, x->name, n))
            holder = v;
    }
    const sm_block *top = L->g->top;
    for (int i = 0; holder && i < top->n_params; i++)
        if (top->params[i] == holder)
            return SMELT_OK; /* an input's name stays the input's */
    char base[256];
    if (n >= sizeof base)
        return SMELT_OK;
    memcpy(base, x->name, n);
    base[n] = 0;
    if (holder) {
        const char *fresh = sm_lw_name(L, base);
        const char *copy = fresh ? sm_arena_strdup(&L->g->arena, fresh) : NULL;
        if (!copy)
            return sm_lw_nomem(L);
        holder->name = copy;
    }
    const char *mine = sm_arena_strdup(&L->g->arena, base);
    if (!mine)
        return sm_lw_nomem(L);
    x->name = mine;
    return SMELT_OK;
}

/* The graph's outputs: each returned value as a tensor, temporaries named
 * out (or out0, out1, ...), variables by the name the user wrote. */
static smelt_status add_outputs(sm_lower *L, const sm_ast_func *f,
                                const sm_flow *flow)
{
    for (int i = 0; i < flow->n; i++) {
        const sm_sv *v = &flow->vals[i];
        sm_value *x;
        if (v->kind > SM_SV_BOOL)
            return sm_lw_error(L, flow->line, flow->col, SMELT_ERR_TYPE,
                               "return Tensors, ints, floats or bools",
                               "'%s' returns a %s, which cannot be a graph "
                               "output",
                               f->name, sm_lw_kind_name(v->kind));
        SM_TRY(sm_lw_value(L, v, SMELT_DTYPE_UNDEFINED, flow->line, flow->col,
                           &x));
        if (sm_lw_is_temp(x)) {
            char base[32];
            snprintf(base, sizeof base, flow->n == 1 ? "out" : "out%d", i);
            const char *name = sm_lw_name(L, base);
            const char *copy =
                name ? sm_arena_strdup(&L->g->arena, name) : NULL;
            if (!copy)
                return sm_lw_nomem(L);
            x->name = copy;
        } else {
            SM_TRY(claim_var_name(L, x));
        }
        if (!sm_block_add_return(L->g->top, x))
            return sm_lw_nomem(L);
    }
    return SMELT_OK;
}

static smelt_status lower_entry(sm_lower *L, const sm_ast_func *f)
{
    for (const sm_ast_func *fn = L->mod->funcs; fn; fn = fn->next)
        if (!sm_strmap_put(&L->funcs, fn->name, strlen(fn->name),
                           (void *)fn)) /* later definitions win */
            return sm_lw_nomem(L);
    for (const sm_ast_import *i = L->mod->imports; i; i = i->next)
        if (!sm_strmap_put(&L->imports, i->alias, strlen(i->alias), (void *)i))
            return sm_lw_nomem(L);
    for (const sm_ast_global *g = L->mod->globals; g; g = g->next) {
        if (sm_strmap_get(&L->globals, g->name, strlen(g->name)))
            continue; /* the list runs newest first: the last one wins */
        sm_lw_global *gl = sm_lw_alloc(L, sizeof *gl);
        if (!gl)
            return sm_lw_nomem(L);
        gl->g = g;
        if (!sm_strmap_put(&L->globals, g->name, strlen(g->name), gl))
            return sm_lw_nomem(L);
    }
    L->blocks[0] = L->g->top;
    L->depth = 1;
    if (!(L->env = sm_lw_env_copy(L, NULL)))
        return sm_lw_nomem(L);
    SM_TRY(add_params(L, f));
    L->calls[L->n_calls++] = f;
    sm_flow flow = {0};
    SM_TRY(sm_lw_seq(L, f->body, NULL, &flow));
    if (!flow.returned)
        return sm_lw_error(L, f->line, f->col, SMELT_ERR_TYPE,
                           "end the function with a return statement",
                           "'%s' does not return a value", f->name);
    SM_TRY(check_returns(L, f, &flow));
    return add_outputs(L, f, &flow);
}

smelt_status sm_script_lower(const sm_script_src *src, const sm_ast_module *m,
                             const sm_ast_func *f, sm_graph **out)
{
    *out = NULL;
    sm_lower L;
    memset(&L, 0, sizeof L);
    L.src = src;
    L.ctx = src->ctx;
    L.mod = m;
    sm_arena_init(&L.arena);
    sm_strmap_init(&L.names);
    sm_strmap_init(&L.consts);
    sm_strmap_init(&L.globals);
    sm_strmap_init(&L.funcs);
    sm_strmap_init(&L.imports);
    smelt_status st = sm_graph_new(src->ctx, f->name, &L.g);
    if (!st)
        st = lower_entry(&L, f);
    if (!st && (st = sm_graph_infer(src->ctx, L.g)) != SMELT_ERR_NOMEM && st)
        sm_err_prefix(src->ctx, "%.200s: ", src->file);
    if (!st && (st = sm_graph_verify(src->ctx, L.g)) != SMELT_ERR_NOMEM && st)
        sm_err_prefix(src->ctx, "%.200s: internal error: ", src->file);
    sm_strmap_free(&L.names);
    sm_strmap_free(&L.consts);
    sm_strmap_free(&L.globals);
    sm_strmap_free(&L.funcs);
    sm_strmap_free(&L.imports);
    sm_arena_free(&L.arena);
    if (st) {
        sm_graph_free(L.g);
        return st;
    }
    *out = L.g;
    return SMELT_OK;
}
