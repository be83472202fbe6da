/*
 * qat_pair.c - a fake-quantize pair: QuantizeLinear -> DequantizeLinear
 * of a float value with one scale, zero point and axis, as `smelt
 * quantize --qat` writes it (docs/QUANTIZATION.md).
 */
#include <string.h>

#include "core/dtype.h"
#include "passes/qat_pair.h"

/* Whether a and b hold the same value: the same value, or constants with
 * equal dtype, shape and bytes; both absent counts as equal. */
static int same_param(const sm_value *a, const sm_value *b)
{
    if (a == b)
        return 1;
    if (!a || !b || !a->data || !b->data)
        return 0;
    const sm_tensor *x = a->data, *y = b->data;
    if (x->dtype != y->dtype || x->ndim != y->ndim || x->numel != y->numel)
        return 0;
    for (int i = 0; i < x->ndim; i++)
        if (x->dims[i] != y->dims[i])
            return 0;
    return !memcmp(x->data, y->data,
                   (size_t)x->numel * smelt_dtype_size(x->dtype));
}

static int64_t axis_of(const sm_node *n)
{
    sm_attrs at = sm_node_attrs(n);
    return sm_attrs_int(&at, "axis", 1);
}

sm_node *sm_fakequant_pair(const sm_node *dq)
{
    if (dq->op != SM_OP_DequantizeLinear || dq->n_in < 1)
        return NULL;
    sm_value *qv = dq->in[0];
    sm_node *q = qv ? qv->def : NULL;
    if (!q || q->op != SM_OP_QuantizeLinear || q->n_in < 2 || !q->in[0] ||
        !sm_dtype_is_float(q->in[0]->type.dtype) || dq->n_in < 2)
        return NULL;
    sm_value *qz = q->n_in > 2 ? q->in[2] : NULL;
    sm_value *dz = dq->n_in > 2 ? dq->in[2] : NULL;
    if (!same_param(q->in[1], dq->in[1]) || !same_param(qz, dz))
        return NULL;
    int per_axis = q->in[1]->type.ndim == 1 && q->in[1]->type.dims[0].size != 1;
    if (per_axis && axis_of(q) != axis_of(dq))
        return NULL;
    if (dq->out[0]->type.dtype != q->in[0]->type.dtype)
        return NULL;
    return q;
}
