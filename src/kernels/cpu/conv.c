/*
 * conv.c - the optimized Conv and FusedConv kernels for 2-D f32: one
 * configure step (conv_decide) picks the path once per plan step, and
 * prepack and run follow what it recorded (sm_cpu_config):
 *   - gemm-1x1 (1x1, stride 1, no padding) and im2col: a GEMM per
 *     (image, group) with the weights as A ([Mg, Cg*kh*kw], prepacked
 *     when constant) and the input as B, the input itself for a 1x1,
 *     else B's panels gathered straight from the input while packing
 *     (im2col one KC x NC block at a time, never the whole matrix);
 *   - winograd F(4x4, 3x3) (conv_winograd.c) and position-major
 * (conv_posmajor.c) for constant weights, which they read only in their
 * prepacked form;
 *   - direct (conv_direct.c) for few input channels, dilated taps, 5x5
 *     and larger kernels and narrow layers, its weights prepacked when
 *     constant;
 *   - depthwise layers row by row (conv_depthwise.c) or channel-interleaved
 *     (depthwise-blocked, conv_depthwise_blocked.c).
 * Bias, residual and activation run as the epilogue of every path, so a
 * FusedConv writes its output once.
 */
#include "kernels/cpu/conv.h"

#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/keep_loops.h"
#include "kernels/cpu/registry.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/ref/window.h"

int sm_conv_is_1x1(const sm_conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 &&
           g->pw == 0 && g->OH == g->H && g->OW == g->W;
}

int sm_conv_geom_init(const sm_attrs *at, const int64_t *xd, int xr,
                      const int64_t *wd, int wr, const int64_t *rd, int rr,
                      const int64_t *yd, int yr, sm_conv_geom *g)
{
    memset(g, 0, sizeof *g);
    if (xr != 4 || wr != 4 || yr != 4)
        return 0;
    sm_window w;
    if (sm_window_init(NULL, "Conv", at, SM_WINDOW_CONV, 2, xd + 2, wd + 2,
                       &w) != SMELT_OK)
        return 0;
    g->N = xd[0];
    g->C = xd[1];
    g->H = xd[2];
    g->W = xd[3];
    g->M = wd[0];
    g->G = sm_attrs_int(at, "group", 1);
    if (g->G < 1 || g->C % g->G || g->M % g->G || wd[1] != g->C / g->G)
        return 0;
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    g->kh = w.kernel[0];
    g->kw = w.kernel[1];
    g->sh = w.stride[0];
    g->sw = w.stride[1];
    g->dh = w.dil[0];
    g->dw = w.dil[1];
    g->ph = w.pad0[0];
    g->pw = w.pad0[1];
    g->OH = w.out[0];
    g->OW = w.out[1];
    g->K = g->Cg * g->kh * g->kw;
    if (yd[0] != g->N || yd[1] != g->M || yd[2] != g->OH || yd[3] != g->OW)
        return 0;
    if (rr >= 0) {
        int64_t s[4];
        if (!sm_cpu_bcast_strides(rr, rd, 4, yd, s))
            return 0;
        int64_t cs = g->OW > 1 ? s[3] : s[2];
        if ((cs != 0 && cs != 1) ||
            (g->OH > 1 && g->OW > 1 && s[2] != s[3] * g->OW))
            return 0;
        g->has_r = 1;
        g->r_sn = s[0];
        g->r_sm = s[1];
        g->r_sp = cs;
    }
    return 1;
}

void sm_conv_epi(const sm_conv_geom *g, const sm_gemm_epi *base,
                 const float *bias, const float *res, sm_gemm_epi *e)
{
    *e = *base;
    e->t[0] = (sm_epi_term){bias, 1, 0, 1.0f};
    e->t[1] = (sm_epi_term){res, g->r_sm, g->r_sp, 1.0f};
}

/* One row k of B, columns [j0, j0 + n), into d: runs of one output row
 * at a time, each a zero head, a strided copy and a zero tail. */
/* Copies and zero fills of the short runs im2col moves (a 7-wide output
 * row, a 14-float A panel row): inline loops, as a libc call per run
 * costs more than the run (and kept loops: GCC would turn them back into
 * memmove / memset calls). */
