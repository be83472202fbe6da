/*
 * api.c - smelt_graph_grad: the joint forward+backward graph of a loss
 * (docs/AUTOGRAD.md), and the accessors of its signature.
 *
 * The steps: copy the graph and infer its types; find the loss and the
 * values to differentiate (lifting initializers into inputs when asked);
 * reduce the loss to a scalar; mark what needs a gradient; walk the top
 * block backwards from a seed of 1 (engine.c); return the loss and the
 * gradients, each through an Identity that carries its output name.
 */
#include <stdio.h>
#include <string.h>

#include "autograd/engine.h"
#include "autograd/fakequant.h"
#include "core/alloc.h"
#include "core/sized.h"
#include "ir/infer.h"

#define GRAD_OPTIONS_V1 SM_FIELD_END(smelt_grad_options, params_as_inputs)

static void grad_options_defaults(smelt_grad_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->loss_reduce = SMELT_LOSS_SUM;
}

smelt_status smelt_grad_options_init(smelt_grad_options *o, size_t struct_size)
{
    smelt_grad_options d;
    grad_options_defaults(&d);
    return sm_sized_init(o, struct_size, &d, sizeof d, GRAD_OPTIONS_V1);
}

/* The top-level constant or graph input named name; NULL otherwise. */
static sm_value *find_leaf(const sm_block *top, const char *name)
{
    for (int i = 0; i < top->n_params; i++)
        if (strcmp(top->params[i]->name, name) == 0)
            return top->params[i];
    for (int i = 0; i < top->n_consts; i++)
        if (strcmp(top->consts[i]->name, name) == 0)
            return top->consts[i];
    return NULL;
}

typedef struct job {
    smelt_ctx_t *ctx;
    smelt_grad_options o;
    sm_graph *g;
    sm_rw *rw;
    sm_grad_engine e;
    int n_wrt;
    sm_value **wrt;
    int *wrt_in;
} job;

/* Resolves the values to differentiate: the named ones, or every
 * floating-point initializer. */
static smelt_status find_wrt(job *j)
{
    sm_block *top = j->g->top;
    int n = j->o.wrt ? j->o.n_wrt : top->n_consts;
    if (j->o.wrt && n <= 0)
        return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_grad: n_wrt is %d with a wrt list", n);
    j->wrt = sm_calloc((size_t)(n > 0 ? n : 1), sizeof *j->wrt);
    j->wrt_in = sm_calloc((size_t)(n > 0 ? n : 1), sizeof *j->wrt_in);
    if (!j->wrt || !j->wrt_in)
        return sm_err_nomem(j->ctx);
    for (int i = 0; i < n; i++) {
        sm_value *v;
        if (j->o.wrt) {
            const char *name = j->o.wrt[i];
            if (!name)
                return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                              "smelt_graph_grad: wrt[%d] is NULL", i);
            v = find_leaf(top, name);
            if (!v)
                return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                              "cannot differentiate with respect to '%s': "
                              "no graph input or initializer has that name",
                              name);
            if (!sm_grad_dtype_ok(v->type.dtype))
                return sm_err(j->ctx, SMELT_ERR_TYPE,
                              "cannot differentiate with respect to '%s': "
                              "it is %s, and only floating-point values have "
                              "gradients",
                              name, smelt_dtype_name(v->type.dtype));
            for (int k = 0; k < j->n_wrt; k++)
                if (j->wrt[k] == v)
                    return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                                  "'%s' is named twice in wrt", name);
        } else {
            v = top->consts[i];
            if (!sm_grad_dtype_ok(v->type.dtype))
                continue;
        }
        j->wrt_in[j->n_wrt] = -1;
        j->wrt[j->n_wrt++] = v;
    }
    if (j->n_wrt == 0)
        return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                      "the model has no floating-point initializers to "
                      "differentiate with respect to");
    return SMELT_OK;
}

/* Turns the initializers among the wrt values into graph inputs of the
 * same names (appended after the others). */
static smelt_status lift(job *j)
{
    sm_block *top = j->g->top;
    for (int i = 0; i < j->n_wrt; i++) {
        sm_value *c = j->wrt[i];
        if (c->def || !c->data)
            continue; /* already an input */
        sm_value *p = sm_rw_lift_const(j->rw, c);
        if (!p)
            return sm_err_nomem(j->ctx);
        j->wrt[i] = p;
        j->wrt_in[i] = top->n_params - 1;
    }
    return SMELT_OK;
}

/* The loss value: the named one or the first output. */
static smelt_status find_loss(job *j, sm_value **out)
{
    sm_block *top = j->g->top;
    sm_value *v = NULL;
    if (j->o.loss) {
        v = sm_graph_find_value(j->g, j->o.loss);
        if (!v || v->block != top)
            return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                          "no value named '%s' to use as the loss%s", j->o.loss,
                          v ? " at the top level" : "");
    } else {
        if (top->n_ret == 0)
            return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                          "the graph has no outputs to use as the loss");
        v = top->ret[0];
    }
    if (!sm_grad_dtype_ok(v->type.dtype))
        return sm_err(j->ctx, SMELT_ERR_TYPE,
                      "the loss '%s' is %s: a loss must be floating-point",
                      v->name, smelt_dtype_name(v->type.dtype));
    if (v->type.ndim < 0)
        return sm_err(j->ctx, SMELT_ERR_SHAPE,
                      "the rank of the loss '%s' is unknown", v->name);
    *out = v;
    return SMELT_OK;
}

