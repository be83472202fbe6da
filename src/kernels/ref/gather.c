/*
 * gather.c - reference kernels of GatherElements, GatherND, OneHot,
 * Compress and NonZero, and the index checks and counts their shape
 * functions share (select.h).
 *
 * Elements move as bytes, so one loop serves every dtype. Each kernel
 * re-checks the shapes and index values memory safety depends on and
 * fails with SMELT_ERR_RUNTIME instead of reading out of bounds.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/movement.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/select.h"

smelt_status sm_index_check(smelt_ctx_t *ctx, smelt_status code, const char *op,
                            const sm_tensor *ind, int m, int axis0,
                            const int64_t *dims)
{
    if (!sm_dtype_is_int(ind->dtype))
        return sm_err(ctx, code, "%s: indices must be integers, got %s", op,
                      smelt_dtype_name(ind->dtype));
    for (int64_t i = 0; i < ind->numel; i++) {
        int64_t k = sm_load_i64(ind->dtype, ind->data, i), dim = dims[i % m];
        if (k < -dim || k >= dim)
            return sm_err(ctx, code,
                          "%s: index %lld (element %lld of indices) is out "
                          "of range for axis %d of size %lld",
                          op, (long long)k, (long long)i, axis0 + (int)(i % m),
                          (long long)dim);
    }
    return SMELT_OK;
}

int64_t sm_index_at(const sm_tensor *ind, int64_t i, int64_t dim)
{
    int64_t k = sm_load_i64(ind->dtype, ind->data, i);
    return k < 0 ? k + dim : k;
}

/* Whether element i of x is nonzero (NaN is). */
static int nonzero_at(const sm_tensor *x, int64_t i)
{
    if (sm_dtype_is_float(x->dtype))
        return sm_load_f64(x->dtype, x->data, i) != 0;
    return sm_load_i64(x->dtype, x->data, i) != 0;
}

int64_t sm_nonzero_count(const sm_tensor *x)
{
    int64_t n = 0;
    for (int64_t i = 0; i < x->numel; i++)
        n += nonzero_at(x, i);
    return n;
}

smelt_status sm_compress_count(smelt_ctx_t *ctx, smelt_status code,
                               const sm_tensor *cond, int64_t dim,
                               int64_t *count)
{
    *count = 0;
    if (cond->dtype != SMELT_DTYPE_BOOL || cond->ndim != 1)
        return sm_err(ctx, code,
                      "Compress: condition must be a 1-D bool tensor");
    for (int64_t i = 0; i < cond->numel; i++) {
        if (!((const uint8_t *)cond->data)[i])
            continue;
        if (i >= dim)
            return sm_err(ctx, code,
                          "Compress: condition entry %lld is true but the "
                          "axis has only %lld elements",
                          (long long)i, (long long)dim);
        ++*count;
    }
    return SMELT_OK;
}

/* The product of dims [from, to) of t. */
static int64_t span(const sm_tensor *t, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= t->dims[d];
    return n;
}

int sm_kernel_axis(const sm_kargs *a, const char *name, int64_t def, int rank)
{
    int64_t axis = sm_attrs_int(&a->attrs, name, def);
    if (axis < -rank || axis >= rank) {
        sm_err(a->ctx, SMELT_ERR_RUNTIME,
               "%s: %s %lld is out of range for rank %d", a->op_name, name,
               (long long)axis, rank);
        return -1;
    }
    return (int)(axis < 0 ? axis + rank : axis);
}

static smelt_status bad_shape(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                  "%s: output shape does not match the inputs", a->op_name);
}

/* GatherElements' source map: output element idx (an index into the
 * indices too) reads data at idx with the axis index from indices. */
typedef struct ge_map {
    const sm_tensor *ind;
    int ndim, axis;
    int64_t dim, istr[SMELT_MAX_DIMS], dstr[SMELT_MAX_DIMS];
} ge_map;

static int64_t ge_src(const void *user, const int64_t *idx)
{
    const ge_map *m = user;
    int64_t flat = 0, off = 0;
    for (int d = 0; d < m->ndim; d++) {
        flat += idx[d] * m->istr[d];
        if (d != m->axis)
            off += idx[d] * m->dstr[d];
    }
    return off + sm_index_at(m->ind, flat, m->dim) * m->dstr[m->axis];
}

smelt_status sm_ref_gatherelements(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1];
    sm_tensor *y = a->out[0];
    int axis = sm_kernel_axis(a, "axis", 0, x->ndim);
    if (axis < 0)
        return SMELT_ERR_RUNTIME;
    if (ind->ndim != x->ndim || y->ndim != x->ndim || y->dtype != x->dtype)
        return bad_shape(a);
    for (int d = 0; d < x->ndim; d++)
        if (y->dims[d] != ind->dims[d] ||
            (d != axis && ind->dims[d] > x->dims[d]))
            return bad_shape(a);
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, a->op_name, ind, 1, axis,
                          &x->dims[axis]));
    ge_map m = {ind, x->ndim, axis, x->dims[axis], {0}, {0}};
    sm_strides(ind->ndim, ind->dims, m.istr);
    sm_strides(x->ndim, x->dims, m.dstr);
    sm_movement_copy(y, x, ge_src, &m, NULL);
    return SMELT_OK;
}

/* GatherND: indices seen as [B, N, m] (B the batch dims' product), data
 * as [B, ...]; tuple (b, n) copies the slice of `inner` elements at data
 * batch b, index tuple n. */
