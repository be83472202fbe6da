/*
 * attention.inc.h - one query block of flash attention (attention.h),
 * written once over a simd_*.h vocabulary and compiled per ISA (included
 * by isa_*.c after vmath.inc.h).
 *
 * The block is ATT_NV vectors of queries wide and everything runs
 * transposed, queries along the vector lanes:
 *   - Q^T [D][BQ] is copied once per block, pre-multiplied by the scale;
 *   - scores S^T [BK][BQ] = K_blk Q^T: a register tile broadcasts ATT_R
 *     keys' elements, read in place from K's rows, against the ATT_NV
 *     query vectors of Q^T (no packing per key block);
 *   - the softmax runs down the key rows: a query's running maximum is
 *     a lane, so the row maxima, the rescale factors and the sums are
 *     plain vector operations, no horizontal reductions;
 *   - O^T [Dv][BQ] += V_blk^T P^T: the tile broadcasts ATT_R elements of
 *     one V row (in place, consecutive) against the query vectors of P^T;
 *     the rescale of O^T by exp(m_old - m_new) happens as the tile loads.
 * The only copies are Q^T in and O out, once per block; K and V are read
 * where they are.
 */
#include "kernels/cpu/attention.h"

#if VL == 16
#define ATT_NV 4 /* 64 queries a block */
#define ATT_R 6  /* 24 accumulators, 4 query vectors, 1 broadcast */
#elif VL == 8
#define ATT_NV 2 /* 16 queries: 12 accumulators, 2 + 1 of 16 ymm */
#define ATT_R 6
#else
#define ATT_NV 4
#define ATT_R 4
#endif
#define ATT_BQ (ATT_NV * VL)

#define ATT_INL static inline __attribute__((always_inline))

/* st[x][.] = K row x . Q^T for x < r (r and c0 constants after
 * inlining): S^T rows of r keys, ATT_BQ query lanes each, from query
 * vector c0 on (the vectors before it are queries the causal rule hides
 * from all r keys: their lanes are left as they are, for att_mask_max to
 * hide). mx (or NULL): each lane's running maximum, raised by the tile
 * while it is in registers. */
ATT_INL void att_qk(int r, int c0, const float *k, int64_t D, const float *qt,
                    float *st, V *mx)
{
    V acc[ATT_R][ATT_NV];
#pragma GCC unroll 8
    for (int x = 0; x < r; x++)
#pragma GCC unroll 8
        for (int c = c0; c < ATT_NV; c++)
            acc[x][c] = v_zero();
    for (int64_t d = 0; d < D; d++) {
        V q[ATT_NV];
#pragma GCC unroll 8
        for (int c = c0; c < ATT_NV; c++)
            q[c] = v_load(qt + d * ATT_BQ + c * VL);
#pragma GCC unroll 8
        for (int x = 0; x < r; x++) {
            V kb = v_set1(k[x * D + d]);
#pragma GCC unroll 8
            for (int c = c0; c < ATT_NV; c++)
                acc[x][c] = v_fma(kb, q[c], acc[x][c]);
        }
    }
#pragma GCC unroll 8
    for (int x = 0; x < r; x++)
#pragma GCC unroll 8
        for (int c = c0; c < ATT_NV; c++) {
            v_store(st + x * ATT_BQ + c * VL, acc[x][c]);
            if (mx)
                mx[c] = v_max(mx[c], acc[x][c]);
        }
}

/* The end of the run of key rows whose first visible query vector is
 * cs (rows before it start at an earlier vector): row j is hidden by the
 * causal rule from every lane of the vectors before (j + lim) / VL. The
 * score tiles, the mask pass, the softmax and the value tiles all skip
 * the vectors before a row's run, so the rows there are never read. */
ATT_INL int64_t att_run_end(int cs, int64_t nk, int64_t lim)
{
    int64_t je = cs == ATT_NV - 1 ? nk : (cs + 1) * VL - lim;
    return je > nk ? nk : je;
}

/* ot[x][.] = ot[x][.] * alpha + sum over j < nk of v[j][x] p[j][.] for
 * x < r: r rows of O^T (output features), v at the first of them. Key
 * row j is hidden by the causal rule from every query of the vectors
 * before (j + lim) / VL, whose P is 0 there: the rows are swept in runs
 * that skip those vectors (one run, all vectors, off the diagonal). */
