/*
 * lower_ctrl.c - control flow: if/elif/else and `a if c else b` become If
 * nodes, for-range and while loops become Loop nodes (or unroll), and an
 * if that returns on some path becomes an If whose outputs are the
 * function's results.
 *
 * A condition that is a Python constant picks its branch at compile time.
 * Otherwise each branch is lowered into its own block with its own copy of
 * the variables; the variables the branches leave different become the
 * If's outputs. A loop's carried values are the variables its body
 * assigns that exist before it; they become the Loop body's parameters
 * and results. A carried tensor whose shape changes from one iteration to
 * the next (a growing concat) is found after lowering the body once; the
 * body is then lowered again with the shapes that hold for every
 * iteration.
 */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "frontends/script/lower.h"
#include "ir/shape_util.h"

static smelt_status push_block(sm_lower *L, sm_block *b, int line, int col)
{
    if (L->depth > SM_SCRIPT_MAX_BLOCKS)
        return sm_lw_error(L, line, col, SMELT_ERR_LIMIT,
                           "move some of the code into separate functions "
                           "called one after the other",
                           "if/for/while nest deeper than %d blocks",
                           SM_SCRIPT_MAX_BLOCKS);
    L->blocks[L->depth++] = b;
    return SMELT_OK;
}

static sm_block *new_block(sm_lower *L, const char *label)
{
    return sm_block_new(L->g, label, NULL);
}

/* Lowers statements s in block b with environment env. */
static smelt_status in_block(sm_lower *L, sm_block *b, sm_env *env,
                             const sm_ast_stmt *s, const sm_cont *k, int line,
                             int col, sm_flow *flow)
{
    SM_TRY(push_block(L, b, line, col));
    sm_env *saved = L->env;
    L->env = env;
    smelt_status st = sm_lw_seq(L, s, k, flow);
    L->env = saved;
    L->depth--;
    return st;
}

/* v as an IR value made in block b (constants land in b). */
static smelt_status value_in(sm_lower *L, sm_block *b, const sm_sv *v, int line,
                             int col, sm_value **out)
{
    SM_TRY(push_block(L, b, line, col));
    smelt_status st = sm_lw_value(L, v, SMELT_DTYPE_UNDEFINED, line, col, out);
    L->depth--;
    return st;
}

/* The values a and b that the then and else branches give for `what`, as
 * IR values of each branch; they must have one type. */
static smelt_status branch_pair(sm_lower *L, const char *what, const sm_sv *a,
                                sm_block *ba, const sm_sv *b, sm_block *bb,
                                int line, int col, sm_value **va, sm_value **vb)
{
    if (a->kind != b->kind)
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "give it the same type on both branches (a tensor "
                           "from an int: tensor(n) or full(shape, n))",
                           "%s is %s on one branch and %s on the other", what,
                           sm_lw_a_kind(a->kind), sm_lw_a_kind(b->kind));
    if (a->kind > SM_SV_BOOL)
        return sm_lw_error(L, line, col, SMELT_ERR_UNSUPPORTED,
                           "give it the same value on every path",
                           "%s is a %s that differs between the branches", what,
                           sm_lw_kind_name(a->kind));
    SM_TRY(value_in(L, ba, a, line, col, va));
    SM_TRY(value_in(L, bb, b, line, col, vb));
    smelt_dtype x = (*va)->type.dtype, y = (*vb)->type.dtype;
    if (x && y && x != y)
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "cast one branch with .float(), .long() or "
                           ".bool()",
                           "%s is %s on one branch and %s on the other", what,
                           smelt_dtype_name(x), smelt_dtype_name(y));
    return SMELT_OK;
}

/* Builds If(cond) with blocks tb, eb returning ta[i], eb[i]. */
static sm_node *make_if(sm_lower *L, sm_value *cond, sm_block *tb, sm_block *eb,
                        int n, sm_value **ta, sm_value **ea, int line, int col,
                        smelt_status *st)
{
    sm_node *node = sm_lw_node(L, SM_OP_If, 1, &cond, n);
    int ok = node != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = sm_block_add_return(tb, ta[i]) && sm_block_add_return(eb, ea[i]);
    if (!ok || !sm_node_add_block(node, tb) || !sm_node_add_block(node, eb)) {
        *st = sm_lw_nomem(L);
        return NULL;
    }
    *st = sm_lw_finish(L, node, line, col);
    return *st ? NULL : node;
}

