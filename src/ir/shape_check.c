/*
 * shape_check.c - the checks of shape_check.h that the shape functions of
 * the gather, scatter, sorting, box, resampling and recurrent ops share:
 * dtypes, ranks, dims, one-element inputs, and index values against the
 * dims they index, with the range check the kernels use
 * (kernels/ref/select.h).
 */
#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/select.h"

smelt_status sm_check_index_type(sm_shape_ctx *s, const sm_type *t,
                                 const char *what)
{
    if (t->dtype == SMELT_DTYPE_UNDEFINED || t->dtype == SMELT_DTYPE_I32 ||
        t->dtype == SMELT_DTYPE_I64)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: %s must be i32 or i64, got %s",
                  s->op->name, what, smelt_dtype_name(t->dtype));
}

smelt_status sm_check_float_type(sm_shape_ctx *s, const sm_type *t,
                                 const char *what)
{
    if (t->dtype == SMELT_DTYPE_UNDEFINED || sm_dtype_is_float(t->dtype))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: %s must be a float tensor, got %s", s->op->name, what,
                  smelt_dtype_name(t->dtype));
}

smelt_status sm_check_same_type(sm_shape_ctx *s, const sm_type *a,
                                const char *an, const sm_type *b,
                                const char *bn)
{
    if (a->dtype == SMELT_DTYPE_UNDEFINED ||
        b->dtype == SMELT_DTYPE_UNDEFINED || a->dtype == b->dtype)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: %s is %s but %s is %s",
                  s->op->name, an, smelt_dtype_name(a->dtype), bn,
                  smelt_dtype_name(b->dtype));
}

smelt_status sm_check_rank(sm_shape_ctx *s, const sm_type *t, const char *what,
                           int lo, int hi)
{
    if (t->ndim < 0 || (t->ndim >= lo && (hi < 0 || t->ndim <= hi)))
        return SMELT_OK;
    if (lo == hi)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must have rank %d, it has rank %d", s->op->name,
                      what, lo, t->ndim);
    if (hi < 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must have rank %d or more, it has rank %d",
                      s->op->name, what, lo, t->ndim);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s must have rank %d to %d, it has rank %d", s->op->name,
                  what, lo, hi, t->ndim);
}

smelt_status sm_check_same_dim(sm_shape_ctx *s, sm_dim a, const char *an,
                               sm_dim b, const char *bn)
{
    if (a.size < 0 || b.size < 0 || a.size == b.size)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: %s is %lld but %s is %lld",
                  s->op->name, an, (long long)a.size, bn, (long long)b.size);
}

/* Input i when present, after checking it holds one element. */
static smelt_status one_element(sm_shape_ctx *s, int i, const char *what,
                                const sm_tensor **data)
{
    const sm_type *t = sm_shape_in(s, i);
    *data = NULL;
    if (!t)
        return SMELT_OK;
    const sm_tensor *d = s->in[i].data;
    if ((sm_type_known(t) && sm_type_numel(t) != 1) || (d && d->numel != 1))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must hold one element, it has %lld", s->op->name,
                      what,
                      (long long)(d ? d->numel : (int64_t)sm_type_numel(t)));
    *data = d;
    return SMELT_OK;
}

smelt_status sm_check_scalar_int(sm_shape_ctx *s, int i, const char *what,
                                 int64_t *v, int *known)
{
    const sm_tensor *d;
    SM_TRY(one_element(s, i, what, &d));
    *known = d != NULL;
    if (d)
        *v = sm_load_i64(d->dtype, d->data, 0);
    return SMELT_OK;
}

smelt_status sm_check_scalar_f64(sm_shape_ctx *s, int i, const char *what,
                                 double *v, int *known)
{
    const sm_tensor *d;
    SM_TRY(one_element(s, i, what, &d));
    *known = d != NULL;
    if (d)
        *v = sm_load_f64(d->dtype, d->data, 0);
    return SMELT_OK;
}

/* The known sizes of dims [from, from + n) of t into v; 0 when one is
 * not known. */
static int known_dims(const sm_type *t, int from, int n, int64_t *v)
{
    for (int i = 0; i < n; i++) {
        if (t->dims[from + i].size < 0)
            return 0;
        v[i] = t->dims[from + i].size;
    }
    return 1;
}

smelt_status sm_check_indices(sm_shape_ctx *s, int i, const sm_type *x, int m,
                              int axis0)
{
    int64_t dims[SMELT_MAX_DIMS];
    const sm_tensor *ind = s->in[i].data;
    if (!ind || m <= 0 || !known_dims(x, axis0, m, dims))
        return SMELT_OK;
    return sm_index_check(s->ctx, SMELT_ERR_INVALID_ARG, s->op->name, ind, m,
                          axis0, dims);
}

smelt_status sm_check_dims_within(sm_shape_ctx *s, const sm_type *it,
                                  const sm_type *x, int axis)
{
    for (int d = 0; d < it->ndim; d++) {
        int64_t a = it->dims[d].size, b = x->dims[d].size;
        if (d != axis && a >= 0 && b >= 0 && a > b)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: indices dim %d is %lld, more than data's %lld",
                          s->op->name, d, (long long)a, (long long)b);
    }
    return SMELT_OK;
}

smelt_status sm_check_nd_indices(sm_shape_ctx *s, const sm_type *it)
{
    if (it->dtype == SMELT_DTYPE_UNDEFINED || it->dtype == SMELT_DTYPE_I64)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: indices must be i64, got %s",
                  s->op->name, smelt_dtype_name(it->dtype));
}
