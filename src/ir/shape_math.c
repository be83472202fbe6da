/*
 * shape_math.c - shape and dtype inference for the further math ops:
 * elementwise functions and activations, bitwise and logic ops, Mod,
 * LessOrEqual / GreaterOrEqual, Mean and PRelu; Det and its cost.
 *
 * Which dtypes an op accepts, and whether its output is bool, sit in one
 * table indexed by op (the normalizations of shape_norm.c check theirs in
 * it too, sm_shape_check_kind); the other checks follow from the
 * attributes an op has (fmod, direction), so the functions serve whole
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

smelt_status sm_shape_check_kind(sm_shape_ctx *s, int i)
{
    const sm_type *t = sm_shape_in(s, i);
    int kinds = math_flags(s);
    if (!t || t->dtype == SMELT_DTYPE_UNDEFINED || kind_ok(t->dtype, kinds))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: input %d has dtype %s, expected %s dtype", s->op->name,
                  i, smelt_dtype_name(t->dtype), kind_name(kinds));
}

/*
 * Elementwise unary ops: output 0 has input 0's shape, and its dtype or
 * bool (IsNaN, IsInf). Checks the dtype against the op's kinds.
 */
smelt_status sm_shape_math_unary(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_check_kind(s, 0));
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
        SM_TRY(sm_shape_check_kind(s, i));
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

/* Det(X [..., n, n]): one determinant per matrix, Y [...]. */
smelt_status sm_shape_det(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_check_kind(s, 0));
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