SM_KEEP_LOOPS_BEGIN

static inline void copyf(float *restrict d, const float *restrict s, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = s[i];
}

static inline void fill0(float *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = 0.0f;
}

/* The outputs ox in [*lo, *hi) whose tap kx lands inside an input row,
 * at column ox * sw + *off. */
static void im2col_cols(const sm_conv_geom *g, int64_t kx, int64_t *lo,
                        int64_t *hi, int64_t *off)
{
    int64_t o = kx * g->dw - g->pw, a, b;
    if (g->sw == 1) {
        a = o >= 0 ? 0 : -o;
        b = g->W - o;
    } else {
        a = o >= 0 ? 0 : (-o + g->sw - 1) / g->sw;
        b = g->W - o <= 0 ? 0 : (g->W - o - 1) / g->sw + 1;
    }
    b = b < g->OW ? b : g->OW;
    *lo = a < b ? a : b;
    *hi = b;
    *off = o;
}

/* Row k = (c, ky, kx) of B, positions [j0, j0 + n), into d: runs of one
 * output row at a time, each a zero head, a copy (stride 1), a vector
 * gather (stride 2) or a strided copy, and a zero tail; [lo, hi) and off
 * from im2col_cols. */
static void im2col_row(const sm_im2col *ic, const float *xc, int64_t ky,
                       int64_t lo, int64_t hi, int64_t off, int64_t j0,
                       int64_t n, float *d)
{
    const sm_conv_geom *g = ic->g;
    int64_t oy = j0 / g->OW, ox = j0 % g->OW;
    for (int64_t j = 0; j < n;) {
        int64_t run = g->OW - ox < n - j ? g->OW - ox : n - j;
        int64_t iy = oy * g->sh - g->ph + ky * g->dh;
        if (iy < 0 || iy >= g->H) {
            fill0(d + j, run);
        } else {
            const float *row = xc + iy * g->W;
            int64_t a = lo < ox ? ox : lo, b = hi > ox + run ? ox + run : hi;
            if (b < a)
                b = a = ox + run < a ? ox + run : a;
            fill0(d + j, a - ox);
            float *dd = d + j + (a - ox);
            if (g->sw == 1)
                copyf(dd, row + a + off, b - a);
            else if (g->sw == 2 && ic->gather2 && b > a)
                ic->gather2(row + a * 2 + off, dd, b - a);
            else
                for (int64_t o = a; o < b; o++)
                    dd[o - a] = row[o * g->sw + off];
            fill0(d + j + (b - ox), ox + run - b);
        }
        j += run;
        ox = 0;
        oy++;
    }
}

/* Each row k is gathered into a line buffer once and then spread over
 * the panels (conv.h), or straight into the one panel when n fits it.
 * (c, ky, kx) advance with k rather than being divided out of it. */
void sm_conv_im2col_pack(const void *user, int64_t batch, int64_t k0,
                         int64_t kc, int64_t j0, int64_t n, int nr, float *dst)
{
    const sm_im2col *ic = user;
    const sm_conv_geom *g = ic->g;
    int64_t img = batch / g->G, grp = batch % g->G, khw = g->kh * g->kw;
    int64_t npan = (n + nr - 1) / nr;
    int64_t c = k0 / khw, ky = k0 % khw / g->kw, kx = k0 % g->kw;
    const float *x0 = ic->x + ((img * g->C) + grp * g->Cg) * g->H * g->W;
    float line[SM_GEMM_NC_PACK];
    for (int64_t k = 0; k < kc; k++) {
        const float *xc = x0 + c * g->H * g->W;
        int64_t lo, hi, off;
        im2col_cols(g, kx, &lo, &hi, &off);
        if (npan == 1) {
            float *d = dst + k * nr;
            im2col_row(ic, xc, ky, lo, hi, off, j0, n, d);
            fill0(d + n, nr - n);
        } else {
            im2col_row(ic, xc, ky, lo, hi, off, j0, n, line);
            for (int64_t p = 0; p < npan; p++) {
                float *d = dst + p * kc * nr + k * nr;
                int64_t w = n - p * nr < nr ? n - p * nr : nr;
                copyf(d, line + p * nr, w);
                fill0(d + w, nr - w);
            }
        }
        if (++kx == g->kw) {
            kx = 0;
            if (++ky == g->kh) {
                ky = 0;
                c++;
            }
        }
    }
}

