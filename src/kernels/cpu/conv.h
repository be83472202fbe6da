/*
 * conv.h - 2-D convolution geometry shared by the optimized Conv /
 * FusedConv kernels (conv.c) and their paths: implicit GEMM and 1x1 as
 * GEMM (conv.c), depthwise (conv_depthwise.c), Winograd (conv_winograd.c).
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
    /* SM_NHWC_* / SM_B16_* (kernel.h): X, or Y and R, channels-last
     * (or X of a depthwise layer, Y without R, channel-blocked). R is
     * then Y's shape (plan/layout.c), and only the depthwise (dwc) and
     * position-major paths run. */
    unsigned nhwc;
} sm_conv_geom;

/* The geometry of a Conv / FusedConv node from its operand shapes (rank
 * -1 for absent B / R) and attributes; 0 when the optimized kernels do
 * not handle it (not 2-D, R not foldable, bad attributes...). */
int sm_conv_geom_init(const sm_attrs *at, const int64_t *xd, int xr,
                      const int64_t *wd, int wr, const int64_t *rd, int rr,
                      const int64_t *yd, int yr, sm_conv_geom *g);

/* 1x1, stride 1, no padding: the input is the GEMM operand itself. */
int sm_conv_is_1x1(const sm_conv_geom *g);

/* The fused epilogue of image n and output channel block starting at
 * channel m0 (bias term 0 per row, residual term 1). */
void sm_conv_epi(const sm_conv_geom *g, const sm_gemm_epi *base,
                 const float *bias, const float *res, sm_gemm_epi *e);

/* The input of an implicit GEMM: B[k][j] of batch element (image,
 * group) is x[image][group*Cg + c][oy*sh - ph + ky*dh][ox*sw - pw + kx*dw]
 * with k = (c, ky, kx) and j = (oy, ox), 0 in the padding. */
typedef struct sm_im2col {
    const sm_conv_geom *g;
    const float *x;
    /* the ISA's stride-2 gather (cpu_ops.h), or NULL */
    void (*gather2)(const float *x, float *d, int64_t n);
} sm_im2col;

/* sm_gemm_pack_fn over an sm_im2col: depth [k0, k0+kc), positions
 * [j0, j0+n), in panels of nr positions (B panels, or with nr = mr the
 * A panels of the position-major product). */
void sm_conv_im2col_pack(const void *user, int64_t batch, int64_t k0,
                         int64_t kc, int64_t j0, int64_t n, int nr, float *dst);

/* Position-major convolution (conv_posmajor.c): Y^T [OH*OW, M] = X^T W^T, the
 * input as A (im2col) and the weights prepacked as B [K, M], for layers
 * whose output positions are few next to the column tile. */
int sm_conv_posmajor_wanted(const sm_conv_geom *g);
size_t sm_conv_posmajor_workspace(const sm_conv_geom *g, int n_threads);
/* The weights [M, K] as the prepacked B [K, M]. */
smelt_status sm_conv_posmajor_pack(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                   const sm_conv_geom *g, const float *w,
                                   sm_gemm_pack **out);
smelt_status sm_conv_posmajor_run(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                  const sm_conv_geom *g, const float *x,
                                  const sm_gemm_pack *wb, const float *bias,
                                  const float *res, const sm_gemm_epi *epi,
                                  float *y, sm_threadpool *tp, void *ws,
                                  size_t ws_bytes);

/* Direct convolution (conv_direct.c) for layers with few input channels
 * (no residual), dilated or 5x5-and-larger kernels of any width and
 * stride-1 kernels on 32 channels or fewer: its choice, the reason it
 * gives (--print-plan), scratch bytes and run (NCHW; res is read where
 * g->has_r). */
int sm_conv_direct_wanted(const sm_conv_geom *g);
const char *sm_conv_direct_why(const sm_conv_geom *g);
size_t sm_conv_direct_workspace(const sm_conv_geom *g, int n_threads,
                                int prepacked);
/* Constant weights laid out once for the direct path (one sm_free'd
 * block, its data read by sm_conv_direct as wpk). */
smelt_status sm_conv_direct_pack(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                 const sm_conv_geom *g, const float *w,
                                 sm_gemm_pack **out);
/* wpk: the data of sm_conv_direct_pack's block, or NULL to lay w out in
 * the scratch on this run. */
smelt_status sm_conv_direct(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                            const sm_conv_geom *g, const float *x,
                            const float *w, const float *wpk, const float *bias,
                            const float *res, const sm_gemm_epi *epi, float *y,
                            sm_threadpool *tp, void *ws, size_t ws_bytes);

/* Small planes by weights computed at run time (conv_batched.c): one
 * GEMM over the output positions of a chunk of images, single group.
 * Its choice, scratch bytes and run (epi: bias and activation, as
 * sm_conv_epi makes it without a residual; res: the residual or NULL). */
int sm_conv_batched_wanted(const sm_conv_geom *g);
size_t sm_conv_batched_workspace(const sm_conv_geom *g, int n_threads);
smelt_status sm_conv_batched(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                             const sm_conv_geom *g, const float *x,
                             const float *w, const float *res,
                             const sm_gemm_epi *epi, float *y,
                             sm_threadpool *tp, void *ws, size_t ws_bytes);

/* Depthwise convolutions (Cg == 1) with at most this many taps take the
 * direct path of conv_depthwise.c. */
#define SM_CONV_DW_MAX_TAPS 64

/* Small planes (output rows under 32) take the channel-interleaved path
 * of conv_depthwise_blocked.c: its choice, scratch bytes and run (as
 * sm_conv_depthwise's). */
int sm_conv_depthwise_blocked_wanted(const sm_conv_geom *g);
size_t sm_conv_depthwise_blocked_workspace(const sm_conv_geom *g,
                                           int n_threads);
smelt_status sm_conv_depthwise_blocked(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                       const sm_conv_geom *g, const float *x,
                                       const float *w, const float *bias,
                                       const float *res, const sm_gemm_epi *epi,
                                       float *y, sm_threadpool *tp, void *ws,
                                       size_t ws_bytes);

/* Scratch bytes of the row-by-row depthwise path (conv_depthwise.c) with
 * n_threads threads. */
size_t sm_conv_depthwise_workspace(const sm_conv_geom *g, int n_threads);

/* Depthwise convolution row by row (conv_depthwise.c; conv.c chooses it over
 * sm_conv_depthwise_blocked): Y = epilogue(conv) in one pass per output row,
 * split over the pool by (image, channel). ws may be NULL (allocated here). */
smelt_status sm_conv_depthwise(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                               const sm_conv_geom *g, const float *x,
                               const float *w, const float *bias,
                               const float *res, const sm_gemm_epi *epi,
                               float *y, sm_threadpool *tp, void *ws,
                               size_t ws_bytes);

#endif
