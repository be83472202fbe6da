/*
 * conv_batched.c - convolution of small planes by weights computed at run
 * time (a training step's convolutions, whose weights are graph values):
 * one GEMM over the positions of many images at once.
 *
 * The GEMM per image of conv.c has as many columns as the image has output
 * positions: 16 on a 4 x 4 plane, half of one 32-wide B panel, and with
 * weights that change every step, A is packed again for each image. Here
 * a chunk of images makes one product Y'[M, (n, o)] = W [M, K] B[K, (n,
 * o)], B gathered through a table of each tap's input offset per output
 * position (built once per run), the bias and activation applied by the
 * GEMM's epilogue; Y' (a scratch of at most CB_CHUNK_BYTES) is then copied
 * out to Y's [n][m][o]. Only single-group layers. A residual (the sum of
 * two gradient contributions that a training step's input gradients
 * fuse) is added in that copy, with the activation after it: its columns
 * (n, o) have no single stride for the GEMM's epilogue term, and the
 * per-image GEMM a residual used to force had 4 or 16 columns (5x slower
 * on resnet18's layer4).
 */
#include <string.h>

#include "core/act.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/keep_loops.h"

/* Scratch of the product of one chunk of images (bytes). */
#define CB_CHUNK_BYTES ((size_t)1 << 20)
/* Output planes of at most this many positions take this path. */
#define CB_MAX_POSITIONS 64

int sm_conv_batched_wanted(const sm_conv_geom *g)
{
    return g->G == 1 && !g->nhwc && g->N > 1 &&
           g->OH * g->OW <= CB_MAX_POSITIONS;
}

/* Images per chunk: Y' of a chunk within CB_CHUNK_BYTES. */
static int64_t cb_chunk(const sm_conv_geom *g)
{
    size_t per = (size_t)(g->M * g->OH * g->OW) * sizeof(float);
    int64_t b = per ? (int64_t)(CB_CHUNK_BYTES / per) : g->N;
    return b < 1 ? 1 : b > g->N ? g->N : b;
}

static size_t align64(size_t b)
{
    return (b + 63) & ~(size_t)63;
}

/* The workspace: the offset table, Y' of a chunk, the GEMM's scratch. */
static void cb_parts(const sm_conv_geom *g, int n_threads, size_t *tab,
                     size_t *yp, size_t *gemm)
{
    int64_t L = cb_chunk(g) * g->OH * g->OW;
    *tab = align64((size_t)(g->kh * g->kw * g->OH * g->OW) * sizeof(int32_t));
    *yp = align64((size_t)(g->M * L) * sizeof(float));
    *gemm = sm_gemm_workspace(n_threads, g->K, L, 0);
}

size_t sm_conv_batched_workspace(const sm_conv_geom *g, int n_threads)
{
    size_t a, b, c;
    cb_parts(g, n_threads, &a, &b, &c);
    return a + b + c;
}

typedef struct cb_src {
    const sm_conv_geom *g;
    const float *x;     /* the chunk's first image */
    const int32_t *tab; /* [kh * kw][OH * OW]: offset in a plane, or -1 */
} cb_src;

/* Tap (ky, kx)'s offset into an input plane for every output position,
 * -1 where it falls in the padding. */
static void cb_table(const sm_conv_geom *g, int32_t *tab)
{
    for (int64_t ky = 0; ky < g->kh; ky++)
        for (int64_t kx = 0; kx < g->kw; kx++)
            for (int64_t oy = 0; oy < g->OH; oy++)
                for (int64_t ox = 0; ox < g->OW; ox++) {
                    int64_t iy = oy * g->sh - g->ph + ky * g->dh;
                    int64_t ix = ox * g->sw - g->pw + kx * g->dw;
                    int in = iy >= 0 && iy < g->H && ix >= 0 && ix < g->W;
                    *tab++ = in ? (int32_t)(iy * g->W + ix) : -1;
                }
}

SM_KEEP_LOOPS_BEGIN

/* sm_gemm_pack_fn: B rows [k0, k0 + kc) (k = (c, ky, kx)) for columns
 * [j0, j0 + n) (j = (image, position)), in panels of nr columns, the last
 * zero-padded. */
