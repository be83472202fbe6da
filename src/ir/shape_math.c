/*
 * shape_math.c - shape and dtype inference for the further math ops:
 * elementwise functions and activations, bitwise and logic ops, Mod,
 * LessOrEqual / GreaterOrEqual, Mean and PRelu; the normalizations along
 * axes (Hardmax, LpNormalization, MeanVarianceNormalization, LRN,
 * InstanceNormalization); LpPool and GlobalLpPool (on the pooling shape
 * functions of shape_pool.c); CastLike and Det; and the cost of Det; the
 * losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * Which dtypes an op accepts, and whether its output is bool, sit in one
 * table indexed by op; the other checks follow from the attributes an op
 * has (fmod, direction, axis, axes, p, size), so the functions serve whole
 * families without testing op names.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"

enum {
    M_FLOAT = 1,    /* f32, f64, f16, bf16 */
    M_INT = 2,      /* signed and unsigned integers */
    M_BOOL = 4,     /* bool */
    M_UNSIGNED = 8, /* u8, u16, u32, u64 (BitShift) */
    M_NUMBER = M_FLOAT | M_INT,
    M_KINDS = 15,
    M_OUT_BOOL = 16 /* flag: the output is bool */
};

static const unsigned char math_accepts[SM_OP_COUNT] = {
    [SM_OP_Sign] = M_NUMBER,
    [SM_OP_Round] = M_FLOAT,
    [SM_OP_IsNaN] = M_FLOAT | M_OUT_BOOL,
    [SM_OP_IsInf] = M_FLOAT | M_OUT_BOOL,
    [SM_OP_Tan] = M_FLOAT,
    [SM_OP_Asin] = M_FLOAT,
    [SM_OP_Acos] = M_FLOAT,
    [SM_OP_Atan] = M_FLOAT,
    [SM_OP_Sinh] = M_FLOAT,
    [SM_OP_Cosh] = M_FLOAT,
    [SM_OP_Asinh] = M_FLOAT,
    [SM_OP_Acosh] = M_FLOAT,
    [SM_OP_Atanh] = M_FLOAT,
    [SM_OP_Mod] = M_NUMBER,
    [SM_OP_Xor] = M_BOOL,
    [SM_OP_BitShift] = M_UNSIGNED,
    [SM_OP_BitwiseAnd] = M_INT,
    [SM_OP_BitwiseOr] = M_INT,
    [SM_OP_BitwiseXor] = M_INT,
    [SM_OP_BitwiseNot] = M_INT,
    [SM_OP_LessOrEqual] = M_NUMBER | M_OUT_BOOL,
    [SM_OP_GreaterOrEqual] = M_NUMBER | M_OUT_BOOL,
    [SM_OP_Mean] = M_FLOAT,
    [SM_OP_Elu] = M_FLOAT,
    [SM_OP_Selu] = M_FLOAT,
    [SM_OP_Celu] = M_FLOAT,
    [SM_OP_ThresholdedRelu] = M_FLOAT,
    [SM_OP_HardSigmoid] = M_FLOAT,
    [SM_OP_HardSwish] = M_FLOAT,
    [SM_OP_Softsign] = M_FLOAT,
    [SM_OP_Mish] = M_FLOAT,
    [SM_OP_PRelu] = M_NUMBER,
    [SM_OP_Shrink] = M_NUMBER,
    [SM_OP_Hardmax] = M_FLOAT,
    [SM_OP_LpNormalization] = M_FLOAT,
    [SM_OP_MeanVarianceNormalization] = M_FLOAT,
    [SM_OP_LRN] = M_FLOAT,
    [SM_OP_InstanceNormalization] = M_FLOAT,
    [SM_OP_Det] = M_FLOAT,
};

static int math_flags(const sm_shape_ctx *s)
{
    sm_op op = sm_op_from_name(s->op->name, (int)strlen(s->op->name));
    return op < SM_OP_COUNT ? math_accepts[op] : M_NUMBER;
}

