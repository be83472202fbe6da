/*
 * quant_conv.c - the int8 CPU kernels of ConvInteger, QLinearConv and
 * DynamicQuantizeLinear (and the dynamic quantization FusedQMatMul
 * shares).
 *
 * ConvInteger runs position-major on the int8 GEMM (quant_gemm.h): per
 * image, Y^T [P, M] = X_col [P, K] W^T [K, M] with P the output
 * positions, K = C kh kw, the weights (B, s8 or u8) packed once at plan
 * time and the input gathered by im2col into u8 rows (the activations are
 * the unsigned operand). Padding is filled with the raw zero point of x,
 * so it contributes (zx - zx) = 0 like the reference's zero padding of
 * the shifted input. The epilogue writes the transposed tile straight
 * into the NCHW output. QLinearConv is the same product with the
 * requantizing epilogue (SM_Q8_OUT_Q8: its i32 bias added to the sums,
 * x's, w's per-channel and y's scales, y's zero point, the reference's
 * double arithmetic). 2-D, one group, NOTSET padding; anything else
 * runs the reference kernel.
 *
 * DynamicQuantizeLinear is bit-exact with the reference: the scale and
 * zero point in the reference's double arithmetic, then q = round(x /
 * scale) + zp in f32 (a double quotient of two floats rounded to f32 is
 * the f32 quotient), halves to even, saturated to [0, 255]; NaN gives 0.
 */
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/alloc.h"
#include "kernels/cpu/quant_gemm.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/quant.h"

/* ---- ConvInteger --------------------------------------------------------- */

/* A 2-D ConvInteger's geometry. */
typedef struct qconv_geom {
    int64_t N, C, H, W, M, KH, KW, OH, OW;
    int64_t sh, sw, dh, dw, ph, pw; /* strides, dilations, top/left pads */
} qconv_geom;

static int is_q8(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_U8 || dt == SMELT_DTYPE_I8;
}

/* Value i of list attribute `name` (count n) or def when absent. */
static int64_t list_at(const sm_attrs *at, const char *name, int n, int i,
                       int64_t def, int *ok)
{
    const int64_t *v;
    int c = sm_attrs_ints(at, name, &v);
    if (c < 0)
        return def;
    if (c != n)
        *ok = 0;
    return c == n ? v[i] : def;
}

/* Where an op keeps its operands: ConvInteger (x, w, x_zp, w_zp) or
 * QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B);
 * -1: none. */
typedef struct qconv_slots {
    int x, sx, zx, w, sw, zw, sy, zy, b;
} qconv_slots;

static qconv_slots qconv_slots_of(int qlinear)
{
    if (qlinear)
        return (qconv_slots){0, 1, 2, 3, 4, 5, 6, 7, 8};
    return (qconv_slots){0, -1, 2, 1, -1, 3, -1, -1, -1};
}

/* Operand i when present, else NULL. */
static const sm_kernel_operand *q_opnd(const sm_kernel_desc *d, int i)
{
    return i >= 0 && i < d->n_in && d->in[i].present ? &d->in[i] : NULL;
}

/* Absent, or one value, or (per_ch) 1-D with m values, of the wanted
 * dtype class (f32: scales, i32: bias, else u8 / s8). */
static int qconv_param_ok(const sm_kernel_desc *d, int i, int64_t m, int per_ch,
                          smelt_dtype want)
{
    const sm_kernel_operand *o = q_opnd(d, i);
    if (!o)
        return 1;
    if (want == SMELT_DTYPE_U8 ? !is_q8(o->dtype) : o->dtype != want)
        return 0;
    int64_t n = 1;
    for (int k = 0; k < o->ndim; k++)
        n *= o->dims[k];
    return o->ndim <= 1 && (n == 1 || (per_ch && n == m));
}