static void cb_pack(const void *user, int64_t batch, int64_t k0, int64_t kc,
                    int64_t j0, int64_t n, int nr, float *dst)
{
    (void)batch;
    const cb_src *s = user;
    const sm_conv_geom *g = s->g;
    int64_t ohw = g->OH * g->OW, khw = g->kh * g->kw, hw = g->H * g->W;
    int64_t chw = g->C * hw;
    for (int64_t k = 0; k < kc; k++) {
        int64_t c = (k0 + k) / khw;
        const int32_t *tab = s->tab + (k0 + k) % khw * ohw;
        const float *xc = s->x + c * hw;
        int64_t img = j0 / ohw, pos = j0 % ohw;
        for (int64_t p0 = 0; p0 < n; p0 += nr) {
            float *d = dst + p0 * kc + k * nr;
            int64_t w = n - p0 < nr ? n - p0 : nr;
            /* the panel's columns, in runs of one image's positions */
            for (int64_t jj = 0; jj < w;) {
                int64_t run = ohw - pos < w - jj ? ohw - pos : w - jj;
                const float *xi = xc + img * chw;
                const int32_t *t = tab + pos;
                float *dd = d + jj;
                for (int64_t q = 0; q < run; q++)
                    dd[q] = t[q] >= 0 ? xi[t[q]] : 0.0f;
                jj += run;
                pos += run;
                if (pos == ohw) {
                    pos = 0;
                    img++;
                }
            }
            for (int64_t jj = w; jj < nr; jj++)
                d[jj] = 0.0f;
        }
    }
}

typedef struct cb_out {
    const sm_conv_geom *g;
    const sm_cpu_ops *ops;
    const sm_gemm_epi *epi; /* the activation, with a residual */
    const float *yp;        /* Y' [M][nb * ohw] */
    const float *res;       /* the chunk's first image of R, or NULL */
    float *y;               /* the chunk's first image of Y */
    int64_t nb;
} cb_out;

/* Images [b0, b1) of the chunk from Y' to Y; with a residual,
 * Y = act(Y' + R) (Y may be R itself: each element is read before it is
 * written). */
static void cb_copy_out(void *arg, int64_t b0, int64_t b1, int tid)
{
    (void)tid;
    const cb_out *o = arg;
    const sm_conv_geom *g = o->g;
    int64_t ohw = g->OH * g->OW, L = o->nb * ohw;
    for (int64_t b = b0; b < b1; b++)
        for (int64_t m = 0; m < g->M; m++) {
            const float *s = o->yp + m * L + b * ohw;
            float *d = o->y + (b * g->M + m) * ohw;
            if (!o->res) {
                for (int64_t i = 0; i < ohw; i++)
                    d[i] = s[i];
                continue;
            }
            o->ops->binary(SM_BIN_ADD, s, 1, o->res + b * g->r_sn + m * g->r_sm,
                           g->r_sp, d, ohw);
            if (o->epi->act != SM_ACT_NONE)
                o->ops->unary(o->epi->act, o->epi->act_a, o->epi->act_b, d, d,
                              ohw);
        }
}

SM_KEEP_LOOPS_END

smelt_status sm_conv_batched(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                             const sm_conv_geom *g, const float *x,
                             const float *w, const float *res,
                             const sm_gemm_epi *epi, float *y,
                             sm_threadpool *tp, void *ws, size_t ws_bytes)
{
    size_t pt, py, pg;
    cb_parts(g, sm_threadpool_size(tp), &pt, &py, &pg);
    if (!ws || ws_bytes < pt + py + pg)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "Conv: batched path's workspace of %zu bytes, %zu needed",
                      ws_bytes, pt + py + pg);
    int32_t *tab = ws;
    float *yp = (float *)((char *)ws + pt);
    void *gws = (char *)ws + pt + py;
    cb_table(g, tab);
    int64_t ohw = g->OH * g->OW, B = cb_chunk(g);
    for (int64_t n0 = 0; n0 < g->N; n0 += B) {
        int64_t nb = g->N - n0 < B ? g->N - n0 : B, L = nb * ohw;
        cb_src src = {g, x + n0 * g->C * g->H * g->W, tab};
        sm_gemm_args ga = {.M = g->M, .N = L, .K = g->K, .c = yp, .ldc = L};
        ga.epi = *epi;
        if (res) /* the residual and the activation after it: cb_copy_out */
            ga.epi.act = SM_ACT_NONE;
        ga.a = (sm_matf){w, g->K, 1};
        ga.pack_b = cb_pack;
        ga.pack_b_user = &src;
        SM_TRY(sm_gemm_f32(ctx, ops, &ga, tp, gws, pg));
        cb_out o = {g,
                    ops,
                    epi,
                    yp,
                    res ? res + n0 * g->r_sn : NULL,
                    y + n0 * g->M * ohw,
                    nb};
        if (sm_threadpool_size(tp) > 1 && nb > 1)
            sm_parallel_for(tp, nb, sm_cpu_chunk(nb, tp), cb_copy_out, &o);
        else
            cb_copy_out(&o, 0, nb, 0);
    }
    return SMELT_OK;
}
