/*
 * conv_transpose.c - ConvTranspose on f32 (1-D to 3-D windows, any group,
 * pads, output_padding, output_shape): a GEMM per image and group, then
 * col2im.
 *
 * Y[n, m, i*s - p0 + k*dil] += X[n, c, i] W[c, m, k] is, per image and
 * group, cols[(m, k), i] = W_g^T X_n (one GEMM of depth C/group over the
 * input positions), each column then added into the output position its
 * tap lands on (col2im: the transpose of the forward convolution's
 * im2col). This is Conv's input gradient (autograd/nn_build.c), which the
 * autograd built before as a Conv of dY spread out to every stride-th
 * position (stride^2 times the multiplies) by the kernel reversed and
 * transposed (a Slice and a Transpose of the weights every step).
 *
 * Small input planes (a training step's dY on resnet18's layers 2 to 4:
 * 8 x 8 down to 2 x 2) make that GEMM 4 to 64 columns wide, below one B
 * panel; there a chunk of images is one GEMM whose columns are every
 * image's positions, cols[(m, k), (n, i)], B packed straight from X
 * (ct_pack_b), as conv_batched.c does for the forward convolution.
 */
#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/window.h"

/* Scratch for the columns of one chunk of images (bytes). */
#define CT_CHUNK_BYTES ((size_t)1 << 20)
/* Input planes of fewer positions than this, in chunks of more than one
 * image, take one GEMM over the chunk's positions. */
#define CT_BATCH_BELOW 128

/* The geometry, spatial dims padded to 3 at the front (size 1). */
typedef struct ct_geom {
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[3], out[3], k[3], s[3], dil[3], p0[3];
    int64_t isz, osz, ksz;
    int64_t B;   /* images per chunk */
    int batched; /* one GEMM over a chunk's positions (cols [(m, k), (n, i)]) */
} ct_geom;

/* Resolves the window for X's and W's shapes (rank r); 0 when the node
 * is not one this kernel runs. y, when given, must match the window. */
static int ct_geom_init(const sm_attrs *at, int r, const int64_t *xd,
                        const int64_t *wd, const int64_t *yd, ct_geom *g)
{
    int nsp = r - 2;
    if (r < 3 || r > 5)
        return 0;
    sm_window w;
    if (sm_window_init(NULL, "ConvTranspose", at, SM_WINDOW_CONVT, nsp, xd + 2,
                       wd + 2, &w) != SMELT_OK)
        return 0;
    memset(g, 0, sizeof *g);
    g->N = xd[0];
    g->C = xd[1];
    g->G = sm_attrs_int(at, "group", 1);
    if (g->G < 1 || wd[0] != g->C || g->C % g->G)
        return 0;
    g->Cg = g->C / g->G;
    g->Mg = wd[1];
    g->M = g->Mg * g->G;
    if (yd && (yd[0] != g->N || yd[1] != g->M))
        return 0;
    for (int d = 0; d < 3; d++) {
        int sd = d - (3 - nsp);
        int real = sd >= 0;
        g->in[d] = real ? w.in[sd] : 1;
        g->out[d] = real ? w.out[sd] : 1;
        g->k[d] = real ? w.kernel[sd] : 1;
        g->s[d] = real ? w.stride[sd] : 1;
        g->dil[d] = real ? w.dil[sd] : 1;
        g->p0[d] = real ? w.pad0[sd] : 0;
        if (real && yd && yd[sd + 2] != w.out[sd])
            return 0;
    }
    g->isz = g->in[0] * g->in[1] * g->in[2];
    g->osz = g->out[0] * g->out[1] * g->out[2];
    g->ksz = g->k[0] * g->k[1] * g->k[2];
    size_t per = (size_t)(g->Mg * g->ksz * g->isz) * sizeof(float);
    int64_t b = per ? (int64_t)(CT_CHUNK_BYTES / per) : g->N;
    g->B = b < 1 ? 1 : b > g->N ? g->N : b;
    g->batched = g->B > 1 && g->isz < CT_BATCH_BELOW;
    return g->isz > 0 && g->osz > 0;
}