static int qconv_analyze(const sm_kernel_desc *d, qconv_geom *g)
{
    int ql = d->op == SM_OP_QLinearConv;
    qconv_slots sl = qconv_slots_of(ql);
    const sm_kernel_operand *x = q_opnd(d, sl.x), *w = q_opnd(d, sl.w);
    if (!x || !w || d->n_out < 1)
        return 0;
    const sm_kernel_operand *y = &d->out[0];
    if (!is_q8(x->dtype) || !is_q8(w->dtype) ||
        (ql ? !is_q8(y->dtype) : y->dtype != SMELT_DTYPE_I32) || x->ndim != 4 ||
        w->ndim != 4 || y->ndim != 4)
        return 0;
    if (sm_attrs_int(&d->attrs, "group", 1) != 1 ||
        strcmp(sm_attrs_string(&d->attrs, "auto_pad", "NOTSET"), "NOTSET"))
        return 0;
    int ok = 1;
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->H = x->dims[2];
    g->W = x->dims[3];
    g->M = w->dims[0];
    g->KH = w->dims[2];
    g->KW = w->dims[3];
    g->sh = list_at(&d->attrs, "strides", 2, 0, 1, &ok);
    g->sw = list_at(&d->attrs, "strides", 2, 1, 1, &ok);
    g->dh = list_at(&d->attrs, "dilations", 2, 0, 1, &ok);
    g->dw = list_at(&d->attrs, "dilations", 2, 1, 1, &ok);
    g->ph = list_at(&d->attrs, "pads", 4, 0, 0, &ok);
    g->pw = list_at(&d->attrs, "pads", 4, 1, 0, &ok);
    g->OH = y->dims[2];
    g->OW = y->dims[3];
    if (!ok || w->dims[1] != g->C || y->dims[0] != g->N || y->dims[1] != g->M ||
        g->C < 1 || g->M < 1 || g->KH < 1 || g->KW < 1 || g->OH < 1 ||
        g->OW < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1)
        return 0;
    /* x's parameters per tensor; w's per tensor or per output channel;
     * the bias per channel; y's per tensor */
    if (!qconv_param_ok(d, sl.zx, g->M, 0, SMELT_DTYPE_U8) ||
        !qconv_param_ok(d, sl.zw, g->M, 1, SMELT_DTYPE_U8))
        return 0;
    if (!ql)
        return 1;
    return q_opnd(d, sl.sx) && q_opnd(d, sl.sw) && q_opnd(d, sl.sy) &&
           qconv_param_ok(d, sl.sx, g->M, 0, SMELT_DTYPE_F32) &&
           qconv_param_ok(d, sl.sw, g->M, 1, SMELT_DTYPE_F32) &&
           qconv_param_ok(d, sl.sy, g->M, 0, SMELT_DTYPE_F32) &&
           qconv_param_ok(d, sl.zy, g->M, 0, SMELT_DTYPE_U8) &&
           qconv_param_ok(d, sl.b, g->M, 1, SMELT_DTYPE_I32);
}

int sm_cpu_qconv_supports(const sm_kernel_desc *d)
{
    qconv_geom g;
    return qconv_analyze(d, &g);
}

/* A 1x1 convolution with unit strides and no padding: the channels-last
 * image is A itself, no im2col. */
static int qconv_direct(const qconv_geom *g)
{
    return g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 &&
           g->pw == 0 && g->OH == g->H && g->OW == g->W;
}

static size_t al64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Bytes of one image's im2col rows (none for a direct convolution). */
static size_t col_bytes(const qconv_geom *g)
{
    return qconv_direct(g)
               ? 0
               : al64((size_t)(g->OH * g->OW * g->C * g->KH * g->KW));
}

/* Bytes of one image in channels-last order. */
static size_t hwc_bytes(const qconv_geom *g)
{
    return al64((size_t)(g->C * g->H * g->W));
}

