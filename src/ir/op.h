/*
 * op.h - the op table. Every op is one row of ops.def; the enum, names,
 * schemas and dispatch below are generated from it.
 */
#ifndef SM_OP_H
#define SM_OP_H

#include <stdint.h>

#include "core/attr.h"
#include "kernels/kernel.h"
#include "kernels/ops.h" /* sm_op and the reference kernels' prototypes */

/* How an op takes part in fusion. */
typedef enum sm_op_class {
    SM_CLASS_ELEMWISE,    /* one input element -> one output element */
    SM_CLASS_BROADCAST,   /* elementwise over numpy-broadcast inputs */
    SM_CLASS_REDUCTION,   /* reduces along axes */
    SM_CLASS_CONTRACTION, /* matmul, conv: the heavy compute */
    SM_CLASS_MOVEMENT,    /* moves or views data, computes nothing */
    SM_CLASS_CONTROL,     /* owns sub-blocks */
    SM_CLASS_OPAQUE       /* anything else (normalizations, pooling, ...) */
} sm_op_class;

struct sm_type;
struct sm_node;

/* What a shape function sees about one input. */
typedef struct sm_operand {
    int present; /* 0 for an absent optional input */
    const struct sm_type *type;
    const sm_tensor *data; /* the value, when known (constant or run) */
} sm_operand;

/* A shape function infers output dtypes and shapes from the inputs'
 * (and from their values where known, as Reshape needs). With concrete
 * inputs it must give concrete outputs: the interpreter sizes output
 * buffers with it. */
typedef struct sm_shape_ctx {
    const struct sm_op_info *op;
    sm_attrs attrs;
    int n_in;
    const sm_operand *in;
    int n_out;
    struct sm_type *out;
    const struct sm_node *node; /* for control ops; NULL at run time */
    smelt_ctx_t *ctx;
} sm_shape_ctx;

typedef struct sm_cost {
    double flops;       /* floating-point (or integer) operations */
    double bytes_read;  /* bytes of inputs read */
    double bytes_write; /* bytes of outputs written */
} sm_cost;

typedef smelt_status (*sm_shape_fn)(sm_shape_ctx *s);
typedef void (*sm_cost_fn)(const sm_shape_ctx *s, sm_cost *c);

typedef struct sm_op_info {
    const char *name;
    sm_op_class cls;
    int in_min, in_max;   /* in_max < 0: variadic */
    int out_min, out_max; /* out_max < 0: variadic */
    int n_blocks;         /* sub-blocks the node owns */
    const char *schema;   /* attribute schema string */
    sm_shape_fn shape;
    sm_kernel_fn ref;
    sm_cost_fn cost;
    const sm_attr_spec *spec; /* parsed schema */
    int n_spec;
} sm_op_info;

/* Declarations of the shape and cost functions the table names (the
 * reference kernels' are in kernels/ops.h). */
#define OP(name, cls, imin, imax, omin, omax, nblk, attrs, shape, ref, cost,   \
           grad)                                                               \
    smelt_status shape(sm_shape_ctx *s);                                       \
    void cost(const sm_shape_ctx *s, sm_cost *c);
#include "ir/ops.def"
#undef OP

const sm_op_info *sm_op_info_get(sm_op op);
/* When n_in inputs or n_out outputs are outside op's arity, writes
 * "Relu takes 1 input, got 2" into buf and returns 1; 0 when they fit.
 * Shape inference checks it before calling a shape function (which may
 * index inputs by position), the verifier again. */
int sm_op_arity_error(sm_op op, int n_in, int n_out, char *buf, size_t size);
/* SM_OP_COUNT when name is not an op. */
sm_op sm_op_from_name(const char *name, int len);
const char *sm_op_class_name(sm_op_class c);
const sm_attr_spec *sm_op_attr_spec(sm_op op, const char *name);
/* The label sub-block i of an `op` node must carry ("then_branch",
 * "else_branch" for If, "body" for Loop and FusedElementwise); NULL when
 * the op owns no such block. Blocks run by index, so a label that does
 * not match would silently run the wrong branch. */
const char *sm_op_block_label(sm_op op, int i);

#endif
