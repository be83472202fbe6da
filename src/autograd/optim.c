/*
 * optim.c - the optimizer step as graph nodes (docs/AUTOGRAD.md,
 * "Training"): smelt_graph_add_optimizer appends to a joint graph, for
 * each (parameter input, gradient output) pair of its signature, the
 * update of torch.optim's SGD, Adam or AdamW (1.13 formulas), after an
 * optional clipping of all gradients by their global norm.
 *
 * The update reads the gradient value the joint graph returns, so a
 * later stage (an all-reduce for data parallelism) can be placed between
 * the two; every optimizer state is its own named input and output per
 * parameter, so a sharded optimizer can partition them. The roles are
 * recorded in the graph's optimizer signature (sm_optim_sig, ir.h).
 *
 * Scalars that torch computes in double (bias corrections, step size,
 * AdamW's decay factor, the clipping coefficient) are computed in f64
 * here too and cast to the parameter's dtype where they meet a tensor.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "autograd/grad.h"
#include "core/alloc.h"
#include "core/sized.h"
#include "ir/infer.h"

#define OPTIM_OPTIONS_V1 SM_FIELD_END(smelt_optim_options, clip_norm)

static void optim_defaults(smelt_optim_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->kind = SMELT_OPTIM_SGD;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
}

smelt_status smelt_optim_options_init(smelt_optim_options *o,
                                      size_t struct_size)
{
    smelt_optim_options d;
    optim_defaults(&d);
    return sm_sized_init(o, struct_size, &d, sizeof d, OPTIM_OPTIONS_V1);
}

/* The hyper-parameters torch refuses, refused the same way. */
static smelt_status check_options(smelt_ctx_t *ctx,
                                  const smelt_optim_options *o)
{
    const char *bad = NULL;
    if (o->kind < SMELT_OPTIM_SGD || o->kind > SMELT_OPTIM_ADAMW)
        bad = "kind is not SGD, Adam or AdamW";
    else if (!(o->momentum >= 0 && o->momentum < INFINITY))
        bad = "momentum must be a finite number >= 0";
    else if (o->nesterov && !(o->kind == SMELT_OPTIM_SGD && o->momentum > 0))
        bad = "nesterov needs SGD with a momentum > 0";
    else if (!(o->weight_decay >= 0 && o->weight_decay < INFINITY))
        bad = "weight_decay must be a finite number >= 0";
    else if (!(o->beta1 >= 0 && o->beta1 < 1) ||
             !(o->beta2 >= 0 && o->beta2 < 1))
        bad = "beta1 and beta2 must be in [0, 1)";
    else if (!(o->eps >= 0 && o->eps < INFINITY))
        bad = "eps must be a finite number >= 0";
    else if (!(o->clip_norm >= 0 && o->clip_norm < INFINITY))
        bad = "clip_norm must be a finite number >= 0 (0: no clipping)";
    if (bad)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "optimizer: %s", bad);
    return SMELT_OK;
}

typedef struct job {
    smelt_ctx_t *ctx;
    smelt_optim_options o;
    sm_graph *g;
    sm_rw *rw;
    sm_grad_ctx b; /* the builder (grad.h), over the top block */
    sm_optim_sig *s;
    sm_value *lr, *step;          /* f64 scalar inputs */
    sm_value *bc2_sqrt, *step_sz; /* Adam(W): f64 scalars of this step */
} job;

/* A new f64 scalar input, its index stored in *index. */
static sm_value *scalar_input(job *j, const char *name, int *index)
{
    sm_type t = {.dtype = SMELT_DTYPE_F64, .ndim = 0};
    sm_value *v = sm_rw_add_param(j->rw, j->g->top, name, &t);
    if (!v && j->b.st == SMELT_OK)
        j->b.st = sm_err_nomem(j->ctx);
    *index = j->g->top->n_params - 1;
    return v;
}

