/*
 * shape_util.c - helpers shared by the shape functions of ops.def.
 */
#include "ir/shape_util.h"

#include <string.h>

#include "core/dtype.h"
#include "kernels/ref/window.h"

smelt_status sm_shape_bcast(sm_shape_ctx *s, int n, const sm_type *const *in,
                            sm_type *out)
{
    int rank = 0;
    for (int i = 0; i < n; i++) {
        if (in[i]->ndim < 0) {
            out->ndim = SM_RANK_UNKNOWN;
            return SMELT_OK;
        }
        if (in[i]->ndim > rank)
            rank = in[i]->ndim;
    }
    out->ndim = rank;
    for (int d = 0; d < rank; d++) {
        sm_dim r = {1, NULL};
        int unknown = 0;
        for (int i = 0; i < n; i++) {
            int k = d - (rank - in[i]->ndim);
            if (k < 0)
                continue;
            sm_dim x = in[i]->dims[k];
            if (x.size == 1)
                continue;
            if (x.size < 0) {
                if (r.size == 1 && !unknown)
                    r = x;
                else if (!(r.sym && x.sym && strcmp(r.sym, x.sym) == 0) &&
                         r.size < 0)
                    unknown = 1;
                continue;
            }
            if (r.size >= 0 && r.size != 1 && r.size != x.size)
                return sm_err(s->ctx, SMELT_ERR_SHAPE,
                              "%s: cannot broadcast dimension %lld against "
                              "%lld (axis %d from the right)",
                              s->op->name, (long long)r.size, (long long)x.size,
                              rank - d);
            r = x; /* a known size wins over a symbolic one */
        }
        if (unknown && r.size < 0)
            r = (sm_dim){-1, NULL};
        out->dims[d] = r;
    }
    return SMELT_OK;
}

smelt_status sm_shape_axis(sm_shape_ctx *s, int64_t axis, int rank, int *out)
{
    if (axis < -rank || axis >= (rank ? rank : 1))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: axis %lld is out of range for rank %d", s->op->name,
                      (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return SMELT_OK;
}

int sm_shape_read_ints(sm_shape_ctx *s, const sm_tensor *t, int64_t *v, int max)
{
    if (!sm_dtype_is_int(t->dtype) || t->ndim > 1) {
        sm_err(s->ctx, SMELT_ERR_TYPE,
               "%s: expected a 1-D integer tensor, got %s of rank %d",
               s->op->name, smelt_dtype_name(t->dtype), t->ndim);
        return -1;
    }
    if (t->numel > max) {
        sm_err(s->ctx, SMELT_ERR_SHAPE,
               "%s: %lld values where at most %d are allowed", s->op->name,
               (long long)t->numel, max);
        return -1;
    }
    for (int64_t i = 0; i < t->numel; i++)
        v[i] = sm_load_i64(t->dtype, t->data, i);
    return (int)t->numel;
}

void sm_type_set(sm_type *out, smelt_dtype dt, int ndim, const int64_t *dims)
{
    memset(out, 0, sizeof *out);
    out->dtype = dt;
    out->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        out->dims[i].size = dims[i];
}

const sm_type *sm_shape_in(const sm_shape_ctx *s, int i)
{
    return i < s->n_in && s->in[i].present ? s->in[i].type : NULL;
}

smelt_status sm_shape_need(sm_shape_ctx *s, int i, const sm_type **t)
{
    *t = sm_shape_in(s, i);
    if (!*t)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input %d is missing",
                      s->op->name, i);
    return SMELT_OK;
}

double sm_type_numel(const sm_type *t)
{
    if (t->ndim < 0)
        return 0;
    double n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->dims[i].size < 0 ? 1 : (double)t->dims[i].size;
    return n;
}

double sm_type_bytes(const sm_type *t)
{
    return sm_type_numel(t) * (double)smelt_dtype_size(t->dtype);
}

