/*
 * conv.h - 2-D convolution geometry shared by the optimized Conv /
 * FusedConv kernels (conv.c) and their paths: implicit GEMM and 1x1 as
 * GEMM (conv.c), depthwise (conv_dw.c), Winograd (winograd.c).
 */
#ifndef SM_CPU_CONV_H
#define SM_CPU_CONV_H

#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"

typedef struct sm_conv_geom {
    int64_t N, C, H, W; /* input */
    int64_t M, OH, OW;  /* output channels and size */
    int64_t G, Cg, Mg;  /* groups, channels per group in and out */
    int64_t kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t K; /* Cg * kh * kw: the GEMM depth */
    /* Residual R broadcast onto Y viewed as [N, M, OH*OW]: strides per
     * image, per channel and per output position (0 or 1). */
    int has_r;
    int64_t r_sn, r_sm, r_sp;
} sm_conv_geom;

/* The geometry of a Conv / FusedConv node from its operand shapes (rank
 * -1 for absent B / R) and attributes; 0 when the optimized kernels do
 * not handle it (not 2-D, R not foldable, bad attributes...). */
int sm_conv_geom_init(const sm_attrs *at, const int64_t *xd, int xr,
                      const int64_t *wd, int wr, const int64_t *rd, int rr,
                      const int64_t *yd, int yr, sm_conv_geom *g);

/* The fused epilogue of image n and output channel block starting at
 * channel m0 (bias term 0 per row, residual term 1). */
void sm_conv_epi(const sm_conv_geom *g, const sm_gemm_epi *base,
                 const float *bias, const float *res, sm_gemm_epi *e);

/* Depthwise convolutions (Cg == 1) with at most this many taps take the
 * direct path of conv_dw.c. */
#define SM_CONV_DW_MAX_TAPS 64

/* Scratch bytes of the depthwise path with n_threads threads. */
size_t sm_conv_dw_workspace(const sm_conv_geom *g, int n_threads);

/* Depthwise convolution: Y = epilogue(conv) in one pass per output row,
 * split over the pool by (image, channel). ws may be NULL (allocated
 * here). */
smelt_status sm_conv_depthwise(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                               const sm_conv_geom *g, const float *x,
                               const float *w, const float *bias,
                               const float *res, const sm_gemm_epi *epi,
                               float *y, sm_threadpool *tp, void *ws,
                               size_t ws_bytes);

#endif
