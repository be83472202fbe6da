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

/* Which dtypes sm_shape_dtype accepts (flags). */
enum {
    SM_SHAPE_FLOAT = 1, /* f32, f64, f16, bf16 */
    SM_SHAPE_INT = 2,   /* every integer dtype */
    SM_SHAPE_INT8 = 4   /* i8 and u8 (MaxPool) */
};
/* The common dtype of inputs first..last that are present with a known
 * dtype (UNDEFINED when none is); fails when one is not allowed (allow:
 * SM_SHAPE_ flags) or two differ. */
smelt_status sm_shape_dtype(sm_shape_ctx *s, int first, int last, int allow,
                            smelt_dtype *out);
/* Size of dim i of t; -1 when unknown or t's rank is unknown or short. */
int64_t sm_type_size(const sm_type *t, int i);
/* Dim i of t, or an unknown dim. */
sm_dim sm_type_dim(const sm_type *t, int i);
/* Fails when input i is present with a known shape other than the 1-D
 * [c] (c < 0: any length); what names the input in the message. */
smelt_status sm_shape_check_vector(sm_shape_ctx *s, int i, int64_t c,
                                   const char *what);
/* Fails when input i is present with a known dtype outside the kinds the
 * op accepts in shape_math.c's table (the further math ops and the
 * normalizations of shape_norm.c). */
smelt_status sm_shape_check_kind(sm_shape_ctx *s, int i);

/* The window ops (shape_conv.c, shape_pool.c): */
struct sm_window;
/* The output's spatial dims from the window; a size it leaves unknown is
 * the input's (maybe symbolic) dim under SAME padding with stride 1. */
void sm_shape_window_dims(sm_type *y, const struct sm_window *w,
                          const sm_type *x);
/* The sizes of t's spatial dims (2, 3, ...) into v, -1 where unknown. */
void sm_shape_spatial_sizes(const sm_type *t, int nsp, int64_t *v);

/* Cost functions' arithmetic: */
/* Known size of dim i of t as a double, 1 when unknown. */
double sm_type_factor(const sm_type *t, int i);
/* The product of dims [from, ndim) of t (unknown ones as 1). */
double sm_type_tail_volume(const sm_type *t, int from);
/* Sets flops and the bytes of every present input read and every output
 * written. */
void sm_cost_io(const sm_shape_ctx *s, sm_cost *c, double flops);

#endif
