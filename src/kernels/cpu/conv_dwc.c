/*
 * conv_dwc.c - depthwise convolution on channels interleaved a vector at
 * a time, for planes up to about 120 x 120 (all of MobileNet's).
 *
 * The per-plane path (conv_dw.c) vectorizes along a plane's rows; a
 * 7 x 7 plane is 49 outputs, and the fixed cost of splitting, sweeping
 * and copying it out dominates, and a stride-2 plane has to be
 * deinterleaved first. Here each
 * task takes vl channels (one vector: 16 with AVX-512) of one image:
 *   1. their planes are interleaved into a zero-padded buffer, pixel by
 *      pixel, vl floats a pixel (4 x 4 blocks transposed in SSE
 *      registers), so that a tap of an output is one vector load for
 *      all vl channels whatever the stride;
 *   2. the ISA's dw_cblock computes every output as ntaps vector FMAs
 *      with the bias, a residual constant over the plane and the
 *      activation applied in registers (cpu_ops.h);
 *   3. the outputs are copied back to the channels' planes (a residual
 *      that varies over the plane is added there, by epi_tile).
 * Channel counts that are not a multiple of vl give the last block spare
 * lanes: they repeat its last channel's input with zero weights, and
 * their outputs go to scratch.
 *
 * Channels-last operands (g->nhwc, plan/layout.c) replace the
 * transposes: step 1 copies vl channels of each pixel, and step 2 stores
 * straight into the NHWC output (a partial block through scratch).
 */
#include "kernels/cpu/conv.h"

#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ref/fused.h"

/* Planes whose padded input takes at most this many bytes interleaved
 * take this path (every MobileNet plane, up to 112 x 112: with 2
 * threads, 1.3x to 3x faster than the per-plane path on one-layer
 * models of its depthwise layers, `smelt bench --threads 2`); larger
 * ones the per-plane path, whose scratch is one plane. */
#define DWC_MAX_BYTES ((size_t)1 << 20)
/* A band's interleaved input at most this (when a row allows). */
#define DWC_BAND_BYTES ((size_t)96 << 10)

/* The widest table's vector: the workspace is sized for it. */
#define DWC_MAX_VL 16

/* The padded input extent the outputs read, in rows and columns. */
static void dwc_extent(const sm_conv_geom *g, int64_t *hp, int64_t *wp)
{
    *hp = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    *wp = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
}

