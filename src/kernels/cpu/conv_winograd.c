/*
 * conv_winograd.c - 3x3 stride-1 convolution by Winograd F(4x4, 3x3): each
 * 4 x 4 output tile costs 36 multiplies per (input, output) channel pair
 * instead of 144. Three passes per run:
 *   1. input transform: every 6 x 6 input patch d (tiles overlap by 2)
 *      becomes B^T d B, scattered into 36 matrices V[xi] of [C, tiles];
 *   2. 36 GEMMs Z[xi] = U[xi] V[xi], U[xi] [M, C] being the transformed
 *      weights G g G^T, prepacked once (sm_wino_pack);
 *   3. output transform: Y tile = A^T Z A, then the fused epilogue (bias,
 *      residual, activation) on each output row while it is in L1.
 * The transforms are vectorized across tiles (conv_winograd.inc.h); passes 1
 * and 3 split over the pool by (channel, image, tile row), pass 2 is the
 * threaded GEMM. Tiles of all images of the batch share each GEMM.
 */
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/rowsplit.h"

#include <string.h>

#include "core/alloc.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

int sm_wino_eligible(const sm_conv_geom *g)
{
    int64_t tiles = g->N * ((g->OH + 3) / 4) * ((g->OW + 3) / 4);
    return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
           g->dw == 1 && g->G == 1 && g->C >= SM_WINO_MIN_C &&
           g->M >= SM_WINO_MIN_M && tiles >= SM_WINO_MIN_TILES &&
           g->OW >= SM_WINO_MIN_OW;
}

/* G (6 x 3) of F(4x4, 3x3). */
static const double wino_g[6][3] = {{1.0 / 4, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};

smelt_status sm_wino_pack(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                          const float *w, int64_t M, int64_t C,
                          sm_gemm_pack **out)
{
    *out = NULL;
    float *u = sm_malloc((size_t)(36 * M * C) * sizeof *u);
    if (!u)
        return sm_err_nomem(ctx);
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++) {
            const float *k = w + (m * C + c) * 9;
            double t[6][3];
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 3; j++)
                    t[i][j] = wino_g[i][0] * k[j] + wino_g[i][1] * k[3 + j] +
                              wino_g[i][2] * k[6 + j];
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++)
                    u[(6 * i + j) * M * C + m * C + c] =
                        (float)(t[i][0] * wino_g[j][0] +
                                t[i][1] * wino_g[j][1] +
                                t[i][2] * wino_g[j][2]);
        }
    sm_matf uv = {u, C, 1};
    smelt_status st = sm_gemm_pack_new(ctx, ops, 1, &uv, M, C, 36, M * C, out);
    sm_free(u);
    return st;
}

/* Sizes of the run: tiles per row and column, all tiles, the phase length
 * of a padded input row, and the workspace parts. */
typedef struct wino_sz {
    int64_t th, tw, tiles, L;
    size_t v_bytes, z_bytes, scratch, gemm;
} wino_sz;

static void wino_sizes(const sm_conv_geom *g, int threads, wino_sz *s)
{
    s->th = (g->OH + 3) / 4;
    s->tw = (g->OW + 3) / 4;
    s->tiles = g->N * s->th * s->tw;
    s->L = s->tw + 1;
    s->v_bytes = ALIGN64((size_t)(36 * g->C * s->tiles) * sizeof(float));
    s->z_bytes = ALIGN64((size_t)(36 * g->M * s->tiles) * sizeof(float));
    s->scratch =
        ALIGN64((size_t)(8 * 4 * s->L + 4 * 4 * s->tw) * sizeof(float));
    s->gemm = ALIGN64(sm_gemm_workspace(threads, g->C, s->tiles, 0));
}

size_t sm_wino_workspace(const sm_conv_geom *g, int n_threads)
{
    wino_sz s;
    int t = n_threads < 1 ? 1 : n_threads;
    wino_sizes(g, t, &s);
    return s.v_bytes + s.z_bytes + s.gemm + (size_t)t * s.scratch + 64;
}

typedef struct wino_job {
    const sm_cpu_ops *ops;
    const sm_conv_geom *g;
    wino_sz s;
    const float *x;
    float *v, *z, *y;
    char *scratch;
    sm_gemm_epi epi;
    int epi_on;
    sm_rowsplit rs; /* an input row into its 4 x-phases of L floats */
} wino_job;

/* Pass 1 over tasks (c, n, tile row): six input rows phase-split, then
 * the transform of the whole tile row. Padded row p is split into slot
 * p mod 8 of the scratch, so a task that follows the tile row above it
 * finds its first two rows (that row's last two) already split. */
