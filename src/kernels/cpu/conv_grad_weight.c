/*
 * conv_grad_weight.c - ConvGradWeight on f32 (1-D to 3-D windows, any
 * group): Conv's kernel gradient as GEMMs over the columns of X.
 *
 * Per group and per chunk of images, X's columns are gathered once into
 * colT[(c, k), (n, o)] (row (c, k) holds, image after image, what tap k
 * of channel c reads at every output position o), dY's rows of the group
 * are copied into dyp[m, (n, o)], and one GEMM contracts the (n, o)
 * axis: dW_g[m, (c, k)] = dyp colT^T. The batch and the positions make
 * the GEMM's depth, so its M x N tile (output channels by the kernel's
 * channels times taps) is what a training step's convolutions give a
 * GEMM best. Before, the autograd built this as a Conv by a one-hot
 * kernel (the columns), a batched MatMul per image and a ReduceSum over
 * the batch (autograd/nn_build.c keeps that form for the windows this op
 * cannot express). Chunks after the first add their product into dW.
 */
#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/keep_loops.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/window.h"

/* Scratch for the columns and dY's rows of one chunk (bytes). */
#define CGW_CHUNK_BYTES ((size_t)1 << 20)
/* dY planes of at most this many positions: the GEMM's B is packed from
 * X through a table of tap offsets (cgw_pack_b), not from columns
 * gathered first: on a 4 x 4 plane a gathered row is 4 floats, and the
 * columns were written, read back transposed and packed. */
#define CGW_DIRECT_POSITIONS 64
/* The depth split (cgw_geom.T): dW_g of at most this many floats, at
 * least this much depth per thread. */
#define CGW_SPLIT_MAX 65536
#define CGW_SPLIT_DEPTH 512
#define SM_CGW_MAX_T 64
/* The largest table of every column's offset (cgw_geom.wide). */
#define CGW_WIDE_TABLE_BYTES ((size_t)1 << 20)
#define CGW_MAX_KSZ 256

/* The geometry, spatial dims padded to 3 at the front (size 1). */
typedef struct cgw_geom {
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[3], out[3], k[3], s[3], dil[3], p0[3];
    int64_t isz, osz, ksz;
    int64_t B;  /* images per chunk */
    int direct; /* small planes: B packed straight from X (cgw_pack_b) */
    int T;      /* threads that split the depth (the images), or 1 */
    int wide;   /* direct, the table over every column (c, t): cgw_table */
} cgw_geom;

/* Resolves the window for X's and dY's shapes (dims of rank r); 0 when
 * they do not fit it. */
static int cgw_geom_init(const sm_attrs *at, int r, const int64_t *xd,
                         const int64_t *yd, int n_threads, cgw_geom *g)
{
    int nsp = r - 2;
    const int64_t *ks = NULL;
    if (r < 3 || r > 5 || sm_attrs_ints(at, "kernel_shape", &ks) != nsp)
        return 0;
    sm_window w;
    if (sm_window_init(NULL, "ConvGradWeight", at, SM_WINDOW_CONV, nsp, xd + 2,
                       ks, &w) != SMELT_OK)
        return 0;
    memset(g, 0, sizeof *g);
    g->N = xd[0];
    g->C = xd[1];
    g->M = yd[1];
    g->G = sm_attrs_int(at, "group", 1);
    if (g->G < 1 || g->C % g->G || g->M % g->G || yd[0] != g->N)
        return 0;
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    for (int d = 0; d < 3; d++) {
        int sd = d - (3 - nsp);
        int real = sd >= 0;
        g->in[d] = real ? w.in[sd] : 1;
        g->out[d] = real ? w.out[sd] : 1;
        g->k[d] = real ? w.kernel[sd] : 1;
        g->s[d] = real ? w.stride[sd] : 1;
        g->dil[d] = real ? w.dil[sd] : 1;
        g->p0[d] = real ? w.pad0[sd] : 0;
        if (real && yd[sd + 2] != w.out[sd])
            return 0;
    }
    g->isz = g->in[0] * g->in[1] * g->in[2];
    g->osz = g->out[0] * g->out[1] * g->out[2];
    g->ksz = g->k[0] * g->k[1] * g->k[2];
    g->direct = g->osz <= CGW_DIRECT_POSITIONS;
    g->wide = g->direct && g->ksz <= CGW_MAX_KSZ &&
              (size_t)(g->osz * g->Cg * g->ksz) * sizeof(int32_t) <=
                  CGW_WIDE_TABLE_BYTES;
    size_t per = (size_t)(((g->direct ? 0 : g->Cg * g->ksz) + g->Mg) * g->osz) *
                 sizeof(float);
    int64_t b = per ? (int64_t)(CGW_CHUNK_BYTES / per) : g->N;
    g->B = b < 1 ? 1 : b > g->N ? g->N : b;
    /* a small dW over a deep product (the digits CNN: 32 x 144 over
     * 4,096 positions) has too few output tiles to share out: the GEMM's
     * split had each task pack the same B again (2 threads slower than
     * 1). Each thread then takes a slice of the chunk's images, a
     * product of its own into a partial dW, and the partials are summed */
    g->T = 1;
    if (g->direct && n_threads > 1 && n_threads <= SM_CGW_MAX_T &&
        g->Mg * g->Cg * g->ksz <= CGW_SPLIT_MAX &&
        g->B * g->osz >= (int64_t)n_threads * CGW_SPLIT_DEPTH)
        g->T = n_threads;
    return g->N > 0 && g->osz > 0;
}

