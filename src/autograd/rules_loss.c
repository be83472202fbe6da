/*
 * rules_loss.c - gradient rules of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss, with respect to the scores (log-probabilities
 * or logits) and the class weights; targets are integers.
 *
 * Both losses pick, at every position i = (n, d...), -w[t_i] * lp[n,
 * t_i, d...] (w 1 without weights, 0 where t_i is ignore_index), then
 * reduce: none, sum, or mean = sum / sum of the weights W. With
 * coef_i = dy_i (none), dy (sum) or dy / W (mean):
 *
 *     dlp[n, c, d...] = -coef_i * w[t_i] * [c == t_i]
 *     dw[c] = sum over i with t_i = c of coef_i * (-lp[n, c, d...] - L)
 *
 * L (the loss itself) only for mean, where W depends on w too.
 */
#include <string.h>

#include "autograd/rules_norm.h"

/* What the rule knows of the loss node and builds once. */
typedef struct loss_parts {
    sm_value *t;     /* target as i64 [N, d...] */
    sm_value *mask;  /* bool [N, C, d...]: c == t */
    sm_value *valid; /* bool [N, d...]: t != ignore_index; NULL: all */
    sm_value *wt;    /* float [N, d...]: the weight of each position */
    sm_value *coef;  /* dy, or dy / W (mean) */
    int mean;
} loss_parts;

/* Fills p for scores lp [N, C, d...] of the node g->n (target input 1,
 * weight input 2). */
static void loss_parts_make(sm_grad_ctx *g, sm_value *lp, loss_parts *p)
{
    const sm_node *n = g->n;
    sm_value *w = n->n_in > 2 ? n->in[2] : NULL;
    int r = lp->type.ndim;
    int64_t c_n = r >= 2 ? lp->type.dims[1].size : -1;
    memset(p, 0, sizeof *p);
    if (c_n < 0 || c_n > (1 << 24)) {
        sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                  "the class count (dim 1 of the scores) must be known");
        return;
    }
    sm_attrs at = sm_node_attrs(n);
    const char *red = sm_attrs_string(&at, "reduction", "mean");
    p->mean = strcmp(red, "mean") == 0;
    p->t = sm_g_cast(g, n->in[1], SMELT_DTYPE_I64);
    /* classes 0..C-1 as [C, 1, ...] against the target as [N, 1, d...] */
    sm_tensor *ct;
    int64_t dims[1] = {c_n};
    smelt_status st = sm_tensor_new(g->ctx, SMELT_DTYPE_I64, 1, dims, &ct);
    if (st != SMELT_OK) {
        nn_nomem(g);
        return;
    }
    for (int64_t c = 0; c < c_n; c++)
        ((int64_t *)ct->data)[c] = c;
    sm_value *cls = sm_rw_add_const(g->rw, g->b, "g_classes", ct);
    if (!cls) {
        nn_nomem(g);
        return;
    }
    int64_t axes[SMELT_MAX_DIMS], one = 1;
    for (int d = 2; d < r; d++)
        axes[d - 2] = d - 1;
    cls = nn_unsqueeze(g, cls, axes, r - 2);
    p->mask = sm_g_op2(g, SM_OP_Equal, nn_unsqueeze(g, p->t, &one, 1), cls);
    const sm_attr *ig = sm_attrs_find(&at, "ignore_index");
    sm_value *zero = sm_g_scalar_like(g, lp, 0);
    if (ig && ig->kind == SM_ATTR_INT) {
        sm_value *k = sm_g_scalar(g, SMELT_DTYPE_I64, (double)ig->v.i);
        p->valid = sm_g_op1(g, SM_OP_Not, sm_g_op2(g, SM_OP_Equal, p->t, k));
    }
    if (w) {
        sm_value *ts = p->t;
        if (p->valid)
            ts = sm_g_op3(g, SM_OP_Where, p->valid, ts,
                          sm_g_scalar(g, SMELT_DTYPE_I64, 0));
        p->wt = sm_g_op2(g, SM_OP_Gather, w, ts);
        if (p->valid)
            p->wt = sm_g_op3(g, SM_OP_Where, p->valid, p->wt, zero);
    } else if (p->valid) {
        p->wt = sm_g_op3(g, SM_OP_Where, p->valid, sm_g_scalar_like(g, lp, 1),
                         zero);
    } else {
        p->wt = sm_g_expand_like(g, sm_g_scalar_like(g, lp, 1), p->t);
    }
    p->coef = g->dy[0];
    if (p->mean && p->coef) {
        sm_value *wsum = nn_op1_int(g, SM_OP_ReduceSum, p->wt, "keepdims", 0);
        p->coef = nn_div(g, p->coef, wsum);
    }
}

