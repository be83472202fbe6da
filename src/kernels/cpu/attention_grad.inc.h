/*
 * attention_grad.inc.h - one (batch, kv head) task of the attention
 * backward (attention_grad.h), written once over a simd_*.h vocabulary
 * and compiled per ISA (included by isa_*.c after attention.inc.h, whose
 * att_exp it uses).
 *
 * Every product is one primitive, agr_comb: rows of whole vectors, each
 * plus a weighted sum of the rows of a tile, the weights read with a
 * stride, through a register tile of several output rows (so each loaded
 * vector of the tile serves all of them). So the scores S = (scale Q) K^T
 * read K^T (copied per key block), dP = dO V^T reads V^T, dV += P^T dO
 * and dK += dS^T (scale Q) take their weights down a column of P or dS,
 * and dQ += dS K along a row. Rows are padded to 16 floats (zeros), so
 * every ISA runs whole vectors.
 */
#include "kernels/cpu/attention_grad.h"

/* Register tile of the products: AGR_R output rows x AGR_TV vectors of
 * accumulators, one broadcast weight per row and AGR_TV loads of the
 * summed rows per step (as the forward's score tile: AVX-512 24
 * accumulators of 32 registers, AVX2 12 of 16). */
#if VL == 16
#define AGR_R 6
#define AGR_TV 4
#elif VL == 8
#define AGR_R 6
#define AGR_TV 2
#else
#define AGR_R 4
#define AGR_TV 4
#endif
#define AGR_BQ SM_ATTN_GRAD_BQ
#define AGR_BK SM_ATTN_BK

/* out[y][0 .. nv VL) = (acc ? out[y] : 0) + sum over t < n of
 * coef[y crs + t cs] x[t ldx + 0 .. nv VL) for y < r, out rows ldo
 * apart: r x nv accumulators stay in registers (r and nv constants after
 * inlining) and each loaded vector of x serves r rows. */
ATT_INL void agr_tile(int r, int nv, float *out, int64_t ldo, const float *coef,
                      int64_t crs, int64_t cs, const float *x, int64_t ldx,
                      int64_t n, int acc)
{
    V s[AGR_R][AGR_TV];
#pragma GCC unroll 8
    for (int y = 0; y < r; y++)
#pragma GCC unroll 8
        for (int c = 0; c < nv; c++)
            s[y][c] = acc ? v_load(out + y * ldo + c * VL) : v_zero();
    for (int64_t t = 0; t < n; t++) {
        V xv[AGR_TV];
        const float *xr = x + t * ldx, *w = coef + t * cs;
#pragma GCC unroll 8
        for (int c = 0; c < nv; c++)
            xv[c] = v_load(xr + c * VL);
#pragma GCC unroll 8
        for (int y = 0; y < r; y++) {
            V wy = v_set1(w[y * crs]);
#pragma GCC unroll 8
            for (int c = 0; c < nv; c++)
                s[y][c] = v_fma(wy, xv[c], s[y][c]);
        }
    }
#pragma GCC unroll 8
    for (int y = 0; y < r; y++)
#pragma GCC unroll 8
        for (int c = 0; c < nv; c++)
            v_store(out + y * ldo + c * VL, s[y][c]);
}

/* agr_tile over r rows (a constant after inlining) and a row of W floats
 * (a multiple of VL): AGR_TV vectors at a time, then one tile of the
 * rest. */
ATT_INL void agr_rows(int r, float *out, int64_t ldo, int64_t W,
                      const float *coef, int64_t crs, int64_t cs,
                      const float *x, int64_t ldx, int64_t n, int acc)
{
    int64_t c = 0;
    for (; c + AGR_TV * VL <= W; c += AGR_TV * VL)
        agr_tile(r, AGR_TV, out + c, ldo, coef, crs, cs, x + c, ldx, n, acc);
    switch ((W - c) / VL) {
#define AGR_CASE(k)                                                            \
    case k:                                                                    \
        agr_tile(r, k, out + c, ldo, coef, crs, cs, x + c, ldx, n, acc);       \
        break;
        AGR_CASE(1)
#if AGR_TV > 2
        AGR_CASE(2)
        AGR_CASE(3)
#endif
#undef AGR_CASE
    default: break;
    }
}

/*
 * The one product primitive: for each of the rows y < m of out (ldo
 * apart, W floats each, W a multiple of VL), out[y] = (acc ? out[y] : 0)
 * + sum over t < n of coef[y crs + t cs] * x[t ldx ..]. Rows go AGR_R at
 * a time through the register tile, then one tile of the rest.
 */
