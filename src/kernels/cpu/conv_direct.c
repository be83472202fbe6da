/*
 * conv_direct.c - direct convolution, NCHW, for three kinds of layers:
 *   - few input channels (a network's stem: 3 channels, 3x3 or 7x7,
 *     stride 2): as an implicit GEMM such a layer has K = C * kh * kw =
 *     27 or 147, and gathering B (im2col, strided) costs about as much as
 *     the product itself;
 *   - dilated taps and kernels of 5x5 or more, of any width: im2col
 *     copies each input kh * kw times with gaps and zero runs that break
 *     its copies into short pieces (a third of the time of a dilated
 *     64-channel layer went to im2col), while here every tap of a row of
 *     outputs is one contiguous run read in place;
 *   - kernels of stride 1 or 2 on 32 channels a group or fewer (ResNets
 *     of 16 and 32 channels, ResNeXt's groups): Winograd's transforms
 *     and im2col's copies cost more there than the multiplies they
 *     save.
 * Each task takes a band of output rows of one image:
 *   1. the input rows the band reads are split once into their stride
 *      phases, zero-padded (rowsplit.h), so that tap (c, ky, kx) of
 *      consecutive outputs is a contiguous run;
 *   2. for each output row (or the whole band as one flat run, where
 *      that wastes less: dir_flat) and each block of 8 output channels,
 *      the ISA's cdir_row sums the C * kh * kw taps in registers, every
 *      tap loaded once for the 8 channels, with the bias and the
 *      activation applied before its one store; with a residual, the
 *      bias goes in there and the residual and activation follow over
 *      the rows just written while they are in L1 (the ISA's epi_tile).
 * Groups (ResNeXt's) run as G such layers over the same split rows.
 * The weights are laid out as [G][Mg / 8][K][8], K the taps of a group:
 * once at plan compile when they are a constant (sm_conv_direct_pack),
 * else once per run in the scratch.
 */
#include "kernels/cpu/conv.h"

#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/rowsplit.h"
#include "core/act.h"

/* Output channels per cdir_row call (rows.inc.h CDIR_MB). */
#define DIR_MB 8
/* Floats cdir_row may read past a row's last output. */
#define DIR_SLACK 64
/* The split input rows of a band that one group's pass reads at most
 * this (dir_geometry). */
#define DIR_BAND_BYTES ((size_t)192 << 10)

static int dir_few_channels(const sm_conv_geom *g)
{
    return g->G == 1 && g->C <= 4 && !g->has_r && g->K <= 256;
}

/* The share of the outputs cdir_row computes that are real, over a
 * whole plane: row by row in runs of 32 (the widest ISA's vector pair),
 * or flat (dir_flat) where that wastes less, up to the next 16 (the
 * widest vector: cdir_row ends on a block of as few vectors as the rest
 * needs, as dir_flat_band counts). */
static double dir_fill(const sm_conv_geom *g)
{
    int64_t rowwise = (g->OW + 31) / 32 * 32;
    double fill = (double)g->OW / (double)rowwise;
    if (g->sh <= SM_ROWSPLIT_MAX_S && g->sw <= SM_ROWSPLIT_MAX_S) {
        /* a row of one stride phase (sm_rowsplit's L) */
        int64_t rl = ((g->OW - 1) * g->sw + (g->kw - 1) * g->dw) / g->sw + 1;
        int64_t run = (g->OH - 1) * rl + g->OW;
        double flat = (double)(g->OH * g->OW) / (double)((run + 15) / 16 * 16);
        fill = flat > fill ? flat : fill;
    }
    return fill;
}

/* Input channels a group up to which the direct path beats the GEMM
 * paths: 32, or 64 on outputs too narrow for Winograd (8 wide or less,
 * conv_winograd.h), where im2col's runs are a few floats long and
 * gathering them costs about as much as the product. ResNet's 8 x 8
 * layers at batch 16 (conv_bench, 1 thread, best): 64 channels 0.69 ->
 * 0.51 ms, 32 -> 64 at stride 2 0.51 -> 0.34 ms. */
static int64_t dir_max_cg(const sm_conv_geom *g)
{
    return g->OW < SM_WINO_MIN_OW ? 64 : 32;
}

