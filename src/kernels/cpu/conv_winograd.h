/*
 * conv_winograd.h - Winograd F(4x4, 3x3) for 3x3 stride-1 convolutions
 * (conv_winograd.c), a path of the optimized Conv kernel (conv.c).
 */
#ifndef SM_CPU_WINOGRAD_H
#define SM_CPU_WINOGRAD_H

#include "kernels/cpu/conv.h"

/* Below these sizes the transforms (or, for few tiles, the narrow GEMMs)
 * cost more than the multiplies they save: measured with bench/conv_bench
 * on ResNet-18's layers, 16 tiles (14 x 14 outputs) win by 20%, 4 tiles
 * (7 x 7) lose by 3x. */
#define SM_WINO_MIN_C 16
#define SM_WINO_MIN_M 16
#ifndef SM_WINO_MIN_TILES
#define SM_WINO_MIN_TILES 16
#endif
/* The transforms run across the tiles of a row, a vector at a time: two
 * tiles a row (outputs 8 wide or less) leave most lanes idle, however
 * many images there are. ResNet's 64-channel 8 x 8 layer at batch 16
 * (64 tiles) took 0.80 ms, 0.67 as im2col (1 thread, conv_bench); 3
 * tiles a row (12 x 12) still win, 0.30 against 0.49 ms. */
#define SM_WINO_MIN_OW 9

/* Whether g is a 3x3, stride 1, dilation 1, ungrouped convolution big
 * enough for Winograd to win. */
int sm_wino_eligible(const sm_conv_geom *g);

/* The transformed weights U[xi] = G g G^T of W [M, C, 3, 3], packed as
 * 36 A operands [M, C] for ops. */
smelt_status sm_wino_pack(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                          const float *w, int64_t M, int64_t C,
                          sm_gemm_pack **out);

/* Scratch bytes of a run with n_threads threads. */
size_t sm_wino_workspace(const sm_conv_geom *g, int n_threads);

/* Y = epilogue(conv(X, W)) with u from sm_wino_pack; ws may be NULL
 * (allocated here). */
smelt_status sm_conv_winograd(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                              const sm_conv_geom *g, const float *x,
                              const sm_gemm_pack *u, const sm_gemm_epi *epi,
                              float *y, sm_threadpool *tp, void *ws,
                              size_t ws_bytes);

#endif