SM_KEEP_LOOPS_END

static int is_depthwise(const sm_conv_geom *g)
{
    return g->Cg == 1 && g->G > 1 && g->kh * g->kw <= SM_CONV_DW_MAX_TAPS;
}

/* Operand shapes of a desc or of the run's tensors. */
static int geom_of(const sm_attrs *at, int n_in, const int *r,
                   const int64_t *const *d, int yr, const int64_t *yd,
                   sm_conv_geom *g)
{
    int rr = n_in > 3 ? r[3] : -1;
    return sm_conv_geom_init(at, d[0], r[0], d[1], r[1], rr < 0 ? NULL : d[3],
                             rr, yd, yr, g);
}

static int desc_geom(const sm_kernel_desc *d, sm_conv_geom *g)
{
    int r[4];
    const int64_t *dd[4];
    for (int i = 0; i < 4; i++) {
        int ok = i < d->n_in && d->in[i].present;
        r[i] = ok ? d->in[i].ndim : -1;
        dd[i] = ok ? d->in[i].dims : NULL;
    }
    return geom_of(&d->attrs, d->n_in, r, dd, d->out[0].ndim, d->out[0].dims,
                   g);
}

/* 2-D f32 convolutions with a 1-D bias of M values and a residual that
 * folds onto [N, M, OH*OW] (sm_conv_geom_init). */
int sm_cpu_conv_supports(const sm_kernel_desc *d)
{
    sm_conv_geom g;
    sm_gemm_epi e = sm_gemm_epi_none();
    if (d->n_out != 1 || !sm_cpu_all_f32(d) || !sm_cpu_epi_act(&d->attrs, &e))
        return 0;
    if (d->n_in > 2 && d->in[2].present &&
        (d->in[2].ndim != 1 || d->in[2].dims[0] != d->in[1].dims[0]))
        return 0;
    return desc_geom(d, &g);
}

/* The one place the path is chosen, from the geometry (with the operand
 * formats the plan chose) and whether the weights are a constant, which
 * Winograd and the position-major product need (their weights exist
 * only prepacked):
 *   - depthwise layers: channel-interleaved on small planes (the only
 *     depthwise path sm_cpu_conv_layouts lets take channels-last or
 *     blocked operands), else row by row;
 *   - channels-last or blocked operands of other layers: position-major
 *     (plan/layout.c allows them only where it runs);
 *   - few input channels, dilated taps, kernels of 5x5 and up, other
 *     stride-1 kernels on 32 channels or fewer: direct;
 *   - 3x3 stride 1 with enough channels and tiles: Winograd;
 *   - few output positions: position-major;
 *   - weights computed at run time on planes of 64 positions or fewer:
 *     one GEMM over the positions of a chunk of images (conv_batched.c);
 *   - else a GEMM per (image, group), the input as B in place (1x1) or
 *     gathered by im2col. */
static sm_cpu_algo conv_decide(const sm_conv_geom *g, int const_w,
                               const char **why)
{
    if (is_depthwise(g)) {
        if (sm_conv_depthwise_blocked_wanted(g)) {
            *why = "depthwise; its padded plane fits the channel-interleaved "
                   "scratch";
            return SM_CPU_ALGO_DEPTHWISE_BLOCKED;
        }
        *why = "depthwise; plane too large to interleave channels";
        return SM_CPU_ALGO_DEPTHWISE;
    }
    if (g->nhwc) {
        *why = "channels-last or blocked operands, as the plan laid them out";
        return SM_CPU_ALGO_POS_MAJOR;
    }
    /* weights computed at run time on planes small enough for the
     * batched product keep it (a training step's layers) */
    if (sm_conv_direct_wanted(g) && (const_w || !sm_conv_batched_wanted(g))) {
        *why = sm_conv_direct_why(g);
        return SM_CPU_ALGO_DIRECT;
    }
    int wino = sm_wino_eligible(g);
    if (const_w && wino) {
        *why = "3x3 stride 1 with enough channels and tiles: 4x fewer "
               "multiplies";
        return SM_CPU_ALGO_WINOGRAD;
    }
    if (const_w && sm_conv_posmajor_wanted(g)) {
        *why = "few output positions: channel-major tiles would be over 10% "
               "padding";
        return SM_CPU_ALGO_POS_MAJOR;
    }
    if (!const_w && sm_conv_batched_wanted(g)) {
        *why = "weights computed at run time, small planes: one GEMM over "
               "the positions of many images";
        return SM_CPU_ALGO_IM2COL_BATCHED;
    }
    if (sm_conv_is_1x1(g)) {
        *why = "1x1: the input is the GEMM's B as it is";
        return SM_CPU_ALGO_GEMM_1X1;
    }
    *why = !const_w ? "weights computed at run time: no prepacked path"
           : g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1
               ? "3x3 stride 1 but too few channels or tiles for Winograd"
               : "strided, dilated, grouped or not 3x3: im2col then GEMM";
    return SM_CPU_ALGO_IM2COL;
}