ATT_INL void att_pv(int r, const float *v, int64_t Dv, const float *pt,
                    int64_t nk, int64_t lim, const float *alpha, float *ot)
{
    V acc[ATT_R][ATT_NV];
#pragma GCC unroll 8
    for (int c = 0; c < ATT_NV; c++) {
        V al = v_load(alpha + c * VL);
#pragma GCC unroll 8
        for (int x = 0; x < r; x++)
            acc[x][c] = v_mul(v_load(ot + x * ATT_BQ + c * VL), al);
    }
    int64_t j = 0;
#pragma GCC unroll 8
    for (int cs = 0; cs < ATT_NV; cs++) {
        for (int64_t je = att_run_end(cs, nk, lim); j < je; j++) {
            V p[ATT_NV];
#pragma GCC unroll 8
            for (int c = cs; c < ATT_NV; c++)
                p[c] = v_load(pt + j * ATT_BQ + c * VL);
#pragma GCC unroll 8
            for (int x = 0; x < r; x++) {
                V vb = v_set1(v[j * Dv + x]);
#pragma GCC unroll 8
                for (int c = cs; c < ATT_NV; c++)
                    acc[x][c] = v_fma(vb, p[c], acc[x][c]);
            }
        }
    }
#pragma GCC unroll 8
    for (int x = 0; x < r; x++)
#pragma GCC unroll 8
        for (int c = 0; c < ATT_NV; c++)
            v_store(ot + x * ATT_BQ + c * VL, acc[x][c]);
}

/* One tile of r keys from its first visible query vector c0. */
ATT_INL void att_qk_from(int r, int64_t c0, const float *k, int64_t D,
                         const float *qt, float *st, V *mx)
{
    switch (c0) {
    case 0: att_qk(r, 0, k, D, qt, st, mx); break;
#if ATT_NV > 1
    case 1: att_qk(r, 1, k, D, qt, st, mx); break;
#endif
#if ATT_NV > 2
    case 2: att_qk(r, 2, k, D, qt, st, mx); break;
#endif
#if ATT_NV > 3
    case 3: att_qk(r, 3, k, D, qt, st, mx); break;
#endif
    default: break; /* no query sees these keys (never asked) */
    }
}

/* S^T for nk keys: whole tiles of ATT_R keys, then one tile of the rest
 * (each row count its own compiled tile); mx as att_qk's. lim: key row j
 * is visible to lane i iff i >= j + lim (very negative: all visible), so
 * a tile starting at key j skips the query vectors before (j + lim) / VL. */
static void att_scores(const float *k, int64_t D, const float *qt, float *st,
                       int64_t nk, int64_t lim, V *mx)
{
    int64_t j = 0;
    for (; j + ATT_R <= nk; j += ATT_R)
        att_qk_from(ATT_R, j + lim > 0 ? (j + lim) / VL : 0, k + j * D, D, qt,
                    st + j * ATT_BQ, mx);
    int64_t c0 = j + lim > 0 ? (j + lim) / VL : 0;
    switch (nk - j) {
#define ATT_QK_CASE(n)                                                         \
    case n: att_qk_from(n, c0, k + j * D, D, qt, st + j * ATT_BQ, mx); break;
        ATT_QK_CASE(1)
        ATT_QK_CASE(2)
        ATT_QK_CASE(3)
#if ATT_R > 4
        ATT_QK_CASE(4)
        ATT_QK_CASE(5)
#endif
#undef ATT_QK_CASE
    default: break;
    }
}

/* O^T = O^T alpha + V_blk^T P^T over all Dv rows, ATT_R at a time; lim as
 * att_scores'. */
static void att_values(const float *v, int64_t Dv, const float *pt, int64_t nk,
                       int64_t lim, const float *alpha, float *ot)
{
    int64_t x = 0;
    for (; x + ATT_R <= Dv; x += ATT_R)
        att_pv(ATT_R, v + x, Dv, pt, nk, lim, alpha, ot + x * ATT_BQ);
    switch (Dv - x) {
#define ATT_PV_CASE(n)                                                         \
    case n: att_pv(n, v + x, Dv, pt, nk, lim, alpha, ot + x * ATT_BQ); break;
        ATT_PV_CASE(1)
        ATT_PV_CASE(2)
        ATT_PV_CASE(3)
#if ATT_R > 4
        ATT_PV_CASE(4)
        ATT_PV_CASE(5)
#endif
#undef ATT_PV_CASE
    default: break;
    }
}

