/*
 * rows.inc.h - the vectorized elementwise, reduction, normalization and
 * strided-row primitives, written once over a simd_*.h vocabulary and
 * compiled per ISA (included by isa_*.c after vmath.inc.h).
 *
 * Each loop runs whole vectors and then one partial vector through masked
 * loads and stores, so no primitive touches memory past its n elements.
 */

/* One unary function (an activation or SM_UNARY_*) on a vector. */
VINL V v_unary(int f, V x, V a, V b)
{
    switch (f) {
    case SM_UNARY_EXP: return v_exp(x);
    case SM_UNARY_NEG: return v_sub(v_zero(), x);
    case SM_UNARY_ABS: return v_abs(x);
    case SM_UNARY_SQRT: return v_sqrt(x);
    case SM_UNARY_ERF: return v_erf(x);
    case SM_UNARY_RECIP: return v_div(v_set1(1.0f), x);
    default: return v_act(x, f, a, b);
    }
}

static void unary(int f, float a, float b, const float *x, float *y, int64_t n)
{
    V va = v_set1(a), vb = v_set1(b);
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        v_store(y + i, v_unary(f, v_load(x + i), va, vb));
    if (i < n)
        v_storen(y + i, v_unary(f, v_loadn(x + i, n - i), va, vb), n - i);
}

VINL V v_binary(int op, V a, V b)
{
    switch (op) {
    case SM_BIN_ADD: return v_add(a, b);
    case SM_BIN_SUB: return v_sub(a, b);
    case SM_BIN_MUL: return v_mul(a, b);
    case SM_BIN_DIV: return v_div(a, b);
    case SM_BIN_MAX: return v_max(a, b);
    default: return v_min(a, b);
    }
}

/* A vector of x at i: the next VL elements (step 1) or x[0] repeated
 * (step 0). */
VINL V v_at(const float *x, int64_t step, int64_t i, int64_t cnt)
{
    if (!step)
        return v_set1(*x);
    return cnt >= VL ? v_load(x + i) : v_loadn(x + i, cnt);
}

static void binary(int op, const float *a, int64_t sa, const float *b,
                   int64_t sb, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i;
        V r = v_binary(op, v_at(a, sa, i, cnt), v_at(b, sb, i, cnt));
        if (cnt >= VL)
            v_store(y + i, r);
        else
            v_storen(y + i, r, cnt);
    }
}

VINL V v_red(int kind, V a, V b)
{
    return kind == SM_RED_SUM   ? v_add(a, b)
           : kind == SM_RED_MAX ? v_max(a, b)
                                : v_min(a, b);
}

/* Four accumulators hide the add latency; max and min pad the partial
 * vector with -inf / +inf, the sum with 0. */
static float reduce(int kind, const float *x, int64_t n)
{
    float id = kind == SM_RED_SUM   ? 0.0f
               : kind == SM_RED_MAX ? -__builtin_inff()
                                    : __builtin_inff();
    V r0 = v_set1(id), r1 = r0, r2 = r0, r3 = r0;
    int64_t i = 0;
    for (; i + 4 * VL <= n; i += 4 * VL) {
        r0 = v_red(kind, r0, v_load(x + i));
        r1 = v_red(kind, r1, v_load(x + i + VL));
        r2 = v_red(kind, r2, v_load(x + i + 2 * VL));
        r3 = v_red(kind, r3, v_load(x + i + 3 * VL));
    }
    for (; i + VL <= n; i += VL)
        r0 = v_red(kind, r0, v_load(x + i));
    if (i < n)
        r1 = v_red(kind, r1, v_loadn_fill(x + i, n - i, id));
    V r = v_red(kind, v_red(kind, r0, r1), v_red(kind, r2, r3));
    return kind == SM_RED_SUM   ? v_hsum(r)
           : kind == SM_RED_MAX ? v_hmax(r)
                                : v_hmin(r);
}

static void reduce_acc(int kind, float *y, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VL <= n; i += VL)
        v_store(y + i, v_red(kind, v_load(y + i), v_load(x + i)));
    if (i < n)
        v_storen(y + i,
                 v_red(kind, v_loadn(y + i, n - i), v_loadn(x + i, n - i)),
                 n - i);
}