static size_t align64(size_t b)
{
    return (b + 63) & ~(size_t)63;
}

/* The workspace: the columns of a chunk, then the GEMM's scratch. */
static void ct_parts(const ct_geom *g, int n_threads, size_t *cols,
                     size_t *gemm)
{
    *cols =
        align64((size_t)(g->B * g->Mg * g->ksz * g->isz) * sizeof(float)) +
        (g->batched ? align64((size_t)(g->ksz * g->isz) * sizeof(int32_t)) : 0);
    *gemm = sm_gemm_workspace(n_threads, g->Cg,
                              g->batched ? g->B * g->isz : g->isz, 0);
}

int sm_cpu_convtranspose_supports(const sm_kernel_desc *d)
{
    if ((d->n_in != 2 && d->n_in != 3) || d->n_out != 1)
        return 0;
    int r = d->in[0].ndim;
    for (int i = 0; i < d->n_in; i++)
        if (d->in[i].present && d->in[i].dtype != SMELT_DTYPE_F32)
            return 0;
    if (d->out[0].dtype != SMELT_DTYPE_F32 || d->in[1].ndim != r ||
        d->out[0].ndim != r)
        return 0;
    ct_geom g;
    if (!ct_geom_init(&d->attrs, r, d->in[0].dims, d->in[1].dims,
                      d->out[0].dims, &g))
        return 0;
    return d->n_in < 3 || !d->in[2].present ||
           (d->in[2].ndim == 1 && d->in[2].dims[0] == g.M);
}

void sm_cpu_convtranspose_configure(const sm_cpu_ops *ops,
                                    const sm_kernel_desc *d, sm_cpu_config *c)
{
    (void)ops;
    ct_geom g;
    c->algo = SM_CPU_ALGO_PLAIN;
    if (!ct_geom_init(&d->attrs, d->in[0].ndim, d->in[0].dims, d->in[1].dims,
                      d->out[0].dims, &g))
        return;
    size_t a, b;
    ct_parts(&g, d->n_threads, &a, &b);
    c->ws_bytes = a + b;
}

/* One chunk's col2im: images [n0, n0 + nb) of group gi; the column of
 * image b and row (m, k) at cols + (m * ksz + k) * ld + b * bs. */
typedef struct ct_job {
    const ct_geom *g;
    const float *cols, *bias;
    float *y;
    const int32_t *tab; /* ct_table, batched form */
    int64_t n0, gi, ld, bs;
} ct_job;

/* The batched form's col2im table: for tap t and input position i, the
 * output position (in a plane) it lands on, or -1 outside the output. */
static void ct_table(const ct_geom *g, int32_t *tab)
{
    for (int64_t t = 0; t < g->ksz; t++) {
        int64_t k[3] = {t / (g->k[1] * g->k[2]), t / g->k[2] % g->k[1],
                        t % g->k[2]};
        for (int64_t i = 0; i < g->isz; i++) {
            int64_t in[3] = {i / (g->in[1] * g->in[2]), i / g->in[2] % g->in[1],
                             i % g->in[2]};
            int64_t o = 0;
            for (int d = 0; d < 3 && o >= 0; d++) {
                int64_t od = in[d] * g->s[d] - g->p0[d] + k[d] * g->dil[d];
                o = od < 0 || od >= g->out[d] ? -1 : o * g->out[d] + od;
            }
            *tab++ = (int32_t)o;
        }
    }
}

/* W_g^T as the GEMM's A (rows (m, k), depth c), packed in MR-row panels
 * by walking W's rows: each of the block's depths reads the block's rows
 * as one contiguous run of W. The generic packer takes MR floats per
 * depth per panel, a new page of W every 4 to 18 KiB (mk floats apart):
 * 42% of a layer4 input gradient's time. */
typedef struct ct_wsrc {
    const float *w; /* the group's W [Cg][mk] */
    int64_t mk;
} ct_wsrc;

