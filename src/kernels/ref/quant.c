/*
 * quant.c - reference kernels of the quantized ops: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul and QLinearConv, and Smelt's FusedQMatMul (the
 * dynamic-quantization chain as one node).
 *
 * The contractions do not repeat the matmul and conv loops: they shift the
 * quantized operands by their zero points into temporary i32 / f64
 * tensors (exact: every product and sum of 8-bit values fits), run the
 * MatMul or Conv reference kernel on those, and requantize the result:
 * y = saturate(round(acc * scale_a * scale_b / scale_y) + zero_point_y),
 * rounding halves to even as ONNX specifies.
 */
#include <math.h>
#include <string.h>

#include "core/act.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/quant.h"
#include "kernels/ref/ref_util.h"

/* Element i of a quantization parameter: its only value (per tensor) or
 * value (i / inner) % numel (per axis, row, column or channel). 0 (or 1
 * for a scale, def) when the parameter is absent. */
static double param_at(const sm_tensor *t, int64_t i, int64_t inner, double def)
{
    if (!t || t->numel == 0)
        return def;
    int64_t k = t->numel == 1 ? 0 : (i / inner) % t->numel;
    return sm_load_f64(t->dtype, t->data, k);
}

smelt_status sm_quant_check_scale(const sm_kargs *a, int i, int divides)
{
    const sm_tensor *t = i < a->n_in ? a->in[i] : NULL;
    if (!t || !sm_dtype_is_float(t->dtype))
        return SMELT_OK;
    if (t->dtype == SMELT_DTYPE_F32) { /* the common case, per call */
        const float *p = t->data;
        int bad = 0;
        for (int64_t k = 0; k < t->numel; k++)
            bad |= !(p[k] < INFINITY && (p[k] > 0 || (!divides && p[k] == 0)));
        if (!bad)
            return SMELT_OK;
    }
    for (int64_t k = 0; k < t->numel; k++) {
        double v = sm_load_f64(t->dtype, t->data, k);
        if (isfinite(v) && (v > 0 || (!divides && v == 0)))
            continue;
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: scale (input %d) element %lld is %g; a scale must "
                      "be positive and finite",
                      a->op_name, i, (long long)k, v);
    }
    return SMELT_OK;
}

/* round-half-to-even of v, saturated to dt's range (u8, i8, i32). */
static int64_t saturate_q(smelt_dtype dt, double v)
{
    double lo = dt == SMELT_DTYPE_U8   ? 0
                : dt == SMELT_DTYPE_I8 ? -128
                                       : (double)INT32_MIN;
    double hi = dt == SMELT_DTYPE_U8   ? 255
                : dt == SMELT_DTYPE_I8 ? 127
                                       : (double)INT32_MAX;
    v = nearbyint(v);
    if (isnan(v))
        return 0;
    return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

/* v rounded to the precision of dt (f32: as ONNX Runtime divides). */
static double as_dtype(smelt_dtype dt, double v)
{
    return dt == SMELT_DTYPE_F32 ? (double)(float)v : v;
}

/* The product of the dims of t after `axis` (the run one per-axis
 * parameter covers), checking the axis; 1 for a per-tensor parameter. */
static smelt_status axis_inner(const sm_kargs *a, const sm_tensor *x,
                               const sm_tensor *scale, int64_t *inner)
{
    *inner = 1;
    if (scale->numel == 1)
        return SMELT_OK;
    int rank = x->ndim;
    int64_t axis = sm_attrs_int(&a->attrs, "axis", 1);
    if (axis < -rank || axis >= rank)
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: axis %lld is out of range for rank %d", a->op_name,
                      (long long)axis, rank);
    int ax = (int)(axis < 0 ? axis + rank : axis);
    if (scale->numel != x->dims[ax])
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: %lld scales for axis %d of size %lld", a->op_name,
                      (long long)scale->numel, ax, (long long)x->dims[ax]);
    for (int d = ax + 1; d < rank; d++)
        *inner *= x->dims[d];
    return SMELT_OK;
}