static size_t align64(size_t b)
{
    return (b + 63) & ~(size_t)63;
}

/* The workspace's parts, in bytes: columns, dY's rows, a partial dW (only
 * when the batch takes several chunks), the GEMM's own scratch. */
static void cgw_parts(const cgw_geom *g, int n_threads, size_t *cols,
                      size_t *dyp, size_t *part, size_t *gemm)
{
    int64_t L = g->B * g->osz, nk = g->Cg * g->ksz;
    *cols = g->direct
                ? align64((size_t)(g->osz * g->ksz * (g->wide ? g->Cg : 1)) *
                          sizeof(int32_t))
                : align64((size_t)(nk * L) * sizeof(float));
    *dyp = align64((size_t)(g->Mg * L) * sizeof(float));
    if (g->T > 1) { /* per thread: a partial dW and a one-thread GEMM's */
        *part = (size_t)g->T * align64((size_t)(g->Mg * nk) * sizeof(float));
        *gemm = (size_t)g->T * align64(sm_gemm_workspace(1, L, nk, 0));
        return;
    }
    *part = g->B < g->N ? align64((size_t)(g->Mg * nk) * sizeof(float)) : 0;
    *gemm = sm_gemm_workspace(n_threads, L, nk, 0);
}

int sm_cpu_convgradweight_supports(const sm_kernel_desc *d)
{
    if (d->n_in != 2 || d->n_out != 1 || d->in[0].dtype != SMELT_DTYPE_F32 ||
        d->in[1].dtype != SMELT_DTYPE_F32 ||
        d->out[0].dtype != SMELT_DTYPE_F32 || d->in[1].ndim != d->in[0].ndim)
        return 0;
    cgw_geom g;
    return cgw_geom_init(&d->attrs, d->in[0].ndim, d->in[0].dims, d->in[1].dims,
                         d->n_threads, &g);
}

void sm_cpu_convgradweight_configure(const sm_cpu_ops *ops,
                                     const sm_kernel_desc *d, sm_cpu_config *c)
{
    (void)ops;
    cgw_geom g;
    c->algo = SM_CPU_ALGO_PLAIN;
    if (!cgw_geom_init(&d->attrs, d->in[0].ndim, d->in[0].dims, d->in[1].dims,
                       d->n_threads, &g))
        return;
    size_t a, b, p, q;
    cgw_parts(&g, d->n_threads, &a, &b, &p, &q);
    c->ws_bytes = a + b + p + q;
}

/* One chunk's gather: images [n0, n0 + nb) of group gi. */
typedef struct cgw_job {
    const cgw_geom *g;
    const float *x, *dy;
    float *cols, *dyp;
    int64_t n0, nb, gi;
} cgw_job;

/* The short copies and fills of the gathers (a row of 4 or 8 positions
 * on a small CNN's planes): inline loops, as a libc call costs more than
 * the run it moves. */
SM_KEEP_LOOPS_BEGIN

static inline void cgw_copy(float *restrict d, const float *restrict s,
                            int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = s[i];
}

static inline void cgw_zero(float *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = 0.0f;
}

/* Rows [r0, r1) of colT: row (c, kd, kh, kw), image after image, each
 * image's segment the osz positions of dY, 0 where the tap falls in the
 * padding. */
