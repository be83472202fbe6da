/*
 * shape_quant.c - shape and dtype inference, and costs, of the quantized
 * ops: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (per
 * tensor or per axis, u8 / i8), MatMulInteger and ConvInteger (int32
 * results), QLinearMatMul and QLinearConv (requantized results), and
 * Smelt's FusedQMatMul (an int8 product with an f32 result).
 *
 * The matmul and conv shapes come from MatMul's and Conv's own shape
 * functions, run on the operands' shapes, so the rules are not repeated.
 */
#include <math.h>
#include <string.h>

#include "core/act.h"
#include "core/dtype.h"
#include "ir/shape_util.h"

static int is_q8(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_U8 || dt == SMELT_DTYPE_I8;
}

/* Fails when input i is present with a known dtype that `ok` refuses. */
static smelt_status check_dtype(sm_shape_ctx *s, int i, int (*ok)(smelt_dtype),
                                const char *what)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->dtype == SMELT_DTYPE_UNDEFINED || ok(t->dtype))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: input %d has dtype %s, expected %s", s->op->name, i,
                  smelt_dtype_name(t->dtype), what);
}

static int is_q32(smelt_dtype dt)
{
    return is_q8(dt) || dt == SMELT_DTYPE_I32;
}

static int is_f32_or_i32(smelt_dtype dt)
{
    return sm_dtype_is_float(dt) || dt == SMELT_DTYPE_I32;
}

static int is_i32(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_I32;
}

/* Fails when inputs i and j are both present with known, different
 * dtypes (a zero point and the tensor it belongs to). */
static smelt_status check_same(sm_shape_ctx *s, int i, int j)
{
    const sm_type *a = sm_shape_in(s, i), *b = sm_shape_in(s, j);
    if (!a || !b || a->dtype == SMELT_DTYPE_UNDEFINED ||
        b->dtype == SMELT_DTYPE_UNDEFINED || a->dtype == b->dtype)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: inputs %d and %d must have the same dtype, got %s and "
                  "%s",
                  s->op->name, i, j, smelt_dtype_name(a->dtype),
                  smelt_dtype_name(b->dtype));
}

/*
 * Fails unless input i (a scale or zero point, when present with a known
 * shape) holds one value (per tensor) or is 1-D with n values (per axis,
 * row, column or channel; n < 0: not known, any length passes).
 */
static smelt_status check_param(sm_shape_ctx *s, int i, int64_t n)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->ndim < 0)
        return SMELT_OK;
    int one = 1;
    for (int d = 0; d < t->ndim; d++)
        one &= t->dims[d].size == 1;
    if (one)
        return SMELT_OK;
    if (t->ndim == 1 && (n < 0 || t->dims[0].size < 0 || t->dims[0].size == n))
        return SMELT_OK;
    char buf[160];
    sm_type_str(t, buf, sizeof buf);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: input %d must hold one value or be 1-D with %lld, got "
                  "%s",
                  s->op->name, i, (long long)n, buf);
}

/*
 * Fails when input i is a scale whose values are known and one is not
 * positive and finite. While the graph is inferred (s->node set) a known
 * value is a constant, and a zero scale is refused everywhere; when a
 * node runs, zero is refused only where the op divides by the scale
 * (divides: QuantizeLinear's y_scale, the QLinear ops' y_scale), since a
 * DynamicQuantizeLinear of an all-zero tensor yields scale 0 and a
 * DequantizeLinear of it is well defined.
 */
static smelt_status check_scale_values(sm_shape_ctx *s, int i, int divides)
{
    if (i >= s->n_in || !s->in[i].present || !s->in[i].data)
        return SMELT_OK;
    const sm_tensor *t = s->in[i].data;
    if (!sm_dtype_is_float(t->dtype))
        return SMELT_OK;
    int zero_ok = !s->node && !divides;
    for (int64_t k = 0; k < t->numel; k++) {
        double v = sm_load_f64(t->dtype, t->data, k);
        if (isfinite(v) && (v > 0 || (zero_ok && v == 0)))
            continue;
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: scale (input %d) element %lld is %g; a scale must "
                      "be positive and finite",
                      s->op->name, i, (long long)k, v);
    }
    return SMELT_OK;
}

/* Size of dim d of t (negative d counts from the end), -1 if unknown. */
static int64_t dim_size(const sm_type *t, int d)
{
    if (!t || t->ndim < 0)
        return -1;
    d = d < 0 ? d + t->ndim : d;
    return d >= 0 && d < t->ndim ? t->dims[d].size : -1;
}