static int kind_ok(smelt_dtype dt, int kinds)
{
    if (sm_dtype_is_float(dt))
        return kinds & M_FLOAT;
    if (dt == SMELT_DTYPE_BOOL)
        return kinds & M_BOOL;
    if (sm_dtype_is_unsigned(dt) && (kinds & M_UNSIGNED))
        return 1;
    return sm_dtype_is_int(dt) && (kinds & M_INT);
}

static const char *kind_name(int kinds)
{
    switch (kinds & M_KINDS) {
    case M_FLOAT: return "a float";
    case M_INT: return "an integer";
    case M_BOOL: return "bool";
    case M_UNSIGNED: return "an unsigned integer (u8, u16, u32, u64)";
    default: return "a numeric";
    }
}

/* Fails when input i is present with a known dtype outside the op's
 * kinds. */
static smelt_status check_kind(sm_shape_ctx *s, int i)
{
    const sm_type *t = sm_shape_in(s, i);
    int kinds = math_flags(s);
    if (!t || t->dtype == SMELT_DTYPE_UNDEFINED || kind_ok(t->dtype, kinds))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: input %d has dtype %s, expected %s dtype", s->op->name,
                  i, smelt_dtype_name(t->dtype), kind_name(kinds));
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

/*
 * Elementwise unary ops: output 0 has input 0's shape, and its dtype or
 * bool (IsNaN, IsInf). Checks the dtype against the op's kinds.
 */
smelt_status sm_shape_math_unary(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(check_kind(s, 0));
    s->out[0] = *x;
    if (math_flags(s) & M_OUT_BOOL)
        s->out[0].dtype = SMELT_DTYPE_BOOL;
    return SMELT_OK;
}

/*
 * Broadcasting ops (Mod, Xor, BitShift, Bitwise*, LessOrEqual,
 * GreaterOrEqual, Mean): inputs of one dtype within the op's kinds, the
 * output of the broadcast shape in that dtype or bool. Mod's fmod must be
 * 1 for floats (as ONNX requires); BitShift's direction is LEFT or RIGHT.
 */
smelt_status sm_shape_math_binary(sm_shape_ctx *s)
{
    for (int i = 0; i < s->n_in; i++)
        SM_TRY(check_kind(s, i));
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    const sm_attr *fmod = sm_attrs_find(&s->attrs, "fmod");
    if (fmod && fmod->kind == SM_ATTR_INT && fmod->v.i != 0 && fmod->v.i != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: fmod = %lld must be 0 or 1", s->op->name,
                      (long long)fmod->v.i);
    if (fmod && fmod->kind == SM_ATTR_INT && fmod->v.i == 0 &&
        sm_dtype_is_float(x->dtype))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: fmod must be 1 for float inputs (got %s)",
                      s->op->name, smelt_dtype_name(x->dtype));
    const char *dir = sm_attrs_string(&s->attrs, "direction", NULL);
    if (dir && strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: direction '%s' is not LEFT or RIGHT", s->op->name,
                      dir);
    if (math_flags(s) & M_OUT_BOOL)
        return sm_shape_compare(s);
    return sm_shape_broadcast(s);
}

/*
 * PRelu(X, slope): Y has X's type; slope shares X's dtype and must
 * broadcast onto X one way (its dims 1 or X's, aligned right).
 */
smelt_status sm_shape_prelu(sm_shape_ctx *s)
{
    const sm_type *x, *slope;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &slope));
    SM_TRY(sm_shape_math_binary(s)); /* dtypes and two-way broadcasting */
    sm_type b = s->out[0];
    int bad = b.ndim >= 0 && x->ndim >= 0 && b.ndim > x->ndim;
    for (int d = 0; !bad && b.ndim >= 0 && x->ndim >= 0 && d < b.ndim; d++) {
        sm_dim have = x->dims[d + x->ndim - b.ndim];
        bad = b.dims[d].size >= 0 && have.size >= 0 &&
              b.dims[d].size != have.size;
    }
    if (bad) {
        char sx[160], ss[160];
        sm_type_str(x, sx, sizeof sx);
        sm_type_str(slope, ss, sizeof ss);
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: slope %s does not broadcast onto X %s", s->op->name,
                      ss, sx);
    }
    s->out[0] = *x;
    return SMELT_OK;
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
    SM_TRY(check_kind(s, 0));
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

