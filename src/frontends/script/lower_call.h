/*
 * lower_call.h - what lower_call.c (calls, op-table mapping, attributes,
 * indexing) and lower_builtin.c (the builtin functions and methods) share.
 */
#ifndef SM_SCRIPT_LOWER_CALL_H
#define SM_SCRIPT_LOWER_CALL_H

#include "frontends/script/lower.h"

/* The evaluated arguments of a call: positional ones first (a method's
 * receiver is the first), then keyword ones (kw[i] their names). */
typedef struct sm_lw_args {
    int n, npos;
    sm_sv *v;
    const char **kw;
    char *used; /* keyword i was read */
    int line, col;
    const char *fname; /* for messages */
} sm_lw_args;

/* Keyword argument `name` (or `alias`), marked as used; NULL if absent. */
const sm_sv *sm_lw_kwarg(sm_lw_args *a, const char *name, const char *alias);
/* Positional argument i, else the keyword one; NULL if absent. */
const sm_sv *sm_lw_arg(sm_lw_args *a, int i, const char *name,
                       const char *alias);
/* Fails on unread keywords and on more than max_pos positional arguments
 * (max_pos < 0: any number). */
smelt_status sm_lw_args_done(sm_lower *L, sm_lw_args *a, int max_pos);
smelt_status sm_lw_tensor_arg(sm_lower *L, sm_lw_args *a, int i,
                              sm_value **out);
smelt_status sm_lw_const_int(sm_lower *L, const sm_lw_args *a, const sm_sv *v,
                             const char *what, int64_t *out);
smelt_status sm_lw_set_attr(sm_lower *L, sm_node *n, const sm_attr_spec *sp,
                            const sm_sv *v, int line, int col);
smelt_status sm_lw_set_ints(sm_lower *L, sm_node *n, const char *name,
                            const int64_t *v, int cnt);
/* The op whose name, lowercased without underscores, is name's. */
sm_op sm_lw_find_op(const char *name);
smelt_status sm_lw_op_call(sm_lower *L, sm_lw_args *a, sm_op op, sm_sv *out);
/* A builtin, else an op of the op table, else an error. */
smelt_status sm_lw_builtin(sm_lower *L, const char *name, int method,
                           sm_lw_args *a, sm_sv *out);
/* The builtins of lower_builtin.c (constructors, conversions, shape
 * functions); *found is 0 when name is none of them. */
smelt_status sm_lw_builtin_shape(sm_lower *L, const char *name, int method,
                                 sm_lw_args *a, sm_sv *out, int *found);
/* Nested lists of constants as a constant tensor of dtype dt (UNDEFINED:
 * f32 if any is a float, bool if all are bools, else i64). */
smelt_status sm_lw_nested_const(sm_lower *L, const sm_sv *d, smelt_dtype dt,
                                int line, int col, sm_value **out);
/* Size of dimension axis of x: a constant when known, else Shape. */
smelt_status sm_lw_dim(sm_lower *L, sm_value *x, int64_t axis, int line,
                       int col, sm_sv *out);
/* x.shape as a list of ints. */
smelt_status sm_lw_shape(sm_lower *L, sm_value *x, int line, int col,
                         sm_sv *out);

#endif
