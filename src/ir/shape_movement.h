/*
 * shape_movement.h - helpers shared by the shape functions of the data-movement
 * and shape ops (shape_movement.c, shape_reshape.c, shape_index.c,
 * shape_const.c).
 */
#ifndef SM_SHAPE_MOVEMENT_H
#define SM_SHAPE_MOVEMENT_H

#include "ir/shape_util.h"

/* The type of required input i; fails when the input is absent. */
smelt_status sm_movement_input(sm_shape_ctx *s, int i, const sm_type **t);
/* out: dtype dt, rank ndim (may be SM_RANK_UNKNOWN), every dim unknown. */
void sm_movement_unknown(sm_type *out, smelt_dtype dt, int ndim);
/* When every dim of out is known, fails with SMELT_ERR_LIMIT if its
 * element count overflows or its bytes exceed the allocation limit. */
smelt_status sm_movement_check_size(sm_shape_ctx *s, const sm_type *out);
/* *acc *= x and *acc += x for non-negative sizes; 0 on int64 overflow. */
int sm_movement_mul(int64_t *acc, int64_t x);
int sm_movement_add(int64_t *acc, int64_t x);
/* The length of 1-D input type t when known (1 for a scalar), else -1. */
int64_t sm_movement_len(const sm_type *t);
/* The rank a shape tensor of type sh (its value unknown) describes:
 * its length, or SM_RANK_UNKNOWN; fails when over SMELT_MAX_DIMS. */
smelt_status sm_movement_shape_rank(sm_shape_ctx *s, const sm_type *sh,
                                    int *rank);
/* "[1,-1,0]" into buf. */
void sm_movement_ints_str(const int64_t *v, int n, char *buf, size_t size);

/* An optional integer list (axes) given as input idx (newer opsets) or as
 * attribute `name` (older): *n is its count, SM_INTS_ABSENT when neither
 * is given, or SM_INTS_UNKNOWN when the input's value is not known (then
 * *len is its length when the type knows it, else -1). At most max
 * values. */
#define SM_INTS_ABSENT (-1)
#define SM_INTS_UNKNOWN (-2)
smelt_status sm_movement_ints(sm_shape_ctx *s, int idx, const char *name,
                              int64_t *v, int max, int *n, int64_t *len);
/* Reads a known 1-D integer input into v (at most SMELT_MAX_DIMS); *n is
 * the count. */
smelt_status sm_movement_read(sm_shape_ctx *s, const sm_tensor *t, int64_t *v,
                              int *n);
/* Normalizes n axes against rank into ax[], refusing values out of range
 * and repeats. */
smelt_status sm_movement_axes(sm_shape_ctx *s, const int64_t *v, int n,
                              int rank, int *ax);

#endif
