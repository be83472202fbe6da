/*
 * trace.h - between the eager ops (eager.c) and the recorder (trace.c):
 * while a ctx is tracing, each eager op appends its node to the trace
 * graph through these calls. Design in docs/TRACE.md.
 */
#ifndef SM_TRACE_H
#define SM_TRACE_H

#include "ir/ir.h"

/* Operands an eager op may have (the limit of ir/eval.c). */
#define SM_TRACE_MAX_OPERANDS 64

typedef struct sm_trace sm_trace;

/* The trace recording on ctx; NULL when ctx is not tracing or its trace
 * has failed (a failed trace records nothing more). */
sm_trace *sm_trace_recording(smelt_ctx_t *ctx);

/* Appends a node of op `op` to the trace graph, reading the values that
 * stand for in[] (n_in tensors, NULL entries absent): tensors the trace
 * has not seen become constants, captured by value. Output values are
 * named after the op. *out is the node; its attributes are the caller's
 * to set. */
smelt_status sm_trace_add_node(sm_trace *tr, smelt_ctx_t *ctx, sm_op op,
                               sm_tensor *const *in, int n_in, int n_out,
                               sm_node **out);

/* Binds the eager results outs[] to n's outputs: each value takes its
 * tensor's type, and the tensors are watched for reads of their data. */
smelt_status sm_trace_bind_outputs(sm_trace *tr, smelt_ctx_t *ctx, sm_node *n,
                                   sm_tensor *const *outs);

/* Fails tr (may be NULL: then nothing) with status st and the message now
 * on ctx, unless it failed before; returns st. */
smelt_status sm_trace_fail(sm_trace *tr, smelt_ctx_t *ctx, smelt_status st);

#endif