static void ct_pack_a(const void *user, int64_t batch, int64_t k0, int64_t kc,
                      int64_t i0, int64_t m, int mr, float *dst)
{
    (void)batch;
    const ct_wsrc *s = user;
    int64_t full = m / mr * mr;
    for (int64_t k = 0; k < kc; k++) {
        const float *src = s->w + (k0 + k) * s->mk + i0;
        float *d = dst + k * mr;
        for (int64_t p = 0; p < full; p += mr, d += kc * mr)
            for (int i = 0; i < mr; i++)
                d[i] = src[p + i];
        if (full < m) {
            for (int i = 0; i < mr; i++)
                d[i] = full + i < m ? src[full + i] : 0.0f;
        }
    }
}

/* What ct_pack_b reads: the chunk's first image of X, group gi. */
typedef struct ct_src {
    const ct_geom *g;
    const float *x;
} ct_src;

/* sm_gemm_pack_fn of the batched form: B rows [k0, k0 + kc) (input
 * channels of the group) for columns [j0, j0 + n) (j = (image,
 * position)), in panels of nr columns, the last zero-padded. */
static void ct_pack_b(const void *user, int64_t batch, int64_t k0, int64_t kc,
                      int64_t j0, int64_t n, int nr, float *dst)
{
    (void)batch;
    const ct_src *s = user;
    int64_t isz = s->g->isz, cstride = s->g->C * isz;
    for (int64_t p0 = 0; p0 < n; p0 += nr) {
        int64_t w = n - p0 < nr ? n - p0 : nr;
        for (int64_t k = 0; k < kc; k++) {
            float *d = dst + p0 * kc + k * nr;
            int64_t j = j0 + p0, img = j / isz, pos = j % isz;
            for (int64_t jj = 0; jj < w;) {
                int64_t run = isz - pos < w - jj ? isz - pos : w - jj;
                const float *src = s->x + img * cstride + (k0 + k) * isz + pos;
                for (int64_t q = 0; q < run; q++)
                    d[jj + q] = src[q];
                jj += run;
                pos = 0;
                img++;
            }
            for (int64_t jj = w; jj < nr; jj++)
                d[jj] = 0.0f;
        }
    }
}

/* Output planes [r0, r1) of the chunk (plane b * Mg + m): set to the bias,
 * then every column of (m, k) added where its tap lands. */
static void ct_col2im(void *arg, int64_t r0, int64_t r1, int tid)
{
    (void)tid;
    const ct_job *j = arg;
    const ct_geom *g = j->g;
    int64_t IW = g->in[2], OW = g->out[2], s2 = g->s[2];
    for (int64_t r = r0; r < r1; r++) {
        int64_t b = r / g->Mg, m = r % g->Mg, mo = j->gi * g->Mg + m;
        float *y = j->y + ((j->n0 + b) * g->M + mo) * g->osz;
        float bv = j->bias ? j->bias[mo] : 0.0f;
        for (int64_t i = 0; i < g->osz; i++)
            y[i] = bv;
        const float *col = j->cols + m * g->ksz * j->ld + b * j->bs;
        if (j->tab) { /* small planes: a table, not loops of 2 to 8 */
            const int32_t *tab = j->tab;
            for (int64_t t = 0; t < g->ksz; t++, col += j->ld)
                for (int64_t i = 0; i < g->isz; i++, tab++)
                    if (*tab >= 0)
                        y[*tab] += col[i];
            continue;
        }
        for (int64_t t = 0; t < g->ksz; t++, col += j->ld) {
            int64_t kd = t / (g->k[1] * g->k[2]), kh = t / g->k[2] % g->k[1],
                    kw = t % g->k[2];
            /* the iw whose ow = iw*s2 + off lies in [0, OW) */
            int64_t off = kw * g->dil[2] - g->p0[2];
            int64_t lo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
            int64_t hi = OW - 1 - off < 0 ? 0 : (OW - 1 - off) / s2 + 1;
            if (hi > IW)
                hi = IW;
            for (int64_t id = 0; id < g->in[0]; id++) {
                int64_t od = id * g->s[0] - g->p0[0] + kd * g->dil[0];
                if (od < 0 || od >= g->out[0])
                    continue;
                for (int64_t ih = 0; ih < g->in[1]; ih++) {
                    int64_t oh = ih * g->s[1] - g->p0[1] + kh * g->dil[1];
                    if (oh < 0 || oh >= g->out[1])
                        continue;
                    const float *src = col + (id * g->in[1] + ih) * IW;
                    float *dst = y + (od * g->out[1] + oh) * OW;
                    if (s2 == 1)
                        for (int64_t iw = lo; iw < hi; iw++)
                            dst[iw + off] += src[iw];
                    else
                        for (int64_t iw = lo; iw < hi; iw++)
                            dst[iw * s2 + off] += src[iw];
                }
            }
        }
    }
}