typedef struct branches {
    sm_value *cond;
    sm_block *tb, *eb;
    sm_env *ta, *ea;
} branches;

/* Evaluates s's condition; a Python constant gives *pick 0 or 1 (the
 * branch to take), a run-time value gives *pick -1 and fresh blocks. */
static smelt_status open_branches(sm_lower *L, const sm_ast_expr *cond,
                                  branches *br, int *pick)
{
    sm_sv c;
    SM_TRY(sm_lw_expr(L, cond, &c));
    if ((*pick = sm_lw_truth(&c)) >= 0)
        return SMELT_OK;
    SM_TRY(sm_lw_cond(L, &c, cond->line, cond->col, &br->cond));
    br->tb = new_block(L, "then_branch");
    br->eb = new_block(L, "else_branch");
    br->ta = sm_lw_env_copy(L, L->env);
    br->ea = sm_lw_env_copy(L, L->env);
    if (!br->tb || !br->eb || !br->ta || !br->ea)
        return sm_lw_nomem(L);
    return SMELT_OK;
}

/* The outputs an if statement's branches give. */
typedef struct if_outs {
    int n;
    sm_value **tv, **ev; /* per output, the then and else values */
    const sm_var **vars; /* the then side's variable, for name and kind */
} if_outs;

/* Variable `name` after the if, from its state in the then branch (a) and
 * the else branch (b), either NULL when the branch does not know it; idx
 * is its index in the environment before the if, or -1. */
static smelt_status merge_var(sm_lower *L, const sm_ast_stmt *s,
                              const branches *br, int idx, const char *name,
                              const sm_var *a, const sm_var *b, if_outs *o)
{
    const sm_var *old = idx >= 0 ? &L->env->vars[idx] : NULL;
    int adef = a && a->state == SM_VAR_DEF;
    int bdef = b && b->state == SM_VAR_DEF;
    if (!adef || !bdef) {
        if (old && old->state != SM_VAR_DEF && !adef && !bdef)
            return SMELT_OK; /* undefined before and still */
        sm_sv none = {.kind = SM_SV_NONE};
        SM_TRY(sm_lw_assign(L, name, &none));
        sm_var *v = sm_lw_var(L->env, name);
        v->state = SM_VAR_BRANCH;
        v->line = s->line;
        v->col = s->col;
        return SMELT_OK;
    }
    if (sm_lw_same(&a->val, &b->val)) {
        if (!old || old->state != SM_VAR_DEF || !sm_lw_same(&old->val, &a->val))
            SM_TRY(sm_lw_assign(L, name, &a->val));
        return SMELT_OK;
    }
    char what[80];
    snprintf(what, sizeof what, "'%.40s'", name);
    SM_TRY(branch_pair(L, what, &a->val, br->tb, &b->val, br->eb, s->line,
                       s->col, &o->tv[o->n], &o->ev[o->n]));
    o->vars[o->n++] = a;
    return SMELT_OK;
}

/* Variable `name` among those env gained after its first n0. */
static const sm_var *new_var(sm_lower *L, const sm_env *env, int n0,
                             const char *name)
{
    L->steps += (env->n - n0) / 32;
    for (int i = n0; i < env->n; i++)
        if (!strcmp(env->vars[i].name, name))
            return &env->vars[i];
    return NULL;
}

