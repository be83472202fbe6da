/*
 * movement.c - reference kernels of the data-movement ops (Reshape
 * and its views, Transpose, Concat, Split, Expand, Tile) and of the ops
 * that generate values (Shape, ConstantOfShape, Range, Constant).
 *
 * Moves copy whole elements as bytes, so one loop serves every dtype.
 * Each kernel re-checks the output shape it was given against its inputs
 * before touching memory, and fails with SMELT_ERR_RUNTIME when they
 * disagree.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/movement.h"
#include "kernels/ref/ref_util.h"

static smelt_status bad_out(const sm_kargs *a, const char *what)
{
    return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                  "%s: output shape does not match %s", a->op_name, what);
}

void sm_movement_copy(sm_tensor *y, const sm_tensor *x, sm_movement_src_fn src,
                      const void *user, const void *fill)
{
    if (y->numel == 0)
        return;
    size_t es = smelt_dtype_size(y->dtype);
    int64_t idx[SMELT_MAX_DIMS] = {0}, o = 0;
    do {
        int64_t off = src(user, idx);
        const char *from =
            off < 0 ? fill : (const char *)x->data + (size_t)off * es;
        memcpy((char *)y->data + (size_t)o++ * es, from, es);
    } while (sm_index_next(y->ndim, y->dims, idx));
}

void sm_affine_init(sm_affine *m, int ndim)
{
    m->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        m->first[d] = 0;
        m->step[d] = 1;
        m->stride[d] = 0;
    }
}

int64_t sm_affine_src(const void *user, const int64_t *idx)
{
    const sm_affine *m = user;
    int64_t off = 0;
    for (int d = 0; d < m->ndim; d++)
        off += (m->first[d] + idx[d] * m->step[d]) * m->stride[d];
    return off;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the output is preallocated with
 * the new shape, so the row-major bytes are simply copied. */
smelt_status sm_ref_reshape(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->dtype != y->dtype || x->numel != y->numel)
        return bad_out(a, "the input's element count");
    if (x->nbytes)
        memcpy(y->data, x->data, x->nbytes);
    return SMELT_OK;
}

/* Transpose: output axis i is input axis perm[i] (default: reversed). */
smelt_status sm_ref_transpose(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    const int64_t *p = NULL;
    int n = sm_attrs_ints(&a->attrs, "perm", &p);
    int seen[SMELT_MAX_DIMS] = {0};
    if (n >= 0 && n != x->ndim)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Transpose: perm has %d entries for rank %d", n, x->ndim);
    if (y->ndim != x->ndim)
        return bad_out(a, "the permuted input");
    int64_t istr[SMELT_MAX_DIMS];
    sm_affine m;
    sm_strides(x->ndim, x->dims, istr);
    sm_affine_init(&m, y->ndim);
    for (int i = 0; i < x->ndim; i++) {
        int64_t v = n >= 0 ? p[i] : x->ndim - 1 - i;
        if (v < 0 || v >= x->ndim || seen[v]++)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "Transpose: perm is not a permutation");
        if (y->dims[i] != x->dims[v])
            return bad_out(a, "the permuted input");
        m.stride[i] = istr[v];
    }
    sm_movement_copy(y, x, sm_affine_src, &m, NULL);
    return SMELT_OK;
}

smelt_status sm_parts_check(const sm_kargs *a, const sm_tensor *whole,
                            sm_tensor *const *parts, int n, int *axis_out,
                            int64_t *outer, int64_t *inner)
{
    int64_t axis = sm_attrs_int(&a->attrs, "axis", 0);
    int r = whole->ndim;
    if (axis < -r || axis >= r)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: axis %lld is out of range for rank %d", a->op_name,
                      (long long)axis, r);
    if (axis < 0)
        axis += r;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        const sm_tensor *t = parts[i];
        if (!t || t->ndim != r || t->dtype != whole->dtype)
            return bad_out(a, "the inputs");
        for (int d = 0; d < r; d++)
            if (d != axis && t->dims[d] != whole->dims[d])
                return bad_out(a, "the inputs");
        total += t->dims[axis];
    }
    if (total != whole->dims[axis])
        return bad_out(a, "the inputs");
    *axis_out = (int)axis;
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= whole->dims[d];
    for (int d = (int)axis + 1; d < r; d++)
        *inner *= whole->dims[d];
    return SMELT_OK;
}