void sm_cpu_qconv_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                            sm_cpu_config *c)
{
    qconv_geom g;
    c->algo = SM_CPU_ALGO_IM2COL;
    if (!qconv_analyze(d, &g))
        return;
    int64_t P = g.OH * g.OW, K = g.C * g.KH * g.KW;
    c->packs = d->in[qconv_slots_of(d->op == SM_OP_QLinearConv).w].is_const;
    c->geom[0] = P;
    c->geom[1] = g.M;
    c->geom[2] = K;
    c->geom[3] = g.N;
    /* run-time weights: their (kh, kw, c) copy after the GEMM's space */
    c->ws_bytes =
        col_bytes(&g) + hwc_bytes(&g) +
        sm_q8_gemm_workspace(sm_q8_isa_of(ops), P, K, g.M, !c->packs) +
        (c->packs ? 0 : al64((size_t)(K * g.M)));
}

/*
 * W [M, C, KH, KW] as B [K, N = M] with the depth in the im2col rows'
 * order (kh, kw, c): the weights are first copied into that order in tmp
 * (K * M bytes), then packed.
 */
static sm_q8_b *pack_w(const sm_q8_isa *isa, const sm_tensor *w, void *tmp,
                       void *mem)
{
    int64_t M = w->dims[0], C = w->dims[1], KH = w->dims[2], KW = w->dims[3];
    int64_t K = C * KH * KW;
    const uint8_t *src = w->data;
    uint8_t *dst = tmp;
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < KH * KW; t++)
                dst[m * K + t * C + c] = src[(m * C + c) * KH * KW + t];
    return sm_q8_pack_b(isa, dst, w->dtype, 1, K, K, M, mem);
}

smelt_status sm_cpu_qconv_prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                  const sm_kernel_desc *d,
                                  const sm_cpu_config *c,
                                  const sm_tensor *const *const_in,
                                  void **packed)
{
    int wi = qconv_slots_of(d->op == SM_OP_QLinearConv).w;
    *packed = NULL;
    if (!c->packs || !const_in[wi])
        return SMELT_OK;
    const sm_q8_isa *isa = sm_q8_isa_of(ops);
    const sm_tensor *w = const_in[wi];
    int64_t M = w->dims[0], K = w->numel / (M ? M : 1);
    void *mem = sm_malloc(sm_q8_pack_b_bytes(isa, K, M));
    void *tmp = sm_malloc((size_t)(K * M) + 1);
    if (!mem || !tmp) {
        sm_free(mem);
        sm_free(tmp);
        return sm_err(ctx, SMELT_ERR_NOMEM,
                      "out of memory packing int8 weights");
    }
    *packed = pack_w(isa, w, tmp, mem);
    sm_free(tmp);
    return SMELT_OK;
}

/* What the threads of one image's layout passes share. */
typedef struct qconv_job {
    const qconv_geom *g;
    const uint8_t *x; /* the image, [C, H, W] */
    uint8_t *xt;      /* the image, [H, W, C] */
    uint8_t *col;     /* im2col rows */
    uint8_t pad;      /* x's raw zero point */
} qconv_job;

/* Positions [s0, s1) of x [C, H*W] into xt [H*W, C], 64 positions at a
 * time so that the rows read stay in cache while they are written. */
static void hwc_range(void *arg, int64_t s0, int64_t s1, int tid)
{
    (void)tid;
    const qconv_job *j = arg;
    int64_t C = j->g->C, HW = j->g->H * j->g->W;
    for (int64_t b = s0; b < s1; b += 64) {
        int64_t e = b + 64 < s1 ? b + 64 : s1;
        for (int64_t c = 0; c < C; c++) {
            const uint8_t *src = j->x + c * HW;
            for (int64_t s = b; s < e; s++)
                j->xt[s * C + c] = src[s];
        }
    }
}

/*
 * The im2col rows of output positions [p0, p1): row p holds the K taps
 * in (kh, kw, c) order, read from the channels-last image, so each tap is
 * a run of C bytes and, with unit dilation, a kernel row inside the image
 * is one run of KW * C bytes; taps outside the input hold pad.
 */