/* Whether allow (SM_SHAPE_ flags) admits dt. */
static int dtype_allowed(smelt_dtype dt, int allow)
{
    if (sm_dtype_is_float(dt))
        return allow & SM_SHAPE_FLOAT;
    if (dt == SMELT_DTYPE_I8 || dt == SMELT_DTYPE_U8)
        return allow & (SM_SHAPE_INT | SM_SHAPE_INT8);
    return sm_dtype_is_int(dt) && (allow & SM_SHAPE_INT);
}

smelt_status sm_shape_dtype(sm_shape_ctx *s, int first, int last, int allow,
                            smelt_dtype *out)
{
    static const char *const what[] = {"", "a float", "an integer",
                                       "a float or integer"};
    *out = SMELT_DTYPE_UNDEFINED;
    int which = -1;
    for (int i = first; i <= last; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t || t->dtype == SMELT_DTYPE_UNDEFINED)
            continue;
        if (!dtype_allowed(t->dtype, allow))
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: input %d has dtype %s; expected %s dtype%s",
                          s->op->name, i, smelt_dtype_name(t->dtype),
                          what[allow & 3],
                          allow & SM_SHAPE_INT8 ? " or i8/u8" : "");
        if (which >= 0 && t->dtype != *out)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: inputs %d and %d must have the same dtype, got "
                          "%s and %s",
                          s->op->name, which, i, smelt_dtype_name(*out),
                          smelt_dtype_name(t->dtype));
        if (which < 0) {
            which = i;
            *out = t->dtype;
        }
    }
    return SMELT_OK;
}

int64_t sm_type_size(const sm_type *t, int i)
{
    return t && i >= 0 && i < t->ndim && t->dims[i].size >= 0 ? t->dims[i].size
                                                              : -1;
}

sm_dim sm_type_dim(const sm_type *t, int i)
{
    if (t && i >= 0 && i < t->ndim)
        return t->dims[i];
    return (sm_dim){-1, NULL};
}

void sm_shape_window_dims(sm_type *y, const sm_window *w, const sm_type *x)
{
    for (int d = 0; d < w->nsp; d++) {
        sm_dim *o = &y->dims[d + 2];
        if (w->out[d] >= 0)
            *o = (sm_dim){w->out[d], NULL};
        else if (w->same && w->stride[d] == 1)
            *o = sm_type_dim(x, d + 2);
        else
            *o = (sm_dim){-1, NULL};
    }
}

void sm_shape_spatial_sizes(const sm_type *t, int nsp, int64_t *v)
{
    for (int d = 0; d < nsp; d++)
        v[d] = sm_type_size(t, d + 2);
}

double sm_type_factor(const sm_type *t, int i)
{
    int64_t n = sm_type_size(t, i);
    return n < 0 ? 1 : (double)n;
}

void sm_cost_io(const sm_shape_ctx *s, sm_cost *c, double flops)
{
    c->flops = flops;
    c->bytes_read = c->bytes_write = 0;
    for (int i = 0; i < s->n_in; i++)
        if (sm_shape_in(s, i))
            c->bytes_read += sm_type_bytes(s->in[i].type);
    for (int j = 0; j < s->n_out; j++)
        c->bytes_write += sm_type_bytes(&s->out[j]);
}

double sm_type_tail_volume(const sm_type *t, int from)
{
    double v = 1;
    for (int d = from; t && d < t->ndim; d++)
        v *= sm_type_factor(t, d);
    return v;
}

smelt_status sm_shape_check_vector(sm_shape_ctx *s, int i, int64_t c,
                                   const char *what)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->ndim < 0)
        return SMELT_OK;
    if (t->ndim == 1 && (c < 0 || t->dims[0].size < 0 || t->dims[0].size == c))
        return SMELT_OK;
    char buf[160];
    sm_type_str(t, buf, sizeof buf);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: %s (input %d) must be 1-D with C = %lld values, got %s",
                  s->op->name, what, i, (long long)c, buf);
}
