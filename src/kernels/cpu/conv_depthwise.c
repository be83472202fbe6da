/*
 * conv_depthwise.c - depthwise convolution (one input channel per group, as in
 * MobileNet), direct, one (image, channel) plane at a time:
 *   1. the input plane is copied once into a zero-padded, phase-split
 *      form: for strides sh x sw, sh * sw planes, plane (a, b) holding
 *      the padded rows R = a (mod sh) and in them the columns
 *      C = b (mod sw) (rowsplit.h), all rows `rowlen` floats apart, with
 *      rowlen barely more than OW;
 *   2. then every tap (ky, kx) of every output (oy, ox) reads element
 *      oy * rowlen + ox + off(ky, kx) of one of those planes, so the
 *      whole output plane is one flat run of oy * rowlen + ox positions:
 *      the ISA's dw_row sums the kh x kw taps over it in registers, long
 *      vectors even when the plane is small (MobileNet's 7 x 7 and
 *      14 x 14); the few columns past OW of each flat row are computed
 *      and dropped (stride 2 wastes no more than stride 1);
 *   3. the fused epilogue (bias, activation; a residual too unless it
 *      varies along the row) runs over the flat plane in one sweep, and
 *      the output rows are copied out (a row-varying residual is added
 *      to each row after its copy, while it is in L1).
 * Planes split over the pool; each thread has its buffers in the
 * workspace.
 */
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/conv.h"

#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/rowsplit.h"
#include "core/act.h"

/* Output rows at least this wide are computed row by row straight into
 * the output; narrower planes as one flat run (step 2 above). */
#define DW_ROW_MIN 32

/* The buffer geometry of one plane: the phase-split layout, rows per
 * stride phase (the output rows, the taps' reach below them, and one row
 * of slack for the dropped columns' reads), and the floats per thread. */
typedef struct dw_lay {
    sm_rowsplit rs;
    int64_t rowlen, rpp, plane; /* plane: floats of one phase plane */
    size_t per_thread;
} dw_lay;

static void dw_geometry(const sm_cpu_ops *ops, const sm_conv_geom *g, dw_lay *l)
{
    sm_rowsplit_init(&l->rs, g->OW, g->kw, g->sw, g->dw, g->pw, g->W,
                     ops ? ops->gather2 : NULL);
    l->rowlen = l->rs.L;
    l->rpp = g->OH + (g->kh - 1) * g->dh / g->sh + 2;
    l->plane = l->rpp * l->rowlen;
    size_t floats = (size_t)(g->sh * g->sw * l->plane + g->OH * l->rowlen);
    l->per_thread = (floats * sizeof(float) + 63) & ~(size_t)63;
}

size_t sm_conv_depthwise_workspace(const sm_conv_geom *g, int n_threads)
{
    dw_lay l;
    dw_geometry(NULL, g, &l);
    return (size_t)(n_threads < 1 ? 1 : n_threads) * l.per_thread + 64;
}

typedef struct dw_job {
    const sm_cpu_ops *ops;
    const sm_conv_geom *g;
    dw_lay l;
    const float *x, *w, *bias, *res;
    const sm_gemm_epi *epi;
    float *y;
    char *ws;
    int epi_on;
} dw_job;