static void col_range(void *arg, int64_t p0, int64_t p1, int tid)
{
    (void)tid;
    const qconv_job *j = arg;
    const qconv_geom *g = j->g;
    int64_t C = g->C, K = C * g->KH * g->KW;
    size_t run = (size_t)(g->KW * C);
    for (int64_t p = p0; p < p1; p++) {
        int64_t oy = p / g->OW, ox = p % g->OW;
        uint8_t *row = j->col + p * K;
        int64_t ix0 = ox * g->sw - g->pw;
        int inside = ix0 >= 0 && ix0 + (g->KW - 1) * g->dw < g->W;
        for (int64_t i = 0; i < g->KH; i++, row += run) {
            int64_t iy = oy * g->sh - g->ph + i * g->dh;
            if (iy < 0 || iy >= g->H) {
                memset(row, j->pad, run);
                continue;
            }
            const uint8_t *src = j->xt + iy * g->W * C;
            if (inside && g->dw == 1) {
                memcpy(row, src + ix0 * C, run);
                continue;
            }
            for (int64_t t = 0; t < g->KW; t++) {
                int64_t ix = ix0 + t * g->dw;
                if (ix >= 0 && ix < g->W)
                    memcpy(row + t * C, src + ix * C, (size_t)C);
                else
                    memset(row + t * C, j->pad, (size_t)C);
            }
        }
    }
}

/* Layout passes of fewer bytes run on the calling thread. */
#define QCONV_PAR_BYTES ((int64_t)1 << 15)

/* Input i of a as an epilogue vector (absent: p NULL). */
static sm_q8_vec qvec(const sm_kargs *a, int i)
{
    sm_q8_vec v = {NULL, SMELT_DTYPE_F32, 0};
    if (i >= 0 && i < a->n_in && a->in[i]) {
        v.p = a->in[i]->data;
        v.dt = a->in[i]->dtype;
        v.n = a->in[i]->numel;
    }
    return v;
}

/* ConvInteger: the int32 sums. QLinearConv: requantized in the GEMM's
 * epilogue (SM_Q8_OUT_Q8, with the i32 bias added to the sums), the
 * reference's double arithmetic. Per image: im2col, then one GEMM whose
 * tile goes straight into the NCHW output. */