/* The per-axis length for QuantizeLinear / DequantizeLinear: x's dim
 * `axis` (checked for range when x's rank is known). */
static smelt_status axis_len(sm_shape_ctx *s, const sm_type *x, int64_t *n)
{
    *n = -1;
    if (x->ndim < 0)
        return SMELT_OK;
    int ax;
    int64_t axis = sm_attrs_int(&s->attrs, "axis", 1);
    const sm_type *scale = sm_shape_in(s, 1);
    if (!scale || scale->ndim != 1 || scale->dims[0].size == 1)
        return SMELT_OK; /* per tensor: the axis is not used */
    SM_TRY(sm_shape_axis(s, axis, x->ndim, &ax));
    *n = x->dims[ax].size;
    return SMELT_OK;
}

/*
 * QuantizeLinear(x, y_scale, y_zero_point?): y = saturate(round(x /
 * y_scale) + y_zero_point), in the zero point's dtype (u8 when absent);
 * scale and zero point per tensor or per `axis`.
 */
smelt_status sm_shape_quantizelinear(sm_shape_ctx *s)
{
    const sm_type *x, *scale;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &scale));
    SM_TRY(check_dtype(s, 0, is_f32_or_i32, "a float or i32 dtype"));
    SM_TRY(check_dtype(s, 1, sm_dtype_is_float, "a float dtype"));
    SM_TRY(check_dtype(s, 2, is_q8, "u8 or i8"));
    int64_t n;
    SM_TRY(axis_len(s, x, &n));
    SM_TRY(check_param(s, 1, n));
    SM_TRY(check_param(s, 2, n));
    SM_TRY(check_scale_values(s, 1, 1));
    const sm_type *zp = sm_shape_in(s, 2);
    s->out[0] = *x;
    s->out[0].dtype = zp ? zp->dtype : SMELT_DTYPE_U8;
    return SMELT_OK;
}

/*
 * FakeQuantize(x, scale, zero_point?) {axis}: QuantizeLinear's inputs and
 * checks, but a float x (the pair's dequantized value comes out in x's
 * dtype and shape); the zero point (u8 or i8) sets the clamping range.
 */
smelt_status sm_shape_fakequantize(sm_shape_ctx *s)
{
    const sm_type *x, *scale;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &scale));
    SM_TRY(check_dtype(s, 0, sm_dtype_is_float, "a float dtype"));
    SM_TRY(check_dtype(s, 1, sm_dtype_is_float, "a float dtype"));
    SM_TRY(check_dtype(s, 2, is_q8, "u8 or i8"));
    int64_t n;
    SM_TRY(axis_len(s, x, &n));
    SM_TRY(check_param(s, 1, n));
    SM_TRY(check_param(s, 2, n));
    SM_TRY(check_scale_values(s, 1, 1));
    s->out[0] = *x;
    return SMELT_OK;
}

/* An i32 x has no zero point (ONNX: it must be 0): a known nonzero one
 * is out of range. */
static smelt_status check_i32_zero_point(sm_shape_ctx *s, const sm_type *x)
{
    if (x->dtype != SMELT_DTYPE_I32 || s->n_in < 3 || !s->in[2].present ||
        !s->in[2].data)
        return SMELT_OK;
    const sm_tensor *z = s->in[2].data;
    for (int64_t k = 0; k < z->numel; k++)
        if (sm_load_i64(z->dtype, z->data, k) != 0)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: the zero point of an i32 input must be 0, "
                          "value %lld is %lld",
                          s->op->name, (long long)k,
                          (long long)sm_load_i64(z->dtype, z->data, k));
    return SMELT_OK;
}

/*
 * DequantizeLinear(x, x_scale, x_zero_point?): y = (x - x_zero_point) *
 * x_scale in the scale's dtype; the zero point shares x's dtype.
 */
smelt_status sm_shape_dequantizelinear(sm_shape_ctx *s)
{
    const sm_type *x, *scale;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &scale));
    SM_TRY(check_dtype(s, 0, is_q32, "u8, i8 or i32"));
    SM_TRY(check_dtype(s, 1, sm_dtype_is_float, "a float dtype"));
    SM_TRY(check_same(s, 0, 2));
    int64_t n;
    SM_TRY(axis_len(s, x, &n));
    SM_TRY(check_param(s, 1, n));
    SM_TRY(check_param(s, 2, n));
    SM_TRY(check_scale_values(s, 1, 0));
    SM_TRY(check_i32_zero_point(s, x));
    s->out[0] = *x;
    s->out[0].dtype = scale->dtype;
    return SMELT_OK;
}

