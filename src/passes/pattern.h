/*
 * pattern.h - the pattern-matching library of the passes: the shapes of
 * graph the fusion, decomposition, recognition and layout passes look for
 * and the drivers that walk a graph trying them (decompose.c,
 * fold_conv_bn.c, recognize.c, split_matmul.c, fuse_epilogue.c,
 * fuse_elementwise.c, layout.c).
 *
 * Matching: a node's single user in its block, the other operand of a
 * binary node, constant scalars, broadcasts that keep a shape, the
 * activation that ends a fused epilogue (from core/act.def, silu's
 * Sigmoid + Mul pair included). Drivers: every node of a snapshot, or
 * every chain from the nodes a predicate accepts. Replacing: a matched
 * chain by its fused node. Diagnostics: near misses for --why-not-fused.
 * Graph mutation itself (uses, node lists, constants) is the IR's
 * rewriter, ir/rewrite.h; this library only reads through it and calls it.
 */
#ifndef SM_PATTERN_H
#define SM_PATTERN_H

#include <stddef.h>

#include "ir/rewrite.h"
#include "core/act.h"
#include "passes/pass.h"

/* Every node of every block of g in block order, a node's sub-blocks
 * right after it, except the bodies of FusedElementwise nodes (already
 * fused). *out is sm_malloc'd (NULL when there are no nodes). */
smelt_status sm_pat_snapshot(smelt_ctx_t *ctx, sm_rw *rw, sm_graph *g,
                             sm_node ***out, int *n);

/* "conv1" when the node has a name, else "%y (Conv)". */
void sm_pat_label(const sm_node *n, char *buf, size_t size);

/* Records "<label of n>: <why>" in the pass log when --why-not-fused is
 * on; a no-op otherwise. */
void sm_pat_miss(sm_pass_ctx *pc, const sm_node *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The value of constant v when it holds exactly one element. */
int sm_pat_scalar(const sm_value *v, double *out);
/* Whether v is a constant scalar within a relative 1e-4 of want. */
int sm_pat_scalar_is(const sm_value *v, double want);
/* Whether v's dtype is a float. */
int sm_pat_is_float(const sm_value *v);
/* Whether v is absent or a constant holding only zeros (a Pad's value). */
int sm_pat_zero_or_absent(const sm_value *v);

/* The node using v, when v has exactly one use, it is a node input and
 * that node is in v's own block; NULL otherwise. */
sm_node *sm_pat_user(sm_rw *rw, const sm_value *v);
/* For messages: the op of the first node of v's block that uses v, or
 * NULL. Linear in the block; only called when logging. */
const char *sm_pat_some_user_op(sm_rw *rw, const sm_value *v);

/* The input of binary node n other than v (v must be one of its two). */
sm_value *sm_pat_other(const sm_node *n, const sm_value *v);
/* Whether dims a and b are certainly the same: equal known sizes, or
 * both unknown and named by the same symbol. */
int sm_pat_same_dim(const sm_dim *a, const sm_dim *b);
/* Whether a and b certainly have the same shape: ranks known and equal,
 * every dim the same by sm_pat_same_dim. */
int sm_pat_same_shape(const sm_type *a, const sm_type *b);
/* Whether t broadcasts onto y leaving y's shape unchanged (ranks known;
 * a dim of t is 1 or equal to y's, symbolic names compared by name). */
int sm_pat_fits_onto(const sm_type *t, const sm_type *y);

/* Copies every non-tensor attribute of src onto dst; 0 when out of
 * memory. */
int sm_pat_copy_attrs(sm_node *dst, const sm_node *src);

/* Where x * Sigmoid(x) occurs: for a value x, the Mul that computes it
 * (x used exactly by that Sigmoid and that Mul, the Sigmoid's output by
 * the Mul only). Built once per pass from a snapshot. */
typedef struct sm_pat_silu {
    sm_node **mul; /* by value id, NULL where there is none */
    int cap;
} sm_pat_silu;

smelt_status sm_pat_silu_build(smelt_ctx_t *ctx, sm_rw *rw, sm_graph *g,
                               sm_node *const *nodes, int n, sm_pat_silu *out);
void sm_pat_silu_free(sm_pat_silu *s);

/* Calls visit on every node of a snapshot of g (sm_pat_snapshot) that no
 * earlier visit removed, through one rewriter, until a visit fails: the
 * driver of the passes that rewrite node by node. */
typedef smelt_status (*sm_pat_visit_fn)(sm_pass_ctx *pc, sm_rw *rw, sm_node *n);
smelt_status sm_pat_for_nodes(sm_pass_ctx *pc, sm_graph *g,
                              sm_pat_visit_fn visit);

/* Runs a chain fusion over g: for every node (in block order, snapshot
 * taken first) that is still there and `start` accepts, `fuse` tries to
 * absorb what follows it. The silu index is built once for `fuse`; arg
 * is passed through to both. */
typedef int (*sm_pat_start_fn)(const void *arg, const sm_node *n);
typedef smelt_status (*sm_pat_fuse_fn)(sm_pass_ctx *pc, sm_rw *rw,
                                       const sm_pat_silu *si, const void *arg,
                                       sm_node *n);
smelt_status sm_pat_run_chains(sm_pass_ctx *pc, sm_graph *g,
                               sm_pat_start_fn start, sm_pat_fuse_fn fuse,
                               const void *arg);

/* An activation matched after a value: the nodes it absorbs (in order)
 * and the value they produce. */
typedef struct sm_pat_act_match {
    sm_act act;
    sm_node *nodes[2];
    int n;
    sm_value *out;
} sm_pat_act_match;

/*
 * Matches the activation that consumes y: Relu, Clip with constant (or
 * absent) bounds, Sigmoid, Tanh, LeakyRelu, Gelu, or the pair Sigmoid +
 * Mul of silu. Returns 1 when matched. Otherwise 0, with `why` saying
 * why an activation that does follow y could not be taken ("" when none
 * follows).
 */
int sm_pat_match_act(sm_rw *rw, const sm_pat_silu *si, sm_value *y,
                     sm_pat_act_match *m, char *why, size_t why_size);
/* Near misses of a fusion chain from `start` that stopped at cur: cur
 * has several users and one of them is an Add or an activation; or an
 * Add's other operand o would broadcast cur to a larger shape. */
void sm_pat_miss_users(sm_pass_ctx *pc, sm_rw *rw, const sm_node *start,
                       const sm_value *cur);
void sm_pat_miss_bcast(sm_pass_ctx *pc, const sm_node *start, const sm_value *o,
                       const sm_value *cur);
/* Sets `activation` (and its alpha / beta when it has them) on n. */
int sm_pat_set_act(sm_node *n, const sm_act *a);
/* Whether op may be an activation (the op of a row of core/act.def). */
int sm_pat_is_act_op(sm_op op);
/* The match column of core/act.def: whether node n (of the row's op) is
 * the row's activation, reading its parameters into a. */
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    int match(const sm_node *n, sm_act *a);
#include "core/act.def"
#undef ACT

/*
 * Finishes a fusion: every use of old_out now reads fused's output,
 * which takes old_out's name; the absorbed nodes dead[0..n) (in graph
 * order) are removed, last first, with constants nothing uses any more.
 */
void sm_pat_replace(sm_rw *rw, sm_node *fused, sm_value *old_out,
                    sm_node *const *dead, int n);

#endif