/* A rule context for nodes the driver itself adds (named after node n). */
static sm_grad_ctx driver_ctx(job *j, const sm_node *n)
{
    return (sm_grad_ctx){.ctx = j->ctx,
                         .rw = j->rw,
                         .b = j->g->top,
                         .n = n,
                         .st = SMELT_OK,
                         .eng = &j->e};
}

/* The loss reduced to a scalar (its own node, differentiated with the
 * rest), or the loss itself when it has one element and rank 0. */
static sm_value *scalar_loss(job *j, sm_grad_ctx *g, sm_value *loss)
{
    if (loss->type.ndim == 0)
        return loss;
    int64_t axes[SMELT_MAX_DIMS];
    for (int i = 0; i < loss->type.ndim; i++)
        axes[i] = i;
    sm_op op = j->o.loss_reduce == SMELT_LOSS_MEAN ? SM_OP_ReduceMean
                                                   : SM_OP_ReduceSum;
    sm_value *in[2] = {loss, sm_g_ints(g, axes, loss->type.ndim)};
    sm_node *n = sm_g_node(g, op, 2, in, 1);
    if (n && !sm_node_set_int(n, "keepdims", 0) && g->st == SMELT_OK)
        g->st = sm_err_nomem(j->ctx);
    return sm_g_done(g, n);
}

/* The first node on a path from a wrt value that stops the gradient
 * (no rule, or not differentiable), for the error message. */
static const sm_node *blocking_node(job *j)
{
    const sm_block *top = j->g->top;
    for (int i = 0; i < top->n_nodes; i++) {
        const sm_node *n = top->nodes[i];
        sm_grad_fn r = sm_grad_rule(n->op);
        if (r != sm_grad_none && r != sm_grad_zero)
            continue;
        for (int k = 0; k < n->n_in; k++)
            if (sm_grad_requires(&j->e, n->in[k]))
                return n;
    }
    return NULL;
}

/* An Identity of v named name (made unique), appended as an output. */
static smelt_status add_output(job *j, sm_grad_ctx *g, sm_value *v,
                               const char *name, int *index)
{
    if (g->st != SMELT_OK)
        return g->st;
    sm_node *n = sm_rw_node_new(j->rw, j->g->top, NULL, SM_OP_Identity, NULL, 1,
                                &v, 1, &name);
    if (!n)
        return sm_err_nomem(j->ctx);
    SM_TRY(sm_rw_infer_node(j->rw, n));
    *index = j->g->top->n_ret;
    return sm_rw_add_ret(j->rw, j->g->top, n->out[0]);
}

/* Records the roles of the outputs in the graph's arena. */
static smelt_status set_sig(job *j, int loss_out, const int *grad_out)
{
    sm_arena *a = &j->g->arena;
    sm_grad_sig *s = sm_arena_alloc(a, sizeof *s);
    if (!s)
        return sm_err_nomem(j->ctx);
    s->loss_out = loss_out;
    s->n = j->n_wrt;
    s->wrt = sm_arena_alloc(a, (size_t)j->n_wrt * sizeof *s->wrt);
    s->grad_out = sm_arena_alloc(a, (size_t)j->n_wrt * sizeof *s->grad_out);
    s->wrt_in = sm_arena_alloc(a, (size_t)j->n_wrt * sizeof *s->wrt_in);
    if (!s->wrt || !s->grad_out || !s->wrt_in)
        return sm_err_nomem(j->ctx);
    for (int i = 0; i < j->n_wrt; i++) {
        s->wrt[i] = j->wrt[i]->name;
        s->grad_out[i] = grad_out[i];
        s->wrt_in[i] = j->wrt_in[i];
    }
    j->g->grad = s;
    return SMELT_OK;
}