static void cgw_gather_rows(void *arg, int64_t r0, int64_t r1, int tid)
{
    (void)tid;
    const cgw_job *j = arg;
    const cgw_geom *g = j->g;
    int64_t L = j->nb * g->osz;
    int64_t OW = g->out[2], s2 = g->s[2];
    for (int64_t r = r0; r < r1; r++) {
        int64_t c = r / g->ksz, t = r % g->ksz;
        int64_t kd = t / (g->k[1] * g->k[2]), kh = t / g->k[2] % g->k[1],
                kw = t % g->k[2];
        /* the ow range whose iw = ow*s2 - p0 + kw*dil lies in [0, W) */
        int64_t off = kw * g->dil[2] - g->p0[2], W = g->in[2];
        int64_t lo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
        int64_t hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / s2 + 1;
        if (hi > OW)
            hi = OW;
        if (lo > hi)
            lo = hi;
        float *dst = j->cols + r * L;
        for (int64_t b = 0; b < j->nb; b++) {
            const float *src =
                j->x + ((j->n0 + b) * g->C + j->gi * g->Cg + c) * g->isz;
            for (int64_t od = 0; od < g->out[0]; od++) {
                int64_t id = od * g->s[0] - g->p0[0] + kd * g->dil[0];
                for (int64_t oh = 0; oh < g->out[1]; oh++, dst += OW) {
                    int64_t ih = oh * g->s[1] - g->p0[1] + kh * g->dil[1];
                    if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
                        cgw_zero(dst, OW);
                        continue;
                    }
                    const float *row = src + (id * g->in[1] + ih) * W;
                    cgw_zero(dst, lo);
                    if (s2 == 1)
                        cgw_copy(dst + lo, row + lo + off, hi - lo);
                    else
                        for (int64_t ow = lo; ow < hi; ow++)
                            dst[ow] = row[ow * s2 + off];
                    cgw_zero(dst + hi, OW - hi);
                }
            }
        }
    }
}

/* Rows [r0, r1) of dyp: the group's output channel m, image after image. */
static void cgw_pack_dy(void *arg, int64_t r0, int64_t r1, int tid)
{
    (void)tid;
    const cgw_job *j = arg;
    const cgw_geom *g = j->g;
    for (int64_t m = r0; m < r1; m++)
        for (int64_t b = 0; b < j->nb; b++)
            cgw_copy(j->dyp + (m * j->nb + b) * g->osz,
                     j->dy + ((j->n0 + b) * g->M + j->gi * g->Mg + m) * g->osz,
                     g->osz);
}

/* For each output position o and tap t, the offset into an input volume
 * that the tap reads, or -1 in the padding: tab[o * ksz + t]. Wide: for
 * every column (c, t), the offset into the group's channels,
 * tab[o * Cg * ksz + c * ksz + t] (c * isz added), so cgw_pack_b moves
 * each float with one lookup and no channel and tap counters. */
static void cgw_table(const cgw_geom *g, int32_t *tab)
{
    if (g->wide) {
        cgw_geom n = *g;
        n.wide = 0;
        int64_t nk = g->Cg * g->ksz;
        int32_t *base = tab + g->osz * (nk - g->ksz); /* the narrow one, last */
        cgw_table(&n, base);
        for (int64_t o = 0; o < g->osz; o++) {
            int32_t row[CGW_MAX_KSZ];
            memcpy(row, base + o * g->ksz, (size_t)g->ksz * sizeof(int32_t));
            for (int64_t c = 0; c < g->Cg; c++)
                for (int64_t t = 0; t < g->ksz; t++)
                    tab[o * nk + c * g->ksz + t] =
                        row[t] < 0 ? -1 : (int32_t)(c * g->isz + row[t]);
        }
        return;
    }
    for (int64_t od = 0; od < g->out[0]; od++)
        for (int64_t oh = 0; oh < g->out[1]; oh++)
            for (int64_t ow = 0; ow < g->out[2]; ow++)
                for (int64_t kd = 0; kd < g->k[0]; kd++)
                    for (int64_t kh = 0; kh < g->k[1]; kh++)
                        for (int64_t kw = 0; kw < g->k[2]; kw++) {
                            int64_t i0 =
                                od * g->s[0] - g->p0[0] + kd * g->dil[0];
                            int64_t i1 =
                                oh * g->s[1] - g->p0[1] + kh * g->dil[1];
                            int64_t i2 =
                                ow * g->s[2] - g->p0[2] + kw * g->dil[2];
                            int in = i0 >= 0 && i0 < g->in[0] && i1 >= 0 &&
                                     i1 < g->in[1] && i2 >= 0 && i2 < g->in[2];
                            *tab++ =
                                in ? (int32_t)((i0 * g->in[1] + i1) * g->in[2] +
                                               i2)
                                   : -1;
                        }
}