smelt_status sm_cpu_convtranspose_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                      const sm_cpu_config *c,
                                      const void *packed, sm_threadpool *tp)
{
    (void)packed;
    const sm_tensor *x = a->in[0], *w = a->in[1];
    const sm_tensor *bt = a->n_in > 2 ? a->in[2] : NULL;
    ct_geom g;
    int threads = sm_threadpool_size(tp);
    if (!ct_geom_init(&a->attrs, x->ndim, x->dims, w->dims, a->out[0]->dims,
                      &g))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X, W and Y do not fit the window", a->op_name);
    size_t pc, pg;
    ct_parts(&g, threads, &pc, &pg);
    if (!a->workspace || a->workspace_bytes < pc + pg || c->ws_bytes < pc + pg)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: workspace of %zu bytes, %zu needed", a->op_name,
                      a->workspace_bytes, pc + pg);
    float *cols = a->workspace;
    void *gws = (char *)a->workspace + pc;
    int32_t *tab = NULL;
    if (g.batched) {
        tab = (int32_t *)((char *)a->workspace + pc -
                          align64((size_t)(g.ksz * g.isz) * sizeof(int32_t)));
        ct_table(&g, tab);
    }
    const float *xd = x->data, *wd = w->data;
    int64_t mk = g.Mg * g.ksz;
    for (int64_t gi = 0; gi < g.G; gi++) {
        for (int64_t n0 = 0; n0 < g.N; n0 += g.B) {
            int64_t nb = g.N - n0 < g.B ? g.N - n0 : g.B;
            const float *xc = xd + (n0 * g.C + gi * g.Cg) * g.isz;
            /* cols[(m, k), i] of each image = sum over c of W[c, (m, k)]
             * X[n, c, i]: batched, one product over the chunk's columns
             * (n, i); else one per image, cols[b][(m, k), i] */
            int64_t L = g.batched ? nb * g.isz : g.isz;
            sm_gemm_args ga = {.M = mk, .N = L, .K = g.Cg, .c = cols, .ldc = L};
            ga.epi = sm_gemm_epi_none();
            ga.a = (sm_matf){wd + gi * g.Cg * mk, 1, mk};
            ct_wsrc wsrc = {wd + gi * g.Cg * mk, mk};
            ga.pack_a = ct_pack_a;
            ga.pack_a_user = &wsrc;
            ct_src src = {&g, xc};
            if (g.batched) {
                ga.pack_b = ct_pack_b;
                ga.pack_b_user = &src;
            } else {
                ga.b = (sm_matf){xc, g.isz, 1};
                ga.nbd = 1;
                ga.bdims[0] = nb;
                ga.stride[SM_GB_B][0] = g.C * g.isz;
                ga.stride[SM_GB_C][0] = mk * g.isz;
            }
            SM_TRY(sm_gemm_f32(a->ctx, ops, &ga, tp, gws, pg));
            ct_job j = {&g,
                        cols,
                        bt ? (const float *)bt->data : NULL,
                        a->out[0]->data,
                        tab,
                        n0,
                        gi,
                        L,
                        g.batched ? g.isz : mk * g.isz};
            sm_parallel_for(tp, nb * g.Mg, 0, ct_col2im, &j);
        }
    }
    return SMELT_OK;
}
