/*
 * shape_norm.c - shape and dtype inference, and cost, of the ops that
 * normalize along axes: BatchNormalization, LayerNormalization,
 * InstanceNormalization, MeanVarianceNormalization, LpNormalization, LRN
 * and Hardmax; the softmax family (Softmax, LogSoftmax) takes
 * sm_shape_unary's shape. All of them cost sm_cost_norm.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"

/*
 * BatchNormalization: Y has X's type; scale, B, mean and var are 1-D of
 * X's channel count (dim 1; 1 for a 1-D X). In training mode (opset 14 and
 * later) the optional outputs running_mean and running_var have the types
 * of the mean and var inputs; in inference mode they do not exist.
 */
smelt_status sm_shape_batchnorm(sm_shape_ctx *s)
{
    int training = sm_attrs_int(&s->attrs, "training_mode", 0) != 0;
    if (!training && s->n_out > 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: outputs running_mean and running_var exist only in "
                      "training mode, but the node has %d outputs",
                      s->op->name, s->n_out);
    const sm_type *x, *p;
    smelt_dtype dt;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_dtype(s, 0, 0, SM_SHAPE_FLOAT, &dt));
    SM_TRY(sm_shape_dtype(s, 1, 2, SM_SHAPE_FLOAT, &dt));
    SM_TRY(sm_shape_dtype(s, 3, 4, SM_SHAPE_FLOAT, &dt));
    if (x->ndim == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: X must have rank >= 1",
                      s->op->name);
    int64_t c = x->ndim == 1 ? 1 : sm_type_size(x, 1);
    for (int i = 1; i < 5; i++) {
        SM_TRY(sm_shape_need(s, i, &p));
        int64_t n = sm_type_size(p, 0);
        if (p->ndim >= 0 && (p->ndim != 1 || (n >= 0 && c >= 0 && n != c)))
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: input %d must be 1-D with C = %lld values, got "
                          "rank %d with %lld",
                          s->op->name, i, (long long)c, p->ndim, (long long)n);
        if (i >= 3 && i - 2 < s->n_out)
            s->out[i - 2] = *p; /* running_mean, running_var */
    }
    s->out[0] = *x;
    return SMELT_OK;
}

/* The dtype LayerNormalization's stash_type (an ONNX code) names. */
static smelt_status stash_dtype(sm_shape_ctx *s, smelt_dtype *out)
{
    int64_t code = sm_attrs_int(&s->attrs, "stash_type", 1);
    *out = code == 1    ? SMELT_DTYPE_F32
           : code == 10 ? SMELT_DTYPE_F16
           : code == 11 ? SMELT_DTYPE_F64
           : code == 16 ? SMELT_DTYPE_BF16
                        : SMELT_DTYPE_UNDEFINED;
    if (*out == SMELT_DTYPE_UNDEFINED)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: stash_type %lld is not a float dtype code (1, 10, "
                      "11 or 16)",
                      s->op->name, (long long)code);
    return SMELT_OK;
}

/* Fails unless input i (when present with a known rank) broadcasts
 * one-way onto x. */
static smelt_status check_onto(sm_shape_ctx *s, int i, const sm_type *x)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->ndim < 0)
        return SMELT_OK;
    int bad = t->ndim > x->ndim;
    for (int d = 0; !bad && d < t->ndim; d++) {
        int64_t ts = t->dims[d].size;
        int64_t xs = x->dims[d + x->ndim - t->ndim].size;
        bad = ts >= 0 && ts != 1 && xs >= 0 && ts != xs;
    }
    if (!bad)
        return SMELT_OK;
    char bt[160], bx[160];
    sm_type_str(t, bt, sizeof bt);
    sm_type_str(x, bx, sizeof bx);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: input %d %s does not broadcast onto X %s", s->op->name,
                  i, bt, bx);
}

/*
 * LayerNormalization: Y has X's type; Scale and B broadcast onto X (in
 * practice they have the normalized shape X.shape[axis:]); the optional
 * Mean and InvStdDev have X's dims before axis and 1 from axis on, in the
 * stash_type dtype.
 */
smelt_status sm_shape_layernorm(sm_shape_ctx *s)
{
    const sm_type *x, *scale;
    smelt_dtype dt, st;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &scale));
    SM_TRY(sm_shape_dtype(s, 0, 2, SM_SHAPE_FLOAT, &dt));
    SM_TRY(stash_dtype(s, &st));
    s->out[0] = *x;
    s->out[0].dtype = dt;
    for (int j = 1; j < s->n_out; j++) {
        sm_type_unknown(&s->out[j]);
        s->out[j].dtype = st;
    }
    if (x->ndim < 0)
        return SMELT_OK;
    if (x->ndim == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: X must have rank >= 1",
                      s->op->name);
    int ax;
    SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", -1), x->ndim, &ax));
    SM_TRY(check_onto(s, 1, x));
    SM_TRY(check_onto(s, 2, x));
    for (int j = 1; j < s->n_out; j++) {
        s->out[j].ndim = x->ndim;
        for (int d = 0; d < x->ndim; d++)
            s->out[j].dims[d] = d < ax ? x->dims[d] : (sm_dim){1, NULL};
    }
    return SMELT_OK;
}