/*
 * Softmax of one contiguous row in three sweeps: the max, then
 * y = e^(x - max) with its sum, then the scale (or, for LogSoftmax,
 * y = (x - max) - log(sum): x - max is exact near the max, whereas
 * max + log(sum) rounds at the max's magnitude, off by up to 1 at
 * logits of 1e7). Lanes past n read as -inf, so e^ gives 0.
 */
static void softmax_row(const float *x, float *y, int64_t n, int log_)
{
    const float ninf = -__builtin_inff();
    float mx = reduce(SM_RED_MAX, x, n);
    V vm = v_set1(mx), acc = v_zero();
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i;
        V e = v_exp(v_sub(
            cnt >= VL ? v_load(x + i) : v_loadn_fill(x + i, cnt, ninf), vm));
        acc = v_add(acc, e);
        if (log_)
            continue;
        if (cnt >= VL)
            v_store(y + i, e);
        else
            v_storen(y + i, e, cnt);
    }
    float sum = v_hsum(acc);
    if (log_) {
        V ls = v_set1(logf(sum));
        for (int64_t i = 0; i < n; i += VL) {
            int64_t cnt = n - i;
            if (cnt >= VL)
                v_store(y + i, v_sub(v_sub(v_load(x + i), vm), ls));
            else
                v_storen(y + i, v_sub(v_sub(v_loadn(x + i, cnt), vm), ls), cnt);
        }
        return;
    }
    V inv = v_set1(1.0f / sum);
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i;
        if (cnt >= VL)
            v_store(y + i, v_mul(v_load(y + i), inv));
        else
            v_storen(y + i, v_mul(v_loadn(y + i, cnt), inv), cnt);
    }
}

/*
 * Softmax across n groups of `inner` floats (an axis that is not the
 * last): vectors run along the inner lanes, each lane normalized across
 * the groups. Three sweeps over the groups per block of lanes.
 */
static void softmax_cols(const float *x, float *y, int64_t n, int64_t inner,
                         int log_)
{
    const float ninf = -__builtin_inff();
    for (int64_t j = 0; j < inner; j += VL) {
        int64_t cnt = inner - j;
        V mx = v_set1(ninf), sum = v_zero();
        for (int64_t g = 0; g < n; g++)
            mx = v_max(mx, v_at(x + g * inner, 1, j, cnt));
        for (int64_t g = 0; g < n; g++) {
            V e = v_exp(v_sub(v_at(x + g * inner, 1, j, cnt), mx));
            sum = v_add(sum, e);
            if (!log_) {
                if (cnt >= VL)
                    v_store(y + g * inner + j, e);
                else
                    v_storen(y + g * inner + j, e, cnt);
            }
        }
        float s[VL];
        v_store(s, sum);
        for (int l = 0; l < VL; l++)
            s[l] = log_ ? logf(s[l]) : 1.0f / s[l];
        V f = v_load(s);
        for (int64_t g = 0; g < n; g++) {
            const float *src = log_ ? x + g * inner : y + g * inner;
            V v = v_at(src, 1, j, cnt);
            /* (x - max) - log(sum), as softmax_row */
            v = log_ ? v_sub(v_sub(v, mx), f) : v_mul(v, f);
            if (cnt >= VL)
                v_store(y + g * inner + j, v);
            else
                v_storen(y + g * inner + j, v, cnt);
        }
    }
}

/*
 * Layer normalization of one row: the mean, then the variance as the
 * mean of squared deviations (two passes: no cancellation), then
 * y = (x - mean) * rstd * g + b.
 */
static void layernorm_row(const float *x, float *y, int64_t n, const float *g,
                          const float *b, float eps, float *mean, float *rstd)
{
    float mu = reduce(SM_RED_SUM, x, n) / (float)n;
    V vm = v_set1(mu), acc = v_zero();
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i;
        /* lanes past n read as the mean: they add no deviation */
        V d =
            v_sub(cnt >= VL ? v_load(x + i) : v_loadn_fill(x + i, cnt, mu), vm);
        acc = v_fma(d, d, acc);
    }
    float rs = 1.0f / sqrtf(v_hsum(acc) / (float)n + eps);
    if (mean)
        *mean = mu;
    if (rstd)
        *rstd = rs;
    V vr = v_set1(rs);
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i;
        V v = v_mul(v_sub(v_at(x, 1, i, cnt), vm), vr);
        if (g)
            v = v_mul(v, v_at(g, 1, i, cnt));
        if (b)
            v = v_add(v, v_at(b, 1, i, cnt));
        if (cnt >= VL)
            v_store(y + i, v);
        else
            v_storen(y + i, v, cnt);
    }
}