/* The decision, its geometry and the scratch of its path. The GEMM paths
 * prepack constant weights as A panels, Winograd as its transformed
 * weights, the position-major product as B, the direct path in its
 * channel blocks (weights computed at run time are laid out per run);
 * the depthwise paths lay out theirs per run. */
void sm_cpu_conv_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                           sm_cpu_config *c)
{
    (void)ops;
    sm_conv_geom g;
    if (!desc_geom(d, &g))
        return; /* supports() refused it: nothing runs */
    g.nhwc = d->nhwc;
    int const_w = d->in[1].is_const, threads = d->n_threads;
    c->algo = conv_decide(&g, const_w, &c->why);
    int64_t ohw = g.OH * g.OW;
    switch (c->algo) {
    case SM_CPU_ALGO_DEPTHWISE_BLOCKED:
        c->geom[0] = g.kh * g.kw;
        c->ws_bytes = sm_conv_depthwise_blocked_workspace(&g, threads);
        break;
    case SM_CPU_ALGO_DEPTHWISE:
        c->geom[0] = g.kh * g.kw;
        c->ws_bytes = sm_conv_depthwise_workspace(&g, threads);
        break;
    case SM_CPU_ALGO_DIRECT:
        c->packs = const_w;
        c->geom[0] = g.K;
        c->ws_bytes = sm_conv_direct_workspace(&g, threads, const_w);
        break;
    case SM_CPU_ALGO_WINOGRAD:
        c->packs = 1;
        c->geom[0] = g.N * ((g.OH + 3) / 4) * ((g.OW + 3) / 4);
        c->ws_bytes = sm_wino_workspace(&g, threads);
        break;
    case SM_CPU_ALGO_POS_MAJOR:
        c->packs = 1;
        c->geom[0] = ohw;
        c->geom[1] = g.M;
        c->geom[2] = g.K;
        c->geom[3] = g.N;
        c->ws_bytes = sm_conv_posmajor_workspace(&g, threads);
        break;
    case SM_CPU_ALGO_IM2COL_BATCHED:
        c->geom[0] = g.M;
        c->geom[1] = ohw;
        c->geom[2] = g.K;
        c->geom[3] = g.N;
        c->ws_bytes = sm_conv_batched_workspace(&g, threads);
        break;
    default: /* the GEMM per (image, group) */
        c->packs = const_w;
        c->geom[0] = g.Mg;
        c->geom[1] = ohw;
        c->geom[2] = g.K;
        c->geom[3] = g.N * g.G;
        c->ws_bytes = sm_gemm_workspace(threads, g.K, ohw, 0);
        break;
    }
}