/* QuantizeLinear: y = saturate(round(x / scale) + zero_point). */
smelt_status sm_ref_quantizelinear(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *scale = a->in[1];
    const sm_tensor *zp = a->n_in > 2 ? a->in[2] : NULL;
    sm_tensor *y = a->out[0];
    int64_t inner;
    SM_TRY(axis_inner(a, x, scale, &inner));
    SM_TRY(sm_quant_check_scale(a, 1, 1));
    if (y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    for (int64_t i = 0; i < x->numel; i++) {
        double q = as_dtype(x->dtype, sm_load_f64(x->dtype, x->data, i) /
                                          param_at(scale, i, inner, 1));
        sm_store_i64(
            y->dtype, y->data, i,
            saturate_q(y->dtype, nearbyint(q) + param_at(zp, i, inner, 0)));
    }
    return SMELT_OK;
}

/* FakeQuantize: y = (saturate(round(x / scale) + zero_point) -
 * zero_point) * scale, QuantizeLinear's arithmetic (the division in x's
 * dtype, halves to even) followed by DequantizeLinear's, in x's dtype. */
smelt_status sm_ref_fakequantize(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *scale = a->in[1];
    const sm_tensor *zp = a->n_in > 2 ? a->in[2] : NULL;
    sm_tensor *y = a->out[0];
    int64_t inner;
    SM_TRY(axis_inner(a, x, scale, &inner));
    SM_TRY(sm_quant_check_scale(a, 1, 1));
    if (y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    smelt_dtype qt = zp ? zp->dtype : SMELT_DTYPE_U8;
    for (int64_t i = 0; i < x->numel; i++) {
        double s = param_at(scale, i, inner, 1), z = param_at(zp, i, inner, 0);
        double q = as_dtype(x->dtype, sm_load_f64(x->dtype, x->data, i) / s);
        double v = (double)saturate_q(qt, nearbyint(q) + z);
        sm_store_f64(y->dtype, y->data, i, as_dtype(x->dtype, (v - z) * s));
    }
    return SMELT_OK;
}

/* DequantizeLinear: y = (x - zero_point) * scale. */
smelt_status sm_ref_dequantizelinear(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *scale = a->in[1];
    const sm_tensor *zp = a->n_in > 2 ? a->in[2] : NULL;
    sm_tensor *y = a->out[0];
    int64_t inner;
    SM_TRY(axis_inner(a, x, scale, &inner));
    SM_TRY(sm_quant_check_scale(a, 1, 0));
    if (y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    for (int64_t i = 0; i < x->numel; i++)
        sm_store_f64(
            y->dtype, y->data, i,
            (sm_load_f64(x->dtype, x->data, i) - param_at(zp, i, inner, 0)) *
                param_at(scale, i, inner, 1));
    return SMELT_OK;
}

/*
 * DynamicQuantizeLinear: u8 with scale (max(x, 0) - min(x, 0)) / 255 and
 * zero point saturate(round(-min / scale)), all in f32 arithmetic as
 * ONNX's function body has it. An all-zero x gets scale 0, zero point 0.
 */
smelt_status sm_ref_dynamicquantizelinear(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        double v = sm_load_f64(x->dtype, x->data, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    float scale = (float)((double)(float)(hi - lo) / 255.0);
    double zp =
        scale ? (double)saturate_q(SMELT_DTYPE_U8, (double)(float)(-lo / scale))
              : 0;
    for (int64_t i = 0; i < x->numel; i++) {
        double v = sm_load_f64(x->dtype, x->data, i);
        double q = scale ? nearbyint((double)(float)(v / scale)) + zp : zp;
        sm_store_i64(y->dtype, y->data, i, saturate_q(SMELT_DTYPE_U8, q));
    }
    if (a->n_out > 1 && a->out[1]->numel == 1)
        sm_store_f64(a->out[1]->dtype, a->out[1]->data, 0, scale);
    if (a->n_out > 2 && a->out[2]->numel == 1)
        sm_store_i64(a->out[2]->dtype, a->out[2]->data, 0, (int64_t)zp);
    return SMELT_OK;
}

/* A new tensor of t's shape in dtype dt holding t - zp (zp per tensor, or
 * value (i / inner) % numel; absent: 0). */
static smelt_status shifted(const sm_kargs *a, const sm_tensor *t,
                            const sm_tensor *zp, int64_t inner, smelt_dtype dt,
                            sm_tensor **out)
{
    SM_TRY(sm_tensor_new(a->ctx, dt, t->ndim, t->dims, out));
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(dt, (*out)->data, i,
                     sm_load_f64(t->dtype, t->data, i) -
                         param_at(zp, i, inner, 0));
    return SMELT_OK;
}

/* Runs kernel fn (MatMul or Conv) with a's attributes on in[0..n) into
 * out. */
static smelt_status run_inner(const sm_kargs *a, sm_kernel_fn fn, int n,
                              sm_tensor **in, sm_tensor *out)
{
    sm_kargs k = *a;
    k.n_in = n;
    k.in = in;
    k.n_out = 1;
    k.out = &out;
    return fn(&k);
}

/* Rows and columns of a matmul's result: A [..., M, K], B [..., K, N]
 * (1-D operands counting as one row or column). */
static void mm_dims(const sm_tensor *A, const sm_tensor *B, int64_t *M,
                    int64_t *K, int64_t *N)
{
    *M = A->ndim > 1 ? A->dims[A->ndim - 2] : 1;
    *K = A->ndim > 0 ? A->dims[A->ndim - 1] : 1;
    *N = B->ndim > 1 ? B->dims[B->ndim - 1] : 1;
}

/*
 * The shifted operands of a quantized matmul (A at input ia, its zero
 * point at iza; B at ib, zero point at izb): A per row, B per column.
 */
static smelt_status mm_operands(const sm_kargs *a, int ia, int iza, int ib,
                                int izb, sm_tensor **op)
{
    const sm_tensor *A = a->in[ia], *B = a->in[ib];
    const sm_tensor *za = iza < a->n_in ? a->in[iza] : NULL;
    const sm_tensor *zb = izb < a->n_in ? a->in[izb] : NULL;
    int64_t M, K, N;
    mm_dims(A, B, &M, &K, &N);
    op[0] = op[1] = NULL;
    SM_TRY(shifted(a, A, za, K ? K : 1, SMELT_DTYPE_I32, &op[0]));
    return shifted(a, B, zb, 1, SMELT_DTYPE_I32, &op[1]);
}

/* MatMulInteger: MatMul of the shifted operands straight into the i32
 * output. */
smelt_status sm_ref_matmulinteger(const sm_kargs *a)
{
    sm_tensor *op[2];
    smelt_status st = mm_operands(a, 0, 2, 1, 3, op);
    if (st == SMELT_OK)
        st = run_inner(a, sm_ref_matmul, 2, op, a->out[0]);
    sm_tensor_free(op[0]);
    sm_tensor_free(op[1]);
    return st;
}

/* QLinearMatMul: the i32 product requantized per output element with a's
 * row scale, b's column scale and y's scale and zero point. */
smelt_status sm_ref_qlinearmatmul(const sm_kargs *a)
{
    sm_tensor *y = a->out[0], *acc = NULL, *op[2];
    SM_TRY(sm_quant_check_scale(a, 1, 0));
    SM_TRY(sm_quant_check_scale(a, 4, 0));
    SM_TRY(sm_quant_check_scale(a, 6, 1));
    smelt_status st = mm_operands(a, 0, 2, 3, 5, op);
    if (st == SMELT_OK)
        st = sm_tensor_new(a->ctx, SMELT_DTYPE_I64, y->ndim, y->dims, &acc);
    if (st == SMELT_OK)
        st = run_inner(a, sm_ref_matmul, 2, op, acc);
    if (st == SMELT_OK) {
        int64_t M, K, N;
        mm_dims(a->in[0], a->in[3], &M, &K, &N);
        double ys = param_at(a->in[6], 0, 1, 1);
        double yzp = param_at(a->in[7], 0, 1, 0);
        for (int64_t i = 0; i < y->numel; i++) {
            double sa = param_at(a->in[1], i, N, 1); /* row (i / N) % M */
            double sb = param_at(a->in[4], i, 1, 1); /* column i % N */
            double v = (double)((int64_t *)acc->data)[i] * (sa * sb / ys);
            sm_store_i64(y->dtype, y->data, i,
                         saturate_q(y->dtype, nearbyint(v) + yzp));
        }
    }
    sm_tensor_free(acc);
    sm_tensor_free(op[0]);
    sm_tensor_free(op[1]);
    return st;
}

/*
 * The shifted operands of a quantized conv: x (input 0, zero point at
 * ixz) per tensor, w (input iw, zero point at iwz) per output channel,
 * and the optional bias (input ib) as f64.
 */
static smelt_status conv_operands(const sm_kargs *a, int ixz, int iw, int iwz,
                                  int ib, sm_tensor **op)
{
    const sm_tensor *x = a->in[0], *w = a->in[iw];
    const sm_tensor *zx = ixz < a->n_in ? a->in[ixz] : NULL;
    const sm_tensor *zw = iwz < a->n_in ? a->in[iwz] : NULL;
    const sm_tensor *b = ib < a->n_in ? a->in[ib] : NULL;
    int64_t per = w->ndim > 0 && w->dims[0] ? w->numel / w->dims[0] : 1;
    op[0] = op[1] = op[2] = NULL;
    SM_TRY(shifted(a, x, zx, 1, SMELT_DTYPE_F64, &op[0]));
    SM_TRY(shifted(a, w, zw, per ? per : 1, SMELT_DTYPE_F64, &op[1]));
    return b ? shifted(a, b, NULL, 1, SMELT_DTYPE_F64, &op[2]) : SMELT_OK;
}

static void free3(sm_tensor **op)
{
    for (int i = 0; i < 3; i++)
        sm_tensor_free(op[i]);
}

/* ConvInteger: Conv of the shifted operands straight into the i32
 * output (every sum is a whole number, exact in double). */
smelt_status sm_ref_convinteger(const sm_kargs *a)
{
    sm_tensor *op[3];
    smelt_status st = conv_operands(a, 2, 1, 3, a->n_in, op);
    if (st == SMELT_OK)
        st = run_inner(a, sm_ref_conv, 2, op, a->out[0]);
    free3(op);
    return st;
}

/* QLinearConv: Conv (with the bias) of the shifted operands, requantized
 * with x's scale, w's per-channel scale and y's scale and zero point. */
smelt_status sm_ref_qlinearconv(const sm_kargs *a)
{
    sm_tensor *y = a->out[0], *acc = NULL, *op[3];
    SM_TRY(sm_quant_check_scale(a, 1, 0));
    SM_TRY(sm_quant_check_scale(a, 4, 0));
    SM_TRY(sm_quant_check_scale(a, 6, 1));
    smelt_status st = conv_operands(a, 2, 3, 5, 8, op);
    if (st == SMELT_OK)
        st = sm_tensor_new(a->ctx, SMELT_DTYPE_F64, y->ndim, y->dims, &acc);
    if (st == SMELT_OK)
        st = run_inner(a, sm_ref_conv, op[2] ? 3 : 2, op, acc);
    if (st == SMELT_OK) {
        int64_t plane = 1;
        for (int d = 2; d < y->ndim; d++)
            plane *= y->dims[d];
        double xs = param_at(a->in[1], 0, 1, 1);
        double ys = param_at(a->in[6], 0, 1, 1);
        double yzp = param_at(a->in[7], 0, 1, 0);
        for (int64_t i = 0; i < y->numel; i++) {
            double ws = param_at(a->in[4], i, plane ? plane : 1, 1);
            double v = ((double *)acc->data)[i] * (xs * ws / ys);
            sm_store_i64(y->dtype, y->data, i,
                         saturate_q(y->dtype, nearbyint(v) + yzp));
        }
    }
    sm_tensor_free(acc);
    free3(op);
    return st;
}

/* Input i of a when present, else NULL. */
static sm_tensor *in_opt(const sm_kargs *a, int i)
{
    return i < a->n_in ? a->in[i] : NULL;
}

/* Runs the reference DynamicQuantizeLinear of x into q (u8, x's shape),
 * *sa and *zp (new tensors, freed by the caller). */
static smelt_status dql_into(const sm_kargs *a, sm_tensor *x, sm_tensor **q,
                             sm_tensor **sa, sm_tensor **zp)
{
    SM_TRY(sm_tensor_new(a->ctx, SMELT_DTYPE_U8, x->ndim, x->dims, q));
    SM_TRY(sm_tensor_new(a->ctx, SMELT_DTYPE_F32, 0, NULL, sa));
    SM_TRY(sm_tensor_new(a->ctx, SMELT_DTYPE_U8, 0, NULL, zp));
    sm_tensor *out[3] = {*q, *sa, *zp};
    sm_kargs k = *a;
    k.n_in = 1;
    k.in = &x;
    k.n_out = 3;
    k.out = out;
    k.out_hint = NULL;
    return sm_ref_dynamicquantizelinear(&k);
}

/*
 * FusedQMatMul: the chain it stands for, step by step. An f32 A goes
 * through DynamicQuantizeLinear; MatMulInteger gives the i32 sums; then
 * per element y = act(f32(acc) * f32(sa * sb_j) + bias_j + residual_ij),
 * each product
 * and sum rounded to f32 as the Cast, Mul and Add it replaces round them
 * (sa * sb_j: two f32 values, exact in double, then rounded once, like
 * the f32 Mul of the scales).
 */
smelt_status sm_ref_fusedqmatmul(const sm_kargs *a)
{
    sm_tensor *A = a->in[0], *B = a->in[1], *y = a->out[0];
    const sm_tensor *bs = a->in[2], *bias = in_opt(a, 4), *res = in_opt(a, 7);
    sm_act act;
    SM_TRY(sm_act_read(a->ctx, a->op_name, &a->attrs, &act));
    SM_TRY(sm_quant_check_scale(a, 2, 0));
    SM_TRY(sm_quant_check_scale(a, 5, 0));
    if (B->ndim != 2 || y->dtype != SMELT_DTYPE_F32)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: B must be 2-D and the result f32", a->op_name);
    if (res && (res->dtype != SMELT_DTYPE_F32 || res->numel != y->numel))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the residual must be an f32 of the result's shape",
                      a->op_name);
    sm_tensor *q = NULL, *sq = NULL, *zq = NULL, *acc = NULL;
    sm_tensor *in4[4] = {A, B, in_opt(a, 6), in_opt(a, 3)};
    double sa = param_at(in_opt(a, 5), 0, 1, 1);
    smelt_status st = SMELT_OK;
    if (sm_dtype_is_float(A->dtype)) {
        st = dql_into(a, A, &q, &sq, &zq);
        in4[0] = q;
        in4[2] = zq;
        if (st == SMELT_OK)
            sa = ((const float *)sq->data)[0];
    }
    if (st == SMELT_OK)
        st = sm_tensor_new(a->ctx, SMELT_DTYPE_I32, y->ndim, y->dims, &acc);
    if (st == SMELT_OK) {
        sm_kargs k = *a;
        k.n_in = 4;
        k.in = in4;
        k.n_out = 1;
        k.out = &acc;
        k.out_hint = NULL;
        st = sm_ref_matmulinteger(&k);
    }
    if (st == SMELT_OK) {
        int64_t N = B->dims[1];
        for (int64_t i = 0; i < y->numel; i++) {
            int64_t j = i % N;
            float s = (float)(sa * param_at(bs, j, 1, 1));
            float v = (float)((const int32_t *)acc->data)[i];
            v = v * s;
            if (bias)
                v = v + (float)param_at(bias, j, 1, 0);
            if (res)
                v = v + ((const float *)res->data)[i];
            ((float *)y->data)[i] = (float)sm_act_apply(&act, v);
        }
    }
    sm_tensor_free(q);
    sm_tensor_free(sq);
    sm_tensor_free(zq);
    sm_tensor_free(acc);
    return st;
}