/* Up to VL floats x[(i + l) * sx], l < cnt, as one vector (lanes past
 * cnt zero): a load when contiguous, else gathered through tmp. */
VINL V load_strided(const float *x, int64_t sx, int64_t i, int64_t cnt,
                    float *tmp)
{
    if (sx != 1) {
        for (int64_t l = 0; l < cnt; l++)
            tmp[l] = x[(i + l) * sx];
        x = tmp;
        i = 0;
    }
    return cnt == VL ? v_load(x + i) : v_loadn(x + i, cnt);
}

/* y[i] += w * x[i * sx]: a pooling sum over one output
 * row. Unit stride loads vectors; other strides gather element by
 * element into a small buffer first. */
static void axpy_strided(float w, const float *x, int64_t sx, float *y,
                         int64_t n)
{
    V vw = v_set1(w);
    float tmp[VL];
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i < VL ? n - i : VL;
        V xv = load_strided(x, sx, i, cnt, tmp);
        if (cnt == VL)
            v_store(y + i, v_fma(vw, xv, v_load(y + i)));
        else
            v_storen(y + i, v_fma(vw, xv, v_loadn(y + i, cnt)), cnt);
    }
}

/* y[i] = max over t < ntaps of taps[t][i], for i in [0, n): one output
 * row of a max pooling whose taps are contiguous rows (pool.c pads and
 * phase-splits the input), the running maximum kept in registers across
 * the taps: one store per output instead of one per tap. */
static void max_taps(const float *const *taps, int ntaps, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i += 2 * VL) {
        int64_t c0 = n - i < VL ? n - i : VL;
        int64_t c1 = n - i - VL < 0 ? 0 : n - i - VL < VL ? n - i - VL : VL;
        V a0 = v_set1(-__builtin_inff()), a1 = a0;
        for (int t = 0; t < ntaps; t++) {
            const float *p = taps[t] + i;
            a0 = v_max(a0, c0 == VL ? v_load(p) : v_loadn(p, c0));
            if (c1)
                a1 = v_max(a1, c1 == VL ? v_load(p + VL) : v_loadn(p + VL, c1));
        }
        if (c0 == VL)
            v_store(y + i, a0);
        else
            v_storen(y + i, a0, c0);
        if (c1 == VL)
            v_store(y + i + VL, a1);
        else if (c1)
            v_storen(y + i + VL, a1, c1);
    }
}

/* y[i] = max(y[i], x[i * sx]) over one output row of a max pool. */
static void max_strided(const float *x, int64_t sx, float *y, int64_t n)
{
    float tmp[VL];
    for (int64_t i = 0; i < n; i += VL) {
        int64_t cnt = n - i < VL ? n - i : VL;
        V xv = load_strided(x, sx, i, cnt, tmp);
        if (cnt == VL)
            v_store(y + i, v_max(v_load(y + i), xv));
        else
            v_storen(y + i, v_max(v_loadn(y + i, cnt), xv), cnt);
    }
}

/* y[i] = act(bias + sum over t < ntaps of w[t] * taps[t][i]), for i in
 * [0, n): one output row of a depthwise convolution whose taps are
 * contiguous rows (conv_depthwise.c pads and phase-splits the input so every
 * tap is), with the bias and activation of its fused epilogue applied in
 * registers before the store. Four vectors of outputs per step, so four
 * independent FMA chains hide the FMA latency; the last step masks its
 * lanes past n. */
VINL void dw_row_body(const float *const *taps, const float *w, const int nt,
                      float *y, int64_t n, float bias, const int act,
                      float act_a, float act_b)
{
    V vb = v_set1(bias), aa = v_set1(act_a), ab = v_set1(act_b);
    for (int64_t i = 0; i < n; i += 4 * VL) {
        int64_t c[4];
        V a[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            int64_t r = n - i - k * VL;
            c[k] = r < 0 ? 0 : r > VL ? VL : r;
            a[k] = vb;
        }
        if (c[3] == VL) {
#pragma GCC unroll 9
            for (int t = 0; t < nt; t++) {
                V wt = v_set1(w[t]);
                const float *p = taps[t] + i;
#pragma GCC unroll 4
                for (int k = 0; k < 4; k++)
                    a[k] = v_fma(wt, v_load(p + k * VL), a[k]);
            }
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++)
                v_store(y + i + k * VL, v_act(a[k], act, aa, ab));
            continue;
        }
        for (int t = 0; t < nt; t++) {
            V wt = v_set1(w[t]);
            const float *p = taps[t] + i;
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++)
                if (c[k])
                    a[k] = v_fma(wt, v_loadn(p + k * VL, c[k]), a[k]);
        }
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++)
            if (c[k])
                v_storen(y + i + k * VL, v_act(a[k], act, aa, ab), c[k]);
    }
}