/* What cgw_pack_b reads: a chunk's images of group gi and the table. */
typedef struct cgw_src {
    const cgw_geom *g;
    const float *x;
    const int32_t *tab;
    int64_t n0, gi;
} cgw_src;

/* sm_gemm_pack_fn of B [(n, o), (c, t)] = X[n0 + n, gi*Cg + c, tap t of
 * position o] (colT transposed, never stored): rows [k0, k0 + kc),
 * columns [j0, j0 + n) in panels of nr, the last zero-padded. */
static void cgw_pack_b(const void *user, int64_t batch, int64_t k0, int64_t kc,
                       int64_t j0, int64_t n, int nr, float *dst)
{
    (void)batch;
    const cgw_src *s = user;
    const cgw_geom *g = s->g;
    if (g->wide) {
        int64_t nk = g->Cg * g->ksz;
        for (int64_t k = 0; k < kc; k++) {
            int64_t b = (k0 + k) / g->osz, o = (k0 + k) % g->osz;
            const float *xb =
                s->x + ((s->n0 + b) * g->C + s->gi * g->Cg) * g->isz;
            const int32_t *tab = s->tab + o * nk + j0;
            for (int64_t p0 = 0; p0 < n; p0 += nr) {
                float *d = dst + p0 * kc + k * nr;
                int64_t w = n - p0 < nr ? n - p0 : nr;
                for (int64_t jj = 0; jj < w; jj++) {
                    int32_t off = tab[p0 + jj];
                    float v = xb[off < 0 ? 0 : off];
                    d[jj] = off < 0 ? 0.0f : v;
                }
                for (int64_t jj = w; jj < nr; jj++)
                    d[jj] = 0.0f;
            }
        }
        return;
    }
    for (int64_t k = 0; k < kc; k++) {
        int64_t b = (k0 + k) / g->osz, o = (k0 + k) % g->osz;
        const float *xb = s->x + ((s->n0 + b) * g->C + s->gi * g->Cg) * g->isz;
        const int32_t *tab = s->tab + o * g->ksz;
        int64_t c = j0 / g->ksz, t = j0 % g->ksz;
        for (int64_t p0 = 0; p0 < n; p0 += nr) {
            float *d = dst + p0 * kc + k * nr;
            int64_t w = n - p0 < nr ? n - p0 : nr;
            for (int64_t jj = 0; jj < w; jj++) {
                int32_t off = tab[t];
                d[jj] = off >= 0 ? xb[c * g->isz + off] : 0.0f;
                if (++t == g->ksz) {
                    t = 0;
                    c++;
                }
            }
            for (int64_t jj = w; jj < nr; jj++)
                d[jj] = 0.0f;
        }
    }
}

SM_KEEP_LOOPS_END

/* The depth split: thread t's slice of a chunk's images into its partial
 * dW (its own GEMM on one thread). */
typedef struct cgw_split {
    const cgw_geom *g;
    const sm_cpu_ops *ops;
    smelt_ctx_t *ctx;
    const float *x, *dyp;
    const int32_t *tab;
    char *part, *gws; /* T slices of each */
    size_t part_bytes, gws_bytes;
    int64_t n0, nb, gi;
    smelt_status st[SM_CGW_MAX_T];
} cgw_split;

