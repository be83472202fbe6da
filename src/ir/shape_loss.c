/*
 * shape_loss.c - shape and dtype inference of the losses
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"

/* Fails unless the loss's reduction attribute is none, sum or mean. */
static smelt_status check_reduction(sm_shape_ctx *s, int *none)
{
    const char *r = sm_attrs_string(&s->attrs, "reduction", "mean");
    *none = strcmp(r, "none") == 0;
    if (*none || strcmp(r, "sum") == 0 || strcmp(r, "mean") == 0)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                  "%s: reduction '%s' is not none, sum or mean", s->op->name,
                  r);
}

/* Fails when the known target values of a loss fall outside [0, C) and
 * are not ignore_index. */
static smelt_status check_targets(sm_shape_ctx *s, int64_t c)
{
    const sm_tensor *t = s->in[1].data;
    const sm_attr *ig = sm_attrs_find(&s->attrs, "ignore_index");
    if (!t || c < 0 || !sm_dtype_is_int(t->dtype))
        return SMELT_OK;
    for (int64_t i = 0; i < t->numel; i++) {
        int64_t v = sm_load_i64(t->dtype, t->data, i);
        if ((v < 0 || v >= c) &&
            !(ig && ig->kind == SM_ATTR_INT && v == ig->v.i))
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: target %lld (element %lld) is outside [0, %lld) "
                          "and not ignore_index",
                          s->op->name, (long long)v, (long long)i,
                          (long long)c);
    }
    return SMELT_OK;
}

/*
 * NegativeLogLikelihoodLoss(input [N, C, d...], target [N, d...],
 * weight? [C]) and SoftmaxCrossEntropyLoss(scores, labels, weights?): the
 * loss has target's shape with reduction none, else it is a scalar, in
 * input's float dtype; SoftmaxCrossEntropyLoss's optional log_prob has
 * the scores' type. Targets are i32 or i64 and, when known, in [0, C) or
 * ignore_index.
 */
smelt_status sm_shape_loss(sm_shape_ctx *s)
{
    const sm_type *x, *t, *w = sm_shape_in(s, 2);
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &t));
    int none;
    SM_TRY(check_reduction(s, &none));
    if (x->dtype != SMELT_DTYPE_UNDEFINED && !sm_dtype_is_float(x->dtype))
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: input 0 has dtype %s, expected a float dtype",
                      s->op->name, smelt_dtype_name(x->dtype));
    if (t->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != SMELT_DTYPE_I32 &&
        t->dtype != SMELT_DTYPE_I64)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: target (input 1) has dtype %s, expected i32 or i64",
                      s->op->name, smelt_dtype_name(t->dtype));
    if (w && w->dtype != SMELT_DTYPE_UNDEFINED && w->dtype != x->dtype)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: weight (input 2) has dtype %s, input 0 has %s",
                      s->op->name, smelt_dtype_name(w->dtype),
                      smelt_dtype_name(x->dtype));
    int bad = x->ndim >= 0 &&
              (x->ndim < 2 || (t->ndim >= 0 && t->ndim != x->ndim - 1));
    for (int d = 0; !bad && x->ndim >= 0 && t->ndim >= 0 && d < t->ndim; d++) {
        int64_t a = t->dims[d].size, b = x->dims[d ? d + 1 : 0].size;
        bad = a >= 0 && b >= 0 && a != b;
    }
    if (bad) {
        char sx[160], st[160];
        sm_type_str(x, sx, sizeof sx);
        sm_type_str(t, st, sizeof st);
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: input %s and target %s do not fit ([N, C, d...] "
                      "and [N, d...])",
                      s->op->name, sx, st);
    }
    int64_t c = x->ndim >= 2 ? x->dims[1].size : -1;
    SM_TRY(sm_shape_check_vector(s, 2, c, "weight"));
    SM_TRY(check_targets(s, c));
    sm_type *y = &s->out[0];
    if (none) {
        *y = *t;
    } else {
        y->ndim = 0;
    }
    y->dtype = x->dtype;
    if (s->n_out > 1)
        s->out[1] = *x;
    return SMELT_OK;
}
