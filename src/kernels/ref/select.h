/*
 * select.h - index arithmetic shared by the shape functions
 * (src/ir/shape_check.c, shape_gather.c, shape_scatter.c, shape_topk.c,
 * shape_roi.c) and the reference kernels of the gather, scatter and
 * selection ops (gather.c, scatter.c, topk.c, roi.c).
 *
 * Several of these ops have outputs whose size depends on the input's
 * values (NonZero, Compress, Unique, NonMaxSuppression): the shape
 * function can size them only when the values are known, which they
 * always are at run time (the interpreter passes every input's data), and
 * it calls the same counting function the kernel fills the output with,
 * so the two cannot disagree.
 */
#ifndef SM_REF_SELECT_H
#define SM_REF_SELECT_H

#include <stdint.h>

#include "core/attr.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/kernel.h"

/* Attribute `name` (default def) of a kernel as an axis of a rank-rank
 * tensor, normalized to [0, rank); -1, with SMELT_ERR_RUNTIME recorded,
 * when out of range. */
int sm_kernel_axis(const sm_kargs *a, const char *name, int64_t def, int rank);

/* Checks every element of the integer tensor ind against the dims it
 * indexes: element i indexes axis axis0 + i % m, of size dims[i % m],
 * and must lie in [-size, size). Fails with `code` and a message naming
 * op, the index, its position and the axis. */
smelt_status sm_index_check(smelt_ctx_t *ctx, smelt_status code, const char *op,
                            const sm_tensor *ind, int m, int axis0,
                            const int64_t *dims);
/* An index already checked by sm_index_check, made non-negative. */
int64_t sm_index_at(const sm_tensor *ind, int64_t i, int64_t dim);

/* The number of nonzero elements of x (NaN counts as nonzero). */
int64_t sm_nonzero_count(const sm_tensor *x);
/* Compress: the number of true entries of the 1-D condition along an axis
 * of size dim; an entry past the axis's end must be false. */
smelt_status sm_compress_count(smelt_ctx_t *ctx, smelt_status code,
                               const sm_tensor *cond, int64_t dim,
                               int64_t *count);

/* A stable merge sort of the indices idx[0..n) by cmp (negative: a goes
 * first); tmp has room for n indices. */
typedef int (*sm_sort_cmp)(const void *user, int64_t a, int64_t b);
void sm_sort_index(int64_t *idx, int64_t *tmp, int64_t n, sm_sort_cmp cmp,
                   const void *user);

/* Unique over the slices of x along axis (axis < 0: over the elements of
 * x flattened). Slices compare element by element, in row-major order
 * within the slice, by value (floats as doubles, integers exactly).
 * n: the number of slices; u: the number of distinct ones. For the k-th
 * distinct slice (in ascending order when sorted, else in the order of
 * first appearance): first[k] is the slice where it first appears and
 * counts[k] how often; inverse[i] is the k of slice i. */
typedef struct sm_unique {
    int64_t n, u;
    int64_t *first, *counts, *inverse;
} sm_unique;
smelt_status sm_unique_find(smelt_ctx_t *ctx, const sm_tensor *x, int axis,
                            int sorted, sm_unique *out);
void sm_unique_free(sm_unique *u);

/* NonMaxSuppression: the selected (batch, class, box) triples, *count of
 * them, in a new array *sel (sm_free it; NULL when there are none). The
 * optional scalars are NULL when absent. */
smelt_status sm_nms_select(smelt_ctx_t *ctx, const sm_tensor *boxes,
                           const sm_tensor *scores, const sm_tensor *max_out,
                           const sm_tensor *iou, const sm_tensor *score_thr,
                           int center, int64_t **sel, int64_t *count);

/* MaxUnpool's unpooled shape for an input of rank ndim and dims x (-1:
 * unknown, giving -1): N and C kept, each spatial dim (d - 1) * stride -
 * pads + kernel from the kernel_shape, strides and pads attributes.
 * Failures carry `code` (SMELT_ERR_LIMIT on overflow). */
smelt_status sm_unpool_shape(smelt_ctx_t *ctx, smelt_status code,
                             const sm_attrs *a, int ndim, const int64_t *x,
                             int64_t *out);

#endif