/* An Identity of v named name (made unique), appended as an output. */
static int add_output(job *j, sm_value *v, const char *name)
{
    if (!v || j->b.st != SMELT_OK)
        return -1;
    sm_node *n = sm_rw_node_new(j->rw, j->g->top, NULL, SM_OP_Identity, NULL, 1,
                                &v, 1, &name);
    smelt_status st = n ? sm_rw_infer_node(j->rw, n) : sm_err_nomem(j->ctx);
    if (st == SMELT_OK)
        st = sm_rw_add_ret(j->rw, j->g->top, n->out[0]);
    if (st != SMELT_OK) {
        j->b.st = st;
        return -1;
    }
    return j->g->top->n_ret - 1;
}

/* The input a gradient's value became (params_as_inputs), or the graph
 * input of that name; -1 with the error set when there is none. */
static int param_input(job *j, int i)
{
    const sm_grad_sig *gs = j->g->grad;
    if (gs->wrt_in[i] >= 0)
        return gs->wrt_in[i];
    const sm_block *top = j->g->top;
    for (int k = 0; k < top->n_params; k++)
        if (strcmp(top->params[k]->name, gs->wrt[i]) == 0)
            return k;
    j->b.st = sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                     "optimizer: the gradient of '%s' is not of a graph input; "
                     "build the joint graph with params_as_inputs",
                     gs->wrt[i]);
    return -1;
}

/* Scalar constants of dtype dt and f64 arithmetic on graph scalars. */
static sm_value *num(job *j, smelt_dtype dt, double v)
{
    return sm_g_scalar(&j->b, dt, v);
}

static sm_value *op2(job *j, sm_op op, sm_value *a, sm_value *b)
{
    return sm_g_op2(&j->b, op, a, b);
}

/* Sums every gradient's squares (in f64), takes the root (the global L2
 * norm, output "grad_norm") and scales each gradient by
 * min(clip / (norm + 1e-6), 1), as torch.nn.utils.clip_grad_norm_. */
static void clip(job *j, sm_value **grad, int n)
{
    sm_value *sum = NULL;
    for (int i = 0; i < n; i++) {
        sm_value *sq = sm_g_cast(&j->b, op2(j, SM_OP_Mul, grad[i], grad[i]),
                                 SMELT_DTYPE_F64);
        sm_node *r = sm_g_node(&j->b, SM_OP_ReduceSum, 1, &sq, 1);
        if (r && !sm_node_set_int(r, "keepdims", 0) && j->b.st == SMELT_OK)
            j->b.st = sm_err_nomem(j->ctx);
        sm_value *part = sm_g_done(&j->b, r);
        sum = sum ? op2(j, SM_OP_Add, sum, part) : part;
    }
    sm_value *norm = sm_g_op1(&j->b, SM_OP_Sqrt, sum);
    j->s->norm_out = add_output(j, norm, "grad_norm");
    sm_value *coef =
        op2(j, SM_OP_Min,
            op2(j, SM_OP_Div, num(j, SMELT_DTYPE_F64, j->o.clip_norm),
                op2(j, SM_OP_Add, norm, num(j, SMELT_DTYPE_F64, 1e-6))),
            num(j, SMELT_DTYPE_F64, 1.0));
    for (int i = 0; i < n; i++)
        grad[i] = op2(j, SM_OP_Mul, grad[i],
                      sm_g_cast(&j->b, coef, grad[i]->type.dtype));
}

/* SGD: d = g + wd*p; buf = momentum*buf + d; d = nesterov ? d +
 * momentum*buf : buf; p - lr*d. (Dampening 0, so a zero buffer before
 * the first step gives torch's buf = d exactly.) */