static void agr_comb(float *out, int64_t ldo, int64_t m, int64_t W,
                     const float *coef, int64_t crs, int64_t cs, const float *x,
                     int64_t ldx, int64_t n, int acc)
{
    int64_t y = 0;
    for (; y + AGR_R <= m; y += AGR_R)
        agr_rows(AGR_R, out + y * ldo, ldo, W, coef + y * crs, crs, cs, x, ldx,
                 n, acc);
    float *o = out + y * ldo;
    const float *cf = coef + y * crs;
    switch (m - y) {
#define AGR_CASE(k)                                                            \
    case k: agr_rows(k, o, ldo, W, cf, crs, cs, x, ldx, n, acc); break;
        AGR_CASE(1)
        AGR_CASE(2)
        AGR_CASE(3)
#if AGR_R > 4
        AGR_CASE(4)
        AGR_CASE(5)
#endif
#undef AGR_CASE
    default: break;
    }
}

/* The geometry of one task, fixed for all its heads. */
typedef struct agr_geo {
    int64_t D, Dv, Dp, Dvp, Tq, Tk, off;
    float *kb, *kt, *vt, *dkb, *dvb, *qb, *dob, *st, *dpt, *dqa, *lse, *di;
} agr_geo;

/* Cuts ws into the task's tiles (sm_cpu_attention_grad_ws_floats). */
static void agr_geo_init(const sm_attn_args *f, float *ws, agr_geo *g)
{
    g->D = f->head_dim;
    g->Dv = f->v_dim;
    g->Dp = (g->D + 15) / 16 * 16;
    g->Dvp = (g->Dv + 15) / 16 * 16;
    g->Tq = f->q_len;
    g->Tk = f->kv_len;
    g->off = g->Tk - g->Tq;
    g->kb = ws;
    g->kt = g->kb + AGR_BK * g->Dp;
    g->dkb = g->kt + AGR_BK * g->Dp;
    g->vt = g->dkb + AGR_BK * g->Dp;
    g->dvb = g->vt + AGR_BK * g->Dvp;
    g->qb = g->dvb + AGR_BK * g->Dvp;
    g->dob = g->qb + AGR_BQ * g->Dp;
    g->st = g->dob + AGR_BQ * g->Dvp;
    g->dpt = g->st + AGR_BQ * AGR_BK;
    g->dqa = g->dpt + AGR_BQ * AGR_BK;
    g->lse = g->dqa + g->Tq * g->Dp;
    g->di = g->lse + g->Tq;
}

/* Rows [0, n) of src (width w, stride ld), times mul, into dst rows of
 * width wp (zeros past w). */
static void agr_rows_in(float *dst, int64_t wp, const float *src, int64_t w,
                        int64_t ld, int64_t n, float mul)
{
    for (int64_t i = 0; i < n; i++) {
        for (int64_t x = 0; x < w; x++)
            dst[i * wp + x] = src[i * ld + x] * mul;
        for (int64_t x = w; x < wp; x++)
            dst[i * wp + x] = 0.0f;
    }
}

/* The transpose of rows [0, n) of src (width w) into dst [w][AGR_BK],
 * zeros in columns n and past. */
static void agr_cols_in(float *dst, const float *src, int64_t w, int64_t n)
{
    for (int64_t x = 0; x < w; x++) {
        for (int64_t j = 0; j < n; j++)
            dst[x * AGR_BK + j] = src[j * w + x];
        for (int64_t j = n; j < AGR_BK; j++)
            dst[x * AGR_BK + j] = 0.0f;
    }
}

/*
 * The scores of query block i0 (nq rows) against key block j0 (nk keys)
 * into g->st, scale already in g->qb: the products, then the mask
 * (moff: its offset for (b, h)), the causal rule and the padding past nk
 * as -inf.
 */
static void agr_scores(const sm_attn_args *f, const agr_geo *g, int64_t i0,
                       int64_t nq, int64_t j0, int64_t nk, int64_t moff)
{
    const int64_t *ms = f->mask_strides;
    agr_comb(g->st, AGR_BK, nq, AGR_BK, g->qb, g->Dp, 1, g->kt, AGR_BK, g->D,
             0);
    for (int64_t i = 0; i < nq; i++) {
        float *row = g->st + i * AGR_BK;
        int64_t mo = moff + (i0 + i) * ms[2] + j0 * ms[3];
        if (f->mask_kind == SM_ATTN_MASK_FLOAT) {
            const float *m = (const float *)f->mask + mo;
            for (int64_t j = 0; j < nk; j++)
                row[j] += m[j * ms[3]];
        } else if (f->mask_kind == SM_ATTN_MASK_BOOL) {
            const uint8_t *m = (const uint8_t *)f->mask + mo;
            for (int64_t j = 0; j < nk; j++)
                if (!m[j * ms[3]])
                    row[j] = -__builtin_inff();
        }
        int64_t vis = nk;
        if (f->causal && i0 + i + g->off + 1 - j0 < vis)
            vis = i0 + i + g->off + 1 - j0 < 0 ? 0 : i0 + i + g->off + 1 - j0;
        for (int64_t j = vis; j < AGR_BK; j++)
            row[j] = -__builtin_inff();
    }
}

