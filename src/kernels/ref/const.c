/*
 * const.c - reference kernels of the ops that generate values rather
 * than move them: Shape, ConstantOfShape, Range and Constant; and the
 * attribute readers their shape functions share (movement.h).
 *
 * Each kernel re-checks the output shape it was given against its inputs
 * and attributes before writing, and fails with SMELT_ERR_RUNTIME when
 * they disagree.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/movement.h"
#include "kernels/ref/ref_util.h"

/* Shape: the input's dims [start, end) as int64. */
smelt_status sm_ref_shape(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int lo, hi;
    sm_shape_op_range(&a->attrs, x->ndim, &lo, &hi);
    if (y->dtype != SMELT_DTYPE_I64 || y->numel != hi - lo)
        return sm_bad_output(a, "the selected dimensions");
    for (int d = lo; d < hi; d++)
        ((int64_t *)y->data)[d - lo] = x->dims[d];
    return SMELT_OK;
}

/* ConstantOfShape: every element is the one-element `value` tensor
 * (default f32 0). */
smelt_status sm_ref_constantofshape(const sm_kargs *a)
{
    sm_tensor *y = a->out[0];
    const sm_attr *v = sm_attrs_find(&a->attrs, "value");
    size_t es = smelt_dtype_size(y->dtype);
    if (!v || v->kind != SM_ATTR_TENSOR) {
        if (y->dtype != SMELT_DTYPE_F32)
            return sm_bad_output(a, "the default f32 value");
        memset(y->data, 0, y->nbytes);
        return SMELT_OK;
    }
    const sm_tensor *t = v->v.t;
    if (t->numel != 1 || t->dtype != y->dtype)
        return sm_bad_output(a, "the value attribute");
    for (int64_t i = 0; i < y->numel; i++)
        memcpy((char *)y->data + (size_t)i * es, t->data, es);
    return SMELT_OK;
}

/* Range: y[i] = start + i * delta, for as many elements as the output
 * holds (the shape function counted them). Integers wrap in unsigned
 * arithmetic, which is exact since every y[i] lies between start and
 * limit. */
smelt_status sm_ref_range(const sm_kargs *a)
{
    const sm_tensor *st = a->in[0], *dl = a->in[2];
    sm_tensor *y = a->out[0];
    if (y->ndim != 1 || y->dtype != st->dtype || st->numel != 1 ||
        dl->numel != 1 || dl->dtype != st->dtype)
        return sm_bad_output(a, "start and delta");
    if (sm_dtype_is_float(y->dtype)) {
        double s = sm_load_f64(st->dtype, st->data, 0);
        double d = sm_load_f64(dl->dtype, dl->data, 0);
        for (int64_t i = 0; i < y->numel; i++)
            sm_store_f64(y->dtype, y->data, i, s + (double)i * d);
        return SMELT_OK;
    }
    uint64_t s = (uint64_t)sm_load_i64(st->dtype, st->data, 0);
    uint64_t d = (uint64_t)sm_load_i64(dl->dtype, dl->data, 0);
    for (int64_t i = 0; i < y->numel; i++)
        sm_store_i64(y->dtype, y->data, i, (int64_t)(s + (uint64_t)i * d));
    return SMELT_OK;
}

int sm_constant_attr(const sm_attrs *a, const sm_attr **out)
{
    static const char *names[] = {"value", "value_float", "value_floats",
                                  "value_int", "value_ints"};
    int n = 0;
    *out = NULL;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++) {
        const sm_attr *x = sm_attrs_find(a, names[i]);
        if (x && !n++)
            *out = x;
    }
    return n;
}

void sm_shape_op_range(const sm_attrs *a, int rank, int *lo, int *hi)
{
    int64_t s = sm_attrs_int(a, "start", 0);
    int64_t e = sm_attrs_find(a, "end") ? sm_attrs_int(a, "end", rank) : rank;
    s = s < 0 ? s + rank : s;
    e = e < 0 ? e + rank : e;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *lo = (int)s;
    *hi = (int)(e < s ? s : e);
}

/* Constant: the output is the node's one value attribute. */
smelt_status sm_ref_constant(const sm_kargs *a)
{
    sm_tensor *y = a->out[0];
    const sm_attr *v;
    if (sm_constant_attr(&a->attrs, &v) != 1)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Constant: needs exactly one value attribute");
    int64_t n = v->kind == SM_ATTR_TENSOR ? v->v.t->numel
                : v->kind == SM_ATTR_FLOATS || v->kind == SM_ATTR_INTS ? v->n
                                                                       : 1;
    if (y->numel != n ||
        (v->kind == SM_ATTR_TENSOR && y->dtype != v->v.t->dtype))
        return sm_bad_output(a, "the value attribute");
    for (int64_t i = 0; i < n; i++) {
        switch (v->kind) {
        case SM_ATTR_FLOAT: sm_store_f64(y->dtype, y->data, i, v->v.f); break;
        case SM_ATTR_FLOATS:
            sm_store_f64(y->dtype, y->data, i, v->v.floats[i]);
            break;
        case SM_ATTR_INT: sm_store_i64(y->dtype, y->data, i, v->v.i); break;
        case SM_ATTR_INTS:
            sm_store_i64(y->dtype, y->data, i, v->v.ints[i]);
            break;
        default: break;
        }
    }
    if (v->kind == SM_ATTR_TENSOR && y->nbytes)
        memcpy(y->data, v->v.t->data, y->nbytes);
    return SMELT_OK;
}