static sm_value *sgd(job *j, sm_value *p, sm_value *d, sm_value *const *st,
                     sm_value **nst)
{
    smelt_dtype dt = p->type.dtype;
    if (j->o.weight_decay != 0)
        d = op2(j, SM_OP_Add, d,
                op2(j, SM_OP_Mul, p, num(j, dt, j->o.weight_decay)));
    if (j->o.momentum != 0) {
        sm_value *buf =
            op2(j, SM_OP_Add,
                op2(j, SM_OP_Mul, st[0], num(j, dt, j->o.momentum)), d);
        nst[0] = buf;
        d = j->o.nesterov
                ? op2(j, SM_OP_Add, d,
                      op2(j, SM_OP_Mul, buf, num(j, dt, j->o.momentum)))
                : buf;
    }
    return op2(j, SM_OP_Sub, p,
               op2(j, SM_OP_Mul, d, sm_g_cast(&j->b, j->lr, dt)));
}

/* Adam and AdamW: m and v the running moments; then
 * p - step_size * m / (sqrt(v) / sqrt(bc2) + eps). Adam adds wd*p to the
 * gradient; AdamW scales p by (1 - lr*wd) first and moves m by lerp. */
static sm_value *adam(job *j, sm_value *p, sm_value *d, sm_value *const *st,
                      sm_value **nst)
{
    smelt_dtype dt = p->type.dtype;
    double b1 = j->o.beta1, b2 = j->o.beta2, wd = j->o.weight_decay;
    int decoupled = j->o.kind == SMELT_OPTIM_ADAMW;
    if (wd != 0 && !decoupled)
        d = op2(j, SM_OP_Add, d, op2(j, SM_OP_Mul, p, num(j, dt, wd)));
    if (wd != 0 && decoupled) {
        sm_value *f =
            op2(j, SM_OP_Sub, num(j, SMELT_DTYPE_F64, 1.0),
                op2(j, SM_OP_Mul, j->lr, num(j, SMELT_DTYPE_F64, wd)));
        p = op2(j, SM_OP_Mul, p, sm_g_cast(&j->b, f, dt));
    }
    sm_value *m;
    if (decoupled) /* exp_avg.lerp_(grad, 1 - beta1) */
        m = op2(
            j, SM_OP_Add, st[0],
            op2(j, SM_OP_Mul, op2(j, SM_OP_Sub, d, st[0]), num(j, dt, 1 - b1)));
    else
        m = op2(j, SM_OP_Add, op2(j, SM_OP_Mul, st[0], num(j, dt, b1)),
                op2(j, SM_OP_Mul, d, num(j, dt, 1 - b1)));
    sm_value *v =
        op2(j, SM_OP_Add, op2(j, SM_OP_Mul, st[1], num(j, dt, b2)),
            op2(j, SM_OP_Mul, op2(j, SM_OP_Mul, d, d), num(j, dt, 1 - b2)));
    nst[0] = m;
    nst[1] = v;
    sm_value *denom = op2(j, SM_OP_Add,
                          op2(j, SM_OP_Div, sm_g_op1(&j->b, SM_OP_Sqrt, v),
                              sm_g_cast(&j->b, j->bc2_sqrt, dt)),
                          num(j, dt, j->o.eps));
    return op2(j, SM_OP_Sub, p,
               op2(j, SM_OP_Mul, sm_g_cast(&j->b, j->step_sz, dt),
                   op2(j, SM_OP_Div, m, denom)));
}

/* Adam's scalars of this step, from the 1-based step input:
 * step_size = lr / (1 - beta1^step), sqrt(1 - beta2^step). */
static void adam_scalars(job *j)
{
    sm_value *one = num(j, SMELT_DTYPE_F64, 1.0);
    sm_value *bc1 =
        op2(j, SM_OP_Sub, one,
            op2(j, SM_OP_Pow, num(j, SMELT_DTYPE_F64, j->o.beta1), j->step));
    sm_value *bc2 =
        op2(j, SM_OP_Sub, one,
            op2(j, SM_OP_Pow, num(j, SMELT_DTYPE_F64, j->o.beta2), j->step));
    j->step_sz = op2(j, SM_OP_Div, j->lr, bc1);
    j->bc2_sqrt = sm_g_op1(&j->b, SM_OP_Sqrt, bc2);
}

