/*
 * loss.c - losses as graph builders (docs/AUTOGRAD.md, "Training"): a
 * model graph gets a new input "target" and a scalar loss over its first
 * output, built from ops that have gradient rules, so smelt_graph_grad
 * differentiates it with the rest of the model.
 *
 *   mse              mean((y - t)^2)
 *   cross_entropy    -mean_n sum_c log_softmax(y)[n,c] * onehot(t)[n,c]
 *   bce_with_logits  mean(relu(y) - y*t + log(1 + exp(y - 2 relu(y))))
 *
 * The last is the numerically stable form: y - 2 relu(y) is -|y|, so
 * exp never overflows.
 */
#include <stdio.h>
#include <string.h>

#include "autograd/grad.h"
#include "core/alloc.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ir/infer.h"

typedef enum loss_kind { LOSS_MSE, LOSS_CE, LOSS_BCE, LOSS_BAD } loss_kind;

static loss_kind parse_kind(const char *kind)
{
    if (!kind)
        return LOSS_BAD;
    if (strcmp(kind, "mse") == 0)
        return LOSS_MSE;
    if (strcmp(kind, "cross_entropy") == 0)
        return LOSS_CE;
    if (strcmp(kind, "bce_with_logits") == 0)
        return LOSS_BCE;
    return LOSS_BAD;
}

static smelt_status bad_kind(smelt_ctx_t *ctx, const char *kind)
{
    return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                  "unknown loss '%s' (expected mse, cross_entropy or "
                  "bce_with_logits)",
                  kind ? kind : "(null)");
}

/* The mean of x over every axis, as a scalar (x itself at rank 0). */
static sm_value *mean_all(sm_grad_ctx *g, sm_value *x)
{
    if (!x || x->type.ndim == 0)
        return x;
    int64_t axes[SMELT_MAX_DIMS];
    for (int i = 0; i < x->type.ndim; i++)
        axes[i] = i;
    sm_value *in[2] = {x, sm_g_ints(g, axes, x->type.ndim)};
    sm_node *n = sm_g_node(g, SM_OP_ReduceMean, 2, in, 1);
    if (n && !sm_node_set_int(n, "keepdims", 0) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return sm_g_done(g, n);
}

/* A Constant node holding n values of dtype dt: the loss's numbers are
 * nodes, not initializers, so that smelt_graph_grad's default (every
 * floating-point initializer) never takes them for weights. */
static sm_value *konst(sm_grad_ctx *g, smelt_dtype dt, int n, const double *v)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_tensor *t;
    int64_t dims[1] = {n};
    smelt_status st = sm_tensor_new(g->ctx, dt, n == 1 ? 0 : 1, dims, &t);
    if (st != SMELT_OK) {
        g->st = st;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        sm_store_f64(dt, t->data, i, v[i]);
    sm_node *c = sm_g_node(g, SM_OP_Constant, 0, NULL, 1);
    if (!c) {
        sm_tensor_free(t);
        return NULL;
    }
    if (!sm_node_set_tensor(c, "value", t)) {
        if (g->st == SMELT_OK)
            g->st = sm_err_nomem(g->ctx);
        return NULL;
    }
    return sm_g_done(g, c);
}

static sm_value *konst1(sm_grad_ctx *g, const sm_value *like, double v)
{
    return like ? konst(g, like->type.dtype, 1, &v) : NULL;
}

/* -mean over the batch of log_softmax(y)[n, t[n]]: the one-hot of the
 * target picks each row's log-probability (OneHot has no gradient and
 * needs none: the target is an integer input). */
static sm_value *cross_entropy(sm_grad_ctx *g, sm_value *y, sm_value *t)
{
    sm_node *ls = sm_g_node(g, SM_OP_LogSoftmax, 1, &y, 1);
    if (ls && !sm_node_set_int(ls, "axis", 1) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    sm_value *lp = sm_g_done(g, ls);
    int64_t depth = y->type.dims[1].size;
    const double off_on[2] = {0.0, 1.0};
    sm_value *vals = konst(g, y->type.dtype, 2, off_on);
    sm_value *in[3] = {t, sm_g_ints(g, &depth, 1), vals};
    sm_node *oh = sm_g_node(g, SM_OP_OneHot, 3, in, 1);
    sm_value *hot = sm_g_done(g, oh); /* axis -1: [N, C] */
    int64_t one = 1;
    sm_value *picked =
        sm_g_reduce_sum(g, sm_g_op2(g, SM_OP_Mul, lp, hot), &one, 1, 0);
    return sm_g_op1(g, SM_OP_Neg, mean_all(g, picked));
}

/* relu(y) - y*t + log(1 + exp(-|y|)), -|y| written y - 2 relu(y) so that
 * only ops with gradient rules appear; then the mean. */
static sm_value *bce_with_logits(sm_grad_ctx *g, sm_value *y, sm_value *t)
{
    sm_value *r = sm_g_op1(g, SM_OP_Relu, y);
    sm_value *negabs =
        sm_g_op2(g, SM_OP_Sub, y, sm_g_op2(g, SM_OP_Mul, r, konst1(g, y, 2.0)));
    sm_value *soft =
        sm_g_op1(g, SM_OP_Log,
                 sm_g_op2(g, SM_OP_Add, sm_g_op1(g, SM_OP_Exp, negabs),
                          konst1(g, y, 1.0)));
    sm_value *lin = sm_g_op2(g, SM_OP_Sub, r, sm_g_op2(g, SM_OP_Mul, y, t));
    return mean_all(g, sm_g_op2(g, SM_OP_Add, lin, soft));
}

/* The target's type for the loss over output y: y's own for mse and
 * bce_with_logits, int64 [N] for cross_entropy. */
static smelt_status target_type(smelt_ctx_t *ctx, loss_kind k,
                                const sm_value *y, sm_type *t)
{
    if (!sm_dtype_is_float(y->type.dtype))
        return sm_err(ctx, SMELT_ERR_TYPE,
                      "the model's first output '%s' is %s: a loss needs a "
                      "floating-point output",
                      y->name, smelt_dtype_name(y->type.dtype));
    if (y->type.ndim < 0)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "the rank of the model's first output '%s' is unknown",
                      y->name);
    *t = y->type;
    if (k != LOSS_CE)
        return SMELT_OK;
    if (y->type.ndim != 2 || y->type.dims[1].size < 1)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "cross_entropy needs the model's first output '%s' to "
                      "be [N, C] logits with C known; it has rank %d",
                      y->name, y->type.ndim);
    t->dtype = SMELT_DTYPE_I64;
    t->ndim = 1;
    return SMELT_OK;
}