smelt_status sm_lw_if(sm_lower *L, const sm_ast_stmt *s)
{
    branches br = {0};
    int pick;
    sm_flow flow = {0};
    SM_TRY(open_branches(L, s->value, &br, &pick));
    if (pick >= 0)
        return sm_lw_seq(L, pick ? s->body : s->orelse, NULL, &flow);
    SM_TRY(in_block(L, br.tb, br.ta, s->body, NULL, s->line, s->col, &flow));
    SM_TRY(in_block(L, br.eb, br.ea, s->orelse, NULL, s->line, s->col, &flow));
    /* The branch environments began as copies of this one, so its first
     * n0 variables sit at the same places in all three. */
    int n0 = L->env->n, cap = br.ta->n + br.ea->n + 1;
    if_outs o = {0, sm_lw_alloc(L, sizeof(sm_value *) * (size_t)cap),
                 sm_lw_alloc(L, sizeof(sm_value *) * (size_t)cap),
                 sm_lw_alloc(L, sizeof(sm_var *) * (size_t)cap)};
    if (!o.tv || !o.ev || !o.vars)
        return sm_lw_nomem(L);
    for (int i = 0; i < br.ta->n; i++) {
        const sm_var *a = &br.ta->vars[i];
        const sm_var *b =
            i < n0 ? &br.ea->vars[i] : new_var(L, br.ea, n0, a->name);
        SM_TRY(merge_var(L, s, &br, i < n0 ? i : -1, a->name, a, b, &o));
    }
    for (int i = n0; i < br.ea->n; i++) {
        const sm_var *b = &br.ea->vars[i];
        if (!new_var(L, br.ta, n0, b->name))
            SM_TRY(merge_var(L, s, &br, -1, b->name, NULL, b, &o));
    }
    if (o.n == 0)
        return SMELT_OK; /* nothing the branches did is visible after */
    smelt_status st;
    sm_node *node = make_if(L, br.cond, br.tb, br.eb, o.n, o.tv, o.ev, s->line,
                            s->col, &st);
    if (!node)
        return st;
    for (int i = 0; i < o.n; i++) {
        sm_sv v = {.kind = o.vars[i]->val.kind, .v = node->out[i]};
        sm_lw_rename(L, v.v, o.vars[i]->name);
        SM_TRY(sm_lw_assign(L, o.vars[i]->name, &v));
    }
    return SMELT_OK;
}

smelt_status sm_lw_if_return(sm_lower *L, const sm_ast_stmt *s,
                             const sm_cont *k, sm_flow *flow)
{
    branches br = {0};
    int pick;
    SM_TRY(open_branches(L, s->value, &br, &pick));
    if (pick >= 0)
        return sm_lw_seq(L, pick ? s->body : s->orelse, k, flow);
    sm_flow fa = {0}, fb = {0};
    SM_TRY(in_block(L, br.tb, br.ta, s->body, k, s->line, s->col, &fa));
    SM_TRY(in_block(L, br.eb, br.ea, s->orelse, k, s->line, s->col, &fb));
    if (!fa.returned || !fb.returned)
        return sm_lw_error(L, s->line, s->col, SMELT_ERR_TYPE,
                           "end the function with a return statement",
                           "a path through this if reaches the end of the "
                           "function without returning a value");
    if (fa.n != fb.n)
        return sm_lw_error(L, fb.line, fb.col, SMELT_ERR_TYPE,
                           "return the same number of values on every path",
                           "this return gives %d value%s but the one at line "
                           "%d gives %d",
                           fb.n, fb.n == 1 ? "" : "s", fa.line, fa.n);
    sm_value **tv = sm_lw_alloc(L, sizeof(sm_value *) * (size_t)(fa.n + 1));
    sm_value **ev = sm_lw_alloc(L, sizeof(sm_value *) * (size_t)(fa.n + 1));
    int *slot = sm_lw_alloc(L, sizeof(int) * (size_t)(fa.n + 1));
    sm_sv *vals = sm_lw_alloc(L, sizeof(sm_sv) * (size_t)(fa.n + 1));
    if (!tv || !ev || !slot || !vals)
        return sm_lw_nomem(L);
    int n = 0;
    for (int i = 0; i < fa.n; i++) {
        vals[i] = fa.vals[i];
        slot[i] = -1;
        if (sm_lw_same(&fa.vals[i], &fb.vals[i]))
            continue;
        char what[48];
        snprintf(what, sizeof what, "returned value %d", i + 1);
        SM_TRY(branch_pair(L, what, &fa.vals[i], br.tb, &fb.vals[i], br.eb,
                           fb.line, fb.col, &tv[n], &ev[n]));
        slot[i] = n++;
    }
    smelt_status st;
    sm_node *node =
        n ? make_if(L, br.cond, br.tb, br.eb, n, tv, ev, s->line, s->col, &st)
          : NULL;
    if (n && !node)
        return st;
    for (int i = 0; i < fa.n; i++)
        if (slot[i] >= 0)
            vals[i] = (sm_sv){.kind = fa.vals[i].kind, .v = node->out[slot[i]]};
    *flow = (sm_flow){1, fa.n, vals, fa.line, fa.col};
    return SMELT_OK;
}

