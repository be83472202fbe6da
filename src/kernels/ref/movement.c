/*
 * movement.c - reference kernels of the data-movement ops (Transpose,
 * Concat, Split, Expand, Tile) and the element copy they and the index,
 * gather and space kernels share (movement.h).
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
        return sm_bad_output(a, "the permuted input");
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
            return sm_bad_output(a, "the permuted input");
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
            return sm_bad_output(a, "the inputs");
        for (int d = 0; d < r; d++)
            if (d != axis && t->dims[d] != whole->dims[d])
                return sm_bad_output(a, "the inputs");
        total += t->dims[axis];
    }
    if (total != whole->dims[axis])
        return sm_bad_output(a, "the inputs");
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
        return sm_bad_output(a, "the broadcast input");
    for (int d = 0; d < x->ndim; d++) {
        int64_t od = y->dims[d + y->ndim - x->ndim];
        if (x->dims[d] != 1 && x->dims[d] != od)
            return sm_bad_output(a, "the broadcast input");
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
        return sm_bad_output(a, "the repeats");
    for (int d = 0; d < x->ndim; d++) {
        int64_t r = sm_load_i64(rep->dtype, rep->data, d);
        if (r < 0 || (x->dims[d] && r > INT64_MAX / x->dims[d]) ||
            y->dims[d] != x->dims[d] * r)
            return sm_bad_output(a, "the repeats");
    }
    sm_movement_copy(y, x, tile_src, x, NULL);
    return SMELT_OK;
}