/* DynamicQuantizeLinear(x): y (u8, x's shape), y_scale (f32 scalar),
 * y_zero_point (u8 scalar). */
smelt_status sm_shape_dynamicquantizelinear(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(check_dtype(s, 0, sm_dtype_is_float, "a float dtype"));
    s->out[0] = *x;
    s->out[0].dtype = SMELT_DTYPE_U8;
    if (s->n_out > 1)
        sm_type_set(&s->out[1], SMELT_DTYPE_F32, 0, NULL);
    if (s->n_out > 2)
        sm_type_set(&s->out[2], SMELT_DTYPE_U8, 0, NULL);
    return SMELT_OK;
}

/*
 * Runs MatMul's (conv = 0) or Conv's (conv = 1) shape function on the
 * inputs idx[0..n) of s, as f32 operands of their shapes (the quantized
 * dtypes are checked by the callers), giving the output shape in *y.
 */
static smelt_status inner_shape(sm_shape_ctx *s, int conv, const int *idx,
                                int n, sm_type *y)
{
    sm_type t[3];
    sm_operand in[3];
    for (int k = 0; k < n; k++) {
        const sm_type *src = sm_shape_in(s, idx[k]);
        in[k] = (sm_operand){src != NULL, src ? &t[k] : NULL, NULL};
        if (src) {
            t[k] = *src;
            t[k].dtype = SMELT_DTYPE_F32;
        }
    }
    sm_shape_ctx sub = *s;
    sub.n_in = n;
    sub.in = in;
    sub.n_out = 1;
    sub.out = y;
    return conv ? sm_shape_conv(&sub) : sm_shape_matmul(&sub);
}

/*
 * MatMulInteger(A, B, a_zero_point?, b_zero_point?): i32 result of the
 * matmul of (A - a_zero_point) and (B - b_zero_point); A and B are u8 or
 * i8, each zero point has its tensor's dtype and is per tensor or per row
 * of A / per column of B.
 */
smelt_status sm_shape_matmulinteger(sm_shape_ctx *s)
{
    const sm_type *a, *b;
    SM_TRY(sm_shape_need(s, 0, &a));
    SM_TRY(sm_shape_need(s, 1, &b));
    for (int i = 0; i < 4; i++)
        SM_TRY(check_dtype(s, i, is_q8, "u8 or i8"));
    SM_TRY(check_same(s, 0, 2));
    SM_TRY(check_same(s, 1, 3));
    SM_TRY(check_param(s, 2, a->ndim > 1 ? dim_size(a, -2) : 1));
    SM_TRY(check_param(s, 3, b->ndim > 1 ? dim_size(b, -1) : 1));
    static const int idx[2] = {0, 1};
    SM_TRY(inner_shape(s, 0, idx, 2, &s->out[0]));
    s->out[0].dtype = SMELT_DTYPE_I32;
    return SMELT_OK;
}

/*
 * QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point): the matmul of the dequantized a and b,
 * requantized with y's scale and zero point into y_zero_point's dtype.
 * a's parameters are per tensor or per row, b's per tensor or per column,
 * y's per tensor.
 */
smelt_status sm_shape_qlinearmatmul(sm_shape_ctx *s)
{
    const sm_type *a, *b, *t;
    SM_TRY(sm_shape_need(s, 0, &a));
    SM_TRY(sm_shape_need(s, 3, &b));
    for (int i = 1; i < 8; i++)
        SM_TRY(sm_shape_need(s, i, &t));
    static const int q8[] = {0, 2, 3, 5, 7}, fl[] = {1, 4, 6};
    for (int i = 0; i < 5; i++)
        SM_TRY(check_dtype(s, q8[i], is_q8, "u8 or i8"));
    for (int i = 0; i < 3; i++)
        SM_TRY(check_dtype(s, fl[i], sm_dtype_is_float, "a float dtype"));
    SM_TRY(check_same(s, 0, 2));
    SM_TRY(check_same(s, 3, 5));
    int64_t m = a->ndim > 1 ? dim_size(a, -2) : 1;
    int64_t n = b->ndim > 1 ? dim_size(b, -1) : 1;
    SM_TRY(check_param(s, 1, m));
    SM_TRY(check_param(s, 2, m));
    SM_TRY(check_param(s, 4, n));
    SM_TRY(check_param(s, 5, n));
    SM_TRY(check_param(s, 6, 1));
    SM_TRY(check_param(s, 7, 1));
    SM_TRY(check_scale_values(s, 1, 0));
    SM_TRY(check_scale_values(s, 4, 0));
    SM_TRY(check_scale_values(s, 6, 1));
    static const int idx[2] = {0, 3};
    SM_TRY(inner_shape(s, 0, idx, 2, &s->out[0]));
    s->out[0].dtype = sm_shape_in(s, 7)->dtype;
    return SMELT_OK;
}