/* The scores' gradient from the loss output: -coef * wt at the target
 * class, 0 elsewhere. */
static sm_value *loss_dscores(sm_grad_ctx *g, const loss_parts *p)
{
    int64_t one = 1;
    sm_value *pc = nn_mul(g, p->coef, p->wt);
    sm_value *d =
        sm_g_op3(g, SM_OP_Where, p->mask, nn_unsqueeze(g, pc, &one, 1),
                 sm_g_scalar_like(g, pc, 0));
    return sm_g_op1(g, SM_OP_Neg, d);
}

/* The weights' gradient [C] (see the top of the file). */
static sm_value *loss_dweight(sm_grad_ctx *g, const loss_parts *p, sm_value *lp)
{
    int64_t one = 1, axes[SMELT_MAX_DIMS];
    int r = lp->type.ndim, na = 0;
    sm_value *zero = sm_g_scalar_like(g, lp, 0);
    sm_value *picked =
        nn_reduce(g, SM_OP_ReduceSum,
                  sm_g_op3(g, SM_OP_Where, p->mask, lp, zero), &one, 1, 0);
    sm_value *v = sm_g_op1(g, SM_OP_Neg, picked);
    if (p->mean)
        v = nn_sub(g, v, g->n->out[0]);
    v = nn_mul(g, v, p->coef);
    if (p->valid)
        v = sm_g_op3(g, SM_OP_Where, p->valid, v, zero);
    sm_value *spread =
        sm_g_op3(g, SM_OP_Where, p->mask, nn_unsqueeze(g, v, &one, 1), zero);
    for (int d = 0; d < r; d++)
        if (d != 1)
            axes[na++] = d;
    return nn_reduce(g, SM_OP_ReduceSum, spread, axes, na, 0);
}

smelt_status sm_grad_negativeloglikelihoodloss(sm_grad_ctx *g)
{
    sm_value *lp = g->n->in[0];
    if (nn_rank(g, 0) < 0)
        return g->st;
    loss_parts p;
    loss_parts_make(g, lp, &p);
    if (g->need[0])
        sm_g_set(g, 0, loss_dscores(g, &p));
    if (g->n->n_in > 2 && g->need[2])
        sm_g_set(g, 2, loss_dweight(g, &p, lp));
    return g->st;
}

/* softmaxcrossentropyloss: the NLL gradient of lp = LogSoftmax(x, 1)
 * (plus that of the log_prob output when it has one), taken back through
 * LogSoftmax: dx = dlp - exp(lp) * sum over classes of dlp. */
smelt_status sm_grad_softmaxcrossentropyloss(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0];
    if (nn_rank(g, 0) < 0)
        return g->st;
    sm_value *lp = n->n_out > 1 ? n->out[1]
                                : nn_op1_int(g, SM_OP_LogSoftmax, x, "axis", 1);
    sm_value *dlp = NULL;
    loss_parts p = {0};
    if (g->dy[0]) {
        loss_parts_make(g, lp, &p);
        if (g->need[0])
            dlp = loss_dscores(g, &p);
        if (n->n_in > 2 && g->need[2])
            sm_g_set(g, 2, loss_dweight(g, &p, lp));
    }
    if (n->n_out > 1 && g->dy[1])
        dlp = dlp ? nn_add(g, dlp, g->dy[1]) : g->dy[1];
    if (g->need[0] && dlp) {
        int64_t one = 1;
        sm_value *s = nn_reduce(g, SM_OP_ReduceSum, dlp, &one, 1, 1);
        sm_g_set(g, 0,
                 nn_sub(g, dlp, nn_mul(g, sm_g_op1(g, SM_OP_Exp, lp), s)));
    }
    return g->st;
}