/* Everything after the copy: the rewriter is open. */
static smelt_status build(job *j)
{
    SM_TRY(find_wrt(j));
    if (j->o.params_as_inputs)
        SM_TRY(lift(j));
    sm_value *loss = NULL;
    SM_TRY(find_loss(j, &loss));
    sm_node *where = loss->def;
    sm_grad_ctx g = driver_ctx(j, where);
    if (!where && j->g->top->n_nodes)
        g.n = j->g->top->nodes[0];
    sm_value *scalar = scalar_loss(j, &g, loss);
    if (!scalar)
        return g.st;
    /* The forward nodes (the loss reduction included), before any
     * backward node joins the block. */
    sm_block *top = j->g->top;
    int n = 0;
    for (sm_node *nd = sm_rw_first(j->rw, top); nd; nd = sm_rw_next(j->rw, nd))
        n++;
    sm_node **fwd = sm_calloc((size_t)(n > 0 ? n : 1), sizeof *fwd);
    if (!fwd)
        return sm_err_nomem(j->ctx);
    n = 0;
    for (sm_node *nd = sm_rw_first(j->rw, top); nd; nd = sm_rw_next(j->rw, nd))
        fwd[n++] = nd;
    smelt_status st = sm_grad_reserve(&j->e);
    for (int i = 0; st == SMELT_OK && i < j->n_wrt; i++)
        sm_grad_set_requires(&j->e, j->wrt[i], 1);
    if (st == SMELT_OK)
        sm_grad_mark(&j->e, fwd, n);
    if (st == SMELT_OK && !sm_grad_requires(&j->e, scalar)) {
        const sm_node *stop = blocking_node(j);
        char where_s[256] = "";
        if (stop)
            sm_node_where(stop, where_s, sizeof where_s);
        st = sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                    "the loss '%s' does not depend on any value being "
                    "differentiated through differentiable ops%s%s",
                    loss->name, stop ? "; the path stops at " : "", where_s);
    }
    if (st == SMELT_OK) {
        sm_value *seed = sm_g_scalar_like(&g, scalar, 1.0);
        st = seed ? SMELT_OK : g.st;
        if (st == SMELT_OK)
            sm_grad_swap(&j->e, scalar, seed);
    }
    if (st == SMELT_OK)
        st = sm_grad_backward(&j->e, top, fwd, n);
    sm_free(fwd);
    SM_TRY(st);
    int loss_out, *grad_out = sm_calloc((size_t)j->n_wrt, sizeof *grad_out);
    if (!grad_out)
        return sm_err_nomem(j->ctx);
    st = add_output(j, &g, scalar, "loss", &loss_out);
    for (int i = 0; st == SMELT_OK && i < j->n_wrt; i++) {
        sm_value *w = j->wrt[i], *d = sm_grad_get(&j->e, w);
        if (!d)
            d = sm_g_zeros_like(&g, w);
        char name[512];
        snprintf(name, sizeof name, "%s.grad", w->name);
        st = d ? add_output(j, &g, d, name, &grad_out[i]) : g.st;
    }
    if (st == SMELT_OK)
        st = set_sig(j, loss_out, grad_out);
    sm_free(grad_out);
    return st;
}

smelt_status smelt_graph_grad(smelt_ctx_t *ctx, const smelt_graph_t *g,
                              const smelt_grad_options *opt,
                              smelt_graph_t **out)
{
    if (!g || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_graph_grad: NULL");
    *out = NULL;
    job j = {.ctx = ctx};
    grad_options_defaults(&j.o);
    if (opt)
        SM_TRY(sm_sized_in(ctx, "smelt_grad_options", &j.o, sizeof j.o,
                           GRAD_OPTIONS_V1, opt));
    if (j.o.loss_reduce != SMELT_LOSS_SUM && j.o.loss_reduce != SMELT_LOSS_MEAN)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_grad: loss_reduce %d is neither "
                      "SMELT_LOSS_SUM nor SMELT_LOSS_MEAN",
                      (int)j.o.loss_reduce);
    SM_TRY(sm_graph_clone(ctx, g, &j.g));
    smelt_status st = sm_graph_infer(ctx, j.g);
    if (st == SMELT_OK)
        st = sm_rw_new(ctx, j.g, &j.rw);
    if (st == SMELT_OK) {
        /* QAT: fake-quantize pairs train through the straight-through
         * rule (fakequant.c) */
        st = sm_grad_fold_fakequant(ctx, j.g, j.rw);
        j.e = (sm_grad_engine){.ctx = ctx, .g = j.g, .rw = j.rw};
        if (st == SMELT_OK)
            st = build(&j);
        sm_rw_free(j.rw);
    }
    sm_free(j.e.req);
    sm_free(j.e.grad);
    sm_free(j.wrt);
    sm_free(j.wrt_in);
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, j.g);
    if (st != SMELT_OK) {
        sm_graph_free(j.g);
        return st;
    }
    *out = j.g;
    return SMELT_OK;
}

int smelt_graph_num_grads(const smelt_graph_t *g)
{
    return g && g->grad ? g->grad->n : 0;
}

int smelt_graph_loss_output(const smelt_graph_t *g)
{
    return g && g->grad ? g->grad->loss_out : -1;
}

const char *smelt_graph_grad_wrt(const smelt_graph_t *g, int i)
{
    return g && g->grad && i >= 0 && i < g->grad->n ? g->grad->wrt[i] : NULL;
}

int smelt_graph_grad_output(const smelt_graph_t *g, int i)
{
    return g && g->grad && i >= 0 && i < g->grad->n ? g->grad->grad_out[i] : -1;
}

int smelt_graph_grad_input(const smelt_graph_t *g, int i)
{
    return g && g->grad && i >= 0 && i < g->grad->n ? g->grad->wrt_in[i] : -1;
}
