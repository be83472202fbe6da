/*
 * cast.c - the reference Cast kernel.
 *
 * Conversion rules (ONNX, as ONNX Runtime implements them):
 * - float to integer truncates toward zero, saturates at the target's
 *   range, and nan becomes 0;
 * - integer to integer wraps (two's complement), as numpy does;
 * - anything to bool is "not zero" (nan is not zero, so true);
 * - bool reads as 0 or 1;
 * - to a float dtype: through double, rounded once to the target.
 */
#include <math.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

/* Range of an integer dtype. */
static void int_range(smelt_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case SMELT_DTYPE_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case SMELT_DTYPE_U8: *lo = 0, *hi = UINT8_MAX; break;
    case SMELT_DTYPE_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case SMELT_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case SMELT_DTYPE_U16: *lo = 0, *hi = UINT16_MAX; break;
    case SMELT_DTYPE_U32: *lo = 0, *hi = UINT32_MAX; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* Float to integer: truncate, saturate, nan -> 0. (double)hi may round
 * up (2^63 for int64), so the comparisons use >= and <=. */
static int64_t saturate(double v, int64_t lo, int64_t hi)
{
    if (isnan(v))
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

smelt_status sm_ref_cast(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (!x || !y || x->numel != y->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    int from_float = sm_dtype_is_float(x->dtype);
    int to_float = sm_dtype_is_float(y->dtype);
    int64_t lo, hi;
    int_range(y->dtype, &lo, &hi);
    for (int64_t i = 0; i < x->numel; i++) {
        if (from_float && y->dtype == SMELT_DTYPE_U64) {
            /* beyond int64: sm_store_f64 saturates to [0, 2^64 - 1] */
            sm_store_f64(y->dtype, y->data, i,
                         sm_load_f64(x->dtype, x->data, i));
        } else if (from_float && sm_dtype_is_int(y->dtype)) {
            double v = sm_load_f64(x->dtype, x->data, i);
            sm_store_i64(y->dtype, y->data, i, saturate(v, lo, hi));
        } else if (from_float || to_float) {
            sm_store_f64(y->dtype, y->data, i,
                         sm_load_f64(x->dtype, x->data, i));
        } else {
            sm_store_i64(y->dtype, y->data, i,
                         sm_load_i64(x->dtype, x->data, i));
        }
    }
    return SMELT_OK;
}