static void wino_in_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    const wino_job *J = arg;
    const sm_conv_geom *g = J->g;
    const wino_sz *s = &J->s;
    float *buf = (float *)(J->scratch + (size_t)tid * s->scratch);
    const float *rows[6];
    for (int64_t t = begin; t < end; t++) {
        int64_t c = t / (g->N * s->th), r = t % (g->N * s->th);
        int64_t n = r / s->th, th = r % s->th;
        const float *xc = J->x + (n * g->C + c) * g->H * g->W;
        int follows = t > begin && th > 0;
        for (int i = 0; i < 6; i++) {
            float *d = buf + (4 * th + i) % 8 * 4 * s->L;
            int64_t iy = 4 * th - g->ph + i;
            rows[i] = d;
            if (follows && i < 2)
                continue;
            if (iy < 0 || iy >= g->H) {
                memset(d, 0, (size_t)(4 * s->L) * sizeof *d);
                continue;
            }
            /* d[q L + j] = x[4 j + q - pw] (0 outside the row): the
             * padding only at the ends, not a test per element (this
             * split took as long as the input transform) */
            sm_rowsplit_row_pitch(&J->rs, xc + iy * g->W, 0.0f, d, s->L);
        }
        J->ops->wino_in(rows, s->L,
                        J->v + c * s->tiles + (n * s->th + th) * s->tw,
                        g->C * s->tiles, s->tw);
    }
}

/* Pass 3 over tasks (m, n, tile row): four output rows, clipped to the
 * output, each finished by the epilogue. */
static void wino_out_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    const wino_job *J = arg;
    const sm_conv_geom *g = J->g;
    const wino_sz *s = &J->s;
    float *buf = (float *)(J->scratch + (size_t)tid * s->scratch);
    for (int64_t t = begin; t < end; t++) {
        int64_t m = t / (g->N * s->th), r = t % (g->N * s->th);
        int64_t n = r / s->th, th = r % s->th;
        J->ops->wino_out(J->z + m * s->tiles + (n * s->th + th) * s->tw,
                         g->M * s->tiles, buf, 4 * s->tw, s->tw);
        sm_gemm_epi e = J->epi;
        if (e.t[1].p)
            e.t[1].p += n * g->r_sn;
        float *yp = J->y + (n * g->M + m) * g->OH * g->OW;
        for (int64_t i = 0; i < 4 && 4 * th + i < g->OH; i++) {
            int64_t oy = 4 * th + i;
            memcpy(yp + oy * g->OW, buf + i * 4 * s->tw,
                   (size_t)g->OW * sizeof(float));
            if (J->epi_on)
                J->ops->epi_tile(&e, yp + oy * g->OW, g->OW, m, oy * g->OW, 1,
                                 g->OW);
        }
    }
}

static void run_pass(sm_threadpool *tp, int threads, int64_t n,
                     sm_parallel_fn fn, wino_job *J)
{
    if (threads > 1)
        sm_parallel_for(tp, n, sm_cpu_chunk(n, tp), fn, J);
    else
        fn(J, 0, n, 0);
}

smelt_status sm_conv_winograd(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                              const sm_conv_geom *g, const float *x,
                              const sm_gemm_pack *u, const sm_gemm_epi *epi,
                              float *y, sm_threadpool *tp, void *ws,
                              size_t ws_bytes)
{
    int threads = sm_threadpool_size(tp);
    wino_job J = {.ops = ops, .g = g, .x = x, .y = y, .epi = *epi};
    wino_sizes(g, threads, &J.s);
    /* tw tiles of 6 inputs, 4 apart: phases of (4 tw + 5) / 4 = L */
    sm_rowsplit_init(&J.rs, J.s.tw, 6, 4, 1, g->pw, g->W, NULL);
    size_t need = sm_wino_workspace(g, threads);
    void *own = NULL;
    if (!ws || ws_bytes < need) {
        own = sm_malloc(need);
        if (!own)
            return sm_err_nomem(ctx);
        ws = own;
    }
    char *p = (char *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
    J.v = (float *)p;
    J.z = (float *)(p + J.s.v_bytes);
    char *gws = p + J.s.v_bytes + J.s.z_bytes;
    J.scratch = gws + J.s.gemm;
    J.epi_on =
        epi->t[0].p || epi->t[1].p || epi->act != 0 || epi->alpha != 1.0f;
    run_pass(tp, threads, g->C * g->N * J.s.th, wino_in_rows, &J);
    sm_gemm_args ga = {.M = g->M,
                       .N = J.s.tiles,
                       .K = g->C,
                       .pa = u,
                       .c = J.z,
                       .ldc = J.s.tiles,
                       .epi = sm_gemm_epi_none(),
                       .nbd = 1,
                       .bdims = {36}};
    ga.b = (sm_matf){J.v, J.s.tiles, 1};
    ga.stride[SM_GB_PA][0] = 1;
    ga.stride[SM_GB_B][0] = g->C * J.s.tiles;
    ga.stride[SM_GB_C][0] = g->M * J.s.tiles;
    smelt_status st = sm_gemm_f32(ctx, ops, &ga, tp, gws, J.s.gemm);
    if (st == SMELT_OK)
        run_pass(tp, threads, g->M * g->N * J.s.th, wino_out_rows, &J);
    sm_free(own);
    return st;
}