/* Stems (few input channels); dilated taps and kernels of 5x5 and up of
 * any width; and other kernels of stride 1 or 2 on 32 input channels or
 * fewer
 * (per group: ResNeXt's grouped 3x3 layers, not depthwise ones),
 * where Winograd's transforms and im2col cost more than its multiplies
 * save (ResNet blocks of 16 and 32 channels on 32 x 32 and 16 x 16
 * planes, batch 16, 1 thread: 1.4 -> 0.9 and 1.2 -> 0.85 ms a layer;
 * with 64 channels Winograd stays ahead, 1.2 against 2.3 ms at 56 x 56;
 * at stride 2 against im2col, 16 -> 32 channels at 32 x 32, batch 16:
 * 0.77 -> 0.48 ms, ResNeXt's 8 groups of 32 at 28 x 28, batch 2: 1.04
 * -> 0.85 ms). All of them only where at least 4/5 of the outputs
 * computed are real (dir_fill): not 8 x 8 or 7 x 7 planes, nor a
 * stride-2 8 x 8 output. See the file's comment. */
int sm_conv_direct_wanted(const sm_conv_geom *g)
{
    if ((g->Cg == 1 && g->G > 1) || g->sh > SM_ROWSPLIT_MAX_S ||
        g->sw > SM_ROWSPLIT_MAX_S)
        return 0;
    if (dir_few_channels(g))
        return g->OW >= 16;
    if (dir_fill(g) < 0.8)
        return 0;
    if (g->dh > 1 || g->dw > 1 || g->kh * g->kw >= 25)
        return 1;
    return g->sh <= 2 && g->sw <= 2 && g->kh * g->kw > 1 &&
           g->Cg <= dir_max_cg(g);
}

const char *sm_conv_direct_why(const sm_conv_geom *g)
{
    if (dir_few_channels(g))
        return "few input channels: taps read straight from the input";
    if (g->dh > 1 || g->dw > 1 || g->kh * g->kw >= 25)
        return "dilated or 5x5 and larger: every tap a contiguous run of the "
               "input, no im2col copies";
    if (g->Cg > 32)
        return "output 8 wide or less, 64 input channels a group or fewer: "
               "im2col's short runs would cost as much as the product";
    if (g->sh > 1 || g->sw > 1)
        return g->G > 1 ? "strided, grouped, 32 input channels a group or "
                          "fewer: stride phases in flat planes, no im2col "
                          "copies"
                        : "strided, 32 input channels or fewer: stride "
                          "phases in flat planes, no im2col copies";
    return g->G > 1 ? "grouped, 32 input channels a group or fewer: no "
                      "im2col copies"
                    : "32 input channels or fewer: Winograd's transforms and "
                      "im2col would cost more than the multiplies they save";
}

typedef struct dir_lay {
    sm_rowsplit rs;
    int flat;        /* the band as one run of rows rl apart (dir_flat) */
    int64_t rl;      /* floats per split row: flat, one phase (sm_rowsplit's L);
                        else all its phases and slack */
    int64_t npy;     /* flat: rows of a band per plane */
    int64_t pstride; /* flat: floats per plane (npy * rl) */
    int64_t chf;     /* floats of a channel's split rows in a band */
    int64_t band;    /* output rows per task */
    int64_t mpg;     /* blocks of 8 output channels per group */
    int64_t mblocks; /* G * mpg */
    int64_t obuf;    /* flat: floats per channel of the output scratch */
    size_t taps_at;  /* bytes into a thread's scratch */
    size_t per_thread, shared; /* bytes */
} dir_lay;

