/*
 * pattern.c - the pattern-matching library of the passes; see pattern.h.
 */
#include "passes/pattern.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"

/* Appends the nodes of b (and of their sub-blocks) to *arr. */
static smelt_status snap_block(sm_rw *rw, const sm_block *b, sm_node ***arr,
                               int *n, int *cap)
{
    for (sm_node *x = sm_rw_first(rw, b); x; x = sm_rw_next(rw, x)) {
        if (*n == *cap) {
            int nc = *cap ? *cap * 2 : 64;
            sm_node **p = sm_realloc(*arr, sizeof *p * (size_t)nc);
            if (!p)
                return SMELT_ERR_NOMEM;
            *arr = p;
            *cap = nc;
        }
        (*arr)[(*n)++] = x;
        if (x->op == SM_OP_FusedElementwise)
            continue;
        for (int i = 0; i < x->n_blocks; i++)
            SM_TRY(snap_block(rw, x->blocks[i], arr, n, cap));
    }
    return SMELT_OK;
}

smelt_status sm_pat_snapshot(smelt_ctx_t *ctx, sm_rw *rw, sm_graph *g,
                             sm_node ***out, int *n)
{
    int cap = 0;
    *out = NULL;
    *n = 0;
    if (snap_block(rw, g->top, out, n, &cap) != SMELT_OK) {
        sm_free(*out);
        *out = NULL;
        *n = 0;
        return sm_err_nomem(ctx);
    }
    return SMELT_OK;
}

void sm_pat_label(const sm_node *n, char *buf, size_t size)
{
    const char *op = sm_op_info_get(n->op)->name;
    if (n->name)
        snprintf(buf, size, "%s", n->name);
    else if (n->n_out)
        snprintf(buf, size, "%%%s (%s)", n->out[0]->name, op);
    else
        snprintf(buf, size, "(%s)", op);
}

void sm_pat_miss(sm_pass_ctx *pc, const sm_node *n, const char *fmt, ...)
{
    if (!pc->opt || !pc->opt->why_not_fused)
        return;
    char label[160], msg[400];
    sm_pat_label(n, label, sizeof label);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sm_pass_log(pc, "%s: %s", label, msg);
}

int sm_pat_scalar(const sm_value *v, double *out)
{
    if (!v || !v->data || v->data->numel != 1)
        return 0;
    *out = sm_load_f64(v->data->dtype, v->data->data, 0);
    return 1;
}

int sm_pat_scalar_is(const sm_value *v, double want)
{
    double x;
    return sm_pat_scalar(v, &x) && fabs(x - want) <= 1e-4 * fabs(want);
}

int sm_pat_is_float(const sm_value *v)
{
    return v && sm_dtype_is_float(v->type.dtype);
}

sm_node *sm_pat_user(sm_rw *rw, const sm_value *v)
{
    sm_node *u = sm_rw_single_user(rw, v);
    return u && u->owner == v->block ? u : NULL;
}

const char *sm_pat_some_user_op(sm_rw *rw, const sm_value *v)
{
    for (sm_node *x = sm_rw_first(rw, v->block); x; x = sm_rw_next(rw, x))
        for (int i = 0; i < x->n_in; i++)
            if (x->in[i] == v)
                return sm_op_info_get(x->op)->name;
    return NULL;
}

sm_value *sm_pat_other(const sm_node *n, const sm_value *v)
{
    if (n->n_in != 2)
        return NULL;
    return n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : NULL;
}

int sm_pat_zero_or_absent(const sm_value *v)
{
    if (!v)
        return 1;
    if (!v->data)
        return 0;
    for (int64_t i = 0; i < v->data->numel; i++)
        if (sm_load_f64(v->data->dtype, v->data->data, i) != 0)
            return 0;
    return 1;
}

int sm_pat_same_dim(const sm_dim *a, const sm_dim *b)
{
    if (a->size >= 0 || b->size >= 0)
        return a->size == b->size;
    return a->sym && b->sym && strcmp(a->sym, b->sym) == 0;
}

