/*
 * ir.h - the graph IR: a graph owns a top block; a block holds parameters,
 * constants, nodes in topological order and its returns. Values are SSA:
 * defined once (by a node, as a block parameter or as a constant), each
 * with a dtype and a shape whose dimensions may be symbolic names.
 *
 * Objects live in the graph's arena and are not freed one by one; the
 * graph keeps every value and node it ever made so that owned data (constant
 * tensors, tensor attributes, growable arrays) is released by
 * smelt_graph_free().
 */
#ifndef SM_IR_H
#define SM_IR_H

#include <stdint.h>

#include "core/arena.h"
#include "core/attr.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/op.h"

/* One dimension: size >= 0 when known; otherwise sym names a symbolic
 * dimension ("batch"), or is NULL when nothing is known. */
typedef struct sm_dim {
    int64_t size;
    const char *sym;
} sm_dim;

#define SM_RANK_UNKNOWN (-1)

typedef struct sm_type {
    smelt_dtype dtype; /* UNDEFINED when not yet inferred */
    int ndim;          /* SM_RANK_UNKNOWN when not yet inferred */
    sm_dim dims[SMELT_MAX_DIMS];
} sm_type;

typedef struct sm_node sm_node;
typedef struct sm_block sm_block;
typedef struct smelt_graph sm_graph;

typedef struct sm_value {
    int id; /* unique in the graph; index into graph->values */
    const char *name;
    sm_type type;
    sm_node *def;    /* defining node, NULL for parameters and constants */
    int def_index;   /* output index in def */
    sm_block *block; /* block that defines it */
    sm_tensor *data; /* constant data (owned), NULL otherwise */
} sm_value;

struct sm_node {
    int id;
    sm_op op;
    const char *name; /* may be NULL */
    int n_in;
    sm_value **in; /* NULL entries: absent optional inputs */
    int n_out;
    sm_value **out;
    int n_attr;
    sm_attr *attrs;
    int n_blocks;
    sm_block **blocks;
    sm_block *owner;
    int src_line, src_col; /* where the text form defined it (0: unknown) */
};

struct sm_block {
    const char *label; /* "then_branch", "else_branch", "body"; NULL at top */
    int n_params, cap_params;
    sm_value **params;
    int n_consts, cap_consts;
    sm_value **consts;
    int n_nodes, cap_nodes;
    sm_node **nodes;
    int n_ret, cap_ret;
    sm_value **ret;
    sm_node *parent; /* node that owns this block, NULL for the top */
    sm_graph *graph;
};

/* What smelt_graph_grad made of a joint graph's signature
 * (docs/AUTOGRAD.md): the output holding the loss and, for each value
 * differentiated, its name, the output holding its gradient and, when it
 * was lifted from an initializer, the input it became (-1 otherwise). */
typedef struct sm_grad_sig {
    int loss_out;
    int n;
    const char **wrt;
    int *grad_out;
    int *wrt_in;
} sm_grad_sig;

/* What smelt_graph_add_optimizer made of a training-step graph's
 * signature (docs/AUTOGRAD.md, "Training"): the inputs holding the
 * learning rate and the step number, the output holding the global
 * gradient norm (-1 without clipping) and, for parameter i (gradient i
 * of the grad signature), the output of its updated value and the
 * input and output of each of its n_state optimizer states (state k of
 * parameter i at [i * n_state + k]), named after the parameter with
 * "." state_name[k] appended. */
typedef struct sm_optim_sig {
    int kind; /* smelt_optimizer */
    int lr_in, step_in, norm_out;
    int n, n_state;
    const char **state_name;
    int *param_in;  /* the parameter's input */
    int *param_out; /* its updated value */
    int *state_in;
    int *state_out;
} sm_optim_sig;

struct smelt_graph {
    const char *name;
    const char *src_file; /* the file the graph was parsed from, or NULL */
    sm_block *top;
    sm_arena arena;
    int n_values, cap_values;
    sm_value **values; /* every value ever made, by id */
    int n_nodes_all, cap_nodes_all;
    sm_node **nodes_all;
    int n_blocks_all, cap_blocks_all;
    sm_block **blocks_all;
    sm_grad_sig *grad;   /* NULL unless smelt_graph_grad made the graph */
    sm_optim_sig *optim; /* NULL unless smelt_graph_add_optimizer made it */
};

/* ---- construction ------------------------------------------------------ */

smelt_status sm_graph_new(smelt_ctx_t *ctx, const char *name, sm_graph **out);
void sm_graph_free(sm_graph *g);

/* A new empty block; parent is the owning node (NULL for the top block).
 * The block is not attached to the node: sm_node_add_block does that. */
sm_block *sm_block_new(sm_graph *g, const char *label, sm_node *parent);
sm_value *sm_block_add_param(sm_block *b, const char *name, const sm_type *t);
/* Adds a constant; the block takes ownership of data (also on failure). */
sm_value *sm_block_add_const(sm_block *b, const char *name, sm_tensor *data);
int sm_block_add_return(sm_block *b, sm_value *v);

/* A new node appended to b, with n_out fresh output values named after
 * out_names (NULL: generated names) and unknown types. Inputs and
 * attributes are copied. Returns NULL when out of memory. */
sm_node *sm_node_new(sm_block *b, sm_op op, const char *name, int n_in,
                     sm_value *const *in, int n_out,
                     const char *const *out_names);
/* Inserts node n (already created in b) at position pos of b's list. */
void sm_block_move_node(sm_block *b, sm_node *n, int pos);
int sm_node_add_block(sm_node *n, sm_block *blk);
/* Appends an output to n (a fresh value of unknown type named name, NULL:
 * generated). NULL when out of memory. */
sm_value *sm_node_add_output(sm_node *n, const char *name);
/* Attributes: the node copies names, strings and lists into the arena;
 * a tensor attribute's tensor is owned by the node from then on. */
int sm_node_set_int(sm_node *n, const char *name, int64_t v);
int sm_node_set_float(sm_node *n, const char *name, double v);
int sm_node_set_string(sm_node *n, const char *name, const char *s);
int sm_node_set_ints(sm_node *n, const char *name, const int64_t *v, int cnt);
int sm_node_set_floats(sm_node *n, const char *name, const double *v, int cnt);
int sm_node_set_strings(sm_node *n, const char *name, const char *const *v,
                        int cnt);
int sm_node_set_tensor(sm_node *n, const char *name, sm_tensor *t);
const sm_attr *sm_node_attr(const sm_node *n, const char *name);
/* The node's attributes with its op's schema behind them. */
sm_attrs sm_node_attrs(const sm_node *n);

/* ---- queries ----------------------------------------------------------- */

sm_value *sm_graph_find_value(const sm_graph *g, const char *name);
int sm_type_known(const sm_type *t); /* dtype and every dim known */
int sm_type_equal(const sm_type *a, const sm_type *b);
void sm_type_from_tensor(sm_type *t, const sm_tensor *x);
void sm_type_unknown(sm_type *t);
/* "f32[batch,3,?]" */
void sm_type_str(const sm_type *t, char *buf, size_t size);
/* Human location of a node for error messages: "node 'conv1' (Conv)",
 * prefixed with "file:line:col: " when the node came from text. */
void sm_node_where(const sm_node *n, char *buf, size_t size);

#endif
