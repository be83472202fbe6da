/*
 * conv_direct.c - direct convolution for layers with few input channels
 * (a network's stem: 3 channels, 3x3 or 7x7, stride 2), NCHW.
 *
 * As an implicit GEMM such a layer has K = C * kh * kw = 27 or 147, and
 * gathering B (im2col, strided) costs about as much as the product
 * itself. Here each task takes a band of output rows of one image:
 *   1. the input rows the band reads are split once into their stride
 *      phases, zero-padded (rowsplit.h), so that tap (c, ky, kx) of
 *      consecutive outputs is a contiguous run;
 *   2. for each output row and each block of 8 output channels, the
 *      ISA's cdir_row sums the C * kh * kw taps in registers, every tap
 *      loaded once for the 8 channels, with the bias and the activation
 *      applied before its one store.
 * The weights are laid out once per run as [M / 8][K][8].
 */
#include "kernels/cpu/conv.h"

#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/rowsplit.h"
#include "core/act.h"

/* Output channels per cdir_row call (rows.inc.h CDIR_MB). */
#define DIR_MB 8
/* Floats cdir_row may read past a row's last output. */
#define DIR_SLACK 64
/* A band's split input rows at most this. */
#define DIR_BAND_BYTES ((size_t)192 << 10)

int sm_conv_direct_wanted(const sm_conv_geom *g)
{
    return g->G == 1 && g->C <= 4 && !g->has_r && g->OW >= 16 && g->K <= 256 &&
           g->sh <= SM_ROWSPLIT_MAX_S && g->sw <= SM_ROWSPLIT_MAX_S;
}

typedef struct dir_lay {
    sm_rowsplit rs;
    int64_t rl;   /* floats per split row (its phases and slack) */
    int64_t band; /* output rows per task */
    int64_t mblocks;
    size_t per_thread, shared; /* bytes */
} dir_lay;

