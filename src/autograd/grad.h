/*
 * grad.h - gradient rules and the builder they write backward graphs
 * with (docs/AUTOGRAD.md).
 *
 * Every row of ir/ops.def names a gradient rule. The engine (engine.c)
 * walks the forward graph backwards and, for each node some gradient
 * reaches, calls the node's rule with the gradients of its outputs; the
 * rule adds ordinary nodes (other ops of the table) that compute the
 * gradients of the inputs that need one. The backward graph is then just
 * more graph: it prints, verifies, optimizes and plans like any other.
 *
 * Rules build through the sm_g_* helpers below. They make each node,
 * infer its type at once (so a rule can look at shapes) and keep the
 * first failure in the context: after a failure every helper returns
 * NULL, so a rule chains calls and checks only at the end (the engine
 * does). A helper given a NULL input returns NULL.
 */
#ifndef SM_AUTOGRAD_GRAD_H
#define SM_AUTOGRAD_GRAD_H

#include "ir/ir.h"
#include "ir/rewrite.h"

typedef struct sm_grad_ctx {
    smelt_ctx_t *ctx;
    sm_rw *rw;
    sm_block *b;               /* where the backward nodes go (at its end) */
    const sm_node *n;          /* the forward node */
    sm_value *const *dy;       /* n->n_out gradients; NULL: none reaches it */
    const unsigned char *need; /* n->n_in flags: input i wants a gradient */
    sm_value **dx;             /* n->n_in slots the rule fills (NULL: none) */
    smelt_status st;           /* first failure, SMELT_OK until then */
    /* Engine state the control-flow rules need (engine.c). */
    struct sm_grad_engine *eng;
} sm_grad_ctx;

typedef smelt_status (*sm_grad_fn)(sm_grad_ctx *g);

/* The rule of every row of ops.def. */
#define OP(name, cls, imin, imax, omin, omax, nblk, attrs, shape, ref, cost,   \
           grad)                                                               \
    smelt_status grad(sm_grad_ctx *g);
#include "ir/ops.def"
#undef OP
/* The marker of a rule not written yet, declared here as well: no row
 * may name it (test_grad's test_rule_column). */
smelt_status sm_grad_todo(sm_grad_ctx *g);

/* The rule of op (never NULL). sm_grad_none, sm_grad_zero and
 * sm_grad_todo are the three markers. */
sm_grad_fn sm_grad_rule(sm_op op);

/* ---- building --------------------------------------------------------- */

/* A node of op on inputs in[0..n_in) (NULL entries: absent optional
 * inputs) with n_out outputs, at the end of g->b, not yet inferred: set
 * its attributes, then sm_g_done. */
sm_node *sm_g_node(sm_grad_ctx *g, sm_op op, int n_in, sm_value *const *in,
                   int n_out);
/* Infers n's types; returns its first output (NULL on failure). */
sm_value *sm_g_done(sm_grad_ctx *g, sm_node *n);
/* One-output nodes without attributes. */
sm_value *sm_g_op1(sm_grad_ctx *g, sm_op op, sm_value *a);
sm_value *sm_g_op2(sm_grad_ctx *g, sm_op op, sm_value *a, sm_value *b);
sm_value *sm_g_op3(sm_grad_ctx *g, sm_op op, sm_value *a, sm_value *b,
                   sm_value *c);

/* Constants: a scalar of dtype dt, and a 1-D i64 list. */
sm_value *sm_g_scalar(sm_grad_ctx *g, smelt_dtype dt, double v);
sm_value *sm_g_ints(sm_grad_ctx *g, const int64_t *v, int n);
/* The value of v when it follows from constants and known shapes alone
 * (shape arithmetic: Shape -> Gather -> Mul), evaluated with the
 * reference kernels (known.c); a new tensor the caller frees, or NULL. */
sm_tensor *sm_g_known(sm_grad_ctx *g, const sm_value *v);
/* A scalar constant of like's dtype. */
sm_value *sm_g_scalar_like(sm_grad_ctx *g, const sm_value *like, double v);

/* Zeros of v's dtype and shape (a constant when the shape is known,
 * ConstantOfShape(Shape(v)) otherwise). */
sm_value *sm_g_zeros_like(sm_grad_ctx *g, sm_value *v);
/* d, the gradient of a broadcast result, summed down to x's shape (the
 * dimensions numpy broadcasting added or stretched). d itself when the
 * shapes already agree. Fails, naming the node, when a dimension's
 * broadcasting cannot be told from the types (two different symbols). */
sm_value *sm_g_unbroadcast(sm_grad_ctx *g, sm_value *d, const sm_value *x);
/* ReduceSum of x over axes (keepdims as given). */
sm_value *sm_g_reduce_sum(sm_grad_ctx *g, sm_value *x, const int64_t *axes,
                          int n_axes, int keepdims);
/* x reshaped to exactly `shape` (an i64 list; allowzero, so a 0 is an
 * empty axis and -1 the one inferred). */
sm_value *sm_g_reshape(sm_grad_ctx *g, sm_value *x, sm_value *shape);
/* x reshaped to the shape of like (Reshape(x, Shape(like))), or a
 * constant shape when like's is known. */
sm_value *sm_g_reshape_like(sm_grad_ctx *g, sm_value *x, const sm_value *like);
/* The shape of v as an i64 list: a constant when every dimension is
 * known, Shape(v) otherwise. */
sm_value *sm_g_shape_of(sm_grad_ctx *g, const sm_value *v);
/* x broadcast to the shape of like (Expand). */
sm_value *sm_g_expand_like(sm_grad_ctx *g, sm_value *x, const sm_value *like);
/* Gelu's derivative at x (its tanh approximation's with tanh_approx),
 * shared by the Gelu rule and the fused epilogues' (rules_act.c). */
sm_value *sm_g_gelu_deriv(sm_grad_ctx *g, sm_value *x, int tanh_approx);
/* Cast of x to dtype dt (x itself when it has that dtype). */
sm_value *sm_g_cast(sm_grad_ctx *g, sm_value *x, smelt_dtype dt);

/* Records a failure naming the forward node; returns its status. */
smelt_status sm_g_fail(sm_grad_ctx *g, smelt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The gradient for input i when the rule has one: sets g->dx[i] when
 * input i needs it (a rule may compute more than asked; this drops it). */
void sm_g_set(sm_grad_ctx *g, int i, sm_value *d);

#endif