#if VL == 16
/* e^x for x <= 0 (-inf gives 0, NaN stays NaN): 2^(x log2 e) as 2^f
 * (Cephes exp2f's degree-6 polynomial, |f| <= 1/2) scaled by 2^n with
 * vscalefps, 11 instructions where v_exp_low takes 17. Below -104 the
 * result is 0 (scalef underflows; the exact value is under 7e-46). The
 * rounding of x log2 e costs 2^-24 |x| relatively: 2e-6 at x = -30,
 * where the weight is under 1e-13. */
ATT_INL V att_exp(V x)
{
    V t = v_mul(v_max(v_set1(-104.0f), x), v_set1(1.44269504088896341f));
    V n =
        _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V f = v_sub(t, n);
    V p = v_set1(1.535336188319500e-4f);
    p = v_fma(p, f, v_set1(1.339887440266574e-3f));
    p = v_fma(p, f, v_set1(9.618437357674640e-3f));
    p = v_fma(p, f, v_set1(5.550332471162809e-2f));
    p = v_fma(p, f, v_set1(2.402264791363012e-1f));
    p = v_fma(p, f, v_set1(6.931472028550421e-1f));
    p = v_fma(p, f, v_set1(1.0f));
    return _mm512_scalef_ps(p, n);
}
#else
#define att_exp v_exp_low
#endif

/* The mask's values for key column `col` (a pointer to the block's
 * first query) across the block's nq queries, query stride sq, into
 * lanes (0 past nq); bool masks as 0 / 1. A mask constant over the
 * queries (sq 0) is one broadcast. */
static V att_mask_lanes(const sm_attn_args *a, int64_t col, int64_t sq,
                        int64_t nq, float *lanes, int c)
{
    if (a->mask_kind == SM_ATTN_MASK_FLOAT) {
        const float *m = (const float *)a->mask + col;
        if (sq == 0)
            return v_set1(m[0]);
        if (sq == 1) { /* a mask [.., Tq, 1]: the lanes are contiguous */
            int64_t cnt = nq - c * VL;
            return cnt >= VL  ? v_load(m + c * VL)
                   : cnt <= 0 ? v_zero()
                              : v_loadn_fill(m + c * VL, cnt, 0.0f);
        }
        for (int64_t i = 0; i < VL; i++) {
            int64_t q = c * VL + i;
            lanes[i] = q < nq ? m[q * sq] : 0.0f;
        }
    } else {
        const uint8_t *m = (const uint8_t *)a->mask + col;
        if (sq == 0)
            return v_set1(m[0] ? 1.0f : 0.0f);
        for (int64_t i = 0; i < VL; i++) {
            int64_t q = c * VL + i;
            lanes[i] = q < nq && m[q * sq] ? 1.0f : 0.0f;
        }
    }
    return v_load(lanes);
}

/*
 * Scale is already in Q^T. Adds the mask (mask element offset moff of
 * the block's first query and key, strides sq per query and sk per key)
 * and hides what the causal rule or a false bool hides (-inf) in the nk
 * rows of S^T, leaving each lane's maximum in mx. causal_from: the first
 * key row of the block that some query of the block cannot see (nk when
 * none); lane i sees key row j iff i >= j + lim. Vectors the causal rule
 * hides whole from a row are skipped (att_run_end).
 */