/* Concat and Split: `whole` is the parts laid side by side along axis.
 * Copies every part's rows into the whole (to_whole) or out of it. */
static smelt_status move_parts(const sm_kargs *a, sm_tensor *whole,
                               sm_tensor *const *parts, int n, int to_whole)
{
    int axis;
    int64_t outer, inner;
    SM_TRY(sm_parts_check(a, whole, parts, n, &axis, &outer, &inner));
    size_t es = smelt_dtype_size(whole->dtype);
    char *w = whole->data;
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < n; i++) {
            size_t row = (size_t)(parts[i]->dims[axis] * inner) * es;
            char *p = (char *)parts[i]->data + (size_t)o * row;
            memcpy(to_whole ? w : p, to_whole ? p : w, row);
            w += row;
        }
    return SMELT_OK;
}

smelt_status sm_ref_concat(const sm_kargs *a)
{
    return move_parts(a, a->out[0], a->in, a->n_in, 1);
}

smelt_status sm_ref_split(const sm_kargs *a)
{
    return move_parts(a, a->in[0], a->out, a->n_out, 0);
}

/* Expand: numpy broadcast of the input to the output's shape. */
smelt_status sm_ref_expand(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (y->ndim < x->ndim || x->dtype != y->dtype)
        return bad_out(a, "the broadcast input");
    for (int d = 0; d < x->ndim; d++) {
        int64_t od = y->dims[d + y->ndim - x->ndim];
        if (x->dims[d] != 1 && x->dims[d] != od)
            return bad_out(a, "the broadcast input");
    }
    int64_t istr[SMELT_MAX_DIMS];
    sm_affine m;
    sm_strides(x->ndim, x->dims, istr);
    sm_affine_init(&m, y->ndim);
    for (int d = 0; d < x->ndim; d++)
        m.stride[d + y->ndim - x->ndim] = x->dims[d] == 1 ? 0 : istr[d];
    sm_movement_copy(y, x, sm_affine_src, &m, NULL);
    return SMELT_OK;
}

/* Tile: output index i along an axis reads input index i mod dim. */
static int64_t tile_src(const void *user, const int64_t *idx)
{
    const sm_tensor *x = user;
    int64_t off = 0;
    for (int d = 0; d < x->ndim; d++)
        off = off * x->dims[d] + idx[d] % x->dims[d];
    return off;
}

smelt_status sm_ref_tile(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *rep = a->in[1];
    sm_tensor *y = a->out[0];
    if (y->ndim != x->ndim || rep->numel != x->ndim)
        return bad_out(a, "the repeats");
    for (int d = 0; d < x->ndim; d++) {
        int64_t r = sm_load_i64(rep->dtype, rep->data, d);
        if (r < 0 || (x->dims[d] && r > INT64_MAX / x->dims[d]) ||
            y->dims[d] != x->dims[d] * r)
            return bad_out(a, "the repeats");
    }
    sm_movement_copy(y, x, tile_src, x, NULL);
    return SMELT_OK;
}

/* Shape: the input's dims [start, end) as int64. */
smelt_status sm_ref_shape(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int lo, hi;
    sm_shape_op_range(&a->attrs, x->ndim, &lo, &hi);
    if (y->dtype != SMELT_DTYPE_I64 || y->numel != hi - lo)
        return bad_out(a, "the selected dimensions");
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
            return bad_out(a, "the default f32 value");
        memset(y->data, 0, y->nbytes);
        return SMELT_OK;
    }
    const sm_tensor *t = v->v.t;
    if (t->numel != 1 || t->dtype != y->dtype)
        return bad_out(a, "the value attribute");
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
        return bad_out(a, "start and delta");
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
        return bad_out(a, "the value attribute");
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
