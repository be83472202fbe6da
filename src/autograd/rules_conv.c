/*
 * rules_conv.c - gradient rules of Conv and ConvTranspose, over any
 * number of spatial dims, with strides, pads (auto_pad resolved to
 * explicit pads for the static shapes), dilations and groups.
 *
 * The two ops are each other's adjoint: Conv's dX is a ConvTranspose of
 * dY by the same kernel and ConvTranspose's dX a Conv of dY. Both kernel
 * gradients are one convolution of the input by the output gradient with
 * the batch as the contracted channel (sm_gn_kernel_grad), and both bias
 * gradients the sum of dY over everything but the channels.
 */
#include "autograd/rules_nn.h"

smelt_status sm_gn_conv_grads(sm_grad_ctx *g, sm_value *dy)
{
    const sm_node *n = g->n;
    sm_window w;
    if (sm_gn_window(g, SM_WINDOW_CONV, 1, &w) != SMELT_OK)
        return g->st;
    dy = sm_gn_like_out(g, dy);
    sm_attrs at = sm_node_attrs(n);
    int64_t group = sm_attrs_int(&at, "group", 1);
    /* dX[i*s - p0 + k*dil] += dY[i] W[k]: ConvTranspose landing on X */
    if (g->need[0])
        sm_g_set(g, 0,
                 sm_gn_conv_dx(g, dy, n->in[1], group, w.stride, w.dil, w.pad0,
                               w.in));
    /* dW[k] = sum over n, i of X[i*s - p0 + k*dil] dY[i] */
    if (g->need[1])
        sm_g_set(g, 1,
                 sm_gn_kernel_grad(g, n->in[0], dy, group, w.stride, w.dil,
                                   w.pad0, w.kernel));
    if (n->n_in > 2 && n->in[2] && g->need[2])
        sm_g_set(g, 2, sm_gn_sum_but_channels(g, dy));
    return g->st;
}

/* Conv: dX = ConvTranspose(dY, W), dW = X (*) dY, dB = sum of dY over N
 * and the spatial dims. */
smelt_status sm_grad_conv(sm_grad_ctx *g)
{
    return sm_gn_conv_grads(g, g->dy[0]);
}

/* ConvTranspose (Y[i*s - p0 + k*dil] += X[i] W[k]): dX = Conv(dY, W)
 * with the same window, dW = dY (*) X (Conv's kernel gradient with the
 * two operands' roles swapped), dB = sum of dY over N and space. Pads
 * that output_shape or SAME made negative become slices of dY. */
smelt_status sm_grad_convtranspose(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_window w;
    if (sm_gn_window(g, SM_WINDOW_CONVT, 1, &w) != SMELT_OK)
        return g->st;
    sm_value *dy = sm_gn_like_out(g, g->dy[0]);
    sm_attrs at = sm_node_attrs(n);
    int64_t group = sm_attrs_int(&at, "group", 1);
    if (g->need[0])
        sm_g_set(g, 0,
                 sm_gn_conv_to(g, dy, n->in[1], group, w.stride, w.dil, w.pad0,
                               w.in));
    if (g->need[1])
        sm_g_set(g, 1,
                 sm_gn_kernel_grad(g, dy, n->in[0], group, w.stride, w.dil,
                                   w.pad0, w.kernel));
    if (n->n_in > 2 && n->in[2] && g->need[2])
        sm_g_set(g, 2, sm_gn_sum_but_channels(g, dy));
    return g->st;
}

/* ConvGradWeight (dW[m, c, k] = sum over n, o of dY[n, m, o] X[n, c',
 * tap(o, k)]), bilinear in X and dY: for the gradient dD of dW, dX is
 * Conv's input gradient with dD as the kernel (ConvTranspose(dY, dD)) and
 * d(dY) = Conv(X, dD) over the same window. */
smelt_status sm_grad_convgradweight(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_window w;
    if (sm_gn_window(g, SM_WINDOW_CONV, 0, &w) != SMELT_OK)
        return g->st;
    sm_value *dd = g->dy[0];
    sm_attrs at = sm_node_attrs(n);
    int64_t group = sm_attrs_int(&at, "group", 1);
    if (g->need[0])
        sm_g_set(g, 0,
                 sm_gn_conv_dx(g, n->in[1], dd, group, w.stride, w.dil, w.pad0,
                               w.in));
    if (g->need[1])
        sm_g_set(g, 1,
                 sm_gn_conv_to(g, n->in[0], dd, group, w.stride, w.dil, w.pad0,
                               w.out));
    return g->st;
}