static int64_t band_in_rows(const sm_conv_geom *g, int64_t bo)
{
    return (bo - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

/* Whether a layer runs flat: each channel's band of split rows is
 * stored as sh * sw planes, plane (py, px) holding x-phase px of the
 * input rows of y-phase py, rl (one phase's L) apart; tap (ky, kx) then
 * starts in plane ((ky dh) % sh, (kx dw) % sw) at row (ky dh) / sh and
 * column (kx dw) / sw, and output (oy, ox) is element oy * rl + ox of
 * every tap's run, at any stride. So one cdir_row call sweeps all the
 * band's rows and only the rl - OW columns past each row's end are
 * computed for nothing. Chosen where that wastes less than rounding
 * each row up to 32 outputs (the widest ISA's vector pair): narrow
 * planes (16, 8 or 56 wide, and stride-2 rows of 8 to 28). */
static int dir_flat(const sm_conv_geom *g, int64_t rl)
{
    int64_t rowwise = (g->OW + 31) / 32 * 32;
    return rl < rowwise;
}

/* The floats of one channel's split band of bo output rows. */
static int64_t dir_chan_floats(const sm_conv_geom *g, const dir_lay *l,
                               int64_t bo)
{
    int64_t nin = band_in_rows(g, bo);
    if (!l->flat)
        return nin * l->rl;
    return g->sh * g->sw * ((nin + g->sh - 1) / g->sh) * l->rl;
}

/* The flat band of at most bmax output rows that computes the fewest
 * outputs over a plane: each band's run, (bo - 1) rl + OW, is computed
 * up to the next 16 outputs (the widest ISA's vector: cdir_row ends on
 * a block of as few vectors as the rest needs), and a band costs about
 * 16 outputs more (its split and tap pointers), which breaks ties
 * towards the larger. */
static int64_t dir_flat_band(const sm_conv_geom *g, int64_t rl, int64_t bmax)
{
    int64_t best = bmax, best_cost = INT64_MAX;
    for (int64_t bo = bmax; bo >= 1 && bo * 2 >= bmax; bo--) {
        int64_t full = g->OH / bo, rest = g->OH % bo;
        int64_t cost = full * (((bo - 1) * rl + g->OW + 15) / 16 * 16 + 16);
        if (rest)
            cost += ((rest - 1) * rl + g->OW + 15) / 16 * 16 + 16;
        if (cost < best_cost) {
            best_cost = cost;
            best = bo;
        }
    }
    return best;
}

static void dir_geometry(const sm_cpu_ops *ops, const sm_conv_geom *g,
                         int threads, int prepacked, dir_lay *l)
{
    sm_rowsplit_init(&l->rs, g->OW, g->kw, g->sw, g->dw, g->pw, g->W,
                     ops ? ops->gather2 : NULL);
    int64_t len = sm_rowsplit_len(&l->rs);
    l->flat = dir_flat(g, l->rs.L);
    l->rl = l->flat ? l->rs.L : len + DIR_SLACK;
    /* about 4 bands a thread, each within DIR_BAND_BYTES */
    int64_t want = 4 * (threads < 1 ? 1 : threads);
    int64_t per_img = (want + g->N - 1) / g->N;
    int64_t bo = (g->OH + per_img - 1) / per_img;
    bo = bo < 1 ? 1 : bo;
    /* the split rows one group's pass reads within DIR_BAND_BYTES, all
     * groups' within 4 times that */
    while (bo > 1 &&
           ((size_t)(g->Cg * dir_chan_floats(g, l, bo)) * sizeof(float) >
                DIR_BAND_BYTES ||
            (size_t)(g->C * dir_chan_floats(g, l, bo)) * sizeof(float) >
                4 * DIR_BAND_BYTES))
        bo = (bo + 1) / 2;
    if (l->flat)
        bo = dir_flat_band(g, l->rl, bo);
    l->band = bo;
    l->chf = dir_chan_floats(g, l, bo);
    l->npy = (band_in_rows(g, bo) + g->sh - 1) / g->sh;
    l->pstride = l->npy * l->rl;
    l->mpg = (g->Mg + DIR_MB - 1) / DIR_MB;
    l->mblocks = g->G * l->mpg;
    /* flat: the run reads up to a row (the last tap's offset) and a vector
     * pair past the last channel's rows, and writes a scratch of 8
     * channels of bo rows; else a spare output row for channels past M */
    l->obuf = bo * l->rl + DIR_SLACK;
    size_t floats = (size_t)(g->C * l->chf) +
                    (l->flat ? (size_t)(l->rl + DIR_SLACK + DIR_MB * l->obuf)
                             : (size_t)(g->OW + DIR_SLACK));
    /* the split rows, the output scratch, then the K tap pointers */
    l->taps_at = (floats * sizeof(float) + 63) & ~(size_t)63;
    l->per_thread =
        (l->taps_at + (size_t)(g->C * g->kh * g->kw) * sizeof(float *) + 63) &
        ~(size_t)63;
    /* the bias, and the weights unless prepacked */
    size_t wfl = (size_t)(l->mblocks * DIR_MB * (prepacked ? 1 : g->K + 1));
    l->shared = (wfl * sizeof(float) + 63) & ~(size_t)63;
}

size_t sm_conv_direct_workspace(const sm_conv_geom *g, int n_threads,
                                int prepacked)
{
    dir_lay l;
    dir_geometry(NULL, g, n_threads, prepacked, &l);
    n_threads = n_threads < 1 ? 1 : n_threads;
    return l.shared + (size_t)n_threads * l.per_thread + 64;
}

/* The weights w [M, K] as cdir_row reads them, [G][Mg / 8][K][8] with
 * zeros past Mg in each group, into wpk. */
static void dir_lay_weights(const sm_conv_geom *g, int64_t mpg, const float *w,
                            float *wpk)
{
    for (int64_t b = 0; b < g->G * mpg; b++)
        for (int m = 0; m < DIR_MB; m++) {
            int64_t j = b % mpg * DIR_MB + m;
            int64_t ch = b / mpg * g->Mg + j;
            for (int64_t k = 0; k < g->K; k++)
                wpk[(b * g->K + k) * DIR_MB + m] =
                    j < g->Mg ? w[ch * g->K + k] : 0.0f;
        }
}

/* One sm_gemm_pack block (as the other prepacked paths make, freed with
 * sm_free) holding the laid-out weights: a plan with constant weights
 * pays for the layout once, not on every run. */
smelt_status sm_conv_direct_pack(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                                 const sm_conv_geom *g, const float *w,
                                 sm_gemm_pack **out)
{
    *out = NULL;
    int64_t mpg = (g->Mg + DIR_MB - 1) / DIR_MB;
    size_t floats = (size_t)(g->G * mpg * DIR_MB * g->K);
    size_t head = (sizeof(sm_gemm_pack) + 63) & ~(size_t)63;
    if (g->K > INT32_MAX || floats > (SM_ALLOC_LIMIT - head - 64) / 4)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "direct convolution: %lld x %lld weights are too large "
                      "to lay out",
                      (long long)g->M, (long long)g->K);
    char *blk = sm_malloc(head + floats * sizeof(float) + 64);
    if (!blk)
        return sm_err_nomem(ctx);
    sm_gemm_pack *p = (sm_gemm_pack *)(void *)blk;
    uintptr_t at = (uintptr_t)(blk + head);
    *p = (sm_gemm_pack){.ops = ops,
                        .is_a = 1,
                        .rows = g->M,
                        .cols = g->K,
                        .count = 1,
                        .mat_stride = (int64_t)floats,
                        .data = (float *)((at + 63) & ~(uintptr_t)63)};
    dir_lay_weights(g, mpg, w, p->data);
    *out = p;
    return SMELT_OK;
}

typedef struct dir_job {
    const sm_cpu_ops *ops;
    const sm_conv_geom *g;
    dir_lay l;
    const float *x, *wpk, *bpk; /* packed weights and bias */
    sm_gemm_epi e;
    const float *res; /* the residual, or NULL */
    float *y;
    char *ws; /* per-thread scratch */
} dir_job;

/* Step 1 of a task: the C * nr input rows of band rows starting at Y0
 * (input row Y0 - ph and on), split and padded, chf floats per channel:
 * rl apart per row, or flat in the planes of dir_flat. */
static void dir_split(const dir_job *J, int64_t n, int64_t Y0, int64_t nr,
                      float *rows)
{
    const sm_conv_geom *g = J->g;
    const dir_lay *l = &J->l;
    for (int64_t c = 0; c < g->C; c++) {
        const float *xc = J->x + (n * g->C + c) * g->H * g->W;
        for (int64_t r = 0; r < nr; r++) {
            int64_t iy = Y0 + r - g->ph;
            float *d = l->flat ? rows + c * l->chf +
                                     r % g->sh * g->sw * l->pstride +
                                     r / g->sh * l->rl
                               : rows + c * l->chf + r * l->rl;
            int64_t pitch = l->flat ? l->pstride : l->rs.L;
            if (iy >= 0 && iy < g->H)
                sm_rowsplit_row_pitch(&l->rs, xc + iy * g->W, 0.0f, d, pitch);
            else if (!l->flat)
                sm_rowsplit_fill(&l->rs, 0.0f, d);
            else
                for (int64_t p = 0; p < g->sw; p++)
                    memset(d + p * pitch, 0, (size_t)l->rl * sizeof(float));
        }
    }
}

/* The residual and the activation over output rows [oy, oy + rows) of
 * image n, channels [m0, m0 + mc) (cdir_row stored them with the bias
 * only). */
static void dir_residual(const dir_job *J, int64_t n, int64_t m0, int64_t mc,
                         int64_t oy, int64_t rows)
{
    const sm_conv_geom *g = J->g;
    sm_gemm_epi re = J->e;
    int64_t ohw = g->OH * g->OW;
    re.t[0] = (sm_epi_term){0};
    re.t[1] = (sm_epi_term){J->res + n * g->r_sn, g->r_sm, g->r_sp, 1.0f};
    J->ops->epi_tile(&re, J->y + (n * g->M + m0) * ohw + oy * g->OW, ohw, m0,
                     oy * g->OW, mc, rows * g->OW);
}

/* Tasks [begin, end): (image, band of output rows). */
static void dir_bands(void *arg, int64_t begin, int64_t end, int tid)
{
    const dir_job *J = arg;
    const sm_conv_geom *g = J->g;
    const dir_lay *l = &J->l;
    char *mine = J->ws + (size_t)tid * l->per_thread;
    float *rows = (float *)mine;
    float *spare = rows + g->C * l->chf;
    int64_t bands = (g->OH + l->band - 1) / l->band;
    const float **taps = (const float **)(void *)(mine + l->taps_at);
    /* with a residual the rows are stored with the bias only; the
     * residual term and the activation follow (dir_residual) */
    int act = J->res ? 0 : J->e.act;
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / bands, oy0 = t % bands * l->band;
        int64_t bo = g->OH - oy0 < l->band ? g->OH - oy0 : l->band;
        int64_t nr = band_in_rows(g, bo);
        dir_split(J, n, oy0 * g->sh, nr, rows);
        if (l->flat) {
            /* the slack the last channel's run reads past its rows */
            float *obuf = spare + l->rl + DIR_SLACK;
            memset(spare, 0, (size_t)(l->rl + DIR_SLACK) * sizeof(float));
            int nt = 0;
            for (int64_t c = 0; c < g->C; c++)
                for (int64_t ky = 0; ky < g->kh; ky++)
                    for (int64_t kx = 0; kx < g->kw; kx++) {
                        int64_t oy = ky * g->dh, ox = kx * g->dw;
                        taps[nt++] =
                            rows + c * l->chf +
                            (oy % g->sh * g->sw + ox % g->sw) * l->pstride +
                            oy / g->sh * l->rl + ox / g->sw;
                    }
            int64_t run = (bo - 1) * l->rl + g->OW;
            for (int64_t b = 0; b < l->mblocks; b++) {
                int64_t grp = b / l->mpg, m0 = b % l->mpg * DIR_MB;
                float *yp[DIR_MB];
                for (int m = 0; m < DIR_MB; m++)
                    yp[m] = obuf + m * l->obuf;
                J->ops->cdir_row(
                    taps + grp * g->K, (int)g->K, J->wpk + b * g->K * DIR_MB,
                    J->bpk + b * DIR_MB, act, J->e.act_a, J->e.act_b, yp, run);
                for (int m = 0; m < DIR_MB && m0 + m < g->Mg; m++) {
                    float *yc =
                        J->y +
                        ((n * g->M + grp * g->Mg + m0 + m) * g->OH + oy0) *
                            g->OW;
                    for (int64_t r = 0; r < bo; r++)
                        memcpy(yc + r * g->OW, yp[m] + r * l->rl,
                               (size_t)g->OW * sizeof(float));
                }
                /* the block's residual while its rows are in L1, not a
                 * pass over the band's M channels after all blocks */
                int64_t mc = g->Mg - m0 < DIR_MB ? g->Mg - m0 : DIR_MB;
                if (J->res)
                    dir_residual(J, n, grp * g->Mg + m0, mc, oy0, bo);
            }
            continue;
        }
        /* step 2: every output row, 8 channels at a time; the taps of
         * the band's first row are found once, and each next row's are
         * sh split rows further (finding all K again for every row cost
         * a fifth of a 16-channel layer's time) */
        int nt = 0;
        for (int64_t c = 0; c < g->C; c++)
            for (int64_t ky = 0; ky < g->kh; ky++) {
                const float *row = rows + c * l->chf + ky * g->dh * l->rl;
                for (int64_t kx = 0; kx < g->kw; kx++)
                    taps[nt++] = row + sm_rowsplit_tap(&l->rs, kx);
            }
        for (int64_t oy = oy0; oy < oy0 + bo; oy++) {
            if (oy > oy0)
                for (int k = 0; k < nt; k++)
                    taps[k] += g->sh * l->rl;
            for (int64_t b = 0; b < l->mblocks; b++) {
                int64_t grp = b / l->mpg, m0 = b % l->mpg * DIR_MB;
                float *yp[DIR_MB];
                for (int m = 0; m < DIR_MB; m++) {
                    int64_t ch = grp * g->Mg + m0 + m;
                    yp[m] = m0 + m < g->Mg
                                ? J->y + ((n * g->M + ch) * g->OH + oy) * g->OW
                                : spare;
                }
                J->ops->cdir_row(taps + grp * g->K, (int)g->K,
                                 J->wpk + b * g->K * DIR_MB,
                                 J->bpk + b * DIR_MB, act, J->e.act_a,
                                 J->e.act_b, yp, g->OW);
            }
            if (J->res)
                dir_residual(J, n, 0, g->M, oy, 1);
        }
    }
}