/* One block of VL channels of a depthwise convolution on channel-
 * interleaved data (conv_depthwise_blocked.c): for the OH x OW outputs,
 * out[oy * ors + ox * os + l] = act(bias[l] + sum over t of
 * wt[t * VL + l] * in[q(oy, ox) + off[t] + l]), q(oy, ox) = oy * sh *
 * pitch + ox * sw * ps. The input's pixels are ps floats apart: VL in a
 * scratch buffer, 16 in a channel-blocked tensor read in place. Every
 * tap is one vector FMA on VL channels, whatever the plane's size; four
 * outputs at a time keep four FMA chains in flight. */
/* Output x (a multiple of 4) of a 3 x 3 kernel of stride S (1 or 2),
 * dilation 1: per tap row, the 4 outputs' inputs (S * 3 + 3 vectors)
 * are loaded once, and the 9 weights sit in registers. */
VINL void dw_quad3(const float *row, int64_t pitch, int64_t ps, const V *w,
                   V vb, const int S, V *a)
{
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++)
        a[k] = vb;
#pragma GCC unroll 2
    for (int ky = 0; ky < 3; ky++) {
        const float *r = row + ky * pitch;
        V x[9];
#pragma GCC unroll 9
        for (int j = 0; j < 9; j++)
            x[j] = j < 3 * S + 3 ? v_load(r + j * ps) : v_zero();
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++)
#pragma GCC unroll 2
            for (int kx = 0; kx < 3; kx++)
                a[k] = v_fma(w[ky * 3 + kx], x[k * S + kx], a[k]);
    }
}

/* dw_cblock for 3 x 3 taps of dilation 1 (MobileNet's): weights in
 * registers and each input vector loaded once per tap row for four
 * outputs (stride 1: 6 loads where the general loop makes 12). ps is a
 * constant where it is inlined, so that the loads take fixed offsets. */
VINL void dw_cblock3_ps(const float *in, int64_t pitch, const int64_t ps,
                        int64_t sh, int64_t sw, const float *wt,
                        const float *bias, int act, float act_a, float act_b,
                        int64_t OH, int64_t OW, float *out, int64_t os,
                        int64_t ors)
{
    V aa = v_set1(act_a), ab = v_set1(act_b), vb = v_load(bias), w[9];
    for (int t = 0; t < 9; t++)
        w[t] = v_load(wt + t * VL);
    for (int64_t oy = 0; oy < OH; oy++) {
        const float *row = in + oy * sh * pitch;
        float *o = out + oy * ors;
        int64_t ox = 0;
        for (; ox + 4 <= OW; ox += 4) {
            V a[4];
            if (sw == 1)
                dw_quad3(row + ox * ps, pitch, ps, w, vb, 1, a);
            else
                dw_quad3(row + ox * 2 * ps, pitch, ps, w, vb, 2, a);
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++)
                v_store(o + (ox + k) * os, v_act(a[k], act, aa, ab));
        }
        for (; ox < OW; ox++) {
            V a0 = vb;
            const float *p = row + ox * sw * ps;
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                    a0 = v_fma(w[ky * 3 + kx], v_load(p + ky * pitch + kx * ps),
                               a0);
            v_store(o + ox * os, v_act(a0, act, aa, ab));
        }
    }
}

static void dw_cblock3(const float *in, int64_t pitch, int64_t ps, int64_t sh,
                       int64_t sw, const float *wt, const float *bias, int act,
                       float act_a, float act_b, int64_t OH, int64_t OW,
                       float *out, int64_t os, int64_t ors)
{
    if (ps == VL)
        dw_cblock3_ps(in, pitch, VL, sh, sw, wt, bias, act, act_a, act_b, OH,
                      OW, out, os, ors);
    else /* 16: a channel-blocked input read in place */
        dw_cblock3_ps(in, pitch, 16, sh, sw, wt, bias, act, act_a, act_b, OH,
                      OW, out, os, ors);
}