smelt_status sm_ref_gathernd(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1];
    sm_tensor *y = a->out[0];
    int64_t nb = sm_attrs_int(&a->attrs, "batch_dims", 0);
    int r = x->ndim, q = ind->ndim;
    if (q < 1 || nb < 0 || nb >= r || nb >= q)
        return bad_shape(a);
    int b = (int)nb;
    int64_t m = ind->dims[q - 1];
    if (m < 1 || m > r - b || y->ndim != q - 1 + r - b - (int)m ||
        y->dtype != x->dtype)
        return bad_shape(a);
    for (int d = 0; d < y->ndim; d++)
        if (y->dims[d] !=
            (d < q - 1 ? ind->dims[d] : x->dims[d - (q - 1) + b + (int)m]))
            return bad_shape(a);
    for (int d = 0; d < b; d++)
        if (x->dims[d] != ind->dims[d])
            return bad_shape(a);
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, a->op_name, ind, (int)m, b,
                          &x->dims[b]));
    int64_t xstr[SMELT_MAX_DIMS];
    sm_strides(r, x->dims, xstr);
    int64_t nbatch = span(x, 0, b), per = span(ind, b, q - 1);
    int64_t inner = span(x, b + (int)m, r), bstride = span(x, b, r);
    size_t es = smelt_dtype_size(x->dtype), row = (size_t)inner * es;
    for (int64_t bi = 0; bi < nbatch; bi++)
        for (int64_t n = 0; n < per; n++) {
            int64_t t = (bi * per + n) * m, off = bi * bstride;
            for (int j = 0; j < (int)m; j++)
                off += sm_index_at(ind, t + j, x->dims[b + j]) * xstr[b + j];
            memcpy((char *)y->data + (size_t)(bi * per + n) * row,
                   (const char *)x->data + (size_t)off * es, row);
        }
    return SMELT_OK;
}

/* OneHot(indices, depth, values) {axis}: output [.., depth, ..] holds
 * values[1] where the index (negative ones count from depth) equals the
 * position along axis, values[0] elsewhere (also for indices out of
 * range, as ONNX says). */
smelt_status sm_ref_onehot(const sm_kargs *a)
{
    const sm_tensor *ind = a->in[0], *val = a->in[2];
    sm_tensor *y = a->out[0];
    int axis = sm_kernel_axis(a, "axis", -1, ind->ndim + 1);
    if (axis < 0)
        return SMELT_ERR_RUNTIME;
    if (val->numel != 2 || val->dtype != y->dtype || y->ndim != ind->ndim + 1)
        return bad_shape(a);
    int64_t depth = y->dims[axis];
    for (int d = 0; d < ind->ndim; d++)
        if (ind->dims[d] != y->dims[d < axis ? d : d + 1])
            return bad_shape(a);
    int64_t outer = span(ind, 0, axis), inner = span(ind, axis, ind->ndim);
    size_t es = smelt_dtype_size(y->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t k = sm_load_i64(ind->dtype, ind->data, o * inner + i);
            if (k < 0)
                k += depth;
            for (int64_t j = 0; j < depth; j++)
                memcpy((char *)y->data +
                           (size_t)((o * depth + j) * inner + i) * es,
                       (const char *)val->data + (j == k ? es : 0), es);
        }
    return SMELT_OK;
}

/* Compress(input, condition) {axis?}: the slices along axis (or elements
 * of the flattened input) whose condition entry is true, in order. */
smelt_status sm_ref_compress(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *cond = a->in[1];
    sm_tensor *y = a->out[0];
    int has_axis = sm_attrs_find(&a->attrs, "axis") != NULL, axis = 0;
    int64_t outer = 1, dim = x->numel, inner = 1, count;
    if (has_axis) {
        if ((axis = sm_kernel_axis(a, "axis", 0, x->ndim)) < 0)
            return SMELT_ERR_RUNTIME;
        outer = span(x, 0, axis);
        dim = x->dims[axis];
        inner = span(x, axis + 1, x->ndim);
    }
    SM_TRY(sm_compress_count(a->ctx, SMELT_ERR_RUNTIME, cond, dim, &count));
    if (y->dtype != x->dtype || y->numel != outer * count * inner)
        return bad_shape(a);
    size_t row = (size_t)inner * smelt_dtype_size(x->dtype);
    char *dst = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < dim && j < cond->numel; j++)
            if (((const uint8_t *)cond->data)[j]) {
                memcpy(dst, (const char *)x->data + (size_t)(o * dim + j) * row,
                       row);
                dst += row;
            }
    return SMELT_OK;
}

/* NonZero(x): column k of the i64[rank, n] output is the multi-index of
 * the k-th nonzero element in row-major order. */
smelt_status sm_ref_nonzero(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int64_t n = sm_nonzero_count(x);
    if (y->dtype != SMELT_DTYPE_I64 || y->ndim != 2 || y->dims[0] != x->ndim ||
        y->dims[1] != n)
        return bad_shape(a);
    if (x->numel == 0)
        return SMELT_OK;
    int64_t idx[SMELT_MAX_DIMS] = {0}, i = 0, k = 0, *out = y->data;
    do {
        if (nonzero_at(x, i++)) {
            for (int d = 0; d < x->ndim; d++)
                out[d * n + k] = idx[d];
            k++;
        }
    } while (sm_index_next(x->ndim, x->dims, idx));
    return SMELT_OK;
}