smelt_status sm_cpu_qconv_run(const sm_cpu_ops *ops, const sm_kargs *a,
                              const sm_cpu_config *c, const void *packed,
                              sm_threadpool *tp)
{
    const sm_q8_isa *isa = sm_q8_isa_of(ops);
    int ql = a->n_in > 4; /* QLinearConv has 8 or 9 inputs */
    qconv_slots sl = qconv_slots_of(ql);
    qconv_geom g;
    sm_kernel_operand in[9], out[1];
    memset(in, 0, sizeof in);
    for (int i = 0; i < a->n_in && i < 9; i++) {
        const sm_tensor *t = a->in[i];
        if (!t)
            continue;
        in[i].present = 1;
        in[i].dtype = t->dtype;
        in[i].ndim = t->ndim;
        memcpy(in[i].dims, t->dims, sizeof t->dims);
    }
    memset(out, 0, sizeof out);
    out[0].present = 1;
    out[0].dtype = a->out[0]->dtype;
    out[0].ndim = a->out[0]->ndim;
    memcpy(out[0].dims, a->out[0]->dims, sizeof out[0].dims);
    sm_kernel_desc d = {ql ? SM_OP_QLinearConv : SM_OP_ConvInteger,
                        a->attrs,
                        a->n_in < 9 ? a->n_in : 9,
                        1,
                        in,
                        out,
                        1,
                        0};
    if (!qconv_analyze(&d, &g))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the operands do not match the kernel's plan",
                      a->op_name);
    sm_q8_epi e = sm_q8_epi_i32();
    if (ql) {
        SM_TRY(sm_quant_check_scale(a, sl.sx, 0));
        SM_TRY(sm_quant_check_scale(a, sl.sw, 0));
        SM_TRY(sm_quant_check_scale(a, sl.sy, 1));
        e.kind = SM_Q8_OUT_Q8;
        e.sa = qvec(a, sl.sx);
        e.sb = qvec(a, sl.sw);
        e.bias = qvec(a, sl.b);
        e.sy = sm_load_f64(a->in[sl.sy]->dtype, a->in[sl.sy]->data, 0);
        sm_q8_vec zy = qvec(a, sl.zy);
        e.zy = zy.p ? sm_load_i64(zy.dt, zy.p, 0) : 0;
        e.ydt = a->out[0]->dtype;
    }
    int64_t P = g.OH * g.OW, K = g.C * g.KH * g.KW;
    uint8_t *col = a->workspace;
    uint8_t *xt = col + col_bytes(&g);
    char *ws = (char *)xt + hwc_bytes(&g);
    const sm_q8_b *bp = packed;
    if (!bp) {
        char *pb = ws + sm_q8_gemm_workspace(isa, P, K, g.M, 0);
        bp = pack_w(isa, a->in[sl.w], pb + sm_q8_pack_b_bytes(isa, K, g.M), pb);
    }
    e.za = qvec(a, sl.zx);
    e.zb = qvec(a, sl.zw);
    const sm_tensor *zx = sl.zx < a->n_in ? a->in[sl.zx] : NULL;
    qconv_job job = {&g, NULL, xt, col,
                     zx ? ((const uint8_t *)zx->data)[0] : 0};
    int direct = qconv_direct(&g);
    size_t es = smelt_dtype_size(a->out[0]->dtype);
    sm_threadpool *lay =
        (direct ? g.C * g.H * g.W : P * K) >= QCONV_PAR_BYTES ? tp : NULL;
    (void)c;
    for (int64_t n = 0; n < g.N; n++) {
        job.x = (const uint8_t *)a->in[0]->data + n * g.C * g.H * g.W;
        sm_parallel_for(lay, g.H * g.W, 0, hwc_range, &job);
        if (!direct)
            sm_parallel_for(lay, P, 0, col_range, &job);
        char *y = (char *)a->out[0]->data + (size_t)(n * g.M * P) * es;
        sm_q8_gemm(isa, P, direct ? xt : col, a->in[0]->dtype, K, bp, &e, y, 1,
                   P, ws, tp);
    }
    return SMELT_OK;
}

/* ---- DynamicQuantizeLinear ------------------------------------------------
 */

int sm_cpu_dql_supports(const sm_kernel_desc *d)
{
    if (d->n_in < 1 || !d->in[0].present || d->in[0].dtype != SMELT_DTYPE_F32 ||
        d->n_out < 1 || d->out[0].dtype != SMELT_DTYPE_U8)
        return 0;
    return (d->n_out < 2 || d->out[1].dtype == SMELT_DTYPE_F32) &&
           (d->n_out < 3 || d->out[2].dtype == SMELT_DTYPE_U8);
}

/* Rounds f32 t, |t| <= 2^22 (or NaN, kept), to the nearest whole
 * number, halves to even: adding 1.5 * 2^23 leaves no fraction bits, and
 * the addition rounds as the current mode (to nearest, ties to even)
 * does; the subtraction is exact. */
static inline float round_even(float t)
{
    const float magic = 12582912.0f;
    return (t + magic) - magic;
}

/* One element of the quantization: x / scale (the f32 quotient: a
 * double quotient of two floats rounded to f32 is the same), clamped to
 * +-300 (past it every value saturates alike; NaN kept), rounded, plus
 * the zero point, saturated to [0, 255], NaN to 0. */
