/*
 * shape_const.c - shape functions of the ops that generate values rather
 * than move them: Shape, ConstantOfShape, Range, Constant. Their outputs'
 * sizes come from input values or attributes, which hostile files set to
 * anything, so each one checks the size it infers against the limits.
 */
#include <math.h>

#include "core/dtype.h"
#include "ir/shape_movement.h"
#include "kernels/ref/movement.h"

/* Shape(data) {start, end}: the dims [start, end) of data as int64[n]. */
smelt_status sm_shape_shape(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    sm_movement_unknown(s->out, SMELT_DTYPE_I64, 1);
    if (x->ndim >= 0) {
        int lo, hi;
        sm_shape_op_range(&s->attrs, x->ndim, &lo, &hi);
        s->out->dims[0].size = hi - lo;
    }
    return SMELT_OK;
}

/* ConstantOfShape(shape) {value}: a tensor of the given shape filled with
 * the one-element `value` (default f32 0), whose dtype it takes. */
smelt_status sm_shape_constantofshape(sm_shape_ctx *s)
{
    const sm_type *sh;
    SM_TRY(sm_movement_input(s, 0, &sh));
    smelt_dtype dt = SMELT_DTYPE_F32;
    const sm_attr *v = sm_attrs_find(&s->attrs, "value");
    if (v) {
        if (v->kind != SM_ATTR_TENSOR || v->v.t->numel != 1)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "ConstantOfShape: value must be a one-element "
                          "tensor");
        dt = v->v.t->dtype;
    }
    if (!s->in[0].data) {
        int rank;
        SM_TRY(sm_movement_shape_rank(s, sh, &rank));
        sm_movement_unknown(s->out, dt, rank);
        return SMELT_OK;
    }
    int64_t dims[SMELT_MAX_DIMS];
    int n;
    SM_TRY(sm_movement_read(s, s->in[0].data, dims, &n));
    for (int i = 0; i < n; i++)
        if (dims[i] < 0)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "ConstantOfShape: dimension %d is negative (%lld)", i,
                          (long long)dims[i]);
    sm_type_set(s->out, dt, n, dims);
    return sm_movement_check_size(s, s->out);
}

/* The one element of a Range operand, which must be a scalar. */
static smelt_status range_scalar(sm_shape_ctx *s, int i, const sm_type **t)
{
    static const char *names[] = {"start", "limit", "delta"};
    SM_TRY(sm_movement_input(s, i, t));
    if ((*t)->ndim > 1 || (sm_type_known(*t) && sm_type_numel(*t) != 1))
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "Range: %s must be a scalar",
                      names[i]);
    if ((*t)->dtype == SMELT_DTYPE_BOOL)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "Range: %s must be a number, not bool", names[i]);
    return SMELT_OK;
}

/* Range's element count max(ceil((limit - start) / delta), 0) for integer
 * operands, exactly: the difference is taken in unsigned arithmetic so
 * that even INT64_MIN to INT64_MAX does not overflow. */
static smelt_status range_count_int(sm_shape_ctx *s, int64_t a, int64_t b,
                                    int64_t d, int64_t *count)
{
    uint64_t diff, step;
    *count = 0;
    if ((d > 0 && b <= a) || (d < 0 && b >= a))
        return SMELT_OK;
    diff = d > 0 ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
    step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
    uint64_t c = diff / step + (diff % step != 0);
    if (c > (uint64_t)INT64_MAX)
        return sm_err(s->ctx, SMELT_ERR_LIMIT,
                      "Range: %llu elements exceed the limit",
                      (unsigned long long)c);
    *count = (int64_t)c;
    return SMELT_OK;
}

static smelt_status range_count_float(sm_shape_ctx *s, double a, double b,
                                      double d, int64_t *count)
{
    double c = ceil((b - a) / d);
    if (isnan(c))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Range: start %g, limit %g and delta %g give no "
                      "element count",
                      a, b, d);
    if (c >= 9.2e18)
        return sm_err(s->ctx, SMELT_ERR_LIMIT,
                      "Range: %g elements exceed the limit", c);
    *count = c > 0 ? (int64_t)c : 0;
    return SMELT_OK;
}

/* Range(start, limit, delta): scalars of one dtype; a 1-D output of
 * max(ceil((limit - start) / delta), 0) elements. delta 0 is an error. */
smelt_status sm_shape_range(sm_shape_ctx *s)
{
    const sm_type *t[3];
    smelt_dtype dt = SMELT_DTYPE_UNDEFINED;
    for (int i = 0; i < 3; i++) {
        SM_TRY(range_scalar(s, i, &t[i]));
        if (t[i]->dtype == SMELT_DTYPE_UNDEFINED)
            continue;
        if (dt != SMELT_DTYPE_UNDEFINED && t[i]->dtype != dt)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "Range: operands differ in dtype (%s and %s)",
                          smelt_dtype_name(dt), smelt_dtype_name(t[i]->dtype));
        dt = t[i]->dtype;
    }
    sm_movement_unknown(s->out, dt, 1);
    const sm_tensor *st = s->in[0].data, *li = s->in[1].data,
                    *de = s->in[2].data;
    if (de && de->numel == 1 && sm_load_f64(de->dtype, de->data, 0) == 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "Range: delta is 0");
    if (!st || !li || !de)
        return SMELT_OK;
    if (st->numel != 1 || li->numel != 1 || de->numel != 1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Range: start, limit and delta must be scalars");
    int64_t count = 0;
    if (sm_dtype_is_float(dt))
        SM_TRY(range_count_float(s, sm_load_f64(dt, st->data, 0),
                                 sm_load_f64(dt, li->data, 0),
                                 sm_load_f64(dt, de->data, 0), &count));
    else
        SM_TRY(range_count_int(s, sm_load_i64(dt, st->data, 0),
                               sm_load_i64(dt, li->data, 0),
                               sm_load_i64(dt, de->data, 0), &count));
    s->out->dims[0].size = count;
    return sm_movement_check_size(s, s->out);
}

/* Constant: exactly one of value (a tensor), value_float (f32 scalar),
 * value_floats (f32[n]), value_int (i64 scalar), value_ints (i64[n]). */
smelt_status sm_shape_constant(sm_shape_ctx *s)
{
    const sm_attr *v;
    int n = sm_constant_attr(&s->attrs, &v);
    if (n != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Constant: needs exactly one of value, value_float, "
                      "value_floats, value_int, value_ints (it has %d)",
                      n);
    int64_t len = v->n;
    switch (v->kind) {
    case SM_ATTR_TENSOR: sm_type_from_tensor(s->out, v->v.t); break;
    case SM_ATTR_FLOAT: sm_type_set(s->out, SMELT_DTYPE_F32, 0, NULL); break;
    case SM_ATTR_FLOATS: sm_type_set(s->out, SMELT_DTYPE_F32, 1, &len); break;
    case SM_ATTR_INT: sm_type_set(s->out, SMELT_DTYPE_I64, 0, NULL); break;
    case SM_ATTR_INTS: sm_type_set(s->out, SMELT_DTYPE_I64, 1, &len); break;
    default:
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Constant: attribute %s has kind %s", v->name,
                      sm_attr_kind_name(v->kind));
    }
    return SMELT_OK;
}
