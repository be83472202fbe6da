/*
 * rules_loop.c - the gradient rule of Loop (docs/AUTOGRAD.md, "Rules:
 * control flow"; the If rule and the shared replay are in
 * rules_control.c).
 *
 * Reverse mode needs each iteration's state. The rule makes the forward
 * Loop keep it: the carried values the body reads, and the iteration
 * number, become extra scan outputs (stacked per iteration, so the
 * number of iterations is known after the forward runs, whatever
 * stopped it). The backward is a second Loop of as many iterations that
 * walks them in reverse: at step j it reads state N-1-j, recomputes the
 * body from it, differentiates the copy from the gradients of the
 * body's results (the carried gradients it carries, the scan outputs'
 * gradients at that iteration) and carries the carried values'
 * gradients back one iteration, plus one accumulator per outer value
 * the body reads.
 */
#include <stdio.h>
#include <string.h>

#include "autograd/engine.h"
#include "autograd/rules_control.h"
#include "core/alloc.h"

/* The body's nodes in order, in *out (sm_free it). */
static smelt_status body_nodes(sm_grad_ctx *g, const sm_block *b,
                               sm_node ***out, int *n_out)
{
    int n = 0;
    for (sm_node *x = sm_rw_first(g->rw, b); x; x = sm_rw_next(g->rw, x))
        n++;
    sm_node **list = sm_calloc((size_t)(n > 0 ? n : 1), sizeof *list);
    if (!list)
        return sm_err_nomem(g->ctx);
    n = 0;
    for (sm_node *x = sm_rw_first(g->rw, b); x; x = sm_rw_next(g->rw, x))
        list[n++] = x;
    *out = list;
    *n_out = n;
    return SMELT_OK;
}

/*
 * Which carried values need gradients (need[k]): those whose initial
 * value needs one, and those the body makes depend on a value that does
 * (an outer weight, another carried value that needs one). A fixed
 * point over the body's marking; the marks on the body's own values are
 * cleared again after.
 */
static smelt_status carried_needs(sm_grad_ctx *g, unsigned char *need)
{
    sm_grad_engine *e = g->eng;
    const sm_node *n = g->n;
    const sm_block *body = n->blocks[0];
    int nc = n->n_in - 2;
    sm_node **nodes = NULL;
    int nn = 0;
    SM_TRY(body_nodes(g, body, &nodes, &nn));
    for (int k = 0; k < nc; k++)
        need[k] = (unsigned char)(sm_grad_requires(e, n->in[2 + k]) &&
                                  sm_grad_dtype_ok(n->in[2 + k]->type.dtype));
    for (int changed = 1; changed;) {
        for (int k = 0; k < nc; k++)
            sm_grad_set_requires(e, body->params[2 + k], need[k]);
        sm_grad_mark(e, nodes, nn);
        changed = 0;
        for (int k = 0; k < nc; k++)
            if (!need[k] && sm_grad_dtype_ok(body->params[2 + k]->type.dtype) &&
                sm_grad_requires(e, body->ret[1 + k]))
                need[k] = changed = 1;
    }
    for (int k = 0; k < nc; k++)
        sm_grad_set_requires(e, body->params[2 + k], 0);
    for (int i = 0; i < nn; i++)
        for (int j = 0; j < nodes[i]->n_out; j++)
            sm_grad_set_requires(e, nodes[i]->out[j], 0);
    sm_free(nodes);
    return SMELT_OK;
}

/*
 * Makes forward Loop n also return, stacked, each carried value the body
 * reads (states[k], NULL for one it does not read) and the iteration
 * number (*iters): the body returns its parameters as extra scan
 * outputs. The node is changed in place, so every use of its outputs
 * stays as it was.
 */
static smelt_status keep_states(sm_grad_ctx *g, sm_node *n, sm_value **states,
                                sm_value **iters)
{
    sm_block *body = n->blocks[0];
    int nc = n->n_in - 2;
    for (int k = 0; k <= nc; k++) {
        sm_value *p = body->params[k < nc ? 2 + k : 0];
        if (k < nc && sm_rw_uses(g->rw, p) == 0) {
            states[k] = NULL;
            continue;
        }
        SM_TRY(sm_rw_add_ret(g->rw, body, p));
        char name[256];
        snprintf(name, sizeof name, "%s.states", p->name);
        sm_value *s = sm_rw_add_output(g->rw, n, name);
        if (!s)
            return sm_err_nomem(g->ctx);
        if (k < nc)
            states[k] = s;
        else
            *iters = s;
    }
    return sm_rw_infer_node(g->rw, n);
}

/* What the backward Loop is made of. */
typedef struct loop_bw {
    int nc, ns;          /* the forward loop's carried and scan outputs */
    unsigned char *need; /* nc: carried k has a gradient to carry */
    int n_need;          /* how many do */
    sm_value **states;   /* nc: stacked states (NULL: body does not read) */
    sm_value *last;      /* N - 1, the last iteration's number */
    sm_vlist outer;      /* outer values the body reads */
    sm_node *node;       /* the backward Loop */
    sm_block *body;      /* its body */
} loop_bw;

