/*
 * ops.h - the op table as kernels see it: the sm_op enum (which op a
 * kernel is registered for) and the reference kernels' prototypes, both
 * generated from the rows of ir/ops.def, the table's single source. The
 * rest of the table (schemas, shape and cost functions) is the IR's
 * (ir/op.h); kernels read the rows only, never the graph.
 */
#ifndef SM_KERNEL_OPS_H
#define SM_KERNEL_OPS_H

#include "kernels/kernel.h"

typedef enum sm_op {
#define OP(name, cls, imin, imax, omin, omax, nblk, attrs, shape, ref, cost,   \
           grad)                                                               \
    SM_OP_##name,
#include "ir/ops.def"
#undef OP
    SM_OP_COUNT
} sm_op;

/* The reference kernel of every row. */
#define OP(name, cls, imin, imax, omin, omax, nblk, attrs, shape, ref, cost,   \
           grad)                                                               \
    smelt_status ref(const sm_kargs *a);
#include "ir/ops.def"
#undef OP

#endif
