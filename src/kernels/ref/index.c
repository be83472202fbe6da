/*
 * index.c - reference kernels of the indexing ops (Slice, Gather,
 * Pad) and the index arithmetic their shape functions share (layout.h).
 *
 * Every kernel moves whole elements as bytes, so one loop serves every
 * dtype. Each one re-checks what memory safety depends on (the output
 * shape the shape function gave, index ranges) and fails with
 * SMELT_ERR_RUNTIME instead of reading out of bounds.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/movement.h"
#include "kernels/ref/ref_util.h"

/* Input i of a kernel, NULL when absent or beyond the inputs given. */
static const sm_tensor *opt_in(const sm_kargs *a, int i)
{
    return i < a->n_in ? a->in[i] : NULL;
}

/* Checks that t is a 1-D (or scalar) integer tensor of n elements. */
static smelt_status int_list(smelt_ctx_t *ctx, const char *op, const char *what,
                             const sm_tensor *t, int64_t n)
{
    if (!sm_dtype_is_int(t->dtype) || t->ndim > 1)
        return sm_err(ctx, SMELT_ERR_TYPE,
                      "%s: %s must be a 1-D integer tensor, got %s of rank %d",
                      op, what, smelt_dtype_name(t->dtype), t->ndim);
    if (n >= 0 && t->numel != n)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: %s has %lld values where %lld are expected", op,
                      what, (long long)t->numel, (long long)n);
    return SMELT_OK;
}

/* Reads an axes tensor of n entries for a rank-ndim input into ax[],
 * normalized to [0, ndim), refusing values out of range and repeats. */
static smelt_status read_axes(smelt_ctx_t *ctx, const char *op, int ndim,
                              const sm_tensor *axes, int n, int *ax)
{
    int seen[SMELT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        int64_t v = axes ? sm_load_i64(axes->dtype, axes->data, i) : i;
        if (v < -ndim || v >= ndim)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "%s: axis %lld is out of range for rank %d", op,
                          (long long)v, ndim);
        ax[i] = (int)(v < 0 ? v + ndim : v);
        if (seen[ax[i]]++)
            return sm_err(ctx, SMELT_ERR_SHAPE, "%s: axis %lld is repeated", op,
                          (long long)v);
    }
    return SMELT_OK;
}

smelt_status sm_slice_read(smelt_ctx_t *ctx, int ndim, const sm_tensor *starts,
                           const sm_tensor *ends, const sm_tensor *axes,
                           const sm_tensor *steps, int64_t *start, int64_t *end,
                           int64_t *step)
{
    SM_TRY(int_list(ctx, "Slice", "starts", starts, -1));
    int64_t n = starts->numel;
    if (n > ndim)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "Slice: %lld starts for an input of rank %d",
                      (long long)n, ndim);
    SM_TRY(int_list(ctx, "Slice", "ends", ends, n));
    if (axes)
        SM_TRY(int_list(ctx, "Slice", "axes", axes, n));
    if (steps)
        SM_TRY(int_list(ctx, "Slice", "steps", steps, n));
    int ax[SMELT_MAX_DIMS];
    SM_TRY(read_axes(ctx, "Slice", ndim, axes, (int)n, ax));
    for (int d = 0; d < ndim; d++) {
        start[d] = 0;
        end[d] = INT64_MAX;
        step[d] = 1;
    }
    for (int i = 0; i < (int)n; i++) {
        int d = ax[i];
        start[d] = sm_load_i64(starts->dtype, starts->data, i);
        end[d] = sm_load_i64(ends->dtype, ends->data, i);
        step[d] = steps ? sm_load_i64(steps->dtype, steps->data, i) : 1;
        if (step[d] == 0)
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "Slice: step of axis %d is 0", d);
    }
    return SMELT_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void sm_slice_dim(int64_t dim, int64_t start, int64_t end, int64_t step,
                  int64_t *first, int64_t *count)
{
    *first = 0;
    *count = 0;
    if (dim <= 0)
        return;
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = clamp64(start, 0, dim);
        end = clamp64(end, 0, dim);
        if (end > start)
            *count = (end - start - 1) / step + 1;
    } else {
        start = clamp64(start, 0, dim - 1);
        end = clamp64(end, -1, dim - 1);
        /* -step overflows for INT64_MIN: divide in unsigned */
        if (start > end)
            *count =
                (int64_t)((uint64_t)(start - end - 1) / (0 - (uint64_t)step)) +
                1;
    }
    *first = start;
}

int sm_slice_whole(int64_t start, int64_t end, int64_t step)
{
    if (step == 1)
        return (start == 0 || start == INT64_MIN) && end == INT64_MAX;
    if (step == -1)
        return (start == -1 || start == INT64_MAX) && end == INT64_MIN;
    return 0;
}