/* The signature's arrays in the graph's arena. */
static smelt_status new_sig(job *j, int n, int n_state)
{
    sm_arena *a = &j->g->arena;
    size_t n1 = (size_t)(n > 0 ? n : 1);
    size_t ns = (size_t)(n * n_state > 0 ? n * n_state : 1);
    sm_optim_sig *s = sm_arena_alloc(a, sizeof *s);
    if (!s)
        return sm_err_nomem(j->ctx);
    memset(s, 0, sizeof *s);
    s->kind = j->o.kind;
    s->n = n;
    s->n_state = n_state;
    s->norm_out = -1;
    s->param_in = sm_arena_alloc(a, n1 * sizeof *s->param_in);
    s->param_out = sm_arena_alloc(a, n1 * sizeof *s->param_out);
    s->state_in = sm_arena_alloc(a, ns * sizeof *s->state_in);
    s->state_out = sm_arena_alloc(a, ns * sizeof *s->state_out);
    s->state_name = sm_arena_alloc(a, 2 * sizeof *s->state_name);
    if (!s->param_in || !s->param_out || !s->state_in || !s->state_out ||
        !s->state_name)
        return sm_err_nomem(j->ctx);
    if (j->o.kind == SMELT_OPTIM_SGD) {
        s->state_name[0] = "momentum";
    } else {
        s->state_name[0] = "exp_avg";
        s->state_name[1] = "exp_avg_sq";
    }
    j->s = s;
    return SMELT_OK;
}

/* Everything after the copy: the rewriter is open. */
static smelt_status build(job *j)
{
    const sm_grad_sig *gs = j->g->grad;
    sm_block *top = j->g->top;
    int n = gs->n;
    int n_state = j->o.kind == SMELT_OPTIM_SGD ? (j->o.momentum != 0) : 2;
    SM_TRY(new_sig(j, n, n_state));
    sm_optim_sig *s = j->s;
    sm_value **p = sm_calloc((size_t)n, sizeof *p);
    sm_value **d = sm_calloc((size_t)n, sizeof *d);
    sm_value **st = sm_calloc((size_t)(n * n_state + 1), sizeof *st);
    if (!p || !d || !st)
        j->b.st = sm_err_nomem(j->ctx);
    for (int i = 0; j->b.st == SMELT_OK && i < n; i++) {
        s->param_in[i] = param_input(j, i);
        if (s->param_in[i] < 0)
            break;
        p[i] = top->params[s->param_in[i]];
        d[i] = top->ret[gs->grad_out[i]];
    }
    j->lr = scalar_input(j, "lr", &s->lr_in);
    j->step = scalar_input(j, "step", &s->step_in);
    for (int i = 0; j->b.st == SMELT_OK && i < n; i++)
        for (int k = 0; k < n_state; k++) {
            char name[512];
            snprintf(name, sizeof name, "%s.%s", p[i]->name, s->state_name[k]);
            st[i * n_state + k] =
                sm_rw_add_param(j->rw, top, name, &p[i]->type);
            if (!st[i * n_state + k]) {
                j->b.st = sm_err_nomem(j->ctx);
                break;
            }
            s->state_in[i * n_state + k] = top->n_params - 1;
        }
    if (j->b.st == SMELT_OK && j->o.clip_norm > 0)
        clip(j, d, n);
    if (j->o.kind != SMELT_OPTIM_SGD)
        adam_scalars(j);
    for (int i = 0; j->b.st == SMELT_OK && i < n; i++) {
        sm_value *nst[2] = {NULL, NULL};
        sm_value *np = j->o.kind == SMELT_OPTIM_SGD
                           ? sgd(j, p[i], d[i], st + i * n_state, nst)
                           : adam(j, p[i], d[i], st + i * n_state, nst);
        char name[512];
        snprintf(name, sizeof name, "%s.new", p[i]->name);
        s->param_out[i] = add_output(j, np, name);
        for (int k = 0; k < n_state; k++) {
            snprintf(name, sizeof name, "%s.%s.new", p[i]->name,
                     s->state_name[k]);
            s->state_out[i * n_state + k] = add_output(j, nst[k], name);
        }
    }
    sm_free(p);
    sm_free(d);
    sm_free(st);
    if (j->b.st == SMELT_OK)
        j->g->optim = s;
    return j->b.st;
}

