/*
 * conv_posmajor.c - convolution as a position-major GEMM, for layers with few
 * output positions and many channels (ResNet's and MobileNet's 7x7 and
 * 14x14 stages):
 *
 *   Y^T [OH*OW, M] = X^T [OH*OW, K] W^T [K, M]
 *
 * The channel-major product (conv.c) puts the positions in the columns,
 * and 49 positions fill 64 columns of 32-wide panels: a quarter of the
 * arithmetic is padding. Here the positions are rows, which cost nothing
 * past the last one (the micro-kernel has a variant per row count), and
 * the channels, a multiple of the panel width, are the columns. The
 * weights are prepacked as B once; A is gathered by the same im2col
 * packer (as mr-wide panels), packed once and shared by the threads,
 * which split the channels: each reads its own part of the weights.
 * The result is transposed into NCHW channel block by channel block,
 * and the fused epilogue (bias, residual, activation) runs on each block
 * while it is in L1.
 *
 * Channels-last operands (g->nhwc, plan/layout.c) make it a plain GEMM:
 * an NHWC input of a 1x1 layer is A itself, row-major, and an NHWC
 * output is C, written once with the epilogue fused into the
 * micro-kernel (the bias one value per column, the residual C's shape):
 * no transposition, no scratch C'. Any layer takes this path when its
 * output is to be NHWC (MobileNet's 112 x 112 1x1 layers too). A
 * channel-blocked output (SM_B16_OUT, for a depthwise layer to read a
 * block's plane front to back) is the same product stored a block of
 * 16 channels at a time (gemm.h cblk).
 */
#include "kernels/cpu/conv.h"

#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_util.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

/* Channels per transposition task. */
#define PM_BLOCK 16

/* The product's C' per image must stay small: it lives in the
 * workspace. */
#define PM_MAX_BYTES ((size_t)8 << 20)

int sm_conv_posmajor_wanted(const sm_conv_geom *g)
{
    int64_t P = g->OH * g->OW, nr = 32; /* the widest column tile */
    int64_t cols = (P + nr - 1) / nr * nr;
    size_t bytes = (size_t)(g->N * P * g->M) * sizeof(float);
    /* more than 10% of the channel-major product would be padding, the
     * channels fill whole panels, and C' fits the workspace */
    return g->G == 1 && P > 0 && 10 * (cols - P) > cols && g->M % nr == 0 &&
           bytes <= PM_MAX_BYTES;
}

/* Bytes of C' (none when the GEMM writes the NHWC output itself). */
static size_t ct_size(const sm_conv_geom *g)
{
    if (g->nhwc & (SM_NHWC_OUT | SM_B16_OUT))
        return 0;
    return ALIGN64((size_t)(g->N * g->OH * g->OW * g->M) * sizeof(float));
}

size_t sm_conv_posmajor_workspace(const sm_conv_geom *g, int n_threads)
{
    int64_t P = g->OH * g->OW;
    /* C', the GEMM's scratch, and 64 bytes to align the two */
    return ct_size(g) + sm_gemm_workspace_shared_a(n_threads, P, g->K) + 64;
}

smelt_status sm_conv_posmajor_pack(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                   const sm_conv_geom *g, const float *w,
                                   sm_gemm_pack **out)
{
    /* W [M, K] row-major read as W^T [K, M]: rows K apart by 1, columns
     * by K */
    sm_matf wt = {w, 1, g->K};
    return sm_gemm_pack_new(ctx, ops, 0, &wt, g->K, g->M, 1, g->K * g->M, out);
}

typedef struct pm_job {
    const sm_cpu_ops *ops;
    const sm_conv_geom *g;
    const float *ct; /* C' [N][P][M] */
    const float *bias, *res;
    const sm_gemm_epi *epi;
    float *y;
    int epi_on;
} pm_job;

/* Tasks [begin, end): (image, block of PM_BLOCK channels), each C'
 * columns into Y rows, then the epilogue on those rows. */