static inline uint8_t quantize_one(float x, float scale, float zp)
{
    float t = x / scale;
    t = t > 300.0f ? 300.0f : t;
    t = t < -300.0f ? -300.0f : t;
    float q = round_even(t) + zp;
    q = q < 0 ? 0 : q;
    q = q > 255 ? 255 : q;
    return q == q ? (uint8_t)q : 0;
}

#if defined(__SSE2__)
/* min(x, 0) and max(x, 0) over x[0..n) with n a multiple of 16, in four
 * SSE registers each: minps(a, b) is a < b ? a : b, so a NaN x never
 * enters (its comparisons are false); lo only falls and hi only rises
 * from +0, so the lanes combine to the sequential result in any order. */
void sm_q8_minmax_sse2(const float *x, int64_t n, float *lo, float *hi)
{
    __m128 l0 = _mm_setzero_ps(), l1 = l0, l2 = l0, l3 = l0;
    __m128 h0 = l0, h1 = l0, h2 = l0, h3 = l0;
    for (int64_t i = 0; i < n; i += 16) {
        __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
        __m128 c = _mm_loadu_ps(x + i + 8), d = _mm_loadu_ps(x + i + 12);
        l0 = _mm_min_ps(a, l0), h0 = _mm_max_ps(a, h0);
        l1 = _mm_min_ps(b, l1), h1 = _mm_max_ps(b, h1);
        l2 = _mm_min_ps(c, l2), h2 = _mm_max_ps(c, h2);
        l3 = _mm_min_ps(d, l3), h3 = _mm_max_ps(d, h3);
    }
    float lv[16], hv[16];
    _mm_storeu_ps(lv, l0), _mm_storeu_ps(lv + 4, l1);
    _mm_storeu_ps(lv + 8, l2), _mm_storeu_ps(lv + 12, l3);
    _mm_storeu_ps(hv, h0), _mm_storeu_ps(hv + 4, h1);
    _mm_storeu_ps(hv + 8, h2), _mm_storeu_ps(hv + 12, h3);
    for (int l = 0; l < 16; l++) {
        *lo = lv[l] < *lo ? lv[l] : *lo;
        *hi = hv[l] > *hi ? hv[l] : *hi;
    }
}

/* quantize_one over 16 elements at a time (n a multiple of 16). Each
 * clamp puts the constant first (minps(300, t) is 300 < t ? 300 : t),
 * so that a NaN passes through to the final mask as in the scalar form.
 *
 * The quotient: x * (1 / scale) stands in for the division when 1 /
 * scale is a normal float (recip set). Within +-300 it differs from the
 * f32 quotient x / scale by less than 1e-4 (three roundings of relative
 * 2^-24 each), so both round to the same whole number unless one lies
 * within that of a half; a group of four in which any product lies
 * within 0.001 of a half takes the division instead. Past +-300 both
 * saturate alike. Bit-exact either way, and a multiply instead of a
 * division for nearly every element.
 */