smelt_status smelt_graph_add_optimizer(smelt_ctx_t *ctx,
                                       const smelt_graph_t *joint,
                                       const smelt_optim_options *opt,
                                       smelt_graph_t **out)
{
    if (!joint || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_add_optimizer: NULL");
    *out = NULL;
    job j = {.ctx = ctx};
    optim_defaults(&j.o);
    if (opt)
        SM_TRY(sm_sized_in(ctx, "smelt_optim_options", &j.o, sizeof j.o,
                           OPTIM_OPTIONS_V1, opt));
    SM_TRY(check_options(ctx, &j.o));
    if (!joint->grad)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "optimizer: the graph is not a joint graph "
                      "(smelt_graph_grad makes one)");
    if (joint->optim)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "optimizer: the graph already has an optimizer step");
    SM_TRY(sm_graph_clone(ctx, joint, &j.g));
    smelt_status st = sm_graph_infer(ctx, j.g);
    if (st == SMELT_OK)
        st = sm_rw_new(ctx, j.g, &j.rw);
    if (st == SMELT_OK) {
        j.b = (sm_grad_ctx){
            .ctx = ctx, .rw = j.rw, .b = j.g->top, .st = SMELT_OK};
        st = build(&j);
        sm_rw_free(j.rw);
    }
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, j.g);
    if (st != SMELT_OK) {
        sm_graph_free(j.g);
        return st;
    }
    *out = j.g;
    return SMELT_OK;
}

/* ---- the signature ---------------------------------------------------- */

static const sm_optim_sig *osig(const smelt_graph_t *g)
{
    return g ? g->optim : NULL;
}

int smelt_graph_optim_lr_input(const smelt_graph_t *g)
{
    return osig(g) ? osig(g)->lr_in : -1;
}

int smelt_graph_optim_step_input(const smelt_graph_t *g)
{
    return osig(g) ? osig(g)->step_in : -1;
}

int smelt_graph_optim_norm_output(const smelt_graph_t *g)
{
    return osig(g) ? osig(g)->norm_out : -1;
}

int smelt_graph_optim_num_params(const smelt_graph_t *g)
{
    return osig(g) ? osig(g)->n : 0;
}

int smelt_graph_optim_num_states(const smelt_graph_t *g)
{
    return osig(g) ? osig(g)->n_state : 0;
}

const char *smelt_graph_optim_state_name(const smelt_graph_t *g, int k)
{
    const sm_optim_sig *s = osig(g);
    return s && k >= 0 && k < s->n_state ? s->state_name[k] : NULL;
}

int smelt_graph_optim_param_input(const smelt_graph_t *g, int i)
{
    const sm_optim_sig *s = osig(g);
    return s && i >= 0 && i < s->n ? s->param_in[i] : -1;
}

int smelt_graph_optim_param_output(const smelt_graph_t *g, int i)
{
    const sm_optim_sig *s = osig(g);
    return s && i >= 0 && i < s->n ? s->param_out[i] : -1;
}

int smelt_graph_optim_state_input(const smelt_graph_t *g, int i, int k)
{
    const sm_optim_sig *s = osig(g);
    return s && i >= 0 && i < s->n && k >= 0 && k < s->n_state
               ? s->state_in[i * s->n_state + k]
               : -1;
}

int smelt_graph_optim_state_output(const smelt_graph_t *g, int i, int k)
{
    const sm_optim_sig *s = osig(g);
    return s && i >= 0 && i < s->n && k >= 0 && k < s->n_state
               ? s->state_out[i * s->n_state + k]
               : -1;
}
