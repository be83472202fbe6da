/*
 * rules_nn.h - what the gradient rules of the contractions, convolutions,
 * pooling and fused ops share (rules_contraction.c, rules_conv.c,
 * rules_pool.c, rules_fused.c): the window of a node resolved for its
 * static shapes, a few attribute-carrying builders, and the gradient
 * cores that the fused ops reuse with the activation's gradient in
 * place of the output's.
 */
#ifndef SM_AUTOGRAD_RULES_NN_H
#define SM_AUTOGRAD_RULES_NN_H

#include "autograd/grad.h"
#include "core/act.h"
#include "kernels/ref/window.h"

/* ---- builders (nn_build.c) -------------------------------------------- */

/* n's window (kind: Conv, pooling or ConvTranspose) for the static sizes
 * of its input 0 and, with_kernel, the kernel of input 1. Fails, naming
 * the node, when a size it needs is not known before running. */
smelt_status sm_gn_window(sm_grad_ctx *g, sm_window_kind kind, int with_kernel,
                          sm_window *w);
/* Transpose(x, perm) over x's rank. */
sm_value *sm_gn_transpose(sm_grad_ctx *g, sm_value *x, const int64_t *perm);
/* x with its first two axes swapped. */
sm_value *sm_gn_swap01(sm_grad_ctx *g, sm_value *x);
/* x[..., starts[d]:ends[d], ...] along axes[0..n). */
sm_value *sm_gn_slice(sm_grad_ctx *g, sm_value *x, const int64_t *axes,
                      const int64_t *starts, const int64_t *ends, int n);
/* Reshape(x, dims[0..n)) (0 copies x's dim, -1 is inferred). */
sm_value *sm_gn_reshape(sm_grad_ctx *g, sm_value *x, const int64_t *dims,
                        int n);
/* A constant of dtype dt and shape dims[0..ndim) filled from v. */
sm_value *sm_gn_const(sm_grad_ctx *g, smelt_dtype dt, int ndim,
                      const int64_t *dims, const double *v);
/* Copies n's attributes onto m except those named in skip (NULL ended). */
void sm_gn_copy_attrs(sm_grad_ctx *g, sm_node *m, const sm_node *n,
                      const char *const *skip);
/* v, a gradient of the node's output 0, with the dims that output's type
 * knows (dims 1.. all known there) restored when v's type lost them (a
 * broadcast against a value of unknown shape): a Reshape to [0, d1, ...].
 * The backward windows are computed from v's type. */
sm_value *sm_gn_like_out(sm_grad_ctx *g, sm_value *v);
/* ReduceSum of x over every axis but 1 (a per-channel bias's gradient). */
sm_value *sm_gn_sum_but_channels(sm_grad_ctx *g, sm_value *x);

/*
 * Conv(x, w) {group, strides s, dilations dil} whose output has the
 * spatial sizes want[]: output position j reads x at j*s - p0 + t*dil.
 * A negative p0 becomes a Slice of x; the end padding is made just large
 * enough for want positions, and a larger result is sliced down. x's
 * spatial sizes and w's must be known.
 */
sm_value *sm_gn_conv_to(sm_grad_ctx *g, sm_value *x, sm_value *w, int64_t group,
                        const int64_t *s, const int64_t *dil, const int64_t *p0,
                        const int64_t *want);
/*
 * ConvTranspose(x, w) {group, strides s, dilations dil, pads begin p0 >=
 * 0} whose output has the spatial sizes want[]: output position
 * i*s - p0 + t*dil receives x[i] * w[t]. The end padding and
 * output_padding are chosen to land exactly on want.
 */
sm_value *sm_gn_convt_to(sm_grad_ctx *g, sm_value *x, sm_value *w,
                         int64_t group, const int64_t *s, const int64_t *dil,
                         const int64_t *p0, const int64_t *want);
/*
 * Conv's input gradient, the sum ConvTranspose(dy, w) makes: strided and
 * f32, the ConvTranspose itself (sm_gn_convt_to; its CPU kernel is a
 * GEMM and col2im); otherwise a Conv (on the forward's algorithms): dy,
 * spread out to every stride-th position when a stride is above 1,
 * convolved by w with its taps reversed and each group's channels
 * swapped (sm_gn_convt_to where the kernel's channel counts are not
 * known).
 */
sm_value *sm_gn_conv_dx(sm_grad_ctx *g, sm_value *dy, sm_value *w,
                        int64_t group, const int64_t *s, const int64_t *dil,
                        const int64_t *p0, const int64_t *want);
/*
 * The kernel gradient shared by Conv and ConvTranspose:
 * dw[m, c, k] = sum over n, i of dy[n, m, i] * x[n, group(m)*cg + c,
 * i*s - p0 + k*dil], for x [N, group*cg, ...], dy [N, M, ...]; a
 * convolution of x by dy with the batch as the contracted channel (the
 * groups become the convolution's groups). Result [M, cg, k...].
 */
sm_value *sm_gn_kernel_grad(sm_grad_ctx *g, sm_value *x, sm_value *dy,
                            int64_t group, const int64_t *s, const int64_t *dil,
                            const int64_t *p0, const int64_t *k);

/* ---- gradient cores ------------------------------------------------------ */

/* Conv's (and FusedConv's) dX, dW, dB for the gradient dy of the
 * convolution's own result. */
smelt_status sm_gn_conv_grads(sm_grad_ctx *g, sm_value *dy);
/* Gemm's (and FusedGemm's transposed form) dA, dB, dC for the gradient
 * dy of alpha * op(A) op(B) + beta * C. */
smelt_status sm_gn_gemm_grads(sm_grad_ctx *g, sm_value *dy);

/* ---- activations (rules_act.c) --------------------------------------------
 */

/* The gradient of the fused epilogue's activation: dz = act'(z) * dy,
 * from the node's output y and, where needed, its pre-activation value
 * (rebuilt by sm_gn_preact). act.def's grad column names one per row. */
typedef sm_value *(*sm_act_grad_fn)(sm_grad_ctx *g, const sm_act *a,
                                    sm_value *y, sm_value *dy);
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    sm_value *grad(sm_grad_ctx *g, const sm_act *a, sm_value *y, sm_value *dy);
#include "core/act.def"
#undef ACT
/* dz for the fused node g->n, whose activation is a. */
sm_value *sm_gn_act_grad(sm_grad_ctx *g, const sm_act *a, sm_value *dy);
/* dz for the fused node g->n from its own activation attributes and
 * g->dy[0]; NULL (g->st set) when they do not read. */
sm_value *sm_gn_node_act_grad(sm_grad_ctx *g);
/* g->n (FusedConv or FusedGemm) again with activation none: the value
 * the activation was applied to. */
sm_value *sm_gn_preact(sm_grad_ctx *g);

#endif
