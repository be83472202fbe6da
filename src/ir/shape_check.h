/*
 * shape_check.h - helpers shared by the shape functions of the gather,
 * scatter, sorting, box, resampling and recurrent ops (shape_gather.c,
 * shape_scatter.c, shape_topk.c, shape_roi.c, shape_space.c,
 * shape_resize.c, shape_gridsample.c, shape_rnn.c), on top of those of
 * shape_movement.h; defined in shape_check.c.
 */
#ifndef SM_SHAPE_CHECK_H
#define SM_SHAPE_CHECK_H

#include "ir/shape_movement.h"

/* Fails unless t's dtype is i32 or i64 (or not yet known). */
smelt_status sm_check_index_type(sm_shape_ctx *s, const sm_type *t,
                                 const char *what);
/* Fails unless t's dtype is a float type (or not yet known). */
smelt_status sm_check_float_type(sm_shape_ctx *s, const sm_type *t,
                                 const char *what);
/* Fails when the known dtypes of a and b differ. */
smelt_status sm_check_same_type(sm_shape_ctx *s, const sm_type *a,
                                const char *an, const sm_type *b,
                                const char *bn);
/* Fails when t's rank is known and outside [lo, hi] (hi < 0: no bound). */
smelt_status sm_check_rank(sm_shape_ctx *s, const sm_type *t, const char *what,
                           int lo, int hi);
/* Fails when the known sizes of dims a and b differ. */
smelt_status sm_check_same_dim(sm_shape_ctx *s, sm_dim a, const char *an,
                               sm_dim b, const char *bn);
/* A one-element input (a scalar or a [1] tensor), its value converted to
 * int64 (floats truncate): *known is 0 when the value is not known (or
 * the input is absent); fails when it has another element count. */
smelt_status sm_check_scalar_int(sm_shape_ctx *s, int i, const char *what,
                                 int64_t *v, int *known);
/* The same for a float one-element input, read as double. */
smelt_status sm_check_scalar_f64(sm_shape_ctx *s, int i, const char *what,
                                 double *v, int *known);
/* Checks the known index values of input i (m per index tuple, indexing
 * dims [axis0, axis0 + m) of data type x) when those dims are known. */
smelt_status sm_check_indices(sm_shape_ctx *s, int i, const sm_type *x, int m,
                              int axis0);
/* Fails when a known dim d of the indices it exceeds data x's, except
 * along the gathered or scattered axis: the elements there would not
 * exist. */
smelt_status sm_check_dims_within(sm_shape_ctx *s, const sm_type *it,
                                  const sm_type *x, int axis);
/* GatherND's and ScatterND's indices: i64 only, as ONNX defines them. */
smelt_status sm_check_nd_indices(sm_shape_ctx *s, const sm_type *it);

#endif
