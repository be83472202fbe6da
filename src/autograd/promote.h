/*
 * promote.h - a graph rewritten to compute in float64, for gradcheck
 * (gradcheck.c): central differences with eps 1e-6 need the precision
 * of doubles, whatever dtype the model was written in.
 */
#ifndef SM_AUTOGRAD_PROMOTE_H
#define SM_AUTOGRAD_PROMOTE_H

#include "ir/ir.h"

/* Whether dt is one of the floating dtypes promotion widens (f32, f16,
 * bf16; f64 is left as it is). */
int sm_promote_dtype(smelt_dtype dt);

/* Rewrites g in place so that it computes in f64: the float parameters
 * and constants of every block (types and data), tensor attributes (the
 * value of Constant and ConstantOfShape) and dtype attributes that name
 * a float (Cast's `to`, EyeLike's `dtype`) are widened, and the types of
 * node outputs are inferred afresh from them (an op whose output dtype
 * is fixed, like DynamicQuantizeLinear's f32 scale, keeps it). Integer
 * and boolean values keep their dtypes. The graph is verified, so an op
 * whose shape function refuses f64 fails here, naming the node. */
smelt_status sm_graph_promote_f64(smelt_ctx_t *ctx, sm_graph *g);

/* A new f64 copy of tensor t when its dtype is a float promotion widens,
 * else a plain copy. */
smelt_status sm_tensor_promote_f64(smelt_ctx_t *ctx, const sm_tensor *t,
                                   sm_tensor **out);

#endif