/* Fails when input i is present with a known shape other than the 1-D
 * [c] (c < 0: any length). */
static smelt_status check_vector(sm_shape_ctx *s, int i, int64_t c,
                                 const char *what)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->ndim < 0)
        return SMELT_OK;
    if (t->ndim == 1 && (c < 0 || t->dims[0].size < 0 || t->dims[0].size == c))
        return SMELT_OK;
    char buf[160];
    sm_type_str(t, buf, sizeof buf);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s (input %d) must be 1-D with C = %lld values, got %s",
                  s->op->name, what, i, (long long)c, buf);
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
        SM_TRY(check_kind(s, i));
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
    SM_TRY(check_vector(s, 1, c, "scale"));
    SM_TRY(check_vector(s, 2, c, "B"));
    s->out[0] = *x;
    return SMELT_OK;
}

/* LpPool's and GlobalLpPool's p: at least 1. */
static smelt_status check_p(sm_shape_ctx *s)
{
    int64_t p = sm_attrs_int(&s->attrs, "p", 2);
    if (p < 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: p = %lld must be at least 1", s->op->name,
                      (long long)p);
    return SMELT_OK;
}

/* LpPool: MaxPool's and AveragePool's window shape, float only. */
smelt_status sm_shape_lppool(sm_shape_ctx *s)
{
    SM_TRY(check_p(s));
    return sm_shape_pool(s);
}

/* GlobalLpPool: [N, C, D...] gives [N, C, 1, ...]. */
smelt_status sm_shape_globallppool(sm_shape_ctx *s)
{
    SM_TRY(check_p(s));
    return sm_shape_globalpool(s);
}

/* CastLike(input, target_type): input's shape in target_type's dtype. */
smelt_status sm_shape_castlike(sm_shape_ctx *s)
{
    const sm_type *x, *like;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &like));
    s->out[0] = *x;
    s->out[0].dtype = like->dtype;
    return SMELT_OK;
}

/* Det(X [..., n, n]): one determinant per matrix, Y [...]. */
smelt_status sm_shape_det(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(check_kind(s, 0));
    sm_type *y = &s->out[0];
    y->dtype = x->dtype;
    y->ndim = SM_RANK_UNKNOWN;
    if (x->ndim < 0)
        return SMELT_OK;
    int64_t r = x->ndim >= 2 ? x->dims[x->ndim - 2].size : -1;
    int64_t c = x->ndim >= 2 ? x->dims[x->ndim - 1].size : -1;
    if (x->ndim < 2 || (r >= 0 && c >= 0 && r != c)) {
        char buf[160];
        sm_type_str(x, buf, sizeof buf);
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X must be [..., n, n] (square matrices), got %s",
                      s->op->name, buf);
    }
    y->ndim = x->ndim - 2;
    for (int d = 0; d < y->ndim; d++)
        y->dims[d] = x->dims[d];
    return SMELT_OK;
}

/* Det: LU elimination, about 2/3 n^3 multiply-adds per matrix. */
void sm_cost_det(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    double n = x && x->ndim >= 1 && x->dims[x->ndim - 1].size >= 0
                   ? (double)x->dims[x->ndim - 1].size
                   : 1;
    double batch = sm_type_numel(&s->out[0]);
    c->flops = batch * 4 * n * n * n / 3;
    c->bytes_read = x ? sm_type_bytes(x) : 0;
    c->bytes_write = sm_type_bytes(&s->out[0]);
}

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
    SM_TRY(check_vector(s, 2, c, "weight"));
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