smelt_status sm_lw_ifexp(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    branches br = {0};
    int pick;
    SM_TRY(open_branches(L, e->c, &br, &pick));
    if (pick >= 0)
        return sm_lw_expr(L, pick ? e->a : e->b, out);
    sm_sv a, b;
    SM_TRY(push_block(L, br.tb, e->line, e->col));
    smelt_status st = sm_lw_expr(L, e->a, &a);
    L->depth--;
    SM_TRY(st);
    SM_TRY(push_block(L, br.eb, e->line, e->col));
    st = sm_lw_expr(L, e->b, &b);
    L->depth--;
    SM_TRY(st);
    if (sm_lw_same(&a, &b)) {
        *out = a;
        return SMELT_OK;
    }
    sm_value *va, *vb;
    SM_TRY(branch_pair(L, "the value of the conditional expression", &a, br.tb,
                       &b, br.eb, e->line, e->col, &va, &vb));
    sm_node *node =
        make_if(L, br.cond, br.tb, br.eb, 1, &va, &vb, e->line, e->col, &st);
    if (!node)
        return st;
    *out = (sm_sv){.kind = a.kind, .v = node->out[0]};
    return SMELT_OK;
}

/* ---- loops ------------------------------------------------------------- */

typedef struct names {
    const char **v;
    int n, cap;
} names;

static smelt_status add_name(sm_lower *L, names *ns, const char *name)
{
    for (int i = 0; i < ns->n; i++)
        if (!strcmp(ns->v[i], name))
            return SMELT_OK;
    if (ns->n == ns->cap) {
        int nc = ns->cap ? ns->cap * 2 : 8;
        const char **p = sm_lw_alloc(L, sizeof(char *) * (size_t)nc);
        if (!p)
            return sm_lw_nomem(L);
        if (ns->n)
            memcpy(p, ns->v, sizeof(char *) * (size_t)ns->n);
        ns->v = p;
        ns->cap = nc;
    }
    ns->v[ns->n++] = name;
    return SMELT_OK;
}

/* The names statements s assign, in order of first assignment. */
static smelt_status assigned(sm_lower *L, const sm_ast_stmt *s, names *ns)
{
    for (; s; s = s->next) {
        for (int i = 0; i < s->n_targets; i++) {
            const sm_ast_expr *t = s->targets[i];
            if (t->kind == SM_EX_NAME)
                SM_TRY(add_name(L, ns, t->name));
            for (int j = 0; t->kind != SM_EX_NAME && j < t->n; j++)
                SM_TRY(add_name(L, ns, t->items[j]->name));
        }
        SM_TRY(assigned(L, s->body, ns));
        SM_TRY(assigned(L, s->orelse, ns));
    }
    return SMELT_OK;
}

/* Whether every value of type f is also described by p. */
static int fits(const sm_type *p, const sm_type *f)
{
    if (p->dtype && f->dtype != p->dtype)
        return 0;
    if (p->ndim < 0)
        return 1;
    if (f->ndim != p->ndim)
        return 0;
    for (int i = 0; i < p->ndim; i++) {
        const sm_dim *a = &p->dims[i], *b = &f->dims[i];
        if (a->size >= 0 && b->size != a->size)
            return 0;
        if (a->size < 0 && a->sym && (!b->sym || strcmp(a->sym, b->sym)))
            return 0;
    }
    return 1;
}

