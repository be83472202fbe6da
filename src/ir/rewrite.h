/*
 * rewrite.h - graph mutation for passes.
 *
 * A rewriter is made once per pass run. It indexes every use of every
 * value (node inputs in all blocks, and block returns) and keeps each
 * block's nodes in a linked list, so that replacing all uses of a value,
 * removing a node, inserting a node before another and counting uses all
 * take time proportional to what changes, not to the graph. sm_rw_free()
 * writes the lists back into the blocks' arrays (it never allocates, so
 * it cannot fail) and releases the index.
 *
 * While a rewriter is open, every change to node inputs, block returns,
 * node lists and constants must go through it; attributes may be set
 * directly. Walk a block with sm_rw_first / sm_rw_next: nodes inserted
 * before the current one are not visited, nodes inserted after it are.
 */
#ifndef SM_REWRITE_H
#define SM_REWRITE_H

#include "ir/ir.h"

typedef struct sm_rw sm_rw;

smelt_status sm_rw_new(smelt_ctx_t *ctx, sm_graph *g, sm_rw **out);
/* Commits the node lists and constant lists, then frees the rewriter. */
void sm_rw_free(sm_rw *rw);
/* Nodes removed so far (sub-block contents of a removed node included). */
int sm_rw_removed(const sm_rw *rw);

/* ---- walking ------------------------------------------------------------ */

sm_node *sm_rw_first(sm_rw *rw, const sm_block *b);
sm_node *sm_rw_next(sm_rw *rw, const sm_node *n);
sm_node *sm_rw_last(sm_rw *rw, const sm_block *b);
sm_node *sm_rw_prev(sm_rw *rw, const sm_node *n);
int sm_rw_is_removed(const sm_rw *rw, const sm_node *n);

/* ---- uses --------------------------------------------------------------- */

/* Node inputs and block returns that refer to v, in all blocks. */
int sm_rw_uses(const sm_rw *rw, const sm_value *v);
/* Whether the graph returns v (v is one of the top block's returns). */
int sm_rw_is_output(const sm_rw *rw, const sm_value *v);
/* The single node that uses v when v has exactly one use and it is a node
 * input; NULL otherwise. */
sm_node *sm_rw_single_user(const sm_rw *rw, const sm_value *v);

/* Every use of old_v now refers to new_v (the caller checks that new_v is
 * visible there and has the same type). */
void sm_rw_replace_uses(sm_rw *rw, sm_value *old_v, sm_value *new_v);
/* Whether sm_rw_forward(y, x) needs no new node: y is not a graph output,
 * or x can take y's name (x is defined by a top-level node and is neither
 * a graph input nor a graph output). */
int sm_rw_can_forward(const sm_rw *rw, const sm_value *y, const sm_value *x);
/* Replaces every use of y by x, keeping the graph's output names: when y
 * is a graph output, x takes y's name if it can, otherwise an Identity
 * of x named like y is added at the end of the top block; y is renamed.
 * The caller then removes y's defining node. */
smelt_status sm_rw_forward(sm_rw *rw, sm_value *y, sm_value *x);

/* ---- editing nodes and blocks -------------------------------------------- */

smelt_status sm_rw_set_input(sm_rw *rw, sm_node *n, int i, sm_value *v);
/* Removes input i, shifting the later ones down. */
smelt_status sm_rw_remove_input(sm_rw *rw, sm_node *n, int i);
/* Removes output i of n, which must be unused; later outputs shift down. */
void sm_rw_remove_output(sm_rw *rw, sm_node *n, int i);
/* Appends an output to n, named uniquely after name; its type is unknown
 * until sm_rw_infer_node. NULL when out of memory. */
sm_value *sm_rw_add_output(sm_rw *rw, sm_node *n, const char *name);
smelt_status sm_rw_set_ret(sm_rw *rw, sm_block *b, int i, sm_value *v);
/* Removes return i of b, shifting the later ones down. */
smelt_status sm_rw_remove_ret(sm_rw *rw, sm_block *b, int i);
/* Removes parameter i of b, which must be unused. */
void sm_rw_remove_param(sm_rw *rw, sm_block *b, int i);
/* Appends a return, a parameter (named uniquely after name), or a new
 * sub-block of node n. NULL / nonzero status when out of memory. */