/* Whether the causal rule hides key block j0 from every query of block
 * [i0, i0 + nq). */
static int agr_hidden(const sm_attn_args *f, const agr_geo *g, int64_t i0,
                      int64_t nq, int64_t j0)
{
    return f->causal && j0 > i0 + nq - 1 + g->off;
}

/*
 * The first sweep for query head h: each row's running maximum (in lse)
 * and sum (in di) over the key blocks, then lse = max + log(sum) (+inf for
 * a row that saw no key, so its P comes out 0) and di = dO . O (0 there).
 */
static void agr_stats(const sm_attn_grad_args *a, const agr_geo *g,
                      const float *k, const float *q, const float *o,
                      const float *dout, int64_t moff)
{
    const sm_attn_args *f = &a->f;
    float *m = g->lse, *l = g->di;
    for (int64_t i = 0; i < g->Tq; i++) {
        m[i] = -__builtin_inff();
        l[i] = 0.0f;
    }
    for (int64_t j0 = 0; j0 < g->Tk; j0 += AGR_BK) {
        int64_t nk = g->Tk - j0 < AGR_BK ? g->Tk - j0 : AGR_BK;
        agr_cols_in(g->kt, k + j0 * g->D, g->D, nk);
        for (int64_t i0 = 0; i0 < g->Tq; i0 += AGR_BQ) {
            int64_t nq = g->Tq - i0 < AGR_BQ ? g->Tq - i0 : AGR_BQ;
            if (agr_hidden(f, g, i0, nq, j0))
                continue;
            agr_rows_in(g->qb, g->Dp, q + i0 * g->D, g->D, g->D, nq, f->scale);
            agr_scores(f, g, i0, nq, j0, nk, moff);
            for (int64_t i = 0; i < nq; i++) {
                const float *row = g->st + i * AGR_BK;
                V mx = v_set1(-__builtin_inff());
                for (int64_t j = 0; j < AGR_BK; j += VL)
                    mx = v_max(mx, v_load(row + j));
                float bm = v_hmax(mx);
                if (bm == -__builtin_inff())
                    continue;
                float mn = m[i0 + i] > bm ? m[i0 + i] : bm;
                V s = v_zero(), mv = v_set1(mn);
                for (int64_t j = 0; j < AGR_BK; j += VL)
                    s = v_add(s, att_exp(v_sub(v_load(row + j), mv)));
                l[i0 + i] = l[i0 + i] * expf(m[i0 + i] - mn) + v_hsum(s);
                m[i0 + i] = mn;
            }
        }
    }
    for (int64_t i = 0; i < g->Tq; i++) {
        if (m[i] == -__builtin_inff()) {
            m[i] = __builtin_inff();
            l[i] = 0.0f;
            continue;
        }
        m[i] += logf(l[i]);
        float s = 0.0f;
        for (int64_t x = 0; x < g->Dv; x++)
            s += dout[i * g->Dv + x] * o[i * g->Dv + x];
        l[i] = s;
    }
}

/*
 * The second sweep for query head h: per key block, P and dS of every
 * query block that sees it, dV and dK of the block (added to the task's
 * outputs dk, dv after it) and the rows' dQ (in g->dqa).
 */