static void att_mask_max(const sm_attn_args *a, float *st, int64_t nk,
                         int64_t nq, int64_t moff, int64_t sq, int64_t sk,
                         int64_t causal_from, int64_t lim, float *lanes,
                         V mx[ATT_NV])
{
    const V ninf = v_set1(-__builtin_inff()), half = v_set1(0.5f);
    V iota[ATT_NV];
    for (int c = 0; c < ATT_NV; c++) {
        for (int i = 0; i < VL; i++)
            lanes[i] = (float)(c * VL + i);
        iota[c] = v_load(lanes);
        mx[c] = ninf;
    }
    int64_t j = 0;
#pragma GCC unroll 8
    for (int cs = 0; cs < ATT_NV; cs++)
        for (int64_t je = att_run_end(cs, nk, lim); j < je; j++) {
            float *row = st + j * ATT_BQ;
#pragma GCC unroll 8
            for (int c = cs; c < ATT_NV; c++) {
                V s = v_load(row + c * VL);
                if (a->mask_kind == SM_ATTN_MASK_FLOAT)
                    s = v_add(
                        s, att_mask_lanes(a, moff + j * sk, sq, nq, lanes, c));
                else if (a->mask_kind == SM_ATTN_MASK_BOOL)
                    s = v_sel_lt(
                        att_mask_lanes(a, moff + j * sk, sq, nq, lanes, c),
                        half, ninf, s);
                if (j >= causal_from)
                    s = v_sel_lt(iota[c], v_set1((float)(j + lim)), ninf, s);
                v_store(row + c * VL, s);
                mx[c] = v_max(mx[c], s);
            }
        }
}

/*
 * The online softmax step for one key block: m_new = max(m, block max);
 * alpha = e^(m - m_new) rescales what was summed so far; P = e^(S - m_new)
 * in place of S^T; l = l alpha + sum P. While a query has seen only
 * hidden keys (m_new = -inf) it subtracts 0 instead, so hidden keys give
 * P = 0 and not NaN, and its l stays 0. Rows skip the vectors the causal
 * rule hides whole (lim as att_mask_max's): their P is never read.
 */
static void att_softmax_step(float *st, int64_t nk, int64_t lim,
                             const V mx[ATT_NV], float *m, float *l,
                             float *alpha)
{
    const V flo = v_set1(-3.402823466e38f);
    V mu[ATT_NV], sum[ATT_NV];
    _Pragma("GCC unroll 8") for (int c = 0; c < ATT_NV; c++)
    {
        V mo = v_load(m + c * VL), mn = v_max(mo, mx[c]);
        mu[c] = v_sel_lt(mn, flo, v_zero(), mn);
        v_store(alpha + c * VL, att_exp(v_sub(mo, mu[c])));
        v_store(m + c * VL, mn);
        sum[c] = v_zero();
    }
    int64_t j = 0;
#pragma GCC unroll 8
    for (int cs = 0; cs < ATT_NV; cs++)
        for (int64_t je = att_run_end(cs, nk, lim); j < je; j++) {
            float *row = st + j * ATT_BQ;
#pragma GCC unroll 8
            for (int c = cs; c < ATT_NV; c++) {
                V p = att_exp(v_sub(v_load(row + c * VL), mu[c]));
                v_store(row + c * VL, p);
                sum[c] = v_add(sum[c], p);
            }
        }
    _Pragma("GCC unroll 8") for (int c = 0; c < ATT_NV; c++) v_store(
        l + c * VL, v_fma(v_load(l + c * VL), v_load(alpha + c * VL), sum[c]));
}

/* One VL x VL block or less: w floats of rows p, p + ld, .. (n rows,
 * zeros after them), transposed in registers into r. */
ATT_INL void att_tile_in(const float *p, int64_t ld, int64_t n, int64_t w,
                         V r[VL])
{
    if (n >= VL && w == VL) /* the common case, without a test per row */
        for (int l = 0; l < VL; l++)
            r[l] = v_load(p + l * ld);
    else
        for (int64_t l = 0; l < VL; l++)
            r[l] = l >= n    ? v_zero()
                   : w == VL ? v_load(p + l * ld)
                             : v_loadn(p + l * ld, w);
    v_transpose(r);
}

/*
 * Q^T of a block: qt[d][i] = scale q[i][d] for its nq queries (rows of
 * q, D apart), 0 in the lanes past nq. Whole VL x VL blocks go through
 * registers: a strided scalar copy took a tenth of the kernel's time at
 * short lengths, where a block sees few key blocks.
 */