/* Constant weights in the form the configured path reads. */
smelt_status sm_cpu_conv_prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                 const sm_kernel_desc *d,
                                 const sm_cpu_config *c,
                                 const sm_tensor *const *const_in,
                                 void **packed)
{
    *packed = NULL;
    sm_conv_geom g;
    if (!c->packs || !const_in[1] || !desc_geom(d, &g))
        return SMELT_OK;
    g.nhwc = c->nhwc;
    const float *w = const_in[1]->data;
    sm_gemm_pack *p;
    if (c->algo == SM_CPU_ALGO_WINOGRAD) {
        SM_TRY(sm_wino_pack(ctx, ops, w, g.M, g.C, &p));
    } else if (c->algo == SM_CPU_ALGO_POS_MAJOR) {
        SM_TRY(sm_conv_posmajor_pack(ctx, ops, &g, w, &p));
    } else if (c->algo == SM_CPU_ALGO_DIRECT) {
        SM_TRY(sm_conv_direct_pack(ctx, ops, &g, w, &p));
    } else {
        /* A panels, one packed matrix per group */
        sm_matf wv = {w, g.K, 1};
        SM_TRY(
            sm_gemm_pack_new(ctx, ops, 1, &wv, g.Mg, g.K, g.G, g.Mg * g.K, &p));
    }
    *packed = p;
    return SMELT_OK;
}

/* One GEMM per (image, group) batch element: the weights as A (prepacked
 * or read in place), B the input itself (1x1) or gathered by
 * sm_conv_im2col_pack, the epilogue fused. */
static smelt_status conv_gemm(const sm_cpu_ops *ops, const sm_kargs *a,
                              const sm_cpu_config *c, const sm_conv_geom *g,
                              const sm_gemm_pack *pa, const sm_gemm_epi *base,
                              const float *bias, const float *res,
                              sm_threadpool *tp)
{
    const float *x = a->in[0]->data, *w = a->in[1]->data;
    float *y = a->out[0]->data;
    int64_t ohw = g->OH * g->OW;
    sm_gemm_args ga = {.M = g->Mg, .N = ohw, .K = g->K, .c = y, .ldc = ohw};
    sm_conv_epi(g, base, bias, res, &ga.epi);
    ga.pa = pa;
    ga.a = (sm_matf){w, g->K, 1};
    sm_im2col ic = {g, x, ops->gather2};
    if (c->algo == SM_CPU_ALGO_GEMM_1X1) {
        ga.b = (sm_matf){x, ohw, 1};
    } else {
        ga.pack_b = sm_conv_im2col_pack;
        ga.pack_b_user = &ic;
    }
    ga.nbd = 2;
    ga.bdims[0] = g->N;
    ga.bdims[1] = g->G;
    ga.stride[SM_GB_A][1] = g->Mg * g->K;
    ga.stride[SM_GB_PA][1] = 1;
    ga.stride[SM_GB_B][0] = g->C * g->H * g->W;
    ga.stride[SM_GB_B][1] = g->Cg * g->H * g->W;
    ga.stride[SM_GB_C][0] = g->M * ohw;
    ga.stride[SM_GB_C][1] = g->Mg * ohw;
    ga.stride[SM_GB_T0][1] = g->Mg;
    ga.stride[SM_GB_T1][0] = g->r_sn;
    ga.stride[SM_GB_T1][1] = g->Mg * g->r_sm;
    return sm_gemm_f32(a->ctx, ops, &ga, tp, a->workspace, a->workspace_bytes);
}

/* Runs the path configure() chose; the geometry is read again from the
 * run's tensors (the desc's shapes) and checked. */