void sm_q8_quant_sse2(const float *x, int64_t n, float scale, float zp,
                      uint8_t *y)
{
    float r = 1.0f / scale;
    int recip = isfinite(r) && r >= 1e-30f;
    const __m128 vs = _mm_set1_ps(scale), vz = _mm_set1_ps(zp);
    const __m128 vr = _mm_set1_ps(r), sign = _mm_set1_ps(-0.0f);
    const __m128 near = _mm_set1_ps(0.499f);
    const __m128 hi = _mm_set1_ps(300.0f), lo = _mm_set1_ps(-300.0f);
    const __m128 magic = _mm_set1_ps(12582912.0f), zero = _mm_setzero_ps();
    const __m128 top = _mm_set1_ps(255.0f);
    for (int64_t i = 0; i < n; i += 16) {
        __m128i q[4];
        for (int k = 0; k < 4; k++) {
            __m128 xv = _mm_loadu_ps(x + i + 4 * k);
            __m128 t = recip ? _mm_mul_ps(xv, vr) : _mm_div_ps(xv, vs);
            t = _mm_max_ps(lo, _mm_min_ps(hi, t));
            __m128 rt = _mm_sub_ps(_mm_add_ps(t, magic), magic);
            if (recip && _mm_movemask_ps(_mm_cmpgt_ps(
                             _mm_andnot_ps(sign, _mm_sub_ps(t, rt)), near))) {
                t = _mm_div_ps(xv, vs);
                t = _mm_max_ps(lo, _mm_min_ps(hi, t));
                rt = _mm_sub_ps(_mm_add_ps(t, magic), magic);
            }
            t = _mm_add_ps(rt, vz);
            t = _mm_min_ps(top, _mm_max_ps(zero, t));
            t = _mm_and_ps(t, _mm_cmpord_ps(t, t));
            q[k] = _mm_cvttps_epi32(t);
        }
        __m128i w0 = _mm_packs_epi32(q[0], q[1]);
        __m128i w1 = _mm_packs_epi32(q[2], q[3]);
        _mm_storeu_si128((__m128i *)(y + i), _mm_packus_epi16(w0, w1));
    }
}
#else
void sm_q8_minmax_sse2(const float *x, int64_t n, float *lo, float *hi)
{
    for (int64_t i = 0; i < n; i++) {
        *lo = x[i] < *lo ? x[i] : *lo;
        *hi = x[i] > *hi ? x[i] : *hi;
    }
}

void sm_q8_quant_sse2(const float *x, int64_t n, float scale, float zp,
                      uint8_t *y)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = quantize_one(x[i], scale, zp);
}
#endif

/* The chunks the threads share: min / max per chunk, then the
 * quantization. */
typedef struct dq_job {
    const sm_q8_isa *isa;
    const float *x;
    uint8_t *y;
    int64_t n, chunk;
    float lo[64], hi[64];
    float scale, zp;
} dq_job;

/* Bounds of chunk c of j: [*b, *e), *e16 where its 16-multiple part
 * ends. */
static void dq_bounds(const dq_job *j, int64_t c, int64_t *b, int64_t *e,
                      int64_t *e16)
{
    *b = c * j->chunk;
    *e = *b + j->chunk < j->n ? *b + j->chunk : j->n;
    *e16 = *b + (*e - *b) / 16 * 16;
}

static void dq_minmax_range(void *arg, int64_t c0, int64_t c1, int tid)
{
    (void)tid;
    dq_job *j = arg;
    for (int64_t c = c0; c < c1; c++) {
        int64_t b, e, e16;
        dq_bounds(j, c, &b, &e, &e16);
        float lo = 0, hi = 0;
        j->isa->minmax(j->x + b, e16 - b, &lo, &hi);
        for (int64_t i = e16; i < e; i++) {
            lo = j->x[i] < lo ? j->x[i] : lo;
            hi = j->x[i] > hi ? j->x[i] : hi;
        }
        j->lo[c] = lo;
        j->hi[c] = hi;
    }
}

static void dq_quant_range(void *arg, int64_t c0, int64_t c1, int tid)
{
    (void)tid;
    const dq_job *j = arg;
    for (int64_t c = c0; c < c1; c++) {
        int64_t b, e, e16;
        dq_bounds(j, c, &b, &e, &e16);
        j->isa->quant(j->x + b, e16 - b, j->scale, j->zp, j->y + b);
        for (int64_t i = e16; i < e; i++)
            j->y[i] = quantize_one(j->x[i], j->scale, j->zp);
    }
}

/* Chunks of at least 8 Ki elements (a multiple of 16), at most 64; the
 * per-chunk bounds combine in chunk order (any order gives the same:
 * see sm_q8_minmax_sse2). */
