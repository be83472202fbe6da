/*
 * conv_depthwise_blocked.c - depthwise convolution on channels interleaved a
 * vector at a time, for planes up to about 120 x 120 (all of MobileNet's).
 *
 * The per-plane path (conv_depthwise.c) vectorizes along a plane's rows; a
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
 * straight into the NHWC output (a partial block through scratch). A
 * channel-blocked input is already interleaved: step 1 is left to the
 * outputs on the plane's border, whose taps reach into the padding
 * (dwc_in_place).
 */
#include "kernels/cpu/conv.h"

#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_util.h"
#include "core/act.h"
#include "kernels/cpu/keep_loops.h"

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
    /* bands of equal height, no short last one, each as tall as the
     * budget allows: a band re-reads the kernel's overlap rows of the one
     * above it, so taller bands read fewer rows twice, up to the point
     * where the band no longer fits the budget (DWC_BAND_BYTES, sized for
     * a core's L2 share) */
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

int sm_conv_depthwise_blocked_wanted(const sm_conv_geom *g)
{
    int64_t hp, wp;
    dwc_extent(g, &hp, &wp);
    return g->kh * g->kw <= SM_CONV_DW_MAX_TAPS &&
           (size_t)(hp * wp) * DWC_MAX_VL * sizeof(float) <= DWC_MAX_BYTES;
}

size_t sm_conv_depthwise_blocked_workspace(const sm_conv_geom *g, int n_threads)
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
    int64_t wp, blocks;       /* padded width; channel blocks per image */
    int64_t band, bands;      /* output rows per band; bands per plane */
    int64_t in_y[2], in_x[2]; /* the outputs that read no padding */
    int epi_on, in_place;     /* in_place: dwc_in_place */
} dwc_job;

SM_KEEP_LOOPS_BEGIN

/* n pixels of a channels-last row (ps floats apart) into vl-float
 * pixels of d: nb channels, the spare lanes repeating the last. */
