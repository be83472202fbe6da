/*
 * loss.c - reference kernels of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (ONNX opset 13).
 *
 * Both pick, for every position (n, d...) of the target, the negated
 * input at class target[n, d...], weighted by weight[target] (1 without
 * weights; 0 where the target is ignore_index), then reduce: none keeps
 * the per-position losses, sum adds them, mean divides the sum by the sum
 * of the weights (so by the count of positions not ignored without
 * weights), as ONNX's reference does. SoftmaxCrossEntropyLoss first takes
 * the log-softmax of the scores over the classes with LogSoftmax's own
 * kernel. Everything is computed in double.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

/*
 * The loss of logp [N, C, d...] (log-probabilities, any float dtype)
 * against target [N, d...] into y; weight [C] may be NULL.
 */
static smelt_status nll_run(const sm_kargs *a, const sm_tensor *logp,
                            const sm_tensor *target, const sm_tensor *weight,
                            sm_tensor *y)
{
    const sm_attr *ig = sm_attrs_find(&a->attrs, "ignore_index");
    int has_ig = ig && ig->kind == SM_ATTR_INT;
    const char *red = sm_attrs_string(&a->attrs, "reduction", "mean");
    int none = strcmp(red, "none") == 0, mean = strcmp(red, "mean") == 0;
    if (logp->ndim < 2 || target->ndim != logp->ndim - 1 ||
        (weight && weight->numel != logp->dims[1]) ||
        y->numel != (none ? target->numel : 1))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: input, target, weight and output do not fit",
                      a->op_name);
    int64_t N = logp->dims[0], C = logp->dims[1];
    int64_t D = N > 0 && C > 0 ? logp->numel / (N * C) : 0;
    if (target->numel != N * D)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: target has %lld elements, expected %lld", a->op_name,
                      (long long)target->numel, (long long)(N * D));
    double sum = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t d = 0; d < D; d++) {
            int64_t i = n * D + d;
            int64_t t = sm_load_i64(target->dtype, target->data, i);
            double loss = 0, w = 0;
            if (!(has_ig && t == ig->v.i)) {
                if (t < 0 || t >= C)
                    return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                                  "%s: target %lld is outside [0, %lld)",
                                  a->op_name, (long long)t, (long long)C);
                w = weight ? sm_load_f64(weight->dtype, weight->data, t) : 1;
                loss = -w * sm_load_f64(logp->dtype, logp->data,
                                        (n * C + t) * D + d);
            }
            if (none)
                sm_store_f64(y->dtype, y->data, i, loss);
            sum += loss;
            wsum += w;
        }
    }
    if (!none)
        sm_store_f64(y->dtype, y->data, 0, mean ? sum / wsum : sum);
    return SMELT_OK;
}

smelt_status sm_ref_negativeloglikelihoodloss(const sm_kargs *a)
{
    return nll_run(a, a->in[0], a->in[1], a->n_in > 2 ? a->in[2] : NULL,
                   a->out[0]);
}

/* SoftmaxCrossEntropyLoss: LogSoftmax over dim 1 (into the optional
 * log_prob output, or a scratch tensor in double), then the NLL loss. */
smelt_status sm_ref_softmaxcrossentropyloss(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *lp = a->n_out > 1 ? a->out[1] : NULL, *scratch = NULL;
    if (x->ndim < 2)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: scores must have rank >= 2, got %d", a->op_name,
                      x->ndim);
    if (!lp || lp->dtype != SMELT_DTYPE_F64) {
        SM_TRY(
            sm_tensor_new(a->ctx, SMELT_DTYPE_F64, x->ndim, x->dims, &scratch));
    }
    sm_tensor *dst = scratch ? scratch : lp;
    sm_attr axis = {.name = "axis", .kind = SM_ATTR_INT, .v.i = 1};
    sm_kargs k = *a;
    k.attrs = (sm_attrs){&axis, 1, NULL, 0};
    k.n_in = 1;
    k.n_out = 1;
    k.out = &dst;
    smelt_status st = sm_ref_logsoftmax(&k);
    for (int64_t i = 0; st == SMELT_OK && lp && scratch && i < lp->numel; i++)
        sm_store_f64(lp->dtype, lp->data, i, ((double *)scratch->data)[i]);
    if (st == SMELT_OK)
        st =
            nll_run(a, dst, a->in[1], a->n_in > 2 ? a->in[2] : NULL, a->out[0]);
    sm_tensor_free(scratch);
    return st;
}