/* Planes [begin, end) (image, channel): steps 1-3 above. */
static void dw_planes(void *arg, int64_t begin, int64_t end, int tid)
{
    const dw_job *J = arg;
    const sm_conv_geom *g = J->g;
    const dw_lay *l = &J->l;
    int64_t rowlen = l->rowlen, rpp = l->rpp;
    float *buf = (float *)(J->ws + (size_t)tid * l->per_thread);
    int64_t plane = l->plane, sw = g->sw;
    float *flat = buf + g->sh * sw * plane;
    int ntaps = (int)(g->kh * g->kw);
    const float *taps[SM_CONV_DW_MAX_TAPS];
    for (int64_t ky = 0; ky < g->kh; ky++) {
        int64_t r = ky * g->dh; /* padded row offset of the tap */
        for (int64_t kx = 0; kx < g->kw; kx++) {
            int64_t c = kx * g->dw; /* padded column offset */
            taps[ky * g->kw + kx] = buf + ((r % g->sh) * sw + c % sw) * plane +
                                    (r / g->sh) * rowlen + c / sw;
        }
    }
    for (int64_t p = begin; p < end; p++) {
        int64_t n = p / g->M, m = p % g->M, c = m / g->Mg;
        const float *xp = J->x + (n * g->C + c) * g->H * g->W;
        float *yp = J->y + p * g->OH * g->OW;
        /* padded row R lives in planes (R % sh, *), row R / sh */
        for (int64_t R = 0; R < g->sh * rpp; R++) {
            float *d = buf + (R % g->sh) * sw * plane + (R / g->sh) * rowlen;
            int64_t iy = R - g->ph;
            if (iy >= 0 && iy < g->H) {
                sm_rowsplit_row_pitch(&l->rs, xp + iy * g->W, 0.0f, d, plane);
            } else {
                for (int64_t b = 0; b < sw; b++)
                    memset(d + b * plane, 0, (size_t)rowlen * sizeof *d);
            }
        }
        sm_gemm_epi e;
        sm_conv_epi(g, J->epi, J->bias, J->res, &e);
        if (e.t[1].p)
            e.t[1].p += n * g->r_sn;
        /* the bias, a residual constant over the plane and the activation
         * are applied in dw_row's registers; only a residual that varies
         * along the plane (or an alpha) needs a pass of its own */
        int sep = J->epi_on && (e.alpha != 1.0f || (e.t[1].p && e.t[1].cs));
        float bias = 0.0f;
        int act = SM_ACT_NONE;
        if (J->epi_on && !sep) {
            for (int t = 0; t < 2; t++)
                if (e.t[t].p)
                    bias += e.t[t].p[m * e.t[t].rs] * e.t[t].scale;
            act = e.act;
        }
        const float *wm = J->w + m * ntaps;
        if (g->OW >= DW_ROW_MIN) {
            /* wide rows: each output row straight into y, nothing
             * computed past OW */
            const float *rt[SM_CONV_DW_MAX_TAPS];
            for (int64_t oy = 0; oy < g->OH; oy++) {
                for (int t = 0; t < ntaps; t++)
                    rt[t] = taps[t] + oy * rowlen;
                float *yr = yp + oy * g->OW;
                J->ops->dw_row(rt, wm, ntaps, yr, g->OW, bias, act, e.act_a,
                               e.act_b);
                if (sep)
                    J->ops->epi_tile(&e, yr, g->OW, m, oy * g->OW, 1, g->OW);
            }
            continue;
        }
        J->ops->dw_row(taps, wm, ntaps, flat, g->OH * rowlen, bias, act,
                       e.act_a, e.act_b);
        for (int64_t oy = 0; oy < g->OH; oy++) {
            float *yr = yp + oy * g->OW;
            memcpy(yr, flat + oy * rowlen, (size_t)g->OW * sizeof *yr);
            if (sep)
                J->ops->epi_tile(&e, yr, g->OW, m, oy * g->OW, 1, g->OW);
        }
    }
}

smelt_status sm_conv_depthwise(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                               const sm_conv_geom *g, const float *x,
                               const float *w, const float *bias,
                               const float *res, const sm_gemm_epi *epi,
                               float *y, sm_threadpool *tp, void *ws,
                               size_t ws_bytes)
{
    int threads = sm_threadpool_size(tp);
    int64_t planes = g->N * g->M;
    if (planes < 2)
        threads = 1;
    void *own;
    char *scratch = sm_cpu_scratch(
        ws, ws_bytes, sm_conv_depthwise_workspace(g, threads), &own);
    if (!scratch)
        return sm_err_nomem(ctx);
    dw_job J = {.ops = ops,
                .g = g,
                .x = x,
                .w = w,
                .bias = bias,
                .res = res,
                .epi = epi,
                .y = y};
    dw_geometry(ops, g, &J.l);
    J.ws = scratch;
    J.epi_on = bias || res || epi->act != 0 || epi->alpha != 1.0f;
    /* one plane: the calling thread alone (the scratch is for one) */
    sm_parallel_for(tp, planes, sm_cpu_chunk(planes, tp), dw_planes, &J);
    sm_free(own);
    return SMELT_OK;
}
