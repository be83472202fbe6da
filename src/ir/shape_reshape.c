/*
 * shape_reshape.c - shape functions of the ops that view the same
 * row-major bytes under another shape: Reshape, Flatten, Squeeze,
 * Unsqueeze (their kernel, sm_ref_reshape, copies the bytes).
 *
 * Symbolic dims travel where the arithmetic is certain: a dim copied by
 * Reshape's 0 keeps its name, and a -1 is solved by cancelling the symbols
 * the input and the output have in common ([batch,4,8] into [0,-1] gives
 * [batch,32]).
 */
#include <string.h>

#include "ir/shape_movement.h"

/* The element count of dims[0..n) except index skip: the product of the
 * known sizes, the symbolic names, and whether some dim is neither. */
typedef struct factors {
    int64_t known;
    int n_sym;
    const char *sym[SMELT_MAX_DIMS];
    int open;
} factors;

static smelt_status factor(sm_shape_ctx *s, const sm_dim *dims, int n, int skip,
                           factors *f)
{
    f->known = 1;
    f->n_sym = 0;
    f->open = 0;
    for (int i = 0; i < n; i++) {
        if (i == skip)
            continue;
        if (dims[i].size >= 0) {
            if (!sm_movement_mul(&f->known, dims[i].size))
                return sm_err(s->ctx, SMELT_ERR_LIMIT,
                              "%s: element count overflows", s->op->name);
        } else if (dims[i].sym) {
            f->sym[f->n_sym++] = dims[i].sym;
        } else {
            f->open = 1;
        }
    }
    return SMELT_OK;
}

/* Removes from `in` one occurrence of each symbol of `out`; returns 0 when
 * some symbol of out is not in in. */
static int cancel_syms(factors *in, const factors *out)
{
    for (int i = 0; i < out->n_sym; i++) {
        int k = 0;
        while (k < in->n_sym && strcmp(in->sym[k], out->sym[i]) != 0)
            k++;
        if (k == in->n_sym)
            return 0;
        in->sym[k] = in->sym[--in->n_sym];
    }
    return 1;
}

static smelt_status reshape_mismatch(sm_shape_ctx *s, const sm_type *x,
                                     const int64_t *v, int n)
{
    char a[160], b[160];
    sm_type_str(x, a, sizeof a);
    sm_movement_ints_str(v, n, b, sizeof b);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "Reshape: cannot reshape %s into %s: the element counts "
                  "differ",
                  a, b);
}

/* Solves Reshape's -1 (at index infer, or -1 for none) from the element
 * counts, and checks counts that are fully known agree. */
static smelt_status reshape_solve(sm_shape_ctx *s, const sm_type *x,
                                  const int64_t *v, int infer)
{
    sm_type *out = s->out;
    factors fi, fo;
    SM_TRY(factor(s, x->dims, x->ndim, -1, &fi));
    SM_TRY(factor(s, out->dims, out->ndim, infer, &fo));
    if (infer < 0) {
        if (!fi.open && !fo.open && !fi.n_sym && !fo.n_sym &&
            fi.known != fo.known)
            return reshape_mismatch(s, x, v, out->ndim);
        return SMELT_OK;
    }
    if (fo.known == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Reshape: cannot infer the -1 at position %d when the "
                      "other dims hold 0 elements",
                      infer);
    if (fi.open || fo.open || !cancel_syms(&fi, &fo))
        return SMELT_OK;
    if (fi.known == 0) {
        out->dims[infer] = (sm_dim){0, NULL};
    } else if (fi.n_sym == 0) {
        if (fi.known % fo.known != 0)
            return reshape_mismatch(s, x, v, out->ndim);
        out->dims[infer] = (sm_dim){fi.known / fo.known, NULL};
    } else if (fi.n_sym == 1 && fi.known == fo.known) {
        out->dims[infer] = (sm_dim){-1, fi.sym[0]};
    }
    return SMELT_OK;
}

/* Reshape(data, shape): 0 copies the input's dim (unless allowzero), one
 * -1 is inferred. Without the shape's value only the rank is known. */
smelt_status sm_shape_reshape(sm_shape_ctx *s)
{
    const sm_type *x, *sh;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &sh));
    sm_type *out = s->out;
    if (!s->in[1].data) {
        int rank;
        SM_TRY(sm_movement_shape_rank(s, sh, &rank));
        sm_movement_unknown(out, x->dtype, rank);
        return SMELT_OK;
    }
    int64_t v[SMELT_MAX_DIMS];
    int n, infer = -1, zero = 0;
    SM_TRY(sm_movement_read(s, s->in[1].data, v, &n));
    int allowzero = sm_attrs_int(&s->attrs, "allowzero", 0) != 0;
    sm_movement_unknown(out, x->dtype, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < -1)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Reshape: invalid dimension %lld at position %d",
                          (long long)v[i], i);
        if (v[i] == -1) {
            if (infer >= 0)
                return sm_err(s->ctx, SMELT_ERR_SHAPE,
                              "Reshape: more than one -1 (positions %d and "
                              "%d)",
                              infer, i);
            infer = i;
        } else if (v[i] == 0 && !allowzero) {
            if (x->ndim >= 0 && i >= x->ndim)
                return sm_err(s->ctx, SMELT_ERR_SHAPE,
                              "Reshape: 0 at position %d copies a dimension "
                              "the rank-%d input lacks",
                              i, x->ndim);
            if (x->ndim >= 0)
                out->dims[i] = x->dims[i];
        } else {
            zero |= v[i] == 0;
            out->dims[i] = (sm_dim){v[i], NULL};
        }
    }
    if (zero && infer >= 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Reshape: allowzero=1 with both 0 and -1 in the shape");
    if (x->ndim >= 0)
        SM_TRY(reshape_solve(s, x, v, infer));
    return sm_movement_check_size(s, out);
}