static void dq_job_init(dq_job *j, const sm_q8_isa *isa, const float *x,
                        int64_t n, uint8_t *y)
{
    static const sm_q8_isa sse2 = {
        .name = "sse2", .minmax = sm_q8_minmax_sse2, .quant = sm_q8_quant_sse2};
    memset(j, 0, sizeof *j);
    j->isa = isa && isa->quant ? isa : &sse2;
    j->x = x;
    j->y = y;
    j->n = n;
    j->chunk = (n / 64 + 15) / 16 * 16;
    j->chunk = j->chunk < 8192 ? 8192 : j->chunk;
}

static int64_t dq_chunks(const dq_job *j)
{
    return j->n > 0 ? (j->n + j->chunk - 1) / j->chunk : 0;
}

/* The bounds of j's x over tp, then the scale and zero point in the
 * reference's arithmetic, into j. */
static void dq_params(dq_job *j, sm_threadpool *tp)
{
    int64_t nc = dq_chunks(j);
    sm_parallel_for(nc > 1 ? tp : NULL, nc, 1, dq_minmax_range, j);
    float lo = 0, hi = 0;
    for (int64_t c = 0; c < nc; c++) {
        lo = j->lo[c] < lo ? j->lo[c] : lo;
        hi = j->hi[c] > hi ? j->hi[c] : hi;
    }
    /* the reference's arithmetic, once */
    float scale = (float)((double)(float)((double)hi - (double)lo) / 255.0);
    double zpd = 0;
    if (scale) {
        double z = nearbyint((double)(float)(-(double)lo / scale));
        zpd = isnan(z) ? 0 : z < 0 ? 0 : z > 255 ? 255 : z;
    }
    j->scale = scale;
    j->zp = (float)zpd;
}

void sm_q8_dynamic_params(const sm_q8_isa *isa, const float *x, int64_t n,
                          float *scale, uint8_t *zp, sm_threadpool *tp)
{
    dq_job j;
    dq_job_init(&j, isa, x, n, NULL);
    dq_params(&j, tp);
    *scale = j.scale;
    *zp = (uint8_t)j.zp;
}

void sm_q8_quantize_with(const sm_q8_isa *isa, const float *x, int64_t n,
                         float scale, uint8_t zp, uint8_t *y)
{
    dq_job j;
    dq_job_init(&j, isa, x, n, y);
    if (!scale) {
        if (n > 0)
            memset(y, zp, (size_t)n);
        return;
    }
    int64_t n16 = n / 16 * 16;
    j.isa->quant(x, n16, scale, (float)zp, y);
    for (int64_t i = n16; i < n; i++)
        y[i] = quantize_one(x[i], scale, (float)zp);
}

void sm_q8_quantize_dynamic(const sm_q8_isa *isa, const float *x, int64_t n,
                            uint8_t *y, float *scale_out, uint8_t *zp_out,
                            sm_threadpool *tp)
{
    dq_job j;
    dq_job_init(&j, isa, x, n, y);
    dq_params(&j, tp);
    int64_t nc = dq_chunks(&j);
    if (j.scale)
        sm_parallel_for(nc > 1 ? tp : NULL, nc, 1, dq_quant_range, &j);
    else if (n > 0)
        memset(y, (int)j.zp, (size_t)n);
    *scale_out = j.scale;
    *zp_out = (uint8_t)j.zp;
}

smelt_status sm_cpu_dql_run(const sm_cpu_ops *ops, const sm_kargs *a,
                            const sm_cpu_config *c, const void *packed,
                            sm_threadpool *tp)
{
    (void)c, (void)packed;
    const sm_tensor *xt = a->in[0];
    if (a->out[0]->numel != xt->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    float scale;
    uint8_t zp;
    sm_q8_quantize_dynamic(sm_q8_isa_of(ops), xt->data, xt->numel,
                           a->out[0]->data, &scale, &zp, tp);
    if (a->n_out > 1 && a->out[1] && a->out[1]->numel == 1)
        *(float *)a->out[1]->data = scale;
    if (a->n_out > 2 && a->out[2] && a->out[2]->numel == 1)
        *(uint8_t *)a->out[2]->data = zp;
    return SMELT_OK;
}