/*
 * ConvInteger(x, w, x_zero_point?, w_zero_point?): i32 result of Conv
 * over (x - x_zero_point) and (w - w_zero_point); w's zero point per
 * tensor or per output channel.
 */
smelt_status sm_shape_convinteger(sm_shape_ctx *s)
{
    const sm_type *w;
    SM_TRY(sm_shape_need(s, 1, &w));
    for (int i = 0; i < 4; i++)
        SM_TRY(check_dtype(s, i, is_q8, "u8 or i8"));
    SM_TRY(check_same(s, 0, 2));
    SM_TRY(check_same(s, 1, 3));
    SM_TRY(check_param(s, 2, 1));
    SM_TRY(check_param(s, 3, dim_size(w, 0)));
    static const int idx[2] = {0, 1};
    SM_TRY(inner_shape(s, 1, idx, 2, &s->out[0]));
    s->out[0].dtype = SMELT_DTYPE_I32;
    return SMELT_OK;
}

/*
 * QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, B?): Conv over the dequantized x and w plus the
 * i32 bias B (in x_scale * w_scale units), requantized into y's dtype;
 * w's parameters per tensor or per output channel.
 */
smelt_status sm_shape_qlinearconv(sm_shape_ctx *s)
{
    const sm_type *w, *t;
    SM_TRY(sm_shape_need(s, 3, &w));
    for (int i = 0; i < 8; i++)
        SM_TRY(sm_shape_need(s, i, &t));
    static const int q8[] = {0, 2, 3, 5, 7}, fl[] = {1, 4, 6};
    for (int i = 0; i < 5; i++)
        SM_TRY(check_dtype(s, q8[i], is_q8, "u8 or i8"));
    for (int i = 0; i < 3; i++)
        SM_TRY(check_dtype(s, fl[i], sm_dtype_is_float, "a float dtype"));
    SM_TRY(check_dtype(s, 8, is_i32, "i32"));
    SM_TRY(check_same(s, 0, 2));
    SM_TRY(check_same(s, 3, 5));
    int64_t m = dim_size(w, 0);
    SM_TRY(check_param(s, 1, 1));
    SM_TRY(check_param(s, 2, 1));
    SM_TRY(check_param(s, 4, m));
    SM_TRY(check_param(s, 5, m));
    SM_TRY(check_param(s, 6, 1));
    SM_TRY(check_param(s, 7, 1));
    SM_TRY(check_scale_values(s, 1, 0));
    SM_TRY(check_scale_values(s, 4, 0));
    SM_TRY(check_scale_values(s, 6, 1));
    static const int idx[3] = {0, 3, 8};
    SM_TRY(inner_shape(s, 1, idx, sm_shape_in(s, 8) ? 3 : 2, &s->out[0]));
    s->out[0].dtype = sm_shape_in(s, 7)->dtype;
    return SMELT_OK;
}

/* Costs of the contractions: MatMul's and Conv's on the same operands,
 * plus one operation per output element for the requantization. */
static void inner_cost(const sm_shape_ctx *s, int conv, const int *idx, int n,
                       sm_cost *c)
{
    sm_operand in[3];
    for (int k = 0; k < n; k++)
        in[k] = idx[k] < s->n_in ? s->in[idx[k]] : (sm_operand){0, NULL, NULL};
    sm_shape_ctx sub = *s;
    sub.n_in = n;
    sub.in = in;
    sub.n_out = 1;
    if (conv)
        sm_cost_conv(&sub, c);
    else
        sm_cost_matmul(&sub, c);
    c->flops += sm_type_numel(&s->out[0]);
    c->bytes_read = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
}

void sm_cost_qmatmul(const sm_shape_ctx *s, sm_cost *c)
{
    static const int mmi[2] = {0, 1}, qmm[2] = {0, 3};
    int q = s->n_in > 4; /* QLinearMatMul: b is input 3 */
    inner_cost(s, 0, q ? qmm : mmi, 2, c);
}