static int64_t band_in_rows(const sm_conv_geom *g, int64_t bo)
{
    return (bo - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

static void dir_geometry(const sm_cpu_ops *ops, const sm_conv_geom *g,
                         int threads, dir_lay *l)
{
    sm_rowsplit_init(&l->rs, g->OW, g->kw, g->sw, g->dw, g->pw, g->W,
                     ops ? ops->gather2 : NULL);
    l->rl = sm_rowsplit_len(&l->rs) + DIR_SLACK;
    /* about 4 bands a thread, each within DIR_BAND_BYTES */
    int64_t want = 4 * (threads < 1 ? 1 : threads);
    int64_t per_img = (want + g->N - 1) / g->N;
    int64_t bo = (g->OH + per_img - 1) / per_img;
    bo = bo < 1 ? 1 : bo;
    while (bo > 1 &&
           (size_t)(g->C * band_in_rows(g, bo) * l->rl) * sizeof(float) >
               DIR_BAND_BYTES)
        bo = (bo + 1) / 2;
    l->band = bo;
    l->mblocks = (g->M + DIR_MB - 1) / DIR_MB;
    size_t floats =
        (size_t)(g->C * band_in_rows(g, bo) * l->rl + g->OW + DIR_SLACK);
    l->per_thread = (floats * sizeof(float) + 63) & ~(size_t)63;
    size_t wfl = (size_t)(l->mblocks * DIR_MB * (g->K + 1));
    l->shared = (wfl * sizeof(float) + 63) & ~(size_t)63;
}

size_t sm_conv_direct_workspace(const sm_conv_geom *g, int n_threads)
{
    dir_lay l;
    dir_geometry(NULL, g, n_threads, &l);
    n_threads = n_threads < 1 ? 1 : n_threads;
    return l.shared + (size_t)n_threads * l.per_thread + 64;
}

typedef struct dir_job {
    const sm_cpu_ops *ops;
    const sm_conv_geom *g;
    dir_lay l;
    const float *x, *wpk, *bpk; /* packed weights and bias */
    sm_gemm_epi e;
    float *y;
    char *ws; /* per-thread scratch */
} dir_job;

/* Tasks [begin, end): (image, band of output rows). */
static void dir_bands(void *arg, int64_t begin, int64_t end, int tid)
{
    const dir_job *J = arg;
    const sm_conv_geom *g = J->g;
    const dir_lay *l = &J->l;
    float *rows = (float *)(J->ws + (size_t)tid * l->per_thread);
    int64_t nin = band_in_rows(g, l->band);
    float *spare = rows + g->C * nin * l->rl;
    int64_t bands = (g->OH + l->band - 1) / l->band;
    const float *taps[256];
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / bands, oy0 = t % bands * l->band;
        int64_t bo = g->OH - oy0 < l->band ? g->OH - oy0 : l->band;
        int64_t Y0 = oy0 * g->sh, nr = band_in_rows(g, bo);
        /* step 1: the band's padded input rows, split */
        for (int64_t c = 0; c < g->C; c++) {
            const float *xc = J->x + (n * g->C + c) * g->H * g->W;
            for (int64_t r = 0; r < nr; r++) {
                int64_t iy = Y0 + r - g->ph;
                float *d = rows + (c * nin + r) * l->rl;
                if (iy < 0 || iy >= g->H)
                    sm_rowsplit_fill(&l->rs, 0.0f, d);
                else
                    sm_rowsplit_row(&l->rs, xc + iy * g->W, 0.0f, d);
            }
        }
        /* step 2: every output row, 8 channels at a time */
        for (int64_t oy = oy0; oy < oy0 + bo; oy++) {
            int nt = 0;
            for (int64_t c = 0; c < g->C; c++)
                for (int64_t ky = 0; ky < g->kh; ky++) {
                    const float *row =
                        rows +
                        (c * nin + (oy - oy0) * g->sh + ky * g->dh) * l->rl;
                    for (int64_t kx = 0; kx < g->kw; kx++)
                        taps[nt++] = row + sm_rowsplit_tap(&l->rs, kx);
                }
            for (int64_t mb = 0; mb < l->mblocks; mb++) {
                float *yp[DIR_MB];
                for (int m = 0; m < DIR_MB; m++) {
                    int64_t ch = mb * DIR_MB + m;
                    yp[m] = ch < g->M
                                ? J->y + ((n * g->M + ch) * g->OH + oy) * g->OW
                                : spare;
                }
                J->ops->cdir_row(taps, nt, J->wpk + mb * g->K * DIR_MB,
                                 J->bpk + mb * DIR_MB, J->e.act, J->e.act_a,
                                 J->e.act_b, yp, g->OW);
            }
        }
    }
}

smelt_status sm_conv_direct(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                            const sm_conv_geom *g, const float *x,
                            const float *w, const float *bias,
                            const sm_gemm_epi *epi, float *y, sm_threadpool *tp,
                            void *ws, size_t ws_bytes)
{
    int threads = sm_threadpool_size(tp);
    dir_job J = {.ops = ops, .g = g, .x = x, .e = *epi, .y = y};
    dir_geometry(ops, g, threads, &J.l);
    if (g->K > 256 || epi->alpha != 1.0f)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "direct convolution: %lld taps or a scaled epilogue",
                      (long long)g->K);
    void *own;
    char *base = sm_cpu_scratch(ws, ws_bytes,
                                sm_conv_direct_workspace(g, threads), &own);
    if (!base)
        return sm_err_nomem(ctx);
    /* weights [M, K] as [M / 8][K][8] and the bias as [M / 8][8], zero
     * past M */
    float *wpk = (float *)base, *bpk = wpk + J.l.mblocks * DIR_MB * g->K;
    for (int64_t mb = 0; mb < J.l.mblocks; mb++)
        for (int m = 0; m < DIR_MB; m++) {
            int64_t ch = mb * DIR_MB + m;
            for (int64_t k = 0; k < g->K; k++)
                wpk[(mb * g->K + k) * DIR_MB + m] =
                    ch < g->M ? w[ch * g->K + k] : 0.0f;
            bpk[mb * DIR_MB + m] = ch < g->M && bias ? bias[ch] : 0.0f;
        }
    J.wpk = wpk;
    J.bpk = bpk;
    J.ws = base + J.l.shared;
    int64_t tasks = g->N * ((g->OH + J.l.band - 1) / J.l.band);
    sm_parallel_for(tp, tasks, 1, dir_bands, &J);
    sm_free(own);
    return SMELT_OK;
}