/* Widens p to also describe f; the third round gives up on the shape. */
static void widen(sm_type *p, const sm_type *f, int round)
{
    if (round >= 1 || p->ndim != f->ndim) {
        p->ndim = SM_RANK_UNKNOWN;
        return;
    }
    for (int i = 0; i < p->ndim; i++)
        if (!fits(&(sm_type){.ndim = 1, .dims = {p->dims[i]}},
                  &(sm_type){.ndim = 1, .dims = {f->dims[i]}}))
            p->dims[i] = (sm_dim){-1, NULL};
}

typedef struct loop_spec {
    const sm_ast_stmt *s;
    sm_value *m;          /* trip count or NULL */
    sm_value *cond;       /* initial condition or NULL */
    const char *var;      /* for: the loop variable */
    sm_sv start, step;    /* for: var = start + iteration * step */
    const sm_ast_expr *w; /* while: the condition, recomputed each time */
} loop_spec;

typedef struct loop_state {
    names assigned;
    int n;
    sm_var *carried; /* the variables as they were before the loop */
    sm_value **init;
    sm_type *types; /* of the carried body parameters */
    sm_value **fin; /* body results */
    sm_value *cond_next;
} loop_state;

/* One lowering of the body into a fresh block. */
static smelt_status loop_body(sm_lower *L, const loop_spec *sp, loop_state *ls,
                              sm_block **out)
{
    const sm_ast_stmt *s = sp->s;
    sm_block *body = new_block(L, "body");
    sm_env *env = sm_lw_env_copy(L, L->env), *saved = L->env;
    const char *it = sm_lw_name(L, sp->var ? sp->var : "iter");
    const char *cn = sm_lw_name(L, "cond");
    sm_type ti, tc;
    sm_type_set(&ti, SMELT_DTYPE_I64, 0, NULL);
    sm_type_set(&tc, SMELT_DTYPE_BOOL, 0, NULL);
    sm_value *p_it = body && it ? sm_block_add_param(body, it, &ti) : NULL;
    sm_value *p_c = p_it && cn ? sm_block_add_param(body, cn, &tc) : NULL;
    if (!env || !p_c)
        return sm_lw_nomem(L);
    L->env = env;
    smelt_status st = SMELT_OK;
    for (int i = 0; i < ls->n && !st; i++) {
        const char *name = sm_lw_name(L, ls->carried[i].name);
        sm_sv v = {.kind = ls->carried[i].val.kind};
        if (!name || !(v.v = sm_block_add_param(body, name, &ls->types[i])))
            st = sm_lw_nomem(L);
        else
            st = sm_lw_assign(L, ls->carried[i].name, &v);
    }
    if (!st)
        st = push_block(L, body, s->line, s->col);
    if (st) {
        L->env = saved;
        return st;
    }
    L->in_loop++;
    if (sp->var) {
        sm_sv i = {.kind = SM_SV_INT, .v = p_it}, t = i;
        if (sp->step.i != 1)
            st = sm_lw_binop(L, SM_AOP_MUL, &i, &sp->step, s->line, s->col, &t);
        if (!st && !(sp->start.v == NULL && sp->start.i == 0))
            st =
                sm_lw_binop(L, SM_AOP_ADD, &t, &sp->start, s->line, s->col, &i);
        else
            i = t;
        if (!st)
            st = sm_lw_assign(L, sp->var, &i);
    }
    sm_flow flow = {0};
    if (!st)
        st = sm_lw_seq(L, s->body, NULL, &flow);
    ls->cond_next = p_c;
    if (!st && sp->w) {
        sm_sv c;
        st = sm_lw_expr(L, sp->w, &c);
        if (!st)
            st = sm_lw_cond(L, &c, sp->w->line, sp->w->col, &ls->cond_next);
    }
    for (int i = 0; i < ls->n && !st; i++) {
        const sm_var *o = &ls->carried[i], *f = sm_lw_var(L->env, o->name);
        if (f->state != SM_VAR_DEF)
            st = sm_lw_error(L, s->line, s->col, SMELT_ERR_NOT_FOUND,
                             "assign it on every path through the body",
                             "'%s' may be undefined after an iteration",
                             o->name);
        else if (f->val.kind != o->val.kind)
            st = sm_lw_error(L, s->line, s->col, SMELT_ERR_TYPE,
                             "give it the same type before the loop",
                             "'%s' is %s before the loop and %s after its "
                             "body",
                             o->name, sm_lw_a_kind(o->val.kind),
                             sm_lw_a_kind(f->val.kind));
        else
            st = sm_lw_value(L, &f->val, SMELT_DTYPE_UNDEFINED, s->line, s->col,
                             &ls->fin[i]);
        smelt_dtype a = ls->types[i].dtype;
        if (!st && a && ls->fin[i]->type.dtype && ls->fin[i]->type.dtype != a)
            st = sm_lw_error(L, s->line, s->col, SMELT_ERR_TYPE,
                             "cast it back with .float(), .long() or .bool()",
                             "'%s' is %s before the loop and %s after its "
                             "body",
                             o->name, smelt_dtype_name(a),
                             smelt_dtype_name(ls->fin[i]->type.dtype));
    }
    L->in_loop--;
    L->depth--;
    L->env = saved;
    *out = body;
    return st;
}

