/*
 * tensor.c - tensor allocation and the public tensor accessors.
 */
#include "core/tensor.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"

/* Tensor uids (0 is "none") and the read observer; atomics, since
 * tensors are made and read on any thread. */
static _Atomic uint64_t next_uid;
static _Atomic(sm_tensor_watch_fn) watch_hook;

void sm_tensor_set_watch_hook(sm_tensor_watch_fn fn)
{
    atomic_store(&watch_hook, fn);
}

/* Tells the observer that the program reads t's data. */
static void notify_read(const sm_tensor *t)
{
    sm_tensor_watch_fn fn = t->watch ? atomic_load(&watch_hook) : NULL;
    if (fn)
        fn(t);
}

smelt_status sm_shape_numel(smelt_ctx_t *ctx, int ndim, const int64_t *dims,
                            size_t elem_size, int64_t *numel)
{
    if (ndim < 0 || ndim > SMELT_MAX_DIMS)
        return sm_err(ctx, SMELT_ERR_SHAPE, "rank %d is outside 0..%d", ndim,
                      SMELT_MAX_DIMS);
    /* The product of the nonzero dimensions must fit in int64 even when a
     * zero makes the tensor empty: kernels and shape functions take partial
     * products (the size of the dims before an axis) without checking. */
    int64_t n = 1;
    int zero = 0;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "dimension %d is negative (%lld)", i,
                          (long long)dims[i]);
        if (dims[i] == 0) {
            zero = 1;
            continue;
        }
        if (n > INT64_MAX / dims[i])
            return sm_err(ctx, SMELT_ERR_LIMIT,
                          "shape's element count overflows int64");
        n *= dims[i];
    }
    if (zero) {
        *numel = 0;
        return SMELT_OK;
    }
    if (elem_size && (uint64_t)n > sm_alloc_limit() / elem_size)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "tensor of %lld elements exceeds the %zu-byte limit",
                      (long long)n, sm_alloc_limit());
    *numel = n;
    return SMELT_OK;
}

smelt_status sm_tensor_new(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                           const int64_t *dims, sm_tensor **out)
{
    *out = NULL;
    if (dt <= SMELT_DTYPE_UNDEFINED || dt >= SMELT_DTYPE_COUNT)
        return sm_err(ctx, SMELT_ERR_TYPE, "invalid dtype %d", (int)dt);
    int64_t n;
    SM_TRY(sm_shape_numel(ctx, ndim, dims, smelt_dtype_size(dt), &n));
    sm_tensor *t = sm_calloc(1, sizeof *t);
    if (!t)
        return sm_err_nomem(ctx);
    t->uid = atomic_fetch_add_explicit(&next_uid, 1, memory_order_relaxed) + 1;
    t->dtype = dt;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->dims, dims, sizeof(int64_t) * (size_t)ndim);
    t->numel = n;
    t->nbytes = (size_t)n * smelt_dtype_size(dt);
    t->data = sm_calloc(1, t->nbytes ? t->nbytes : 1);
    if (!t->data) {
        sm_free(t);
        return sm_err_nomem(ctx);
    }
    *out = t;
    return SMELT_OK;
}

smelt_status sm_tensor_clone(smelt_ctx_t *ctx, const sm_tensor *t,
                             sm_tensor **out)
{
    SM_TRY(sm_tensor_new(ctx, t->dtype, t->ndim, t->dims, out));
    if (t->nbytes)
        memcpy((*out)->data, t->data, t->nbytes);
    return SMELT_OK;
}

void sm_tensor_free(sm_tensor *t)
{
    if (!t)
        return;
    if (!t->borrowed)
        sm_free(t->data);
    sm_free(t);
}

int sm_tensor_equal(const sm_tensor *a, const sm_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

void sm_shape_str(smelt_dtype dt, int ndim, const int64_t *dims, char *buf,
                  size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "%s[", smelt_dtype_name(dt));
    for (int i = 0; i < ndim && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "",
                              (long long)dims[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

void sm_strides(int ndim, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* ---- public wrappers --------------------------------------------------- */

smelt_status smelt_tensor_init(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                               const int64_t *dims, smelt_tensor_t **out)
{
    if (!out || (ndim && !dims))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_tensor_init: NULL");
    return sm_tensor_new(ctx, dt, ndim, dims, out);
}

/* A tensor over the caller's bytes, so a binding (the Python package)
 * can pass its arrays to a run without copying them; the shape is
 * checked as sm_tensor_new checks it, and freeing the tensor frees only
 * the tensor. */
smelt_status smelt_tensor_wrap(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                               const int64_t *dims, void *data,
                               smelt_tensor_t **out)
{
    if (!out || (ndim && !dims))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_tensor_wrap: NULL");
    *out = NULL;
    if (dt <= SMELT_DTYPE_UNDEFINED || dt >= SMELT_DTYPE_COUNT)
        return sm_err(ctx, SMELT_ERR_TYPE, "invalid dtype %d", (int)dt);
    if (ndim < 0 || ndim > SMELT_MAX_DIMS)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "smelt_tensor_wrap: rank %d (at most %d)", ndim,
                      SMELT_MAX_DIMS);
    int64_t n;
    SM_TRY(sm_shape_numel(ctx, ndim, dims, smelt_dtype_size(dt), &n));
    if (n && !data)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_tensor_wrap: NULL data for %lld elements",
                      (long long)n);
    sm_tensor *t = sm_calloc(1, sizeof *t);
    if (!t)
        return sm_err_nomem(ctx);
    t->uid = atomic_fetch_add_explicit(&next_uid, 1, memory_order_relaxed) + 1;
    t->dtype = dt;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->dims, dims, sizeof(int64_t) * (size_t)ndim);
    t->numel = n;
    t->nbytes = (size_t)n * smelt_dtype_size(dt);
    t->data = data;
    t->borrowed = 1;
    *out = t;
    return SMELT_OK;
}

void smelt_tensor_free(smelt_tensor_t *t)
{
    sm_tensor_free(t);
}
smelt_dtype smelt_tensor_dtype(const smelt_tensor_t *t)
{
    return t->dtype;
}
int smelt_tensor_ndim(const smelt_tensor_t *t)
{
    return t->ndim;
}
int64_t smelt_tensor_numel(const smelt_tensor_t *t)
{
    return t->numel;
}
void *smelt_tensor_data(smelt_tensor_t *t)
{
    notify_read(t);
    return t->data;
}

int64_t smelt_tensor_dim(const smelt_tensor_t *t, int axis)
{
    return axis >= 0 && axis < t->ndim ? t->dims[axis] : -1;
}

double smelt_tensor_get_f64(const smelt_tensor_t *t, int64_t i)
{
    notify_read(t);
    return i >= 0 && i < t->numel ? sm_load_f64(t->dtype, t->data, i) : 0.0;
}