/* Padded input rows that bo output rows read. */
static int64_t band_rows(const sm_conv_geom *g, int64_t bo)
{
    return (bo - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

/* Output rows per band: as many as keep the band's interleaved input
 * within DWC_BAND_BYTES (at least one). */
static int64_t dwc_band(const sm_conv_geom *g)
{
    int64_t hp, wp;
    dwc_extent(g, &hp, &wp);
    size_t row = (size_t)wp * DWC_MAX_VL * sizeof(float);
    int64_t fit = (int64_t)(DWC_BAND_BYTES / row), span = band_rows(g, 1);
    int64_t bo = fit >= span ? (fit - span) / g->sh + 1 : 1;
    if (bo >= g->OH)
        return g->OH;
    /* bands of equal height, no short last one; as tall as fit, which
     * reads fewer rows twice than halving did (MobileNet's 112 -> 56
     * layer: 3 output rows a band -> 6, 150 -> 140 us at 2 threads) */
    int64_t bands = (g->OH + bo - 1) / bo;
    return (g->OH + bands - 1) / bands;
}

/* Floats of one thread's scratch: a band's interleaved input and
 * outputs, the block's weights and bias (vl floats each). */
static size_t dwc_per_thread(const sm_conv_geom *g)
{
    int64_t hp, wp, bo = dwc_band(g);
    dwc_extent(g, &hp, &wp);
    size_t floats =
        (size_t)((band_rows(g, bo) * wp + bo * g->OW + g->kh * g->kw + 1) *
                     DWC_MAX_VL +
                 bo * g->OW);
    return (floats * sizeof(float) + 63) & ~(size_t)63;
}

int sm_conv_dwc_wanted(const sm_conv_geom *g)
{
    int64_t hp, wp;
    dwc_extent(g, &hp, &wp);
    return g->kh * g->kw <= SM_CONV_DW_MAX_TAPS &&
           (size_t)(hp * wp) * DWC_MAX_VL * sizeof(float) <= DWC_MAX_BYTES;
}

size_t sm_conv_dwc_workspace(const sm_conv_geom *g, int n_threads)
{
    return (size_t)(n_threads < 1 ? 1 : n_threads) * dwc_per_thread(g) + 64;
}

typedef struct dwc_job {
    const sm_cpu_ops *ops;
    const sm_conv_geom *g;
    const float *x, *w, *bias, *res;
    const sm_gemm_epi *epi;
    float *y;
    char *ws;
    size_t per_thread;
    int64_t hp, wp, blocks; /* padded extent; channel blocks per image */
    int64_t band, bands;    /* output rows per band; bands per plane */
    int64_t off[SM_CONV_DW_MAX_TAPS];
    int epi_on;
} dwc_job;

#pragma GCC push_options
#pragma GCC optimize("no-tree-loop-distribute-patterns")

/* n pixels of a channels-last row (ps floats apart) into vl-float
 * pixels of d: nb channels, the spare lanes repeating the last. */
static void pixels_in(const float *s, int64_t ps, int64_t n, int64_t nb, int vl,
                      float *d)
{
    /* whole vectors as fixed-size copies (one vector move each); the
     * pixels are a line or more apart, which the hardware does not
     * prefetch: ask 16 pixels ahead (MobileNet's 112 -> 56 depthwise
     * layer, 2 threads: 206 -> 161 us) */
    if (nb == 16 && vl == 16) {
        for (int64_t i = 0; i < n; i++, s += ps, d += vl) {
            __builtin_prefetch(s + 16 * ps);
            memcpy(d, s, 16 * sizeof *d);
        }
        return;
    }
    if (nb == 8 && vl == 8) {
        for (int64_t i = 0; i < n; i++, s += ps, d += vl) {
            __builtin_prefetch(s + 16 * ps);
            memcpy(d, s, 8 * sizeof *d);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++, s += ps, d += vl) {
        for (int64_t l = 0; l < nb; l++)
            d[l] = s[l];
        for (int64_t l = nb; l < vl; l++)
            d[l] = s[nb - 1];
    }
}

/* n pixels of vl floats into a channels-last row, nb channels each. */
static void pixels_out(const float *s, int vl, int64_t n, int64_t nb, float *d,
                       int64_t ps)
{
    for (int64_t i = 0; i < n; i++, s += vl, d += ps)
        for (int64_t l = 0; l < nb; l++)
            d[l] = s[l];
}

#pragma GCC pop_options

/* Step 1 for channels [m0, m0 + nb) and padded rows [Y0, Y1): input
 * channel m / Mg of each into lane m - m0 of buf (padded row Y at buf row
 * Y - Y0), the padding zero. The spare lanes of a partial block repeat
 * its last channel: their weights are zero, their outputs dropped. */
static void dwc_interleave(const dwc_job *J, int64_t n, int64_t m0, int64_t nb,
                           int vl, int64_t Y0, int64_t Y1, float *buf)
{
    const sm_conv_geom *g = J->g;
    int64_t x0 = g->pw; /* input column 0 in the buffer */
    int64_t nx = g->W < J->wp - x0 ? g->W : J->wp - x0;
    int64_t iy0 = Y0 - g->ph < 0 ? 0 : Y0 - g->ph;
    int64_t iy1 = Y1 - g->ph < g->H ? Y1 - g->ph : g->H;
    size_t row = (size_t)(J->wp * vl) * sizeof *buf;
    nx = nx < 0 ? 0 : nx;
    /* only what the input does not cover: padding rows, and the padding
     * columns of the other rows */
    for (int64_t Y = Y0; Y < Y1; Y++) {
        char *r = (char *)(buf + (Y - Y0) * J->wp * vl);
        int64_t iy = Y - g->ph;
        if (iy < iy0 || iy >= iy1) {
            memset(r, 0, row);
            continue;
        }
        size_t head = (size_t)((x0 < J->wp ? x0 : J->wp) * vl) * sizeof *buf;
        size_t body = (size_t)(nx * vl) * sizeof *buf;
        memset(r, 0, head);
        memset(r + head + body, 0, row - head - body);
    }
    if (g->nhwc & SM_B16_IN) { /* C == M: [C / 16][H][W][16] */
        for (int64_t iy = iy0; iy < iy1; iy++) {
            const float *s =
                J->x + ((n * (g->C / 16) + m0 / 16) * g->H + iy) * g->W * 16 +
                m0 % 16;
            float *d = buf + ((iy + g->ph - Y0) * J->wp + x0) * vl;
            if (vl == 16 && nb == 16)
                memcpy(d, s, (size_t)(nx * 16) * sizeof *d); /* one run */
            else
                pixels_in(s, 16, nx, nb, vl, d);
        }
        return;
    }
    if (g->nhwc & SM_NHWC_IN) { /* C == M: pixels of C floats */
        for (int64_t iy = iy0; iy < iy1; iy++)
            pixels_in(J->x + ((n * g->H + iy) * g->W) * g->C + m0, g->C, nx, nb,
                      vl, buf + ((iy + g->ph - Y0) * J->wp + x0) * vl);
        return;
    }
    const float *xp[DWC_MAX_VL];
    for (int64_t l = 0; l < vl; l++)
        xp[l] = J->x +
                (n * g->C + (m0 + (l < nb ? l : nb - 1)) / g->Mg) * g->H * g->W;
    for (int64_t iy = iy0; iy < iy1; iy++) {
        const float *s[DWC_MAX_VL];
        for (int k = 0; k < vl; k++)
            s[k] = xp[k] + iy * g->W;
        J->ops->lanes_in(s, nx, buf + ((iy + g->ph - Y0) * J->wp + x0) * vl);
    }
}

/* Tasks [begin, end): (image, channel block, band of output rows), steps
 * 1-3: bands as tasks of their own, so that 32 channels (two blocks)
 * still spread over the threads in many pieces. */
static void dwc_blocks(void *arg, int64_t begin, int64_t end, int tid)
{
    const dwc_job *J = arg;
    const sm_conv_geom *g = J->g;
    int vl = J->ops->vl, ntaps = (int)(g->kh * g->kw);
    int64_t ohw = g->OH * g->OW;
    float *buf = (float *)(J->ws + (size_t)tid * J->per_thread);
    float *out = buf + band_rows(g, J->band) * J->wp * vl;
    float *wt = out + J->band * g->OW * vl, *bias = wt + ntaps * vl;
    float *spare = bias + vl; /* a band of one plane */
    for (int64_t t = begin; t < end; t++) {
        int64_t band = t % J->bands, blk = t / J->bands;
        int64_t n = blk / J->blocks, m0 = blk % J->blocks * vl;
        int64_t nb = g->M - m0 < vl ? g->M - m0 : vl;
        sm_gemm_epi e;
        sm_conv_epi(g, J->epi, J->bias, J->res, &e);
        if (e.t[1].p)
            e.t[1].p += n * g->r_sn;
        /* as conv_dw.c: only a residual varying over the plane (or an
         * alpha) needs a pass of its own */
        int sep = J->epi_on && (e.alpha != 1.0f || (e.t[1].p && e.t[1].cs));
        for (int64_t l = 0; l < vl; l++) {
            float b = 0.0f;
            for (int k = 0; l < nb && J->epi_on && !sep && k < 2; k++)
                if (e.t[k].p)
                    b += e.t[k].p[(m0 + l) * e.t[k].rs] * e.t[k].scale;
            bias[l] = b;
            for (int tp = 0; tp < ntaps; tp++)
                wt[tp * vl + l] = l < nb ? J->w[(m0 + l) * ntaps + tp] : 0.0f;
        }
        int act = J->epi_on && !sep ? e.act : SM_ACT_NONE;
        int64_t off[SM_CONV_DW_MAX_TAPS];
        for (int tp = 0; tp < ntaps; tp++)
            off[tp] = J->off[tp] * vl;
        float *yp[DWC_MAX_VL];
        for (int64_t l = 0; l < nb; l++)
            yp[l] = J->y + (n * g->M + m0 + l) * ohw;
        /* this task's band of output rows */
        {
            int64_t oy0 = band * J->band;
            int64_t bo = g->OH - oy0 < J->band ? g->OH - oy0 : J->band;
            int64_t Y0 = oy0 * g->sh;
            dwc_interleave(J, n, m0, nb, vl, Y0, Y0 + band_rows(g, bo), buf);
            int64_t p0 = oy0 * g->OW, np = bo * g->OW;
            if (g->nhwc & SM_NHWC_OUT) {
                /* a whole block straight into the NHWC rows */
                float *yn = J->y + (n * ohw + p0) * g->M + m0;
                J->ops->dw_cblock(buf, J->wp, g->sh, g->sw, wt, off, ntaps,
                                  bias, act, e.act_a, e.act_b, bo, g->OW,
                                  nb == vl ? yn : out, nb == vl ? g->M : vl);
                if (nb < vl)
                    pixels_out(out, vl, np, nb, yn, g->M);
                continue;
            }
            J->ops->dw_cblock(buf, J->wp, g->sh, g->sw, wt, off, ntaps, bias,
                              act, e.act_a, e.act_b, bo, g->OW, out, vl);
            /* the spare lanes of a partial block go to scratch */
            float *yb[DWC_MAX_VL];
            for (int64_t l = 0; l < vl; l++)
                yb[l] = l < nb ? yp[l] + p0 : spare;
            J->ops->lanes_out(out, np, vl, yb);
            for (int64_t l = 0; sep && l < nb; l++)
                J->ops->epi_tile(&e, yb[l], np, m0 + l, p0, 1, np);
        }
    }
}

smelt_status sm_conv_dwc(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                         const sm_conv_geom *g, const float *x, const float *w,
                         const float *bias, const float *res,
                         const sm_gemm_epi *epi, float *y, sm_threadpool *tp,
                         void *ws, size_t ws_bytes)
{
    int vl = ops->vl;
    dwc_job J = {.ops = ops,
                 .g = g,
                 .x = x,
                 .w = w,
                 .bias = bias,
                 .res = res,
                 .epi = epi,
                 .y = y,
                 .per_thread = dwc_per_thread(g)};
    dwc_extent(g, &J.hp, &J.wp);
    J.band = dwc_band(g);
    J.blocks = (g->M + vl - 1) / vl;
    for (int64_t ky = 0; ky < g->kh; ky++)
        for (int64_t kx = 0; kx < g->kw; kx++)
            J.off[ky * g->kw + kx] = ky * g->dh * J.wp + kx * g->dw;
    J.epi_on = bias || res || epi->act != 0 || epi->alpha != 1.0f;
    J.bands = (g->OH + J.band - 1) / J.band;
    int64_t tasks = g->N * J.blocks * J.bands;
    int threads = tasks > 1 ? sm_threadpool_size(tp) : 1;
    if (vl > DWC_MAX_VL)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "depthwise: vectors of %d floats are wider than %d", vl,
                      DWC_MAX_VL);
    if (g->nhwc && (g->Mg != 1 || (g->has_r && g->r_sp) ||
                    ((g->nhwc & SM_B16_IN) && g->C % 16)))
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "depthwise: channels-last or blocked operands need "
                      "one output channel per input channel, no residual "
                      "over the plane and whole blocks of 16 channels");
    void *own;
    J.ws =
        sm_cpu_scratch(ws, ws_bytes, sm_conv_dwc_workspace(g, threads), &own);
    if (!J.ws)
        return sm_err_nomem(ctx);
    /* one task: the calling thread alone (the scratch is for one) */
    sm_parallel_for(tp, tasks, sm_cpu_chunk(tasks, tp), dwc_blocks, &J);
    sm_free(own);
    return SMELT_OK;
}