static void att_q_in(const float *q, int64_t D, int64_t nq, float scale,
                     float *qt)
{
    const V sc = v_set1(scale);
    for (int c = 0; c < ATT_NV; c++)
        for (int64_t d = 0; d < D; d += VL) {
            int64_t w = D - d < VL ? D - d : VL;
            V r[VL];
            att_tile_in(q + c * VL * D + d, D, nq - c * VL, w, r);
            for (int64_t x = 0; x < w; x++)
                v_store(qt + (d + x) * ATT_BQ + c * VL, v_mul(r[x], sc));
        }
}

/*
 * O = O^T / l into the nq output rows o (Dv apart): O^T's rows times
 * 1 / l, one division per query vector (within an ulp of the quotient;
 * 0 * (1 / 0) = NaN for a query that saw no key, whose O^T is 0), then
 * VL x VL transposes, so no scalar division or strided access is left.
 */
static void att_o_out(const float *ot, const float *l, int64_t Dv, int64_t nq,
                      float *o)
{
    for (int c = 0; c < ATT_NV && c * VL < nq; c++) {
        const V il = v_div(v_set1(1.0f), v_load(l + c * VL));
        int64_t n = nq - c * VL < VL ? nq - c * VL : VL;
        for (int64_t x = 0; x < Dv; x += VL) {
            int64_t w = Dv - x < VL ? Dv - x : VL;
            V r[VL];
            for (int64_t k = 0; k < VL; k++)
                r[k] = k < w ? v_mul(v_load(ot + (x + k) * ATT_BQ + c * VL), il)
                             : v_zero();
            v_transpose(r);
            if (n == VL && w == VL) /* the common case */
                for (int i = 0; i < VL; i++)
                    v_store(o + (c * VL + i) * Dv + x, r[i]);
            else
                for (int64_t i = 0; i < n; i++) {
                    if (w == VL)
                        v_store(o + (c * VL + i) * Dv + x, r[i]);
                    else
                        v_storen(o + (c * VL + i) * Dv + x, r[i], w);
                }
        }
    }
}

/* One query block's running state in the workspace: its Q^T (scaled),
 * O^T, running maxima, sums and rescale factors, and where it stands. */
typedef struct att_blk {
    float *qt, *ot, *m, *l, *alpha;
    int64_t i0, nq, jend, moff;
} att_blk;

/*
 * One key block [j0, j0 + nk) of the flash loop for query block B of
 * (b, h): scores into the shared tile st, mask and causal test, the
 * online softmax step and O^T += V_blk^T P^T. k and v are the head's
 * first key and value rows; off = Tk - Tq.
 */
static void att_step(const sm_attn_args *a, const att_blk *B, const float *k,
                     const float *v, int64_t j0, int64_t nk, int64_t off,
                     float *st, float *lanes)
{
    const int64_t D = a->head_dim, Dv = a->v_dim, *ms = a->mask_strides;
    /* the first query (i0) sees keys up to i0 + off: rows past that
     * need the causal test */
    int64_t cf = nk;
    if (a->causal && B->i0 + off + 1 - j0 < nk)
        cf = B->i0 + off + 1 - j0 < 0 ? 0 : B->i0 + off + 1 - j0;
    /* a block no mask or causal test touches takes its maxima from the
     * score tiles' registers; the others in a pass of their own */
    int plain = a->mask_kind == SM_ATTN_MASK_NONE && cf == nk;
    V mx[ATT_NV];
    for (int c = 0; c < ATT_NV; c++)
        mx[c] = v_set1(-__builtin_inff());
    /* lane i sees key row j iff i >= j + lim (causal); without the causal
     * rule every row is visible to every lane */
    int64_t lim = a->causal ? j0 - off - B->i0 : -((int64_t)1 << 40);
    att_scores(k + j0 * D, D, B->qt, st, nk, lim, plain ? mx : NULL);
    if (!plain)
        att_mask_max(a, st, nk, B->nq, B->moff + j0 * ms[3], ms[2], ms[3], cf,
                     lim, lanes, mx);
    att_softmax_step(st, nk, lim, mx, B->m, B->l, B->alpha);
    att_values(v + j0 * Dv, Dv, st, nk, lim, B->alpha, B->ot);
}