/* Checks an `axis` attribute (when the op has one) against the rank. */
static smelt_status check_axis_attr(sm_shape_ctx *s, const sm_type *x)
{
    const sm_attr *axis = sm_attrs_find(&s->attrs, "axis");
    int ax;
    if (!axis || axis->kind != SM_ATTR_INT || x->ndim < 0)
        return SMELT_OK;
    return sm_shape_axis(s, axis->v.i, x->ndim, &ax);
}

/* MeanVarianceNormalization's axes: the attribute, else [0, 2, 3]. */
static int mvn_axes(const sm_attrs *at, const int64_t **v)
{
    static const int64_t def[3] = {0, 2, 3};
    int n = sm_attrs_ints(at, "axes", v);
    if (n < 0) {
        *v = def;
        n = 3;
    }
    return n;
}

/*
 * Normalizations that keep X's type: Hardmax and LpNormalization (along
 * `axis`, checked), MeanVarianceNormalization (over `axes`, default
 * [0, 2, 3]: in range and distinct), LRN (across channels, dim 1: `size`
 * at least 1). LpNormalization's p is 1 or 2.
 */
smelt_status sm_shape_normalize(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_check_kind(s, 0));
    SM_TRY(check_axis_attr(s, x));
    const sm_attr *p = sm_attrs_find(&s->attrs, "p");
    if (p && p->kind == SM_ATTR_INT && p->v.i != 1 && p->v.i != 2)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: p = %lld must be 1 or 2", s->op->name,
                      (long long)p->v.i);
    const sm_attr *size = sm_attrs_find(&s->attrs, "size");
    if (size && size->kind == SM_ATTR_INT) {
        if (size->v.i < 1)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: size = %lld must be at least 1", s->op->name,
                          (long long)size->v.i);
        if (x->ndim >= 0 && x->ndim < 2)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: X must have rank >= 2 (N, C, ...), got %d",
                          s->op->name, x->ndim);
    }
    if (sm_op_attr_spec(sm_op_from_name(s->op->name, (int)strlen(s->op->name)),
                        "axes") &&
        x->ndim >= 0) {
        const int64_t *axes;
        int n = mvn_axes(&s->attrs, &axes), seen[SMELT_MAX_DIMS] = {0}, d;
        for (int i = 0; i < n; i++) {
            SM_TRY(sm_shape_axis(s, axes[i], x->ndim, &d));
            if (seen[d]++)
                return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                              "%s: axis %lld is repeated in axes", s->op->name,
                              (long long)axes[i]);
        }
    }
    s->out[0] = *x;
    return SMELT_OK;
}

/*
 * InstanceNormalization(X [N, C, D...], scale [C], B [C]): Y has X's
 * type; all three share one float dtype.
 */
smelt_status sm_shape_instancenorm(sm_shape_ctx *s)
{
    const sm_type *x, *t;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &t));
    SM_TRY(sm_shape_need(s, 2, &t));
    for (int i = 0; i < 3; i++) {
        SM_TRY(sm_shape_check_kind(s, i));
        t = sm_shape_in(s, i);
        if (t->dtype != SMELT_DTYPE_UNDEFINED &&
            x->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != x->dtype)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: inputs 0 and %d must have the same dtype, got "
                          "%s and %s",
                          s->op->name, i, smelt_dtype_name(x->dtype),
                          smelt_dtype_name(t->dtype));
    }
    if (x->ndim >= 0 && x->ndim < 3)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X must have rank >= 3 (N, C, spatial dims...), got "
                      "%d",
                      s->op->name, x->ndim);
    int64_t c = x->ndim >= 0 ? x->dims[1].size : -1;
    SM_TRY(sm_shape_check_vector(s, 1, c, "scale"));
    SM_TRY(sm_shape_check_vector(s, 2, c, "B"));
    s->out[0] = *x;
    return SMELT_OK;
}

/* ---- costs -------------------------------------------------------------- */

/* Normalizations and softmax: a handful of operations per element (max or
 * mean, subtract, exp or square, sum, scale). */
void sm_cost_norm(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    sm_cost_io(s, c, 5 * (x ? sm_type_numel(x) : 0));
}