static void agr_grads(const sm_attn_grad_args *a, const agr_geo *g,
                      const float *k, const float *v, const float *q,
                      const float *dout, float *dk, float *dv, int64_t moff)
{
    const sm_attn_args *f = &a->f;
    for (int64_t j0 = 0; j0 < g->Tk; j0 += AGR_BK) {
        int64_t nk = g->Tk - j0 < AGR_BK ? g->Tk - j0 : AGR_BK;
        if (agr_hidden(f, g, 0, g->Tq, j0))
            break; /* no query sees this block or any later one */
        agr_rows_in(g->kb, g->Dp, k + j0 * g->D, g->D, g->D, nk, 1.0f);
        agr_cols_in(g->kt, k + j0 * g->D, g->D, nk);
        agr_cols_in(g->vt, v + j0 * g->Dv, g->Dv, nk);
        for (int64_t x = 0; x < nk * g->Dp; x++)
            g->dkb[x] = 0.0f;
        for (int64_t x = 0; x < nk * g->Dvp; x++)
            g->dvb[x] = 0.0f;
        for (int64_t i0 = 0; i0 < g->Tq; i0 += AGR_BQ) {
            int64_t nq = g->Tq - i0 < AGR_BQ ? g->Tq - i0 : AGR_BQ;
            if (agr_hidden(f, g, i0, nq, j0))
                continue;
            agr_rows_in(g->qb, g->Dp, q + i0 * g->D, g->D, g->D, nq, f->scale);
            agr_rows_in(g->dob, g->Dvp, dout + i0 * g->Dv, g->Dv, g->Dv, nq,
                        1.0f);
            agr_scores(f, g, i0, nq, j0, nk, moff);
            /* dP = dO V^T for the block's rows */
            agr_comb(g->dpt, AGR_BK, nq, AGR_BK, g->dob, g->Dvp, 1, g->vt,
                     AGR_BK, g->Dv, 0);
            for (int64_t i = 0; i < nq; i++) {
                float *p = g->st + i * AGR_BK, *ds = g->dpt + i * AGR_BK;
                float lse = g->lse[i0 + i];
                if (lse == __builtin_inff()) { /* fully masked row */
                    for (int64_t j = 0; j < AGR_BK; j++)
                        p[j] = ds[j] = 0.0f;
                    continue;
                }
                V lv = v_set1(lse), dv0 = v_set1(g->di[i0 + i]);
                for (int64_t j = 0; j < AGR_BK; j += VL) {
                    V pj = att_exp(v_sub(v_load(p + j), lv));
                    /* hidden keys: exactly 0, whatever dP holds */
                    pj = v_sel_lt(v_load(p + j), v_set1(-3.402823466e38f),
                                  v_zero(), pj);
                    v_store(p + j, pj);
                    v_store(ds + j, v_mul(pj, v_sub(v_load(ds + j), dv0)));
                }
            }
            /* dQ += dS K (a fully masked row's dS is 0), dV += P^T dO,
             * dK += dS^T (scale Q): the last two take their weights down
             * a column of P or dS */
            agr_comb(g->dqa + i0 * g->Dp, g->Dp, nq, g->Dp, g->dpt, AGR_BK, 1,
                     g->kb, g->Dp, nk, 1);
            agr_comb(g->dvb, g->Dvp, nk, g->Dvp, g->st, 1, AGR_BK, g->dob,
                     g->Dvp, nq, 1);
            agr_comb(g->dkb, g->Dp, nk, g->Dp, g->dpt, 1, AGR_BK, g->qb, g->Dp,
                     nq, 1);
        }
        for (int64_t j = 0; j < nk; j++) {
            for (int64_t x = 0; x < g->D; x++)
                dk[(j0 + j) * g->D + x] += g->dkb[j * g->Dp + x];
            for (int64_t x = 0; x < g->Dv; x++)
                dv[(j0 + j) * g->Dv + x] += g->dvb[j * g->Dvp + x];
        }
    }
}

/*
 * Task (batch b, kv head hk): zeroes its dK and dV, then for each query
 * head of its group the two sweeps and the head's dQ rows (the
 * accumulated dS K times the scale).
 */
static void attn_grad_task(const sm_attn_grad_args *a, int64_t b, int64_t hk,
                           float *ws)
{
    const sm_attn_args *f = &a->f;
    agr_geo g;
    agr_geo_init(f, ws, &g);
    const int64_t G = f->q_heads / f->kv_heads;
    const float *k = f->k + (b * f->kv_heads + hk) * g.Tk * g.D;
    const float *v = f->v + (b * f->kv_heads + hk) * g.Tk * g.Dv;
    float *dk = a->dk + (b * f->kv_heads + hk) * g.Tk * g.D;
    float *dv = a->dv + (b * f->kv_heads + hk) * g.Tk * g.Dv;
    for (int64_t x = 0; x < g.Tk * g.D; x++)
        dk[x] = 0.0f;
    for (int64_t x = 0; x < g.Tk * g.Dv; x++)
        dv[x] = 0.0f;
    for (int64_t h = hk * G; h < (hk + 1) * G; h++) {
        int64_t bh = b * f->q_heads + h;
        const float *q = f->q + bh * g.Tq * g.D;
        const float *o = f->out + bh * g.Tq * g.Dv;
        const float *dout = a->dout + bh * g.Tq * g.Dv;
        int64_t moff = b * f->mask_strides[0] + h * f->mask_strides[1];
        agr_stats(a, &g, k, q, o, dout, moff);
        for (int64_t x = 0; x < g.Tq * g.Dp; x++)
            g.dqa[x] = 0.0f;
        agr_grads(a, &g, k, v, q, dout, dk, dv, moff);
        float *dq = a->dq + bh * g.Tq * g.D;
        for (int64_t i = 0; i < g.Tq; i++)
            for (int64_t x = 0; x < g.D; x++)
                dq[i * g.D + x] = g.dqa[i * g.Dp + x] * f->scale;
    }
}