/*
 * Query blocks i0, i0 + ATT_BQ, .. (nb of them, at most SM_ATTN_GROUP,
 * the last possibly partial) of (batch b, query head h): the flash loop
 * over the keys they can see, key blocks outermost, so each key and
 * value block read from L2 / L3 serves all nb query blocks while it is
 * in L1 (at long lengths a head's K and V do not fit in L2, and one
 * sweep per block streamed them once per ATT_BQ queries). Then O = O^T
 * / l transposed into the output rows (0 / 0 = NaN for a query that saw
 * no key). ws: attn_ws_floats (the driver's per-thread slice): nb sets
 * of Q^T, O^T, m, l and alpha, then the score tile and the mask lanes.
 */
static void attn_block(const sm_attn_args *a, int64_t b, int64_t h, int64_t i0,
                       int nb, float *ws)
{
    const int64_t D = a->head_dim, Dv = a->v_dim, Tq = a->q_len, Tk = a->kv_len,
                  BK = SM_ATTN_BK;
    const int64_t hk = h / (a->q_heads / a->kv_heads), off = Tk - Tq;
    const float *k = a->k + (b * a->kv_heads + hk) * Tk * D;
    const float *v = a->v + (b * a->kv_heads + hk) * Tk * Dv;
    const int64_t *ms = a->mask_strides;
    att_blk blk[SM_ATTN_GROUP];
    float *st = ws + (int64_t)SM_ATTN_GROUP * (D + Dv + 3) * ATT_BQ,
          *lanes = st + BK * ATT_BQ;
    int64_t jmax = 0;
    for (int g = 0; g < nb; g++) {
        att_blk *B = &blk[g];
        B->qt = ws + (int64_t)g * (D + Dv + 3) * ATT_BQ;
        B->ot = B->qt + D * ATT_BQ;
        B->m = B->ot + Dv * ATT_BQ;
        B->l = B->m + ATT_BQ;
        B->alpha = B->l + ATT_BQ;
        B->i0 = i0 + g * ATT_BQ;
        B->nq = Tq - B->i0 < ATT_BQ ? Tq - B->i0 : ATT_BQ;
        B->moff = b * ms[0] + h * ms[1] + B->i0 * ms[2];
        /* keys past the last query's limit are hidden from the whole
         * block: those key blocks are never visited */
        B->jend = Tk;
        if (a->causal && B->i0 + B->nq + off < B->jend)
            B->jend = B->i0 + B->nq + off;
        if (B->jend > jmax)
            jmax = B->jend;
        att_q_in(a->q + ((b * a->q_heads + h) * Tq + B->i0) * D, D, B->nq,
                 a->scale, B->qt);
        for (int64_t i = 0; i < ATT_BQ; i++) {
            B->m[i] = -__builtin_inff();
            B->l[i] = 0.0f;
        }
        for (int64_t i = 0; i < Dv * ATT_BQ; i++)
            B->ot[i] = 0.0f;
    }

    for (int64_t j0 = 0; j0 < jmax; j0 += BK) {
        /* the next key block's K and V rows (16 KiB each at D = 64),
         * which at long lengths come from L3: the hardware prefetcher
         * does not follow the score tile's short runs down 6 rows */
        if (j0 + BK < jmax) {
            int64_t nn = jmax - j0 - BK < BK ? jmax - j0 - BK : BK;
            const char *kp = (const char *)(k + (j0 + BK) * D),
                       *vp = (const char *)(v + (j0 + BK) * Dv);
            for (int64_t by = 0; by < nn * D * 4; by += 64)
                v_prefetch(kp + by);
            for (int64_t by = 0; by < nn * Dv * 4; by += 64)
                v_prefetch(vp + by);
        }
        for (int g = 0; g < nb; g++) {
            /* under the causal rule the group's earlier blocks stop
             * sooner */
            if (j0 >= blk[g].jend)
                continue;
            int64_t nk = blk[g].jend - j0 < BK ? blk[g].jend - j0 : BK;
            att_step(a, &blk[g], k, v, j0, nk, off, st, lanes);
        }
    }

    for (int g = 0; g < nb; g++) {
        const att_blk *B = &blk[g];
        att_o_out(B->ot, B->l, Dv, B->nq,
                  a->out + ((b * a->q_heads + h) * Tq + B->i0) * Dv);
    }
}