static void cgw_split_task(void *arg, int64_t t0, int64_t t1, int tid)
{
    (void)tid;
    cgw_split *sp = arg;
    const cgw_geom *g = sp->g;
    int64_t nk = g->Cg * g->ksz, L = sp->nb * g->osz;
    for (int64_t t = t0; t < t1; t++) {
        int64_t b0 = sp->nb * t / g->T, b1 = sp->nb * (t + 1) / g->T;
        float *out = (float *)(sp->part + (size_t)t * sp->part_bytes);
        if (b1 == b0) {
            memset(out, 0, (size_t)(g->Mg * nk) * sizeof(float));
            sp->st[t] = SMELT_OK;
            continue;
        }
        sm_gemm_args ga = {
            .M = g->Mg, .N = nk, .K = (b1 - b0) * g->osz, .c = out, .ldc = nk};
        ga.epi = sm_gemm_epi_none();
        ga.a = (sm_matf){sp->dyp + b0 * g->osz, L, 1};
        cgw_src src = {g, sp->x, sp->tab, sp->n0 + b0, sp->gi};
        ga.pack_b = cgw_pack_b;
        ga.pack_b_user = &src;
        sp->st[t] =
            sm_gemm_f32(sp->ctx, sp->ops, &ga, NULL,
                        sp->gws + (size_t)t * sp->gws_bytes, sp->gws_bytes);
    }
}

smelt_status sm_cpu_convgradweight_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                       const sm_cpu_config *c,
                                       const void *packed, sm_threadpool *tp)
{
    (void)packed;
    const sm_tensor *x = a->in[0], *dy = a->in[1];
    cgw_geom g;
    int threads = sm_threadpool_size(tp);
    if (!cgw_geom_init(&a->attrs, x->ndim, x->dims, dy->dims, threads, &g))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X and dY do not fit the window", a->op_name);
    size_t pc, pd, pp, pg;
    cgw_parts(&g, threads, &pc, &pd, &pp, &pg);
    if (!a->workspace || a->workspace_bytes < pc + pd + pp + pg ||
        c->ws_bytes < pc + pd + pp + pg)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: workspace of %zu bytes, %zu needed", a->op_name,
                      a->workspace_bytes, pc + pd + pp + pg);
    char *ws = a->workspace;
    float *cols = (float *)ws, *dyp = (float *)(ws + pc);
    float *part = pp ? (float *)(ws + pc + pd) : NULL;
    void *gws = ws + pc + pd + pp;
    float *dw = a->out[0]->data;
    int64_t nk = g.Cg * g.ksz;
    if (g.direct)
        cgw_table(&g, (int32_t *)cols);
    for (int64_t gi = 0; gi < g.G; gi++) {
        float *dst = dw + gi * g.Mg * nk;
        for (int64_t n0 = 0; n0 < g.N; n0 += g.B) {
            int64_t nb = g.N - n0 < g.B ? g.N - n0 : g.B, L = nb * g.osz;
            cgw_job j = {&g, x->data, dy->data, cols, dyp, n0, nb, gi};
            if (!g.direct)
                sm_parallel_for(tp, nk, 0, cgw_gather_rows, &j);
            sm_parallel_for(tp, g.Mg, 0, cgw_pack_dy, &j);
            if (g.T > 1) {
                cgw_split sp = {&g,
                                ops,
                                a->ctx,
                                x->data,
                                dyp,
                                (const int32_t *)cols,
                                (char *)part,
                                (char *)gws,
                                pp / (size_t)g.T,
                                pg / (size_t)g.T,
                                n0,
                                nb,
                                gi,
                                {0}};
                sm_parallel_for(tp, g.T, 1, cgw_split_task, &sp);
                for (int t = 0; t < g.T; t++)
                    SM_TRY(sp.st[t]);
                for (int t = 0; t < g.T; t++) {
                    const float *pt =
                        (const float *)((char *)part +
                                        (size_t)t * sp.part_bytes);
                    if (t == 0 && n0 == 0)
                        memcpy(dst, pt, (size_t)(g.Mg * nk) * sizeof(float));
                    else
                        for (int64_t i = 0; i < g.Mg * nk; i++)
                            dst[i] += pt[i];
                }
                continue;
            }
            float *out = n0 ? part : dst;
            sm_gemm_args ga = {.M = g.Mg, .N = nk, .K = L, .c = out, .ldc = nk};
            ga.epi = sm_gemm_epi_none();
            ga.a = (sm_matf){dyp, L, 1};
            cgw_src src = {&g, x->data, (const int32_t *)cols, n0, gi};
            if (g.direct) {
                ga.pack_b = cgw_pack_b;
                ga.pack_b_user = &src;
            } else {
                ga.b = (sm_matf){cols, 1, L};
            }
            SM_TRY(sm_gemm_f32(a->ctx, ops, &ga, tp, gws, pg));
            if (n0)
                for (int64_t i = 0; i < g.Mg * nk; i++)
                    dst[i] += part[i];
        }
    }
    return SMELT_OK;
}