static smelt_status loop(sm_lower *L, const loop_spec *sp)
{
    const sm_ast_stmt *s = sp->s;
    loop_state ls = {0};
    SM_TRY(assigned(L, s->body, &ls.assigned));
    size_t k = (size_t)ls.assigned.n + 1;
    ls.carried = sm_lw_alloc(L, sizeof(sm_var) * k);
    ls.init = sm_lw_alloc(L, sizeof(sm_value *) * (k + 2));
    ls.types = sm_lw_alloc(L, sizeof(sm_type) * k);
    ls.fin = sm_lw_alloc(L, sizeof(sm_value *) * k);
    if (!ls.carried || !ls.init || !ls.types || !ls.fin)
        return sm_lw_nomem(L);
    for (int i = 0; i < ls.assigned.n; i++) {
        const sm_var *o = sm_lw_var(L->env, ls.assigned.v[i]);
        if (!o || o->state != SM_VAR_DEF ||
            (sp->var && !strcmp(o->name, sp->var)))
            continue;
        if (o->val.kind > SM_SV_BOOL)
            return sm_lw_error(L, s->line, s->col, SMELT_ERR_UNSUPPORTED,
                               "unroll it with a constant range(n), n <= 16",
                               "'%s' is a %s and cannot change inside a "
                               "loop",
                               o->name, sm_lw_kind_name(o->val.kind));
        SM_TRY(sm_lw_value(L, &o->val, SMELT_DTYPE_UNDEFINED, s->line, s->col,
                           &ls.init[2 + ls.n]));
        ls.types[ls.n] = ls.init[2 + ls.n]->type;
        ls.carried[ls.n++] = *o;
    }
    sm_block *body = NULL;
    for (int round = 0; round < 3; round++) {
        SM_TRY(loop_body(L, sp, &ls, &body));
        int again = 0;
        for (int i = 0; i < ls.n; i++)
            if (!fits(&ls.types[i], &ls.fin[i]->type)) {
                widen(&ls.types[i], &ls.fin[i]->type, round);
                again = 1;
            }
        if (!again)
            break;
    }
    if (ls.n > 0) { /* a loop that carries nothing has no visible effect */
        ls.init[0] = sp->m;
        ls.init[1] = sp->cond;
        smelt_status st = SMELT_OK;
        sm_node *n = sm_lw_node(L, SM_OP_Loop, 2 + ls.n, ls.init, ls.n);
        int ok = n && sm_block_add_return(body, ls.cond_next);
        for (int i = 0; ok && i < ls.n; i++)
            ok = sm_block_add_return(body, ls.fin[i]);
        if (!ok || !sm_node_add_block(n, body))
            return sm_lw_nomem(L);
        SM_TRY(st = sm_lw_finish(L, n, s->line, s->col));
        for (int i = 0; i < ls.n; i++) {
            sm_sv v = {.kind = ls.carried[i].val.kind, .v = n->out[i]};
            const char *name = ls.carried[i].name;
            sm_lw_rename(L, v.v, name);
            SM_TRY(sm_lw_assign(L, name, &v));
        }
    }
    /* names the loop alone defines are not defined after it */
    for (int i = 0; i <= ls.assigned.n; i++) {
        const char *name = i < ls.assigned.n ? ls.assigned.v[i] : sp->var;
        sm_var *o = name ? sm_lw_var(L->env, name) : NULL;
        int carried = 0;
        for (int j = 0; j < ls.n; j++)
            carried |= o && !strcmp(ls.carried[j].name, name);
        if (!name || carried)
            continue;
        sm_sv none = {.kind = SM_SV_NONE};
        SM_TRY(sm_lw_assign(L, name, &none));
        o = sm_lw_var(L->env, name);
        o->state = SM_VAR_LOOP;
        o->line = s->line;
        o->col = s->col;
    }
    return SMELT_OK;
}