static void pixels_in(const float *s, int64_t ps, int64_t n, int64_t nb, int vl,
                      float *d)
{
    /* whole vectors as fixed-size copies (one vector move each); the
     * pixels are a line or more apart, a stride the hardware prefetcher
     * does not follow: ask for them 16 pixels ahead, about the latency of
     * a memory read at one vector move a pixel */
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

SM_KEEP_LOOPS_END

/* Step 1 for channels [m0, m0 + nb), padded rows [Y0, Y1) and padded
 * columns [X0, X0 + bw): input channel m / Mg of each into lane m - m0 of
 * buf (padded pixel (Y, X) at buf pixel (Y - Y0) * bw + X - X0), the
 * padding zero. The spare lanes of a partial block repeat its last
 * channel: their weights are zero, their outputs dropped. */
static void dwc_interleave(const dwc_job *J, int64_t n, int64_t m0, int64_t nb,
                           int vl, int64_t Y0, int64_t Y1, int64_t X0,
                           int64_t bw, float *buf)
{
    const sm_conv_geom *g = J->g;
    /* the input columns [ix0, ix0 + nx) the window covers, from buffer
     * column x0 */
    int64_t ix0 = X0 - g->pw < 0 ? 0 : X0 - g->pw;
    int64_t ix1 = X0 + bw - g->pw < g->W ? X0 + bw - g->pw : g->W;
    int64_t nx = ix1 > ix0 ? ix1 - ix0 : 0, x0 = nx ? ix0 + g->pw - X0 : bw;
    int64_t iy0 = Y0 - g->ph < 0 ? 0 : Y0 - g->ph;
    int64_t iy1 = Y1 - g->ph < g->H ? Y1 - g->ph : g->H;
    size_t row = (size_t)(bw * vl) * sizeof *buf;
    if (!nx)
        iy1 = iy0;
    /* only what the input does not cover: padding rows, and the padding
     * columns of the other rows */
    for (int64_t Y = Y0; Y < Y1; Y++) {
        char *r = (char *)(buf + (Y - Y0) * bw * vl);
        int64_t iy = Y - g->ph;
        if (iy < iy0 || iy >= iy1) {
            memset(r, 0, row);
            continue;
        }
        size_t head = (size_t)(x0 * vl) * sizeof *buf;
        size_t body = (size_t)(nx * vl) * sizeof *buf;
        memset(r, 0, head);
        memset(r + head + body, 0, row - head - body);
    }
    if (g->nhwc & SM_B16_IN) { /* C == M: [C / 16][H][W][16] */
        for (int64_t iy = iy0; iy < iy1; iy++) {
            const float *s =
                J->x +
                (((n * (g->C / 16) + m0 / 16) * g->H + iy) * g->W + ix0) * 16 +
                m0 % 16;
            float *d = buf + ((iy + g->ph - Y0) * bw + x0) * vl;
            if (vl == 16 && nb == 16)
                memcpy(d, s, (size_t)(nx * 16) * sizeof *d); /* one run */
            else
                pixels_in(s, 16, nx, nb, vl, d);
        }
        return;
    }
    if (g->nhwc & SM_NHWC_IN) { /* C == M: pixels of C floats */
        for (int64_t iy = iy0; iy < iy1; iy++)
            pixels_in(J->x + ((n * g->H + iy) * g->W + ix0) * g->C + m0, g->C,
                      nx, nb, vl, buf + ((iy + g->ph - Y0) * bw + x0) * vl);
        return;
    }
    const float *xp[DWC_MAX_VL];
    for (int64_t l = 0; l < vl; l++)
        xp[l] = J->x +
                (n * g->C + (m0 + (l < nb ? l : nb - 1)) / g->Mg) * g->H * g->W;
    for (int64_t iy = iy0; iy < iy1; iy++) {
        const float *s[DWC_MAX_VL];
        for (int k = 0; k < vl; k++)
            s[k] = xp[k] + iy * g->W + ix0;
        J->ops->lanes_in(s, nx, buf + ((iy + g->ph - Y0) * bw + x0) * vl);
    }
}

/* One task's block: vl channels from m0 (nb of them real) of image n,
 * its weights and bias in wt and bias, the activation act. */
typedef struct dwc_blk {
    int64_t n, m0, nb;
    const float *wt, *bias;
    int act;
    float act_a, act_b;
} dwc_blk;

/* Outputs [oy0, oy0 + bo) x [ox0, ox1) of block B through the padded
 * scratch buffer buf, into o (pixels os floats apart, rows ors). */
static void dwc_padded(const dwc_job *J, const dwc_blk *B, int64_t oy0,
                       int64_t bo, int64_t ox0, int64_t ox1, float *buf,
                       float *o, int64_t os, int64_t ors)
{
    const sm_conv_geom *g = J->g;
    int vl = J->ops->vl, ntaps = (int)(g->kh * g->kw);
    int64_t bw = (ox1 - ox0 - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    int64_t off[SM_CONV_DW_MAX_TAPS];
    if (bo <= 0 || ox1 <= ox0)
        return;
    for (int t = 0; t < ntaps; t++)
        off[t] = (t / g->kw * g->dh * bw + t % g->kw * g->dw) * vl;
    dwc_interleave(J, B->n, B->m0, B->nb, vl, oy0 * g->sh,
                   oy0 * g->sh + band_rows(g, bo), ox0 * g->sw, bw, buf);
    J->ops->dw_cblock(buf, bw * vl, vl, g->sh, g->sw, B->wt, off, ntaps,
                      B->bias, B->act, B->act_a, B->act_b, bo, ox1 - ox0, o, os,
                      ors);
}

/* Outputs [b0, b1) x [0, OW) of block B, whose input is channel-blocked
 * (whole blocks of 16): the outputs whose taps all fall inside the input
 * read it in place, 16 floats a pixel; only the border ones (J->in_y,
 * J->in_x: the interior's range) go through the padded buffer. The copy
 * had taken as long as the arithmetic, and up to twice as long while
 * other tenants load the memory (MobileNet's 112 -> 56 layer, 2
 * threads). */
static void dwc_in_place(const dwc_job *J, const dwc_blk *B, int64_t b0,
                         int64_t b1, float *buf, float *o, int64_t os,
                         int64_t ors)
{
    const sm_conv_geom *g = J->g;
    int ntaps = (int)(g->kh * g->kw);
    int64_t r0 = J->in_y[0] < b0 ? b0 : J->in_y[0] > b1 ? b1 : J->in_y[0];
    int64_t r1 = J->in_y[1] < r0 ? r0 : J->in_y[1] > b1 ? b1 : J->in_y[1];
    int64_t c0 = J->in_x[0], c1 = J->in_x[1];
    if (c1 <= c0)
        r1 = r0; /* no interior column: all through the buffer */
    dwc_padded(J, B, b0, r0 - b0, 0, g->OW, buf, o, os, ors);
    dwc_padded(J, B, r1, b1 - r1, 0, g->OW, buf, o + (r1 - b0) * ors, os, ors);
    if (r1 <= r0)
        return;
    float *om = o + (r0 - b0) * ors;
    dwc_padded(J, B, r0, r1 - r0, 0, c0, buf, om, os, ors);
    dwc_padded(J, B, r0, r1 - r0, c1, g->OW, buf, om + c1 * os, os, ors);
    int64_t off[SM_CONV_DW_MAX_TAPS];
    for (int t = 0; t < ntaps; t++)
        off[t] = (t / g->kw * g->dh * g->W + t % g->kw * g->dw) * 16;
    const float *in =
        J->x +
        (((B->n * (g->C / 16) + B->m0 / 16) * g->H + r0 * g->sh - g->ph) *
             g->W +
         c0 * g->sw - g->pw) *
            16 +
        B->m0 % 16;
    J->ops->dw_cblock(in, g->W * 16, 16, g->sh, g->sw, B->wt, off, ntaps,
                      B->bias, B->act, B->act_a, B->act_b, r1 - r0, c1 - c0,
                      om + c0 * os, os, ors);
}

/* [lo, hi): the outputs along one axis whose taps (k of them, dilation
 * d, stride s, leading padding p) all fall inside an input of n. */
static void dwc_interior(int64_t n, int64_t k, int64_t d, int64_t s, int64_t p,
                         int64_t out, int64_t r[2])
{
    int64_t last = n - 1 + p - (k - 1) * d; /* the last tap's reach */
    r[0] = (p + s - 1) / s;
    r[1] = last < 0 ? 0 : last / s + 1;
    r[0] = r[0] < out ? r[0] : out;
    r[1] = r[1] < r[0] ? r[0] : r[1] < out ? r[1] : out;
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
        /* as conv_depthwise.c: only a residual varying over the plane (or an
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
        dwc_blk B = {.n = n,
                     .m0 = m0,
                     .nb = nb,
                     .wt = wt,
                     .bias = bias,
                     .act = J->epi_on && !sep ? e.act : SM_ACT_NONE,
                     .act_a = e.act_a,
                     .act_b = e.act_b};
        /* this task's band of output rows, into the NHWC rows (a whole
         * block) or the scratch rows of vl-float pixels */
        int64_t oy0 = band * J->band;
        int64_t bo = g->OH - oy0 < J->band ? g->OH - oy0 : J->band;
        int64_t p0 = oy0 * g->OW, np = bo * g->OW;
        int nhwc_out = (g->nhwc & SM_NHWC_OUT) != 0;
        float *yn = J->y + (n * ohw + p0) * g->M + m0;
        float *o = nhwc_out && nb == vl ? yn : out;
        int64_t os = o == yn ? g->M : vl;
        if (J->in_place)
            dwc_in_place(J, &B, oy0, oy0 + bo, buf, o, os, os * g->OW);
        else
            dwc_padded(J, &B, oy0, bo, 0, g->OW, buf, o, os, os * g->OW);
        if (nhwc_out) {
            if (o != yn) /* a partial block through scratch */
                pixels_out(out, vl, np, nb, yn, g->M);
            continue;
        }
        /* the spare lanes of a partial block go to scratch */
        float *yb[DWC_MAX_VL];
        for (int64_t l = 0; l < vl; l++)
            yb[l] = l < nb ? J->y + (n * g->M + m0 + l) * ohw + p0 : spare;
        J->ops->lanes_out(out, np, vl, yb);
        for (int64_t l = 0; sep && l < nb; l++)
            J->ops->epi_tile(&e, yb[l], np, m0 + l, p0, 1, np);
    }
}

smelt_status sm_conv_depthwise_blocked(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                       const sm_conv_geom *g, const float *x,
                                       const float *w, const float *bias,
                                       const float *res, const sm_gemm_epi *epi,
                                       float *y, sm_threadpool *tp, void *ws,
                                       size_t ws_bytes)
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
    int64_t hp;
    dwc_extent(g, &hp, &J.wp);
    J.band = dwc_band(g);
    J.blocks = (g->M + vl - 1) / vl;
    dwc_interior(g->H, g->kh, g->dh, g->sh, g->ph, g->OH, J.in_y);
    dwc_interior(g->W, g->kw, g->dw, g->sw, g->pw, g->OW, J.in_x);
    /* in place where the interior holds two thirds of the outputs or
     * more: each border rectangle is a pass of its own with a fixed cost,
     * which a small plane (7 x 7, where the border is most of it) does
     * not earn back, and a larger one (14 x 14 and up) does */
    J.in_place = (g->nhwc & SM_B16_IN) &&
                 3 * (J.in_y[1] - J.in_y[0]) * (J.in_x[1] - J.in_x[0]) >=
                     2 * g->OH * g->OW;
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
    J.ws = sm_cpu_scratch(
        ws, ws_bytes, sm_conv_depthwise_blocked_workspace(g, threads), &own);
    if (!J.ws)
        return sm_err_nomem(ctx);
    /* one task: the calling thread alone (the scratch is for one) */
    sm_parallel_for(tp, tasks, sm_cpu_chunk(tasks, tp), dwc_blocks, &J);
    sm_free(own);
    return SMELT_OK;
}