static void dw_cblock(const float *in, int64_t pitch, int64_t ps, int64_t sh,
                      int64_t sw, const float *wt, const int64_t *off,
                      int ntaps, const float *bias, int act, float act_a,
                      float act_b, int64_t OH, int64_t OW, float *out,
                      int64_t os, int64_t ors)
{
    int is3 = ntaps == 9 && (sw == 1 || sw == 2) && (ps == VL || ps == 16);
    for (int t = 0; is3 && t < 9; t++)
        is3 = off[t] == (t / 3) * pitch + (t % 3) * ps;
    if (is3) {
        dw_cblock3(in, pitch, ps, sh, sw, wt, bias, act, act_a, act_b, OH, OW,
                   out, os, ors);
        return;
    }
    V aa = v_set1(act_a), ab = v_set1(act_b), vb = v_load(bias);
    int64_t st = sw * ps;
    for (int64_t oy = 0; oy < OH; oy++) {
        const float *row = in + oy * sh * pitch;
        float *o = out + oy * ors;
        int64_t ox = 0;
        for (; ox + 4 <= OW; ox += 4) {
            V a0 = vb, a1 = vb, a2 = vb, a3 = vb;
            const float *p = row + ox * st;
            for (int t = 0; t < ntaps; t++) {
                V wv = v_load(wt + t * VL);
                const float *q = p + off[t];
                a0 = v_fma(wv, v_load(q), a0);
                a1 = v_fma(wv, v_load(q + st), a1);
                a2 = v_fma(wv, v_load(q + 2 * st), a2);
                a3 = v_fma(wv, v_load(q + 3 * st), a3);
            }
            v_store(o + ox * os, v_act(a0, act, aa, ab));
            v_store(o + (ox + 1) * os, v_act(a1, act, aa, ab));
            v_store(o + (ox + 2) * os, v_act(a2, act, aa, ab));
            v_store(o + (ox + 3) * os, v_act(a3, act, aa, ab));
        }
        for (; ox < OW; ox++) {
            V a0 = vb;
            const float *p = row + ox * st;
            for (int t = 0; t < ntaps; t++)
                a0 = v_fma(v_load(wt + t * VL), v_load(p + off[t]), a0);
            v_store(o + ox * os, v_act(a0, act, aa, ab));
        }
    }
}

/* Output channels a direct convolution computes together (cdir_row),
 * and at most this many vectors of outputs per channel: 8 x 2
 * accumulators with 32 registers (2 loads and 8 broadcasts per 16
 * FMAs: one 512-bit FMA a cycle on Zen 4 is the limit, and 8 x 3 was
 * no faster), 8 x 1 with 16. */
#define CDIR_MB 8
#define CDIR_XV (VL >= 16 ? 2 : 1)

/* One block of xv vectors (xv <= CDIR_XV, a constant where inlined) of
 * the outputs from i of cdir_row's CDIR_MB channels: every tap loaded
 * once for all of them, the bias and activation before the stores,
 * which stop at n. */
VINL void cdir_block(const float *const *taps, int nt, const float *w,
                     const float *b, int act, V aa, V ab, float *const *y,
                     int64_t i, int64_t n, int xv)
{
    V acc[CDIR_MB][CDIR_XV];
#pragma GCC unroll 8
    for (int m = 0; m < CDIR_MB; m++)
#pragma GCC unroll 2
        for (int x = 0; x < xv; x++)
            acc[m][x] = v_set1(b[m]);
    for (int t = 0; t < nt; t++) {
        const float *p = taps[t] + i;
        const float *wt = w + t * CDIR_MB;
        V xs[CDIR_XV];
#pragma GCC unroll 2
        for (int x = 0; x < xv; x++)
            xs[x] = v_load(p + x * VL);
#pragma GCC unroll 8
        for (int m = 0; m < CDIR_MB; m++) {
            V wm = v_set1(wt[m]);
#pragma GCC unroll 2
            for (int x = 0; x < xv; x++)
                acc[m][x] = v_fma(wm, xs[x], acc[m][x]);
        }
    }
#pragma GCC unroll 8
    for (int m = 0; m < CDIR_MB; m++)
#pragma GCC unroll 2
        for (int x = 0; x < xv; x++) {
            int64_t r = n - i - x * VL;
            V v = v_act(acc[m][x], act, aa, ab);
            if (r >= VL)
                v_store(y[m] + i + x * VL, v);
            else if (r > 0)
                v_storen(y[m] + i + x * VL, v, r);
        }
}