/* The trip count of range(start, stop, step) with constant bounds. */
static int64_t const_trips(int64_t start, int64_t stop, int64_t step)
{
    if ((step > 0 && stop <= start) || (step < 0 && stop >= start))
        return 0;
    uint64_t d = step > 0 ? (uint64_t)stop - (uint64_t)start
                          : (uint64_t)start - (uint64_t)stop;
    uint64_t s = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    uint64_t t = (d - 1) / s + 1;
    return t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t;
}

/* Unrolls the body trips times with the loop variable a constant. */
static smelt_status unroll(sm_lower *L, const loop_spec *sp, int64_t trips)
{
    const sm_ast_stmt *s = sp->s;
    names ns = {0};
    SM_TRY(assigned(L, s->body, &ns));
    char *before = sm_lw_alloc(L, (size_t)ns.n + 1);
    if (!before)
        return sm_lw_nomem(L);
    for (int i = 0; i < ns.n; i++) {
        const sm_var *o = sm_lw_var(L->env, ns.v[i]);
        before[i] = o && o->state == SM_VAR_DEF;
    }
    for (int64_t t = 0; t < trips; t++) {
        sm_sv i = {.kind = SM_SV_INT, .i = sp->start.i + t * sp->step.i};
        sm_flow flow = {0};
        SM_TRY(sm_lw_assign(L, sp->var, &i));
        L->in_loop++;
        smelt_status st = sm_lw_seq(L, s->body, NULL, &flow);
        L->in_loop--;
        SM_TRY(st);
    }
    for (int i = 0; i <= ns.n; i++) {
        const char *name = i < ns.n ? ns.v[i] : sp->var;
        if (i < ns.n && (before[i] || !strcmp(name, sp->var)))
            continue;
        sm_var *o = sm_lw_var(L->env, name);
        if (!o)
            continue;
        o->state = SM_VAR_LOOP;
        o->line = s->line;
        o->col = s->col;
    }
    return SMELT_OK;
}

/* Reads range(...)'s arguments into start, stop and step. */
static smelt_status range_args(sm_lower *L, const sm_ast_stmt *s, sm_sv *a)
{
    const sm_ast_expr *it = s->value;
    int ok = it->kind == SM_EX_CALL && it->a->kind == SM_EX_NAME &&
             !strcmp(it->a->name, "range") && !sm_lw_func(L, "range") &&
             it->n >= 1 && it->n <= 3;
    for (int i = 0; ok && i < it->n; i++)
        ok = it->kw[i] == NULL;
    if (!ok)
        return sm_lw_error(L, it->line, it->col, SMELT_ERR_UNSUPPORTED,
                           "write `for i in range(n):` and index with i, or "
                           "use a while loop",
                           "for loops must iterate over range(...)");
    a[0] = (sm_sv){.kind = SM_SV_INT, .i = 0};
    a[2] = (sm_sv){.kind = SM_SV_INT, .i = 1};
    for (int i = 0; i < it->n; i++) {
        sm_sv *v = &a[it->n == 1 ? 1 : i];
        SM_TRY(sm_lw_expr(L, it->items[i], v));
        if (v->kind == SM_SV_BOOL)
            v->kind = SM_SV_INT;
        if (v->kind != SM_SV_INT)
            return sm_lw_error(
                L, it->items[i]->line, it->items[i]->col, SMELT_ERR_TYPE,
                "convert a one-element tensor with int(x)",
                "range() takes ints, not a %s", sm_lw_kind_name(v->kind));
        if (v->v && v->v->type.dtype != SMELT_DTYPE_I64) {
            smelt_status st;
            if (!(v->v = sm_lw_cast(L, v->v, SMELT_DTYPE_I64, s->line, s->col,
                                    &st)))
                return st;
        }
    }
    if (a[2].v || a[2].i == 0 || a[2].i == INT64_MIN)
        return sm_lw_error(L, it->line, it->col, SMELT_ERR_UNSUPPORTED, NULL,
                           "the step of range() must be a nonzero constant");
    return SMELT_OK;
}

