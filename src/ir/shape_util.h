/*
 * shape_util.h - helpers shared by the shape functions of ops.def.
 */
#ifndef SM_SHAPE_UTIL_H
#define SM_SHAPE_UTIL_H

#include "ir/ir.h"

/* Numpy broadcasting of n types into out's dims (dtype untouched). Known
 * sizes must agree or be 1; a symbolic dim broadcast with 1 stays symbolic;
 * anything undecidable becomes unknown. Unknown rank in any input gives
 * unknown rank. */
smelt_status sm_shape_bcast(sm_shape_ctx *s, int n, const sm_type *const *in,
                            sm_type *out);
/* Axis in [-rank, rank) to [0, rank); fails with a message naming the op. */
smelt_status sm_shape_axis(sm_shape_ctx *s, int64_t axis, int rank, int *out);
/* Reads a 1-D integer tensor (a shape, axes, pads...) into v (at most
 * max elements); returns the count or -1 with an error recorded. */
int sm_shape_read_ints(sm_shape_ctx *s, const sm_tensor *t, int64_t *v,
                       int max);
/* Sets out to a fully known type. */
void sm_type_set(sm_type *out, smelt_dtype dt, int ndim, const int64_t *dims);
/* Input i's type, or NULL when absent. */
const sm_type *sm_shape_in(const sm_shape_ctx *s, int i);
/* Input i's type into *t; fails ("<op>: input i is missing") when absent. */
smelt_status sm_shape_need(sm_shape_ctx *s, int i, const sm_type **t);
/* Total bytes of a type (0 when unknown). */
double sm_type_bytes(const sm_type *t);
double sm_type_numel(const sm_type *t);

#endif