smelt_status sm_rw_add_ret(sm_rw *rw, sm_block *b, sm_value *v);
sm_value *sm_rw_add_param(sm_rw *rw, sm_block *b, const char *name,
                          const sm_type *t);
sm_block *sm_rw_block_new(sm_rw *rw, sm_node *n, const char *label);

/* A new node in block b, placed before `before` (which must be in b), or
 * at the end of b when before is NULL. Output names are made unique from
 * out_names (NULL: fresh names). Output types are unknown until
 * sm_rw_infer_node. NULL when out of memory (recorded on the context). */
sm_node *sm_rw_node_new(sm_rw *rw, sm_block *b, sm_node *before, sm_op op,
                        const char *name, int n_in, sm_value *const *in,
                        int n_out, const char *const *out_names);
/* Runs n's shape function and merges the result into its output types. */
smelt_status sm_rw_infer_node(sm_rw *rw, sm_node *n);
/* Removes n, with everything its sub-blocks hold; their constants' data
 * is freed at once. Uses by n disappear. n's outputs must be unused. */
void sm_rw_remove_node(sm_rw *rw, sm_node *n);
/* Removes n when none of its outputs is used; returns whether it did. */
int sm_rw_remove_if_dead(sm_rw *rw, sm_node *n);
/* Moves n (from any block) to just before `before`, in before's block. */
smelt_status sm_rw_move_node(sm_rw *rw, sm_node *n, sm_node *before);

/* ---- constants ----------------------------------------------------------- */

/* A new constant of b named uniquely after `name`; takes data (also on
 * failure). NULL when out of memory. */
sm_value *sm_rw_add_const(sm_rw *rw, sm_block *b, const char *name,
                          sm_tensor *data);
/* Turns every output of n into a constant of n's block holding data[i]
 * (ownership taken, also on failure), keeping the values (and so their
 * names and uses), and removes n. */
smelt_status sm_rw_node_to_consts(sm_rw *rw, sm_node *n, sm_tensor **data);
/* Removes constant v, which must be unused, and frees its data now. */
void sm_rw_drop_const(sm_rw *rw, sm_value *v);
/* Drops v when it is an unused constant; returns whether it did. */
int sm_rw_drop_const_if_dead(sm_rw *rw, sm_value *v);
/* Turns top-level constant c into a graph input of the same name and
 * type (appended after the others): every use of c reads the input, and
 * c is dropped. The input; NULL when out of memory. */
sm_value *sm_rw_lift_const(sm_rw *rw, sm_value *c);
/* Moves constant v into block dst (an enclosing block of v's). */
smelt_status sm_rw_move_const(sm_rw *rw, sm_value *v, sm_block *dst);

/* ---- names and cloning --------------------------------------------------- */

/* A name no value of the graph has, made from base (kept when free). The
 * string lives in the graph's arena. NULL when out of memory. */
const char *sm_rw_unique_name(sm_rw *rw, const char *base);

/* Copies src (and its sub-blocks) into block b before `before` (NULL: at
 * the end). Inputs go through map, indexed by value id (a NULL entry or
 * an id past map_n keeps the value); map[id] of each value src defines
 * (outputs, sub-block parameters, constants) is set to its copy, whose
 * name is the original's plus `suffix`, made unique. */
sm_node *sm_rw_clone_node(sm_rw *rw, sm_block *b, sm_node *before,
                          const sm_node *src, sm_value **map, int map_n,
                          const char *suffix);

/* A deep copy of g: the values it reaches, with their names, types and
 * constant data, in a new graph. */
smelt_status sm_graph_clone(smelt_ctx_t *ctx, const sm_graph *g,
                            sm_graph **out);

/* Nodes in b and, recursively, in every sub-block. */
int sm_block_count_nodes(const sm_block *b);

#endif