/* Builds the loss into the copy: the target input, the loss nodes, and
 * the loss first among the outputs. */
static smelt_status build(smelt_ctx_t *ctx, sm_graph *cg, loss_kind k)
{
    sm_block *top = cg->top;
    if (top->n_ret == 0)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "the model has no outputs to put a loss on");
    sm_value *y = top->ret[0];
    sm_type tt;
    SM_TRY(target_type(ctx, k, y, &tt));
    sm_rw *rw;
    SM_TRY(sm_rw_new(ctx, cg, &rw));
    sm_grad_ctx g = {.ctx = ctx, .rw = rw, .b = top, .st = SMELT_OK};
    sm_value *t = sm_rw_add_param(rw, top, "target", &tt);
    if (!t)
        g.st = sm_err_nomem(ctx);
    sm_value *loss = NULL;
    if (g.st == SMELT_OK) {
        if (k == LOSS_MSE) {
            sm_value *d = sm_g_op2(&g, SM_OP_Sub, y, t);
            loss = mean_all(&g, sm_g_op2(&g, SM_OP_Mul, d, d));
        } else if (k == LOSS_CE) {
            loss = cross_entropy(&g, y, t);
        } else {
            loss = bce_with_logits(&g, y, t);
        }
    }
    int n_ret = top->n_ret;
    sm_value **old = sm_calloc((size_t)n_ret, sizeof *old);
    if (!old && g.st == SMELT_OK)
        g.st = sm_err_nomem(ctx);
    if (g.st == SMELT_OK) {
        const char *name = "loss";
        sm_node *id = sm_rw_node_new(rw, top, NULL, SM_OP_Identity, NULL, 1,
                                     &loss, 1, &name);
        g.st = id ? sm_rw_infer_node(rw, id) : sm_err_nomem(ctx);
        memcpy(old, top->ret, (size_t)n_ret * sizeof *old);
        if (g.st == SMELT_OK)
            g.st = sm_rw_set_ret(rw, top, 0, id->out[0]);
        for (int i = 1; g.st == SMELT_OK && i < n_ret; i++)
            g.st = sm_rw_set_ret(rw, top, i, old[i - 1]);
        if (g.st == SMELT_OK)
            g.st = sm_rw_add_ret(rw, top, old[n_ret - 1]);
    }
    sm_free(old);
    sm_rw_free(rw);
    return g.st;
}