int sm_pat_same_shape(const sm_type *a, const sm_type *b)
{
    if (a->ndim < 0 || a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (!sm_pat_same_dim(&a->dims[d], &b->dims[d]))
            return 0;
    return 1;
}

int sm_pat_fits_onto(const sm_type *t, const sm_type *y)
{
    if (t->ndim < 0 || y->ndim < 0 || t->ndim > y->ndim)
        return 0;
    for (int d = 0; d < t->ndim; d++) {
        const sm_dim *a = &t->dims[d], *b = &y->dims[d + y->ndim - t->ndim];
        if (a->size == 1 || (a->size >= 0 && a->size == b->size))
            continue;
        if (a->size < 0 && b->size < 0 && a->sym && b->sym &&
            strcmp(a->sym, b->sym) == 0)
            continue;
        return 0;
    }
    return 1;
}

int sm_pat_copy_attrs(sm_node *dst, const sm_node *src)
{
    for (int i = 0; i < src->n_attr; i++) {
        const sm_attr *a = &src->attrs[i];
        int ok = 1;
        switch (a->kind) {
        case SM_ATTR_INT: ok = sm_node_set_int(dst, a->name, a->v.i); break;
        case SM_ATTR_FLOAT: ok = sm_node_set_float(dst, a->name, a->v.f); break;
        case SM_ATTR_STRING:
            ok = sm_node_set_string(dst, a->name, a->v.s);
            break;
        case SM_ATTR_INTS:
            ok = sm_node_set_ints(dst, a->name, a->v.ints, a->n);
            break;
        case SM_ATTR_FLOATS:
            ok = sm_node_set_floats(dst, a->name, a->v.floats, a->n);
            break;
        default: break; /* no op a fusion copies from has tensors or strings */
        }
        if (!ok)
            return 0;
    }
    return 1;
}

smelt_status sm_pat_silu_build(smelt_ctx_t *ctx, sm_rw *rw, sm_graph *g,
                               sm_node *const *nodes, int n, sm_pat_silu *out)
{
    out->cap = g->n_values;
    out->mul = sm_calloc((size_t)out->cap + 1, sizeof *out->mul);
    if (!out->mul)
        return sm_err_nomem(ctx);
    for (int i = 0; i < n; i++) {
        sm_node *m = nodes[i];
        if (m->op != SM_OP_Mul || m->n_in != 2)
            continue;
        for (int k = 0; k < 2; k++) {
            sm_value *s = m->in[k], *x = m->in[1 - k];
            sm_node *sig = s ? s->def : NULL;
            if (!sig || !x || sig->op != SM_OP_Sigmoid || sig->in[0] != x ||
                sm_pat_user(rw, s) != m || sm_rw_uses(rw, x) != 2 ||
                sig->owner != x->block || m->owner != x->block ||
                x->id >= out->cap)
                continue;
            out->mul[x->id] = m;
        }
    }
    return SMELT_OK;
}

void sm_pat_silu_free(sm_pat_silu *s)
{
    sm_free(s->mul);
    s->mul = NULL;
    s->cap = 0;
}

smelt_status sm_pat_for_nodes(sm_pass_ctx *pc, sm_graph *g,
                              sm_pat_visit_fn visit)
{
    sm_rw *rw;
    SM_TRY(sm_rw_new(pc->ctx, g, &rw));
    sm_node **nodes = NULL;
    int n = 0;
    smelt_status st = sm_pat_snapshot(pc->ctx, rw, g, &nodes, &n);
    for (int i = 0; i < n && st == SMELT_OK; i++)
        if (!sm_rw_is_removed(rw, nodes[i]))
            st = visit(pc, rw, nodes[i]);
    sm_free(nodes);
    sm_rw_free(rw);
    return st;
}

smelt_status sm_pat_run_chains(sm_pass_ctx *pc, sm_graph *g,
                               sm_pat_start_fn start, sm_pat_fuse_fn fuse,
                               const void *arg)
{
    sm_rw *rw;
    SM_TRY(sm_rw_new(pc->ctx, g, &rw));
    sm_node **nodes = NULL;
    int n = 0;
    sm_pat_silu si = {0};
    smelt_status st = sm_pat_snapshot(pc->ctx, rw, g, &nodes, &n);
    if (st == SMELT_OK)
        st = sm_pat_silu_build(pc->ctx, rw, g, nodes, n, &si);
    for (int i = 0; i < n && st == SMELT_OK; i++)
        if (!sm_rw_is_removed(rw, nodes[i]) && start(arg, nodes[i]))
            st = fuse(pc, rw, &si, arg, nodes[i]);
    sm_pat_silu_free(&si);
    sm_free(nodes);
    sm_rw_free(rw);
    return st;
}

int sm_pat_is_act_op(sm_op op)
{
#define ACT(ID, name, o, match, params, cheap, scalar, vector, grad, ex)       \
    if (SM_OP_##o != SM_OP_COUNT && op == SM_OP_##o)                           \
        return 1;
#include "core/act.def"
#undef ACT
    return 0;
}

/* ---- the match column of core/act.def: whether node u is the row's
 * activation, with its parameters read into a ---- */

int sm_pat_act_never(const sm_node *u, sm_act *a)
{
    (void)u, (void)a;
    return 0;
}

int sm_pat_act_plain(const sm_node *u, sm_act *a)
{
    (void)u, (void)a;
    return 1;
}

/* Clip's bounds: absent or constant scalars, in order. */
static int clip_bounds(const sm_node *u, sm_act *a)
{
    a->alpha = -INFINITY;
    a->beta = INFINITY;
    if (u->n_in > 1 && u->in[1] && !sm_pat_scalar(u->in[1], &a->alpha))
        return 0;
    if (u->n_in > 2 && u->in[2] && !sm_pat_scalar(u->in[2], &a->beta))
        return 0;
    return a->alpha <= a->beta;
}

int sm_pat_act_relu6(const sm_node *u, sm_act *a)
{
    return clip_bounds(u, a) && a->alpha == 0 && a->beta == 6;
}

int sm_pat_act_clip(const sm_node *u, sm_act *a)
{
    return clip_bounds(u, a);
}

/* Gelu's approximate: "tanh" is gelu_tanh, anything else the erf form
 * (the Gelu kernels reject other spellings when they run). */
static int gelu_is_tanh(const sm_node *u)
{
    sm_attrs at = sm_node_attrs(u);
    return strcmp(sm_attrs_string(&at, "approximate", "none"), "tanh") == 0;
}

int sm_pat_act_gelu(const sm_node *u, sm_act *a)
{
    (void)a;
    return !gelu_is_tanh(u);
}

int sm_pat_act_gelu_tanh(const sm_node *u, sm_act *a)
{
    (void)a;
    return gelu_is_tanh(u);
}

int sm_pat_act_leakyrelu(const sm_node *u, sm_act *a)
{
    sm_attrs at = sm_node_attrs(u);
    a->alpha = sm_attrs_float(&at, "alpha", 0.01);
    return 1;
}

/* The first row of core/act.def whose op is u's and whose match function
 * takes u; SM_ACT_COUNT when none does. */
static sm_act_kind act_of_node(const sm_node *u, sm_act *a)
{
#define ACT(ID, name, o, match, params, cheap, scalar, vector, grad, ex)       \
    if (SM_OP_##o != SM_OP_COUNT && u->op == SM_OP_##o) {                      \
        sm_act t = {SM_ACT_##ID, 0, 0};                                        \
        if (match(u, &t)) {                                                    \
            *a = t;                                                            \
            return SM_ACT_##ID;                                                \
        }                                                                      \
    }
#include "core/act.def"
#undef ACT
    return SM_ACT_COUNT;
}

int sm_pat_match_act(sm_rw *rw, const sm_pat_silu *si, sm_value *y,
                     sm_pat_act_match *m, char *why, size_t why_size)
{
    why[0] = 0;
    memset(m, 0, sizeof *m);
    m->act.kind = SM_ACT_NONE;
    sm_node *mul = si && y->id < si->cap ? si->mul[y->id] : NULL;
    if (mul && !sm_rw_is_removed(rw, mul)) {
        sm_value *s = mul->in[0] == y ? mul->in[1] : mul->in[0];
        sm_node *sig = s->def;
        if (sig && sig->op == SM_OP_Sigmoid && !sm_rw_is_removed(rw, sig) &&
            sig->in[0] == y && sm_rw_uses(rw, y) == 2 &&
            sm_rw_uses(rw, s) == 1) {
            m->act.kind = SM_ACT_SILU;
            m->nodes[0] = sig;
            m->nodes[1] = mul;
            m->n = 2;
            m->out = mul->out[0];
            return 1;
        }
    }
    sm_node *u = sm_pat_user(rw, y);
    if (!u) {
        int uses = sm_rw_uses(rw, y);
        const char *op = uses > 1 ? sm_pat_some_user_op(rw, y) : NULL;
        sm_op uop = op ? sm_op_from_name(op, (int)strlen(op)) : SM_OP_COUNT;
        if (uop < SM_OP_COUNT && sm_pat_is_act_op(uop))
            snprintf(why, why_size, "%s consumer found but %%%s has %d users",
                     op, y->name, uses);
        return 0;
    }
    if (!sm_pat_is_act_op(u->op))
        return 0;
    if (act_of_node(u, &m->act) == SM_ACT_COUNT) {
        /* of today's rows only Clip's can refuse a node of their op (its
         * bounds); a new row that can should say why here */
        snprintf(why, why_size,
                 "%s consumer found but its bounds are not constant "
                 "scalars in order",
                 sm_op_info_get(u->op)->name);
        return 0;
    }
    m->nodes[0] = u;
    m->n = 1;
    m->out = u->out[0];
    return 1;
}

void sm_pat_miss_users(sm_pass_ctx *pc, sm_rw *rw, const sm_node *start,
                       const sm_value *cur)
{
    int uses = sm_rw_uses(rw, cur);
    if (!pc->opt || !pc->opt->why_not_fused || uses < 2)
        return;
    const char *op = sm_pat_some_user_op(rw, cur);
    sm_op uop = op ? sm_op_from_name(op, (int)strlen(op)) : SM_OP_COUNT;
    if (uop == SM_OP_Add || (uop < SM_OP_COUNT && sm_pat_is_act_op(uop)))
        sm_pat_miss(pc, start, "%s consumer found but %%%s has %d users%s", op,
                    cur->name, uses,
                    sm_rw_is_output(rw, cur) ? " (it is a graph output)" : "");
}

/* Why a shape check could not be proven, when the cause is a dimension
 * not known at compile time: "dimension 'n' is symbolic", "the rank is
 * unknown"; "" when every dimension is known. */
static void unknown_dim_note(const sm_type *a, const sm_type *b, char *buf,
                             size_t size)
{
    const sm_type *t[2] = {a, b};
    buf[0] = 0;
    for (int k = 0; k < 2; k++) {
        if (t[k]->ndim < 0) {
            snprintf(buf, size,
                     "; a rank is unknown, so this cannot be "
                     "proven (a plan compiled for concrete "
                     "inputs binds it)");
            return;
        }
        for (int d = 0; d < t[k]->ndim; d++)
            if (t[k]->dims[d].size < 0) {
                if (t[k]->dims[d].sym)
                    snprintf(buf, size,
                             "; dimension '%s' is symbolic, so this cannot "
                             "be proven (a plan compiled for concrete "
                             "inputs, as smelt run and bench make, binds "
                             "it)",
                             t[k]->dims[d].sym);
                else
                    snprintf(buf, size,
                             "; a dimension is unknown, so this cannot be "
                             "proven (a plan compiled for concrete inputs "
                             "binds it)");
                return;
            }
    }
}

void sm_pat_miss_bcast(sm_pass_ctx *pc, const sm_node *start, const sm_value *o,
                       const sm_value *cur)
{
    char ts[160], ys[160], note[200];
    sm_type_str(&o->type, ts, sizeof ts);
    sm_type_str(&cur->type, ys, sizeof ys);
    unknown_dim_note(&o->type, &cur->type, note, sizeof note);
    sm_pat_miss(pc, start,
                "Add consumer found but its other operand %s does not "
                "broadcast onto the result %s without changing its shape%s",
                ts, ys, note);
}

int sm_pat_set_act(sm_node *n, const sm_act *a)
{
    if (a->kind == SM_ACT_NONE)
        return 1;
    if (!sm_node_set_string(n, "activation", sm_act_name(a->kind)))
        return 0;
    sm_act_params p = sm_act_info_get(a->kind)->params;
    if (p == SM_ACT_PARAMS_SLOPE)
        return sm_node_set_float(n, "activation_alpha", a->alpha);
    if (p != SM_ACT_PARAMS_BOUNDS)
        return 1;
    if (a->alpha > -INFINITY &&
        !sm_node_set_float(n, "activation_alpha", a->alpha))
        return 0;
    return a->beta == INFINITY ||
           sm_node_set_float(n, "activation_beta", a->beta);
}

void sm_pat_replace(sm_rw *rw, sm_node *fused, sm_value *old_out,
                    sm_node *const *dead, int n)
{
    sm_rw_replace_uses(rw, old_out, fused->out[0]);
    for (int k = n - 1; k >= 0; k--)
        if (!sm_rw_is_removed(rw, dead[k]))
            sm_rw_remove_node(rw, dead[k]);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < dead[k]->n_in; i++)
            if (dead[k]->in[i])
                sm_rw_drop_const_if_dead(rw, dead[k]->in[i]);
    fused->out[0]->name = old_out->name;
}