smelt_status sm_lw_for(sm_lower *L, const sm_ast_stmt *s)
{
    sm_sv a[3];
    SM_TRY(range_args(L, s, a));
    loop_spec sp = {s, NULL, NULL, s->targets[0]->name, a[0], a[2], NULL};
    if (!a[0].v && !a[1].v) {
        int64_t trips = const_trips(a[0].i, a[1].i, a[2].i);
        if (trips <= SM_SCRIPT_UNROLL_MAX)
            return unroll(L, &sp, trips);
        sm_sv m = {.kind = SM_SV_INT, .i = trips};
        SM_TRY(sm_lw_value(L, &m, SMELT_DTYPE_I64, s->line, s->col, &sp.m));
        return loop(L, &sp);
    }
    /* a run-time bound: M = (stop - start + step - 1) / step in i64 (for
     * a negative step, with start and stop swapped and -step) */
    int down = a[2].i < 0;
    int64_t step = down ? -a[2].i : a[2].i;
    sm_sv m, adj = {.kind = SM_SV_INT, .i = step - 1};
    if (!down && !a[0].v && a[0].i > INT64_MIN + step) {
        adj.i -= a[0].i; /* stop + (step - 1 - start) */
        m = a[1];
    } else {
        SM_TRY(sm_lw_binop(L, SM_AOP_SUB, down ? &a[0] : &a[1],
                           down ? &a[1] : &a[0], s->line, s->col, &m));
    }
    if (adj.i != 0) {
        sm_sv d = m;
        SM_TRY(sm_lw_binop(L, SM_AOP_ADD, &d, &adj, s->line, s->col, &m));
    }
    if (step != 1) {
        sm_sv k = {.kind = SM_SV_INT, .i = step};
        sm_value *in[2];
        smelt_status st;
        SM_TRY(sm_lw_value(L, &m, SMELT_DTYPE_I64, s->line, s->col, &in[0]));
        SM_TRY(sm_lw_value(L, &k, SMELT_DTYPE_I64, s->line, s->col, &in[1]));
        if (!(m.v = sm_lw_emit(L, SM_OP_Div, 2, in, s->line, s->col, &st)))
            return st;
    }
    SM_TRY(sm_lw_value(L, &m, SMELT_DTYPE_I64, s->line, s->col, &sp.m));
    return loop(L, &sp);
}

smelt_status sm_lw_while(sm_lower *L, const sm_ast_stmt *s)
{
    sm_sv c;
    SM_TRY(sm_lw_expr(L, s->value, &c));
    int t = sm_lw_truth(&c);
    if (t == 0)
        return SMELT_OK;
    if (t == 1)
        return sm_lw_error(L, s->line, s->col, SMELT_ERR_UNSUPPORTED,
                           "break is not supported: loop while a condition "
                           "that the body makes false",
                           "this while loop never ends: its condition is "
                           "always true");
    loop_spec sp = {s, NULL, NULL, NULL, {0}, {0}, s->value};
    SM_TRY(sm_lw_cond(L, &c, s->line, s->col, &sp.cond));
    return loop(L, &sp);
}