smelt_status smelt_graph_add_loss(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                  const char *kind, smelt_graph_t **out)
{
    if (!g || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_graph_add_loss: NULL");
    *out = NULL;
    loss_kind k = parse_kind(kind);
    if (k == LOSS_BAD)
        return bad_kind(ctx, kind);
    sm_graph *cg;
    SM_TRY(sm_graph_clone(ctx, g, &cg));
    smelt_status st = sm_graph_infer(ctx, cg);
    if (st == SMELT_OK)
        st = build(ctx, cg, k);
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, cg);
    if (st != SMELT_OK) {
        sm_graph_free(cg);
        return st;
    }
    *out = cg;
    return SMELT_OK;
}

/* "f32 [N,10]"-style text of a type (known sizes as numbers, the batch
 * dimension and unknown ones as N and ?). */
static void type_text(char *buf, size_t size, smelt_dtype dt, int ndim,
                      const int64_t *dims, int batch_n)
{
    size_t k = (size_t)snprintf(buf, size, "%s [", smelt_dtype_name(dt));
    for (int i = 0; i < ndim && k < size; i++) {
        if (i == 0 && batch_n)
            k += (size_t)snprintf(buf + k, size - k, "N");
        else if (dims[i] < 0)
            k += (size_t)snprintf(buf + k, size - k, "%s?", i ? "," : "");
        else
            k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "",
                                  (long long)dims[i]);
    }
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

smelt_status smelt_loss_check_target(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                     const char *kind,
                                     const smelt_tensor_t *target)
{
    if (!g || !target)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_loss_check_target: NULL");
    loss_kind k = parse_kind(kind);
    if (k == LOSS_BAD)
        return bad_kind(ctx, kind);
    if (g->top->n_ret == 0)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "the model has no outputs");
    const sm_value *y = g->top->ret[0];
    sm_type tt;
    SM_TRY(target_type(ctx, k, y, &tt));
    int64_t want[SMELT_MAX_DIMS];
    for (int i = 0; i < tt.ndim; i++)
        want[i] = tt.dims[i].size;
    int ok = target->dtype == tt.dtype && target->ndim == tt.ndim;
    for (int i = 1; ok && i < tt.ndim; i++)
        ok = want[i] < 0 || want[i] == target->dims[i];
    if (!ok) {
        char w[160], got[160];
        type_text(w, sizeof w, tt.dtype, tt.ndim, want, 1);
        type_text(got, sizeof got, target->dtype, target->ndim, target->dims,
                  0);
        return sm_err(
            ctx, target->dtype != tt.dtype ? SMELT_ERR_TYPE : SMELT_ERR_SHAPE,
            "target: %s over the output '%s' expects %s%s, got %s", kind,
            y->name, w,
            k == LOSS_CE ? " (class indices, N samples)" : " (N samples)", got);
    }
    if (k == LOSS_CE) {
        const int64_t *c = target->data;
        int64_t n_cls = y->type.dims[1].size;
        for (int64_t i = 0; i < target->numel; i++)
            if (c[i] < 0 || c[i] >= n_cls)
                return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                              "target: class index %lld of sample %lld is "
                              "outside [0, %lld), the classes of output '%s'",
                              (long long)c[i], (long long)i, (long long)n_cls,
                              y->name);
    }
    return SMELT_OK;
}