smelt_status sm_cpu_conv_run(const sm_cpu_ops *ops, const sm_kargs *a,
                             const sm_cpu_config *c, const void *packed,
                             sm_threadpool *tp)
{
    sm_conv_geom g;
    int r[4];
    const int64_t *dd[4];
    for (int i = 0; i < 4; i++) {
        const sm_tensor *t = i < a->n_in ? a->in[i] : NULL;
        r[i] = t ? t->ndim : -1;
        dd[i] = t ? t->dims : NULL;
    }
    sm_gemm_epi base = sm_gemm_epi_none();
    const sm_tensor *bt = a->n_in > 2 ? a->in[2] : NULL;
    if (!geom_of(&a->attrs, a->n_in, r, dd, a->out[0]->ndim, a->out[0]->dims,
                 &g) ||
        !sm_cpu_epi_act(&a->attrs, &base) || (bt && bt->numel != g.M))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: operand, output or activation do not fit the "
                      "optimized kernel",
                      a->op_name);
    const sm_gemm_pack *pa = packed;
    if (c->packs && (!pa || pa->ops != ops))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the %s path needs the weights its prepack makes",
                      a->op_name, sm_cpu_algo_name(c->algo));
    g.nhwc = c->nhwc;
    const float *x = a->in[0]->data, *w = a->in[1]->data;
    const float *bias = bt ? bt->data : NULL;
    const float *res = g.has_r ? a->in[3]->data : NULL;
    float *y = a->out[0]->data;
    void *ws = a->workspace;
    size_t wsb = a->workspace_bytes;
    switch (c->algo) {
    case SM_CPU_ALGO_DEPTHWISE_BLOCKED:
        return sm_conv_depthwise_blocked(a->ctx, ops, &g, x, w, bias, res,
                                         &base, y, tp, ws, wsb);
    case SM_CPU_ALGO_DEPTHWISE:
        return sm_conv_depthwise(a->ctx, ops, &g, x, w, bias, res, &base, y, tp,
                                 ws, wsb);
    case SM_CPU_ALGO_DIRECT:
        return sm_conv_direct(a->ctx, ops, &g, x, w, c->packs ? pa->data : NULL,
                              bias, res, &base, y, tp, ws, wsb);
    case SM_CPU_ALGO_WINOGRAD: {
        sm_gemm_epi e;
        sm_conv_epi(&g, &base, bias, res, &e);
        return sm_conv_winograd(a->ctx, ops, &g, x, pa, &e, y, tp, ws, wsb);
    }
    case SM_CPU_ALGO_POS_MAJOR:
        return sm_conv_posmajor_run(a->ctx, ops, &g, x, pa, bias, res, &base, y,
                                    tp, ws, wsb);
    case SM_CPU_ALGO_IM2COL_BATCHED: {
        if (g.nhwc || g.G != 1)
            break;
        sm_gemm_epi e;
        sm_conv_epi(&g, &base, bias, NULL, &e);
        return sm_conv_batched(a->ctx, ops, &g, x, w, res, &e, y, tp, ws, wsb);
    }
    case SM_CPU_ALGO_GEMM_1X1:
    case SM_CPU_ALGO_IM2COL:
        if (g.nhwc)
            break;
        return conv_gemm(ops, a, c, &g, c->packs ? pa : NULL, &base, bias, res,
                         tp);
    default: break;
    }
    return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                  "%s: the convolution kernel has no %s path for this node",
                  a->op_name, sm_cpu_algo_name(c->algo));
}

/* What the paths of conv_decide could read or write other than NCHW
 * (plan/layout.c), before the plan chooses: depthwise layers on the
 * channel-interleaved path read and write them (without a residual);
 * other single-group layers with constant weights that Winograd does
 * not take write them from the position-major product, whose rows are
 * positions, and 1x1 ones read them as its A. */
unsigned sm_cpu_conv_layouts(const sm_kernel_desc *d)
{
    sm_conv_geom g;
    if (!sm_cpu_conv_supports(d) || !desc_geom(d, &g))
        return 0;
    if (is_depthwise(&g))
        return g.Mg == 1 && !g.has_r && sm_conv_depthwise_blocked_wanted(&g)
                   ? SM_NHWC_IN | SM_NHWC_OUT | (g.C % 16 ? 0 : SM_B16_IN)
                   : 0;
    if (g.G != 1 || !d->in[1].is_const || sm_wino_eligible(&g) || g.M % 16)
        return 0;
    /* a channel-blocked output for a depthwise reader: no residual, and
     * an epilogue the micro-kernel applies itself (gemm.h cblk) */
    sm_gemm_epi e = sm_gemm_epi_none();
    sm_cpu_epi_act(&d->attrs, &e);
    unsigned b16 = !g.has_r && sm_gemm_act_fusable(e.act) ? SM_B16_OUT : 0;
    if (sm_conv_posmajor_wanted(&g))
        return SM_NHWC_OUT | b16 | (sm_conv_is_1x1(&g) ? SM_NHWC_IN : 0);
    /* a 1x1 layer with many positions runs position-major only for
     * channels-last operands; an NHWC input alone would cost a
     * transposition of the output that the channel-major product avoids */
    return sm_conv_is_1x1(&g) ? SM_NHWC_IN | SM_NHWC_OUT | b16 | SM_NHWC_TIED
                              : 0;
}