/*
 * The backward body, at step j: idx = N-1-j; state k = states[k][idx];
 * the forward body replayed on (idx, true, states); seeds: the carried
 * gradients (parameters) on the body's carried results, dy of each scan
 * output at idx on its result; returns (true, carried gradients w.r.t.
 * the iteration's input state, accumulators plus this iteration's
 * contribution).
 */
static smelt_status backward_body(sm_grad_ctx *g, loop_bw *w)
{
    const sm_node *n = g->n;
    const sm_block *fb = n->blocks[0];
    sm_grad_ctx sub = *g;
    sub.b = w->body;
    sm_rw *rw = g->rw;
    sm_type t_i64 = {.dtype = SMELT_DTYPE_I64, .ndim = 0};
    sm_type t_bool = {.dtype = SMELT_DTYPE_BOOL, .ndim = 0};
    sm_value *j = sm_rw_add_param(rw, w->body, "j", &t_i64);
    sm_value *c = sm_rw_add_param(rw, w->body, "c", &t_bool);
    int n_carry = w->n_need + w->outer.n;
    sm_value **par = sm_calloc((size_t)n_carry + 1, sizeof *par);
    int map_n = g->eng->g->n_values;
    sm_value **map = sm_calloc((size_t)map_n + 1, sizeof *map);
    sm_value **seed_v = sm_calloc((size_t)(w->nc + w->ns) + 1, sizeof *seed_v);
    sm_value **seed_d = sm_calloc((size_t)(w->nc + w->ns) + 1, sizeof *seed_d);
    sm_value **mark = sm_calloc((size_t)w->nc + 1, sizeof *mark);
    sm_value **od = sm_calloc((size_t)w->outer.n + 1, sizeof *od);
    sm_value **gath = sm_calloc((size_t)w->nc + 1, sizeof *gath);
    smelt_status st = SMELT_OK;
    if (!j || !c || !par || !map || !seed_v || !seed_d || !mark || !od || !gath)
        st = sm_err_nomem(g->ctx);
    for (int k = 0, i = 0; st == SMELT_OK && k < w->nc; k++)
        if (w->need[k]) {
            par[i] =
                sm_rw_add_param(rw, w->body, "dc", &fb->params[2 + k]->type);
            st = par[i++] ? SMELT_OK : sm_err_nomem(g->ctx);
        }
    for (int k = 0; st == SMELT_OK && k < w->outer.n; k++) {
        sm_value *v = w->outer.v[k];
        par[w->n_need + k] = sm_rw_add_param(rw, w->body, "acc", &v->type);
        st = par[w->n_need + k] ? SMELT_OK : sm_err_nomem(g->ctx);
    }
    sm_value *idx = NULL, *yes = NULL;
    int n_mark = 0, n_seed = 0;
    if (st == SMELT_OK) {
        idx = sm_g_op2(&sub, SM_OP_Sub, w->last, j);
        yes = sm_g_scalar(&sub, SMELT_DTYPE_BOOL, 1);
        map[fb->params[0]->id] = idx;
        map[fb->params[1]->id] = yes;
        for (int k = 0; k < w->nc; k++) {
            if (!w->states[k])
                continue;
            gath[k] = sm_g_op2(&sub, SM_OP_Gather, w->states[k], idx);
            map[fb->params[2 + k]->id] = gath[k];
            if (w->need[k])
                mark[n_mark++] = gath[k];
        }
        for (int k = 0, i = 0; k < w->nc; k++)
            if (w->need[k]) {
                seed_v[n_seed] = fb->ret[1 + k];
                seed_d[n_seed++] = par[i++];
            }
        for (int s = 0; s < w->ns; s++)
            if (g->dy[w->nc + s]) {
                seed_v[n_seed] = fb->ret[1 + w->nc + s];
                seed_d[n_seed++] =
                    sm_g_op2(&sub, SM_OP_Gather, g->dy[w->nc + s], idx);
            }
        st = sub.st;
    }
    if (st == SMELT_OK) {
        sm_replay r = {.dst = w->body,
                       .src = fb,
                       .map = map,
                       .map_n = map_n,
                       .n_mark = n_mark,
                       .mark = mark,
                       .n_seed = n_seed,
                       .seed_v = seed_v,
                       .seed_d = seed_d,
                       .outer = &w->outer,
                       .outer_d = od};
        st = sm_grad_replay(g, &r);
    }
    if (st == SMELT_OK)
        st = sm_rw_add_ret(rw, w->body, yes);
    for (int k = 0, i = 0; st == SMELT_OK && k < w->nc; k++) {
        if (!w->need[k])
            continue;
        sm_value *d = gath[k] ? sm_grad_get(g->eng, gath[k]) : NULL;
        if (!d)
            d = sm_g_zeros_like(&sub, par[i]);
        i++;
        st = d ? sm_rw_add_ret(rw, w->body, d) : sub.st;
    }
    for (int k = 0; st == SMELT_OK && k < w->outer.n; k++) {
        sm_value *acc = par[w->n_need + k];
        sm_value *d = od[k] ? sm_g_op2(&sub, SM_OP_Add, acc, od[k]) : acc;
        st = d ? sm_rw_add_ret(rw, w->body, d) : sub.st;
    }
    sm_free(par);
    sm_free(map);
    sm_free(seed_v);
    sm_free(seed_d);
    sm_free(mark);
    sm_free(od);
    sm_free(gath);
    if (st != SMELT_OK && g->st == SMELT_OK)
        g->st = st;
    return st;
}