/* y[m][i] = act(b[m] + sum over t < nt of w[t * CDIR_MB + m] *
 * taps[t][i]) for m < CDIR_MB, i < n: CDIR_MB output channels of one
 * output row (or flat band) of a direct convolution (conv_direct.c).
 * Blocks of CDIR_XV vectors while more than CDIR_XV - 1 remain, then
 * one of as few vectors as the rest needs: a run is computed up to the
 * next vector, and the taps are read less than VL floats past n. */
static void cdir_row(const float *const *taps, int nt, const float *w,
                     const float *b, int act, float act_a, float act_b,
                     float *const *y, int64_t n)
{
    V aa = v_set1(act_a), ab = v_set1(act_b);
    int64_t i = 0;
    for (; n - i > (CDIR_XV - 1) * VL; i += CDIR_XV * VL)
        cdir_block(taps, nt, w, b, act, aa, ab, y, i, n, CDIR_XV);
#if CDIR_XV == 2
    if (n - i > 0)
        cdir_block(taps, nt, w, b, act, aa, ab, y, i, n, 1);
#endif
}

/* 3 x 3 kernels (MobileNet's) with the cheap activations get fully
 * unrolled bodies with the activation a constant; the rest one generic
 * body. */
static void dw_row(const float *const *taps, const float *w, int ntaps,
                   float *y, int64_t n, float bias, int act, float act_a,
                   float act_b)
{
    if (ntaps == 9) {
        switch (act) {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    case SM_ACT_##ID:                                                          \
        if (cheap) {                                                           \
            dw_row_body(taps, w, 9, y, n, bias, SM_ACT_##ID, act_a, act_b);    \
            return;                                                            \
        }                                                                      \
        break;
#include "core/act.def"
#undef ACT
        default: break;
        }
    }
    dw_row_body(taps, w, ntaps, y, n, bias, act, act_a, act_b);
}

/* d[j] = x[2 j] for j < n (stride-2 inputs of pooling and depthwise
 * convolution): whole vectors deinterleaved from two loads; the last,
 * partial vector from two masked loads that stop at x[2 (n - 1)] (no
 * read past it). */
static void gather2(const float *x, float *d, int64_t n)
{
    int64_t j = 0;
    for (; j + VL < n; j += VL)
        v_store(d + j, v_even(v_load(x + 2 * j), v_load(x + 2 * j + VL)));
    if (j < n) {
        int64_t c = 2 * (n - j) - 1; /* floats from x[2 j] to x[2 (n-1)] */
        V a = v_loadn(x + 2 * j, c < VL ? c : VL);
        V b = c > VL ? v_loadn(x + 2 * j + VL, c - VL) : v_zero();
        v_storen(d + j, v_even(a, b), n - j);
    }
}

/* Channel interleaving a vector at a time (conv_depthwise_blocked.c,
 * conv_posmajor.c): lanes_in: d[j * VL + l] = s[l][j], lanes_out: d[l][j] = s[j
 * * stride + l], for l < VL and j < n; whole VL x VL blocks transposed in
 * registers, the last columns one by one. */
static void lanes_in(const float *const *s, int64_t n, float *d)
{
    int64_t j = 0;
    for (; j + VL <= n; j += VL) {
        V r[VL];
        for (int l = 0; l < VL; l++)
            r[l] = v_load(s[l] + j);
        v_transpose(r);
        for (int c = 0; c < VL; c++)
            v_store(d + (j + c) * VL, r[c]);
    }
    for (; j < n; j++)
        for (int l = 0; l < VL; l++)
            d[j * VL + l] = s[l][j];
}

static void lanes_out(const float *s, int64_t n, int64_t stride,
                      float *const *d)
{
    int64_t j = 0;
    for (; j + VL <= n; j += VL) {
        V r[VL];
        for (int c = 0; c < VL; c++)
            r[c] = v_load(s + (j + c) * stride);
        v_transpose(r);
        for (int l = 0; l < VL; l++)
            v_store(d[l] + j, r[l]);
    }
    for (; j < n; j++)
        for (int l = 0; l < VL; l++)
            d[l][j] = s[j * stride + l];
}
