/*
 * build_move.h - builder helpers the data-movement and indexing rules
 * share (rules_movement.c, rules_index.c): reading constant integer
 * inputs, nodes with attributes, replaying the forward node on other
 * inputs, and the "index map" that sends a gradient back through any op
 * that only moves elements.
 *
 * The index map: an op that only selects and moves elements (Slice, Tile,
 * Pad in reflect mode, Compress...) applied to iota (each element holds
 * its own flat position) yields, for every output element, the position
 * of the input element it copied. Scattering the output gradient back to
 * those positions with ScatterElements' "add" reduction is then exactly
 * the transposed map, repeats included, and works whatever the op's
 * parameters are at run time.
 */
#ifndef SM_AUTOGRAD_BUILD_MOVE_H
#define SM_AUTOGRAD_BUILD_MOVE_H

#include "autograd/grad.h"

/* The values of v as int64 when v is a constant integer tensor of at most
 * max elements: their count; -1 otherwise (unknown before running). */
int mv_const_ints(const sm_value *v, int64_t *out, int max);
/* The node's own int attribute, or the schema default. */
int64_t mv_attr_int(const sm_node *n, const char *name, int64_t def);

/* Attribute setters that record out-of-memory on g; NULL-safe. */
void mv_set_int(sm_grad_ctx *g, sm_node *n, const char *name, int64_t v);
void mv_set_ints(sm_grad_ctx *g, sm_node *n, const char *name, const int64_t *v,
                 int cnt);
void mv_set_string(sm_grad_ctx *g, sm_node *n, const char *name, const char *s);

/* A node of g->n's op with g->n's attributes on inputs in[0..n_in)
 * (NULL: absent), with g->n's number of outputs; its first output. */
sm_value *mv_replay(sm_grad_ctx *g, sm_value *const *in, int n_in);

/* Transpose of x by perm (rank r). */
sm_value *mv_transpose(sm_grad_ctx *g, sm_value *x, const int64_t *perm, int r);
/* Slice of x with constant starts/ends/axes/steps (n entries each). */
sm_value *mv_slice(sm_grad_ctx *g, sm_value *x, const int64_t *starts,
                   const int64_t *ends, const int64_t *axes,
                   const int64_t *steps, int n);
/* ConstantOfShape(shape) filled with v of dtype dt. */
sm_value *mv_fill(sm_grad_ctx *g, sm_value *shape, smelt_dtype dt, double v);
/* The length of v along axis as an i64[1]: a constant when known,
 * Shape(v){start = axis, end = axis + 1} otherwise. */
sm_value *mv_axis_len(sm_grad_ctx *g, sm_value *v, int axis);
/* The constant [a, b] of dtype dt. */
sm_value *mv_float_pair(sm_grad_ctx *g, smelt_dtype dt, double a, double b);
/* x concatenated along axis (n parts). */
sm_value *mv_concat(sm_grad_ctx *g, sm_value *const *x, int n, int axis);

/* An i64 tensor of x's shape holding 0, 1, ... in row-major order. */
sm_value *mv_iota(sm_grad_ctx *g, const sm_value *x);
/* The gradient of x when output element k copied x's element map[k]:
 * dy scattered (added) into zeros of x's shape at the flat positions map
 * (an i64 tensor of dy's shape). */
sm_value *mv_scatter_back(sm_grad_ctx *g, const sm_value *x, sm_value *map,
                          sm_value *dy);
/* The whole index-map rule for input 0 of an op that only moves
 * elements: replays g->n on iota in place of input 0 (other inputs as
 * they are, those flagged in drop[] left out), then scatters dy back. */
sm_value *mv_gradient_by_map(sm_grad_ctx *g, const unsigned char *drop);

#endif