/* The product of dims[from, to) as one dim: known when every size is (or
 * one is 0), the symbol itself when it is the only non-1 factor. */
static smelt_status dims_product(sm_shape_ctx *s, const sm_dim *dims, int from,
                                 int to, sm_dim *out)
{
    factors f;
    SM_TRY(factor(s, dims + from, to - from, -1, &f));
    if (f.known == 0 || (!f.open && !f.n_sym))
        *out = (sm_dim){f.known, NULL};
    else if (!f.open && f.n_sym == 1 && f.known == 1)
        *out = (sm_dim){-1, f.sym[0]};
    else
        *out = (sm_dim){-1, NULL};
    return SMELT_OK;
}

/* Flatten(axis): 2-D [prod(dims[:axis]), prod(dims[axis:])]; axis may be
 * the rank itself, or negative. */
smelt_status sm_shape_flatten(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    int64_t axis = sm_attrs_int(&s->attrs, "axis", 1);
    int r = x->ndim;
    sm_movement_unknown(s->out, x->dtype, 2);
    if (r < 0)
        return SMELT_OK;
    if (axis < -r || axis > r)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Flatten: axis %lld is out of range for rank %d",
                      (long long)axis, r);
    if (axis < 0)
        axis += r;
    SM_TRY(dims_product(s, x->dims, 0, (int)axis, &s->out->dims[0]));
    SM_TRY(dims_product(s, x->dims, (int)axis, r, &s->out->dims[1]));
    return SMELT_OK;
}

/* Squeeze and Unsqueeze: the data's type and the axes (attribute or
 * input 1, see sm_movement_ints); the output starts of unknown rank. */
static smelt_status axes_op(sm_shape_ctx *s, const sm_type **x, int64_t *v,
                            int *n, int64_t *len)
{
    SM_TRY(sm_movement_input(s, 0, x));
    SM_TRY(sm_movement_ints(s, 1, "axes", v, SMELT_MAX_DIMS, n, len));
    sm_movement_unknown(s->out, (*x)->dtype, SM_RANK_UNKNOWN);
    return SMELT_OK;
}

/* Squeeze(data, axes?): removes the listed dims, which must be 1, or every
 * dim of size 1 when no axes are given. */
smelt_status sm_shape_squeeze(sm_shape_ctx *s)
{
    const sm_type *x;
    int64_t v[SMELT_MAX_DIMS], len;
    int n, ax[SMELT_MAX_DIMS], drop[SMELT_MAX_DIMS] = {0};
    SM_TRY(axes_op(s, &x, v, &n, &len));
    sm_type *out = s->out;
    if (x->ndim < 0)
        return SMELT_OK;
    if (len > x->ndim)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Squeeze: %lld axes for an input of rank %d",
                      (long long)len, x->ndim);
    if (n == SM_INTS_UNKNOWN) {
        if (len > 0)
            sm_movement_unknown(out, x->dtype, x->ndim - (int)len);
        return SMELT_OK;
    }
    if (n <= 0) {
        for (int d = 0; d < x->ndim; d++) {
            if (x->dims[d].size < 0)
                return SMELT_OK; /* maybe 1: the rank is not known */
            drop[d] = x->dims[d].size == 1;
        }
    } else {
        SM_TRY(sm_movement_axes(s, v, n, x->ndim, ax));
        for (int i = 0; i < n; i++) {
            int64_t size = x->dims[ax[i]].size;
            if (size >= 0 && size != 1)
                return sm_err(s->ctx, SMELT_ERR_SHAPE,
                              "Squeeze: cannot squeeze axis %d of size %lld",
                              ax[i], (long long)size);
            drop[ax[i]] = 1;
        }
    }
    out->ndim = 0;
    for (int d = 0; d < x->ndim; d++)
        if (!drop[d])
            out->dims[out->ndim++] = x->dims[d];
    return SMELT_OK;
}

/* Unsqueeze(data, axes): inserts dims of size 1 at the listed positions
 * of the output (axes count against the output's rank). */
smelt_status sm_shape_unsqueeze(sm_shape_ctx *s)
{
    const sm_type *x;
    int64_t v[SMELT_MAX_DIMS], len;
    int n, ax[SMELT_MAX_DIMS], one[SMELT_MAX_DIMS] = {0};
    SM_TRY(axes_op(s, &x, v, &n, &len));
    if (n == SM_INTS_ABSENT)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Unsqueeze: axes are required (attribute or input 1)");
    sm_type *out = s->out;
    if (x->ndim < 0 || len < 0)
        return SMELT_OK;
    if (x->ndim + len > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Unsqueeze: rank %d plus %lld axes exceeds the maximum "
                      "%d",
                      x->ndim, (long long)len, SMELT_MAX_DIMS);
    int r = x->ndim + (int)len;
    sm_movement_unknown(out, x->dtype, r);
    if (n == SM_INTS_UNKNOWN)
        return SMELT_OK;
    SM_TRY(sm_movement_axes(s, v, n, r, ax));
    for (int i = 0; i < n; i++)
        one[ax[i]] = 1;
    for (int d = 0, k = 0; d < r; d++)
        out->dims[d] = one[d] ? (sm_dim){1, NULL} : x->dims[k++];
    return SMELT_OK;
}