/* Runs the layer: wpk is the prepacked weights (sm_conv_direct_pack) or
 * NULL, when w is laid out in the scratch first. */
smelt_status sm_conv_direct(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                            const sm_conv_geom *g, const float *x,
                            const float *w, const float *wpk, const float *bias,
                            const float *res, const sm_gemm_epi *epi, float *y,
                            sm_threadpool *tp, void *ws, size_t ws_bytes)
{
    int threads = sm_threadpool_size(tp);
    dir_job J = {.ops = ops,
                 .g = g,
                 .x = x,
                 .e = *epi,
                 .res = g->has_r ? res : NULL,
                 .y = y};
    int pre = wpk != NULL;
    dir_geometry(ops, g, threads, pre, &J.l);
    if (g->K > INT32_MAX || epi->alpha != 1.0f || (g->has_r && !res))
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "direct convolution: %lld taps, a scaled epilogue or "
                      "a missing residual",
                      (long long)g->K);
    void *own;
    char *base = sm_cpu_scratch(
        ws, ws_bytes, sm_conv_direct_workspace(g, threads, pre), &own);
    if (!base)
        return sm_err_nomem(ctx);
    /* the bias as [G][Mg / 8][8], zero past Mg; then the weights unless
     * prepacked */
    float *bpk = (float *)(void *)base;
    for (int64_t b = 0; b < J.l.mblocks; b++)
        for (int m = 0; m < DIR_MB; m++) {
            int64_t j = b % J.l.mpg * DIR_MB + m;
            int64_t ch = b / J.l.mpg * g->Mg + j;
            bpk[b * DIR_MB + m] = j < g->Mg && bias ? bias[ch] : 0.0f;
        }
    if (!pre) {
        float *lay = bpk + J.l.mblocks * DIR_MB;
        dir_lay_weights(g, J.l.mpg, w, lay);
        wpk = lay;
    }
    J.wpk = wpk;
    J.bpk = bpk;
    J.ws = base + J.l.shared;
    int64_t tasks = g->N * ((g->OH + J.l.band - 1) / J.l.band);
    sm_parallel_for(tp, tasks, 1, dir_bands, &J);
    sm_free(own);
    return SMELT_OK;
}