smelt_status sm_slice_geom(const sm_kargs *a, int64_t *first, int64_t *step)
{
    const sm_tensor *x = a->in[0], *y = a->out[0];
    int64_t start[SMELT_MAX_DIMS], end[SMELT_MAX_DIMS], count;
    SM_TRY(sm_slice_read(a->ctx, x->ndim, a->in[1], a->in[2], opt_in(a, 3),
                         opt_in(a, 4), start, end, step));
    if (y->ndim != x->ndim || y->dtype != x->dtype)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Slice: output %s of rank %d does not match input %s "
                      "of rank %d",
                      smelt_dtype_name(y->dtype), y->ndim,
                      smelt_dtype_name(x->dtype), x->ndim);
    for (int d = 0; d < x->ndim; d++) {
        sm_slice_dim(x->dims[d], start[d], end[d], step[d], &first[d], &count);
        if (count != y->dims[d])
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "Slice: axis %d gives %lld elements but the output "
                          "has %lld",
                          d, (long long)count, (long long)y->dims[d]);
        /* an axis read at most once never applies its step, which may
         * be anything (INT64_MIN): 1 keeps step x stride from
         * overflowing. Two reads or more bound |step| below the dim. */
        if (count <= 1)
            step[d] = 1;
    }
    return SMELT_OK;
}

/* Slice(data, starts, ends, axes?, steps?): each output element reads
 * input index first + i * step along every axis. */
smelt_status sm_ref_slice(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_affine m;
    sm_affine_init(&m, x->ndim);
    SM_TRY(sm_slice_geom(a, m.first, m.step));
    sm_strides(x->ndim, x->dims, m.stride);
    sm_movement_copy(a->out[0], x, sm_affine_src, &m, NULL);
    return SMELT_OK;
}

smelt_status sm_gather_check(smelt_ctx_t *ctx, const sm_tensor *x,
                             const sm_tensor *ind, const sm_tensor *y,
                             const sm_attrs *at, sm_gather_geom *g)
{
    int64_t axis = sm_attrs_int(at, "axis", 0);
    if (axis < -x->ndim || axis >= x->ndim)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "Gather: axis %lld is out of range for rank %d",
                      (long long)axis, x->ndim);
    if (axis < 0)
        axis += x->ndim;
    if (ind->dtype != SMELT_DTYPE_I32 && ind->dtype != SMELT_DTYPE_I64)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "Gather: indices must be i32 or i64, got %s",
                      smelt_dtype_name(ind->dtype));
    int64_t dim = x->dims[axis];
    g->axis = (int)axis;
    g->dim = dim;
    g->outer = g->inner = 1;
    for (int d = 0; d < axis; d++)
        g->outer *= x->dims[d];
    for (int d = (int)axis + 1; d < x->ndim; d++)
        g->inner *= x->dims[d];
    int ok = y->ndim == x->ndim + ind->ndim - 1 && y->dtype == x->dtype;
    for (int d = 0; ok && d < y->ndim; d++) {
        int64_t want = d < axis               ? x->dims[d]
                       : d < axis + ind->ndim ? ind->dims[d - axis]
                                              : x->dims[d - ind->ndim + 1];
        ok = y->dims[d] == want;
    }
    if (!ok)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "Gather: output shape does not match data and indices");
    for (int64_t j = 0; j < ind->numel; j++) {
        int64_t k = sm_load_i64(ind->dtype, ind->data, j);
        if (k < -dim || k >= dim)
            return sm_err(ctx, SMELT_ERR_RUNTIME,
                          "Gather: index %lld is out of range for axis %lld "
                          "of size %lld",
                          (long long)k, (long long)axis, (long long)dim);
    }
    return SMELT_OK;
}

/* Gather(data, indices) along axis: output = data[:axis] + indices.shape +
 * data[axis+1:]; negative indices count from the end. */
smelt_status sm_ref_gather(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1];
    sm_tensor *y = a->out[0];
    sm_gather_geom g;
    SM_TRY(sm_gather_check(a->ctx, x, ind, y, &a->attrs, &g));
    size_t row = (size_t)g.inner * smelt_dtype_size(x->dtype);
    for (int64_t o = 0; o < g.outer; o++)
        for (int64_t j = 0; j < ind->numel; j++) {
            int64_t k = sm_load_i64(ind->dtype, ind->data, j);
            if (k < 0)
                k += g.dim;
            memcpy((char *)y->data + (size_t)(o * ind->numel + j) * row,
                   (const char *)x->data + (size_t)(o * g.dim + k) * row, row);
        }
    return SMELT_OK;
}