/* Builds the backward Loop after the forward one has kept its states:
 * N from the iteration stack, the initial carried gradients (dy of the
 * final values, zeros where none reaches them) and accumulators. */
static smelt_status backward_loop(sm_grad_ctx *g, loop_bw *w, sm_value *iters)
{
    const sm_node *n = g->n;
    sm_value *shape = sm_g_op1(g, SM_OP_Shape, iters);
    sm_value *count =
        sm_g_op2(g, SM_OP_Gather, shape, sm_g_scalar(g, SMELT_DTYPE_I64, 0));
    w->last = sm_g_op2(g, SM_OP_Sub, count, sm_g_scalar(g, SMELT_DTYPE_I64, 1));
    int n_carry = w->n_need + w->outer.n;
    sm_value **in = sm_calloc((size_t)n_carry + 2, sizeof *in);
    sm_value **first = sm_calloc((size_t)w->n_need + 1, sizeof *first);
    if (!in || !first) {
        sm_free(in);
        sm_free(first);
        return sm_err_nomem(g->ctx);
    }
    in[0] = count;
    in[1] = NULL; /* no condition: exactly N steps */
    for (int k = 0, i = 0; k < w->nc; k++)
        if (w->need[k]) {
            first[i] = n->in[2 + k];
            in[2 + i++] = g->dy[k] ? g->dy[k] : sm_g_zeros_like(g, n->out[k]);
        }
    for (int k = 0; k < w->outer.n; k++)
        in[2 + w->n_need + k] = sm_g_zeros_like(g, w->outer.v[k]);
    smelt_status st = g->st;
    char **names = NULL;
    if (st == SMELT_OK)
        st = sm_grad_names(g, w->n_need, first, &w->outer, &names);
    if (st == SMELT_OK) {
        w->node =
            sm_rw_node_new(g->rw, g->b, NULL, SM_OP_Loop, NULL, n_carry + 2, in,
                           n_carry, (const char *const *)names);
        w->body = w->node ? sm_rw_block_new(g->rw, w->node, "body") : NULL;
        st = w->body ? SMELT_OK : sm_err_nomem(g->ctx);
    }
    sm_grad_names_free(names, n_carry);
    sm_free(in);
    sm_free(first);
    if (st == SMELT_OK)
        st = backward_body(g, w);
    if (st == SMELT_OK)
        st = sm_rw_infer_node(g->rw, w->node);
    return st;
}

smelt_status sm_grad_loop(sm_grad_ctx *g)
{
    /* The rule changes the forward node (it keeps its states), which the
     * engine hands over as const. */
    sm_node *n = (sm_node *)g->n;
    const sm_block *fb = n->blocks[0];
    loop_bw w = {.nc = n->n_in - 2};
    w.ns = n->n_out - w.nc;
    if (w.ns < 0 || fb->n_params != w.nc + 2 || fb->n_ret != 1 + n->n_out)
        return sm_g_fail(g, SMELT_ERR_VERIFY,
                         "the body's signature does not match the Loop");
    w.need = sm_calloc((size_t)w.nc + 1, 1);
    w.states = sm_calloc((size_t)w.nc + 1, sizeof *w.states);
    smelt_status st =
        w.need && w.states ? carried_needs(g, w.need) : sm_err_nomem(g->ctx);
    if (st == SMELT_OK)
        st = sm_grad_outer_reads(g, fb, &w.outer);
    for (int k = 0; k < w.nc; k++)
        w.n_need += w.need[k];
    sm_value *iters = NULL;
    if (st == SMELT_OK && (w.n_need || w.outer.n))
        st = keep_states(g, n, w.states, &iters);
    if (st == SMELT_OK && (w.n_need || w.outer.n))
        st = backward_loop(g, &w, iters);
    for (int k = 0, i = 0; st == SMELT_OK && w.node && k < w.nc; k++)
        if (w.need[k])
            sm_g_set(g, 2 + k, w.node->out[i++]);
    for (int k = 0; st == SMELT_OK && w.node && k < w.outer.n; k++)
        st = sm_grad_accumulate(g->eng, g, w.outer.v[k],
                                w.node->out[w.n_need + k]);
    sm_free(w.need);
    sm_free(w.states);
    sm_vlist_free(&w.outer);
    return st != SMELT_OK ? st : g->st;
}