static void pm_out(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const pm_job *J = arg;
    const sm_conv_geom *g = J->g;
    int64_t P = g->OH * g->OW, nb = (g->M + PM_BLOCK - 1) / PM_BLOCK;
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / nb, m0 = t % nb * PM_BLOCK;
        int64_t mc = g->M - m0 < PM_BLOCK ? g->M - m0 : PM_BLOCK;
        const float *src = J->ct + n * P * g->M + m0;
        float *dst = J->y + (n * g->M + m0) * P;
        /* a vector of channels at a time through register transposes
         * (mc, a multiple of 16, is one of vl too) */
        int64_t m = 0, vl = J->ops->vl;
        for (; m + vl <= mc; m += vl) {
            float *d[PM_BLOCK];
            for (int64_t l = 0; l < vl; l++)
                d[l] = dst + (m + l) * P;
            J->ops->lanes_out(src + m, P, g->M, d);
        }
        for (; m < mc; m++)
            for (int64_t p = 0; p < P; p++)
                dst[m * P + p] = src[p * g->M + m];
        if (!J->epi_on)
            continue;
        sm_gemm_epi e;
        sm_conv_epi(g, J->epi, J->bias, J->res, &e);
        if (e.t[1].p)
            e.t[1].p += n * g->r_sn;
        J->ops->epi_tile(&e, dst, P, m0, 0, mc, P);
    }
}

smelt_status sm_conv_posmajor_run(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                  const sm_conv_geom *g, const float *x,
                                  const sm_gemm_pack *wb, const float *bias,
                                  const float *res, const sm_gemm_epi *epi,
                                  float *y, sm_threadpool *tp, void *ws,
                                  size_t ws_bytes)
{
    if ((g->nhwc & SM_B16_OUT) && res)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "position-major convolution: a channel-blocked output "
                      "takes no residual");
    if ((g->nhwc & SM_NHWC_IN) && !sm_conv_is_1x1(g))
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "position-major convolution: a channels-last input "
                      "needs a 1x1 layer");
    int threads = sm_threadpool_size(tp);
    size_t need = sm_conv_posmajor_workspace(g, threads);
    void *own;
    char *base = sm_cpu_scratch(ws, ws_bytes, need, &own);
    if (!base)
        return sm_err_nomem(ctx);
    /* the aligned base leaves at least need - 64 bytes */
    size_t room = need - 64;
    int64_t P = g->OH * g->OW;
    size_t ct_bytes = ct_size(g);
    int direct = (g->nhwc & (SM_NHWC_OUT | SM_B16_OUT)) != 0;
    float *ct = direct ? y : (float *)base;
    sm_im2col ic = {g, x, ops->gather2};
    sm_gemm_args ga = {.M = P, .N = g->M, .K = g->K, .c = ct, .ldc = g->M};
    ga.epi = sm_gemm_epi_none();
    if (direct) {
        ga.epi = *epi;
        ga.epi.t[0] = (sm_epi_term){bias, 0, 1, 1.0f};
        ga.epi.t[1] = (sm_epi_term){res, g->M, 1, 1.0f};
        ga.stride[SM_GB_T1][0] = P * g->M;
        if (g->nhwc & SM_B16_OUT) {
            /* [M / 16][P][16]: a block's plane is P rows of 16 */
            ga.ldc = 16;
            ga.cblk = P * 16;
        }
    }
    ga.pb = wb;
    if (g->nhwc & SM_NHWC_IN) {
        ga.a = (sm_matf){x, g->C, 1}; /* NHWC: row-major [P, C] */
    } else if (sm_conv_is_1x1(g)) {
        ga.a = (sm_matf){x, 1, P}; /* X^T of a 1x1: column-major */
    } else {
        ga.pack_a = sm_conv_im2col_pack;
        ga.pack_a_user = &ic;
    }
    ga.nbd = 1;
    ga.bdims[0] = g->N;
    ga.stride[SM_GB_A][0] = g->C * g->H * g->W;
    ga.stride[SM_GB_C][0] = P * g->M;
    smelt_status st =
        sm_gemm_f32(ctx, ops, &ga, tp, base + ct_bytes, room - ct_bytes);
    if (st == SMELT_OK && !direct) {
        pm_job J = {.ops = ops,
                    .g = g,
                    .ct = ct,
                    .bias = bias,
                    .res = res,
                    .epi = epi,
                    .y = y};
        J.epi_on = bias || res || epi->act != 0 || epi->alpha != 1.0f;
        int64_t tasks = g->N * ((g->M + PM_BLOCK - 1) / PM_BLOCK);
        sm_parallel_for(tp, tasks, sm_cpu_chunk(tasks, tp), pm_out, &J);
    }
    sm_free(own);
    return st;
}