void sm_cost_qconv(const sm_shape_ctx *s, sm_cost *c)
{
    static const int ci[2] = {0, 1}, qc[3] = {0, 3, 8};
    int q = s->n_in > 4; /* QLinearConv: w is input 3 */
    inner_cost(s, 1, q ? qc : ci, q ? 3 : 2, c);
}

static int is_f32(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32;
}

/* Fails unless input i, when present and its rank and y's known, has
 * y's shape wherever both dims are known numbers. */
static smelt_status check_residual(sm_shape_ctx *s, int i, const sm_type *y)
{
    const sm_type *r = sm_shape_in(s, i);
    if (!r || r->ndim < 0 || y->ndim < 0)
        return SMELT_OK;
    int ok = r->ndim == y->ndim;
    for (int d = 0; ok && d < r->ndim; d++)
        ok = r->dims[d].size < 0 || y->dims[d].size < 0 ||
             r->dims[d].size == y->dims[d].size;
    if (ok)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: the residual (input %d) must have the result's shape",
                  s->op->name, i);
}

/*
 * FusedQMatMul(A, B, B_scale, B_zero_point?, bias?, A_scale?,
 * A_zero_point?, residual?): f32 [..., M, N] from A [..., M, K] (f32,
 * quantized per call, or u8 / i8) and B [K, N] (u8 / i8). B's scale and
 * zero point per tensor or per column, the bias one value or N, A's scale
 * and zero point per tensor (only for a quantized A), the residual an f32
 * of the result's shape (added element by element, no broadcasting); the
 * activation checked as FusedGemm's.
 */
smelt_status sm_shape_fusedqmatmul(sm_shape_ctx *s)
{
    const sm_type *a, *b, *t;
    SM_TRY(sm_shape_need(s, 0, &a));
    SM_TRY(sm_shape_need(s, 1, &b));
    SM_TRY(sm_shape_need(s, 2, &t));
    sm_act act;
    SM_TRY(sm_act_read(s->ctx, s->op->name, &s->attrs, &act));
    if (a->dtype != SMELT_DTYPE_UNDEFINED && !is_f32(a->dtype) &&
        !is_q8(a->dtype))
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: input 0 has dtype %s, expected f32, u8 or i8",
                      s->op->name, smelt_dtype_name(a->dtype));
    if (is_f32(a->dtype) && (sm_shape_in(s, 5) || sm_shape_in(s, 6)))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: an f32 A is quantized per call and takes no "
                      "scale or zero point (inputs 5, 6)",
                      s->op->name);
    if (b->ndim >= 0 && b->ndim != 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: B (input 1) must be 2-D, got rank %d", s->op->name,
                      b->ndim);
    SM_TRY(check_dtype(s, 1, is_q8, "u8 or i8"));
    SM_TRY(check_dtype(s, 3, is_q8, "u8 or i8"));
    SM_TRY(check_dtype(s, 6, is_q8, "u8 or i8"));
    static const int fl[] = {2, 4, 5, 7};
    for (int i = 0; i < 4; i++)
        SM_TRY(check_dtype(s, fl[i], is_f32, "f32"));
    SM_TRY(check_same(s, 1, 3));
    SM_TRY(check_same(s, 0, 6));
    int64_t n = dim_size(b, -1);
    SM_TRY(check_param(s, 2, n));
    SM_TRY(check_param(s, 3, n));
    SM_TRY(check_param(s, 4, n));
    SM_TRY(check_param(s, 5, 1));
    SM_TRY(check_param(s, 6, 1));
    SM_TRY(check_scale_values(s, 2, 0));
    SM_TRY(check_scale_values(s, 5, 0));
    static const int idx[2] = {0, 1};
    SM_TRY(inner_shape(s, 0, idx, 2, &s->out[0]));
    s->out[0].dtype = SMELT_DTYPE_F32;
    return check_residual(s, 7, &s->out[0]);
}

/* MatMul's cost on A and B, plus the epilogue (and the residual's
 * addition) and (f32 A) the quantization: a few operations per element. */
void sm_cost_fusedqmatmul(const sm_shape_ctx *s, sm_cost *c)
{
    static const int mm[2] = {0, 1};
    inner_cost(s, 0, mm, 2, c);
    c->flops += (sm_shape_in(s, 7) ? 3 : 2) * sm_type_numel(&s->out[0]);
    const sm_type *a = sm_shape_in(s, 0);
    if (a && is_f32(a->dtype))
        c->flops += 3 * sm_type_numel(a);
}
