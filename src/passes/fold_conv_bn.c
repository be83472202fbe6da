/*
 * fold_conv_bn.c - the fold_conv_bn pass: a BatchNormalization (inference
 * mode) that reads a Conv's output folds into the Conv's weights.
 *
 * With s[m] = scale[m] / sqrt(var[m] + epsilon), per output channel m:
 *
 *   W'[m, ...] = W[m, ...] * s[m]
 *   B'[m]      = (B[m] - mean[m]) * s[m] + bias[m]     (B = 0 when absent)
 *
 * computed in double and stored in W's dtype as new constants (W may be
 * shared with another Conv, so it is never changed in place). It needs W,
 * B and the four BatchNormalization parameters to be constants and the
 * Conv's output to have the BatchNormalization as its only user; each
 * other case is a near miss for --why-not-fused.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "passes/pattern.h"

/* Why bn cannot fold into the node before it; NULL when it can. */
static const char *blocker(sm_rw *rw, const sm_node *bn, char *buf, size_t size)
{
    const sm_value *x = bn->in[0];
    const sm_node *conv = x->def;
    sm_attrs at = sm_node_attrs(bn);
    if (!conv || conv->op != SM_OP_Conv)
        return NULL; /* not a near miss: nothing to fold into */
    if (sm_attrs_int(&at, "training_mode", 0))
        return "BatchNormalization is in training mode";
    for (int i = 1; i < bn->n_out; i++)
        if (sm_rw_uses(rw, bn->out[i]))
            return "BatchNormalization's running-statistics outputs are used";
    if (conv->owner != bn->owner)
        return "Conv and BatchNormalization are in different blocks";
    int uses = sm_rw_uses(rw, x);
    if (uses != 1) {
        snprintf(buf, size, "Conv output %%%s has %d users", x->name, uses);
        return buf;
    }
    if (!conv->in[1]->data ||
        (conv->n_in > 2 && conv->in[2] && !conv->in[2]->data))
        return "Conv weights or bias are not constants";
    for (int i = 1; i < 5; i++)
        if (!bn->in[i] || !bn->in[i]->data)
            return "BatchNormalization parameters are not constants";
    int64_t m = conv->in[1]->data->dims[0];
    for (int i = 1; i < 5; i++)
        if (bn->in[i]->data->numel != m) {
            snprintf(buf, size,
                     "BatchNormalization parameter %d has %lld values but the "
                     "Conv has %lld output channels",
                     i, (long long)bn->in[i]->data->numel, (long long)m);
            return buf;
        }
    if (!sm_dtype_is_float(conv->in[1]->data->dtype))
        return "Conv weights are not floats";
    return NULL;
}

/* W' and B' as new tensors; NULL entries when out of memory. */
static void fold(const sm_node *conv, const sm_node *bn, sm_tensor **w_out,
                 sm_tensor **b_out)
{
    const sm_tensor *w = conv->in[1]->data;
    const sm_tensor *b =
        conv->n_in > 2 && conv->in[2] ? conv->in[2]->data : NULL;
    const sm_tensor *scale = bn->in[1]->data, *bias = bn->in[2]->data;
    const sm_tensor *mean = bn->in[3]->data, *var = bn->in[4]->data;
    sm_attrs at = sm_node_attrs(bn);
    double eps = sm_attrs_float(&at, "epsilon", 1e-5);
    int64_t m = w->dims[0], per = m ? w->numel / m : 0;
    *w_out = *b_out = NULL;
    if (sm_tensor_new(NULL, w->dtype, w->ndim, w->dims, w_out) != SMELT_OK ||
        sm_tensor_new(NULL, w->dtype, 1, &m, b_out) != SMELT_OK) {
        sm_tensor_free(*w_out);
        *w_out = NULL;
        return;
    }
    for (int64_t c = 0; c < m; c++) {
        double s = sm_load_f64(scale->dtype, scale->data, c) /
                   sqrt(sm_load_f64(var->dtype, var->data, c) + eps);
        for (int64_t k = 0; k < per; k++)
            sm_store_f64(w->dtype, (*w_out)->data, c * per + k,
                         sm_load_f64(w->dtype, w->data, c * per + k) * s);
        double b0 = b ? sm_load_f64(b->dtype, b->data, c) : 0;
        sm_store_f64(w->dtype, (*b_out)->data, c,
                     (b0 - sm_load_f64(mean->dtype, mean->data, c)) * s +
                         sm_load_f64(bias->dtype, bias->data, c));
    }
}

/* Replaces conv + bn by one Conv with the folded constants. */
static smelt_status fold_pair(sm_pass_ctx *pc, sm_rw *rw, sm_node *conv,
                              sm_node *bn)
{
    sm_tensor *wt, *bt;
    fold(conv, bn, &wt, &bt);
    if (!wt)
        return sm_err_nomem(pc->ctx);
    char base[160];
    snprintf(base, sizeof base, "%s_bn", conv->in[1]->name);
    sm_value *w = sm_rw_add_const(rw, conv->owner, base, wt);
    snprintf(base, sizeof base, "%s_bias",
             conv->name ? conv->name : conv->out[0]->name);
    sm_value *b = w ? sm_rw_add_const(rw, conv->owner, base, bt)
                    : (sm_tensor_free(bt), NULL);
    sm_value *in[3] = {conv->in[0], w, b};
    sm_node *nc = b ? sm_rw_node_new(rw, conv->owner, bn, SM_OP_Conv,
                                     conv->name, 3, in, 1, &bn->out[0]->name)
                    : NULL;
    if (!nc || !sm_pat_copy_attrs(nc, conv))
        return sm_err_nomem(pc->ctx);
    nc->out[0]->type = bn->out[0]->type;
    SM_TRY(sm_rw_infer_node(rw, nc));
    sm_node *dead[2] = {conv, bn};
    sm_pat_replace(rw, nc, bn->out[0], dead, 2);
    pc->stats->fused += 1;
    pc->stats->folded += 2;
    pc->stats->changed = 1;
    return SMELT_OK;
}

static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *bn)
{
    if (bn->op != SM_OP_BatchNormalization)
        return SMELT_OK;
    char buf[200];
    const char *why = blocker(rw, bn, buf, sizeof buf);
    if (why)
        sm_pat_miss(pc, bn, "%s", why);
    else if (bn->in[0]->def && bn->in[0]->def->op == SM_OP_Conv)
        return fold_pair(pc, rw, bn->in[0]->def, bn);
    return SMELT_OK;
}

smelt_status sm_pass_fold_conv_bn(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit);
}