int sm_pad_mode_from(const char *name)
{
    static const char *names[] = {"constant", "reflect", "edge", "wrap"};
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (name && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

smelt_status sm_pad_read(smelt_ctx_t *ctx, int ndim, const sm_tensor *pads,
                         const sm_tensor *axes, int64_t *begin, int64_t *end)
{
    int64_t n = ndim;
    if (axes) {
        SM_TRY(int_list(ctx, "Pad", "axes", axes, -1));
        n = axes->numel;
        if (n > ndim)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "Pad: %lld axes for an input of rank %d",
                          (long long)n, ndim);
    }
    SM_TRY(int_list(ctx, "Pad", "pads", pads, 2 * n));
    int ax[SMELT_MAX_DIMS];
    SM_TRY(read_axes(ctx, "Pad", ndim, axes, (int)n, ax));
    for (int d = 0; d < ndim; d++)
        begin[d] = end[d] = 0;
    for (int i = 0; i < (int)n; i++) {
        begin[ax[i]] = sm_load_i64(pads->dtype, pads->data, i);
        end[ax[i]] = sm_load_i64(pads->dtype, pads->data, n + i);
    }
    return SMELT_OK;
}

int64_t sm_pad_source(sm_pad_mode m, int64_t i, int64_t dim)
{
    if (dim <= 0)
        return -1;
    if (i >= 0 && i < dim)
        return i;
    switch (m) {
    case SM_PAD_EDGE: return i < 0 ? 0 : dim - 1;
    case SM_PAD_WRAP: return (i % dim + dim) % dim;
    case SM_PAD_REFLECT: {
        if (dim == 1)
            return 0;
        int64_t period = 2 * (dim - 1), r = (i % period + period) % period;
        return r < dim ? r : period - r;
    }
    case SM_PAD_CONSTANT: break;
    }
    return -1;
}

/* Pad's source map: the input element offset output index idx reads,
 * or -1 for the constant fill. */
static int64_t pad_src(const void *user, const int64_t *idx)
{
    const sm_pad_geom *m = user;
    int64_t off = 0;
    for (int d = 0; d < m->ndim; d++) {
        int64_t k = sm_pad_source(m->mode, idx[d] - m->begin[d], m->kept[d]);
        if (k < 0)
            return -1;
        off += (m->lo[d] + k) * m->stride[d];
    }
    return off;
}

smelt_status sm_pad_check(const sm_kargs *a, sm_pad_geom *m)
{
    const sm_tensor *x = a->in[0], *cv = opt_in(a, 2);
    const sm_tensor *y = a->out[0];
    const char *mname = sm_attrs_string(&a->attrs, "mode", "constant");
    int mode = sm_pad_mode_from(mname);
    if (mode < 0)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME, "Pad: unknown mode '%s'",
                      mname);
    memset(m, 0, sizeof *m);
    m->mode = (sm_pad_mode)mode;
    m->ndim = x->ndim;
    int64_t end[SMELT_MAX_DIMS];
    SM_TRY(sm_pad_read(a->ctx, x->ndim, a->in[1], opt_in(a, 3), m->begin, end));
    if (y->ndim != x->ndim)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Pad: output rank %d differs from input rank %d", y->ndim,
                      x->ndim);
    sm_strides(x->ndim, x->dims, m->stride);
    for (int d = 0; d < x->ndim; d++) {
        m->lo[d] = m->begin[d] < 0 ? -m->begin[d] : 0;
        int64_t hi = end[d] < 0 ? -end[d] : 0;
        if (m->lo[d] > x->dims[d] || hi > x->dims[d] - m->lo[d])
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "Pad: pads crop more than axis %d", d);
        m->kept[d] = x->dims[d] - m->lo[d] - hi;
        m->begin[d] += m->lo[d];
        if (y->dims[d] - m->kept[d] - m->begin[d] != end[d] + hi)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "Pad: output size %lld of axis %d does not match",
                          (long long)y->dims[d], d);
        if (mode != SM_PAD_CONSTANT && m->kept[d] == 0 && y->dims[d] > 0)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "Pad: cannot pad empty axis %d in mode '%s'", d,
                          mname);
    }
    if (cv && cv->numel > 0) {
        if (cv->dtype != x->dtype)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "Pad: constant_value is %s but data is %s",
                          smelt_dtype_name(cv->dtype),
                          smelt_dtype_name(x->dtype));
        memcpy(m->fill, cv->data, smelt_dtype_size(x->dtype));
    }
    return SMELT_OK;
}

/* Pad(data, pads, constant_value?, axes?): negative pads first crop each
 * axis, then positive ones pad it in the given mode (the constant fill
 * where the mode is constant). */
smelt_status sm_ref_pad(const sm_kargs *a)
{
    sm_pad_geom m;
    SM_TRY(sm_pad_check(a, &m));
    sm_movement_copy(a->out[0], a->in[0], pad_src, &m, m.fill);
    return SMELT_OK;
}
