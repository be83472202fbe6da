/*
 * tensor.h - dense, contiguous, row-major tensors.
 */
#ifndef SM_TENSOR_H
#define SM_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

struct smelt_tensor {
    smelt_dtype dtype;
    int ndim;
    int64_t dims[SMELT_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    void *data;
    /* Identity for frontends that map tensors to graph values (the
     * tracer): set by sm_tensor_new from a process-wide counter, unique
     * and never reused; 0 for a tensor not made by sm_tensor_new. */
    uint64_t uid;
    /* Nonzero when an observer (the tracer) wants to hear of reads of the
     * data through smelt_tensor_data / smelt_tensor_get_f64: its tag. */
    uint64_t watch;
    /* Nonzero for a tensor made by smelt_tensor_wrap: data is the
     * caller's, and freeing the tensor leaves it alone. */
    int borrowed;
};

typedef struct smelt_tensor sm_tensor;

/* The observer of reads of watched tensors (see `watch`); NULL: none.
 * Process-wide; the hook itself must be thread-safe. */
typedef void (*sm_tensor_watch_fn)(const sm_tensor *t);
void sm_tensor_set_watch_hook(sm_tensor_watch_fn fn);

/* Element count of a shape, with overflow and negative-dim checks.
 * Fails with SMELT_ERR_LIMIT when the byte size of elem_size-byte elements
 * would exceed the allocation limit. */
smelt_status sm_shape_numel(smelt_ctx_t *ctx, int ndim, const int64_t *dims,
                            size_t elem_size, int64_t *numel);

/* A new zero-filled tensor. */
smelt_status sm_tensor_new(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                           const int64_t *dims, sm_tensor **out);
smelt_status sm_tensor_clone(smelt_ctx_t *ctx, const sm_tensor *t,
                             sm_tensor **out);
void sm_tensor_free(sm_tensor *t);
/* Same dtype, shape and bytes. */
int sm_tensor_equal(const sm_tensor *a, const sm_tensor *b);
/* "f32[2,3]" into buf. */
void sm_shape_str(smelt_dtype dt, int ndim, const int64_t *dims, char *buf,
                  size_t size);

/* Strides in elements of a row-major shape. */
void sm_strides(int ndim, const int64_t *dims, int64_t *strides);

#endif
