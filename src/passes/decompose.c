/*
 * decompose.c - the decompose pass: composite ops become the primitives
 * the fusion rules match, so that fusion sees primitives.
 *
 * Composite here (rewritten):
 *   BatchNormalization, inference mode, constant parameters:
 *       Mul(X, s) then Add(., t) with s = scale / sqrt(var + epsilon) and
 *       t = bias - mean * s per channel (constants of shape [C, 1, ...],
 *       computed in double). fold_conv_bn runs first and folds those that
 *       follow a Conv into its weights; what remains joins elementwise
 *       fusion this way.
 *   Sum of n >= 2 inputs: a chain of n - 1 binary Adds (the residual and
 *       bias rules of fuse_epilogue match Add).
 * Kept whole on purpose:
 *   Gemm (fuse_epilogue takes its transposes, alpha and beta as they are),
 *   Gelu and Clip (activations of the fused epilogues), LayerNormalization,
 *   Softmax and LogSoftmax (opaque: the kernels do them in one sweep),
 *   BatchNormalization with non-constant parameters, pooling.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "passes/pattern.h"

/* Whether bn can become Mul + Add: inference mode, constant parameters of
 * one value per channel, X of known rank >= 2 and a float dtype. */
static int bn_decomposable(sm_rw *rw, const sm_node *bn, int64_t *channels)
{
    sm_attrs at = sm_node_attrs(bn);
    const sm_type *x = &bn->in[0]->type;
    if (sm_attrs_int(&at, "training_mode", 0) || x->ndim < 2 ||
        x->ndim > SMELT_MAX_DIMS || !sm_dtype_is_float(x->dtype))
        return 0;
    for (int i = 1; i < bn->n_out; i++)
        if (sm_rw_uses(rw, bn->out[i]))
            return 0;
    *channels = bn->in[1]->data ? bn->in[1]->data->numel : -1;
    for (int i = 1; i < 5; i++)
        if (!bn->in[i]->data || bn->in[i]->data->numel != *channels)
            return 0;
    return x->dims[1].size < 0 || x->dims[1].size == *channels;
}

/* The per-channel scale (which = 0) or shift (1) as a [C, 1, ...] tensor
 * that broadcasts against X's dims 1... */
static sm_tensor *bn_const(const sm_node *bn, int64_t ch, int which)
{
    const sm_tensor *scale = bn->in[1]->data, *bias = bn->in[2]->data;
    const sm_tensor *mean = bn->in[3]->data, *var = bn->in[4]->data;
    sm_attrs at = sm_node_attrs(bn);
    double eps = sm_attrs_float(&at, "epsilon", 1e-5);
    int rank = bn->in[0]->type.ndim - 1;
    int64_t dims[SMELT_MAX_DIMS];
    dims[0] = ch;
    for (int d = 1; d < rank; d++)
        dims[d] = 1;
    sm_tensor *t;
    smelt_dtype dt = bn->in[0]->type.dtype;
    if (sm_tensor_new(NULL, dt, rank, dims, &t) != SMELT_OK)
        return NULL;
    for (int64_t c = 0; c < ch; c++) {
        double s = sm_load_f64(scale->dtype, scale->data, c) /
                   sqrt(sm_load_f64(var->dtype, var->data, c) + eps);
        double v = which ? sm_load_f64(bias->dtype, bias->data, c) -
                               sm_load_f64(mean->dtype, mean->data, c) * s
                         : s;
        sm_store_f64(dt, t->data, c, v);
    }
    return t;
}

static smelt_status decompose_bn(sm_pass_ctx *pc, sm_rw *rw, sm_node *bn)
{
    int64_t ch;
    if (!bn_decomposable(rw, bn, &ch)) {
        sm_pat_miss(pc, bn,
                    "BatchNormalization stays whole: it needs inference mode, "
                    "constant per-channel parameters and a float X of known "
                    "rank");
        return SMELT_OK;
    }
    sm_block *b = bn->owner;
    const char *out = bn->out[0]->name;
    char base[160];
    sm_value *k[2];
    for (int which = 0; which < 2; which++) {
        sm_tensor *t = bn_const(bn, ch, which);
        snprintf(base, sizeof base, "%s_%s", out, which ? "shift" : "scale");
        k[which] = t ? sm_rw_add_const(rw, b, base, t) : NULL;
        if (!k[which])
            return sm_err_nomem(pc->ctx);
    }
    snprintf(base, sizeof base, "%s_scaled", out);
    const char *nm = base;
    sm_value *mul_in[2] = {bn->in[0], k[0]};
    sm_node *mul =
        sm_rw_node_new(rw, b, bn, SM_OP_Mul, NULL, 2, mul_in, 1, &nm);
    if (!mul)
        return sm_err_nomem(pc->ctx);
    mul->out[0]->type = bn->in[0]->type;
    sm_value *add_in[2] = {mul->out[0], k[1]};
    sm_node *add =
        sm_rw_node_new(rw, b, bn, SM_OP_Add, bn->name, 2, add_in, 1, &out);
    if (!add)
        return sm_err_nomem(pc->ctx);
    add->out[0]->type = bn->out[0]->type;
    SM_TRY(sm_rw_infer_node(rw, mul));
    SM_TRY(sm_rw_infer_node(rw, add));
    sm_pat_replace(rw, add, bn->out[0], &bn, 1);
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* Sum(a, b, c, ...) -> Add(Add(a, b), c) ... */
static smelt_status decompose_sum(sm_pass_ctx *pc, sm_rw *rw, sm_node *sum)
{
    sm_value *acc = sum->in[0];
    sm_node *add = NULL;
    for (int i = 1; i < sum->n_in; i++) {
        sm_value *in[2] = {acc, sum->in[i]};
        char base[160];
        snprintf(base, sizeof base, "%s_acc", sum->out[0]->name);
        const char *nm = i + 1 == sum->n_in ? sum->out[0]->name : base;
        add = sm_rw_node_new(rw, sum->owner, sum, SM_OP_Add,
                             i + 1 == sum->n_in ? sum->name : NULL, 2, in, 1,
                             &nm);
        if (!add)
            return sm_err_nomem(pc->ctx);
        if (i + 1 == sum->n_in)
            add->out[0]->type = sum->out[0]->type;
        SM_TRY(sm_rw_infer_node(rw, add));
        acc = add->out[0];
    }
    sm_pat_replace(rw, add, sum->out[0], &sum, 1);
    pc->stats->changed = 1;
    return SMELT_OK;
}

static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *x)
{
    if (x->op == SM_OP_BatchNormalization)
        return decompose_bn(pc, rw, x);
    if (x->op == SM_OP_Sum && x->n_in >= 2)
        return decompose_sum(pc, rw, x);
    return SMELT_OK;
}

smelt_status sm_pass_decompose(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit);
}
