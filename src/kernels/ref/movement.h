/*
 * movement.h - index arithmetic shared by the data-movement ops' shape
 * functions (src/ir/shape_*.c) and their reference kernels, so that the shape a
 * function infers and the elements a kernel reads come from one place.
 */
#ifndef SM_REF_MOVEMENT_H
#define SM_REF_MOVEMENT_H

#include <stdint.h>

#include "core/attr.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/kernel.h"

/* Where output element idx (a multi-index over the output) comes from:
 * an element offset into the input, or -1 for the fill value. */
typedef int64_t (*sm_movement_src_fn)(const void *user, const int64_t *idx);
/* Fills y in row-major order, each element copied (as bytes, so for any
 * dtype) from the element of x that src names, or from fill. */
void sm_movement_copy(sm_tensor *y, const sm_tensor *x, sm_movement_src_fn src,
                      const void *user, const void *fill);

/* The affine source map Slice, Transpose and Expand share: output axis d
 * reads input offset (first[d] + idx[d] * step[d]) * stride[d], summed
 * (a stride of 0 broadcasts, permuted strides transpose). */
typedef struct sm_affine {
    int ndim; /* output rank */
    int64_t first[SMELT_MAX_DIMS], step[SMELT_MAX_DIMS], stride[SMELT_MAX_DIMS];
} sm_affine;
int64_t sm_affine_src(const void *user, const int64_t *idx);
/* The identity map over an output of rank ndim (first 0, step 1, stride 0):
 * callers set the strides. */
void sm_affine_init(sm_affine *m, int ndim);

/* Slice: reads starts, ends and the optional axes and steps (NULL when
 * absent) of a rank-ndim input into per-axis start[], end[], step[];
 * axes that are not sliced get the full range (0, INT64_MAX, 1). Fails on
 * mismatched lengths, axes out of range or repeated, and zero steps. */
smelt_status sm_slice_read(smelt_ctx_t *ctx, int ndim, const sm_tensor *starts,
                           const sm_tensor *ends, const sm_tensor *axes,
                           const sm_tensor *steps, int64_t *start, int64_t *end,
                           int64_t *step);
/* One sliced axis of known size dim, as ONNX defines it (negative indices
 * count from the end, then clamp): the first index read and the count. */
void sm_slice_dim(int64_t dim, int64_t start, int64_t end, int64_t step,
                  int64_t *first, int64_t *count);
/* A Slice node's source map, checked before anything is read: reads
 * a->in[1..4] (starts, ends, axes?, steps?) and gives, per axis of the
 * input, the first index read and the step (1 on an axis read at most
 * once, whatever the node says), after checking that the
 * output a->out[0] has the input's dtype and rank and the sliced sizes.
 * The reference and the CPU kernel share it. */
smelt_status sm_slice_geom(const sm_kargs *a, int64_t *first, int64_t *step);
/* Whether (start, end, step) keeps a whole axis of any size, in order or
 * reversed (what exporters write with INT64_MAX / INT64_MIN ends). */
int sm_slice_whole(int64_t start, int64_t end, int64_t step);

/* Concat and Split: checks that the parts (n tensors, NULL refused) laid
 * side by side along the axis attribute make `whole` (rank, dtype, every
 * other dim, the sizes along axis adding up); gives the normalized axis
 * and the element counts before and after it. The reference and the CPU
 * kernels share it. */
smelt_status sm_parts_check(const sm_kargs *a, const sm_tensor *whole,
                            sm_tensor *const *parts, int n, int *axis,
                            int64_t *outer, int64_t *inner);

/* Gather's geometry: the data seen as [outer, dim, inner] around axis. */
typedef struct sm_gather_geom {
    int axis; /* normalized to [0, rank) */
    int64_t outer, dim, inner;
} sm_gather_geom;
/* Checks a Gather node before it reads anything: the axis attribute of
 * `at` within x's rank, integer (i32, i64) indices, y's dtype and shape
 * (data[:axis] + indices.shape + data[axis+1:]) and every index within
 * [-dim, dim); fills g. The reference and the CPU kernel share it. */
smelt_status sm_gather_check(smelt_ctx_t *ctx, const sm_tensor *x,
                             const sm_tensor *ind, const sm_tensor *y,
                             const sm_attrs *at, sm_gather_geom *g);

/* Pad modes. */
typedef enum sm_pad_mode {
    SM_PAD_CONSTANT,
    SM_PAD_REFLECT,
    SM_PAD_EDGE,
    SM_PAD_WRAP
} sm_pad_mode;

/* The mode named by the "mode" attribute, or -1 when unknown. */
int sm_pad_mode_from(const char *name);
/* Reads pads ([begin..., end...] over axes, or over every axis when axes
 * is NULL) of a rank-ndim input into per-axis begin[] and end[]. */
smelt_status sm_pad_read(smelt_ctx_t *ctx, int ndim, const sm_tensor *pads,
                         const sm_tensor *axes, int64_t *begin, int64_t *end);
/* The input index along an axis of size dim (> 0) that output position i
 * (already shifted by the begin pad, so maybe outside [0, dim)) reads in
 * mode m; -1 for the constant fill. */
int64_t sm_pad_source(sm_pad_mode m, int64_t i, int64_t dim);

/* A checked Pad: along axis d, output position i reads position
 * lo[d] + sm_pad_source(mode, i - begin[d], kept[d]) of the input (whose
 * element strides are stride[]); negative pads became lo[d] (a crop at
 * the start) and a shorter kept[d]. fill holds the constant's bytes. */
typedef struct sm_pad_geom {
    sm_pad_mode mode;
    int ndim;
    int64_t begin[SMELT_MAX_DIMS], lo[SMELT_MAX_DIMS], kept[SMELT_MAX_DIMS],
        stride[SMELT_MAX_DIMS];
    char fill[16];
} sm_pad_geom;

/* Checks Pad(data, pads, constant_value?, axes?) against its output's
 * shape and fills m: the reference and the CPU kernel share it, so both
 * fail alike on bad pads. */
smelt_status sm_pad_check(const sm_kargs *a, sm_pad_geom *m);

/* Shape: the [lo, hi) range of dimensions of a rank-rank input selected by
 * the start and end attributes (clamped as ONNX opset 15 says). */
void sm_shape_op_range(const sm_attrs *a, int rank, int *lo, int *hi);

/* Constant: the one value attribute the node carries; returns how many of
 * value, value_float, value_floats, value_int, value_ints are present
 * (the node is valid only when that is 1) and sets *out to the first. */
int sm_constant_attr(const sm_attrs *a, const sm_attr **out);

#endif
