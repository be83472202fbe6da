/*
 * gemm.inc.h - the GEMM micro-kernel, the packing routines and the fused
 * epilogue, written once over a simd_*.h vocabulary and compiled per ISA
 * (isa_*.c define GEMM_MR and GEMM_NV before including it).
 *
 * Register tile: GEMM_MR rows of A (broadcast one float at a time) times
 * NR = GEMM_NV * VL columns of B (GEMM_NV vector loads per k), so the
 * accumulators take GEMM_MR * GEMM_NV vector registers. An edge tile of
 * mr < GEMM_MR rows runs a kernel compiled for exactly mr rows (no wasted
 * FMAs, no reads of padding rows); nr < NR columns store through masks,
 * and a panel of at most VL columns runs a one-vector kernel.
 */
#define NR (GEMM_NV * VL)
#ifndef GEMM8_PF
#define GEMM8_PF 16
#endif
#ifndef GEMV_PF
#define GEMV_PF 32
#endif
#ifndef GEMM_PF
#define GEMM_PF 8 /* k steps of B prefetched ahead */
#endif

/* One vector of fe's column terms for columns [v * VL, nr) of the tile
 * (zero past them). */
VINL V ukr_col(const sm_ukr_epi *fe, int v, int nr)
{
    int64_t n = nr - v * VL;
    return !fe->col || n <= 0 ? v_zero()
           : n >= VL          ? v_load(fe->col + v * VL)
                              : v_loadn(fe->col + v * VL, n);
}

/* Whether ukr_body starts the accumulators from fe's one bias (of the
 * columns or of the rows) instead of adding it in the epilogue: a tile
 * of depth 16 to 32 (MobileNet's 1x1 layers of few input channels)
 * spends about a fifth of its time in the epilogue. */
VINL int ukr_pre_bias(const sm_ukr_epi *fe, int acc)
{
    return fe && !acc && !fe->col != !fe->row;
}

/* The fused store epilogue on the tile in registers (acc already added):
 * terms (the bias already there when pre), then the activation; only
 * the cheap activations are fused (gemm.c falls back to epi_tile for the
 * others). */
VINL void ukr_epi(const int M, const int NV, V r[GEMM_MR][GEMM_NV],
                  const sm_ukr_epi *fe, int nr, int pre)
{
    V cv[GEMM_NV];
    /* every entry set (past NV too, to zero), so that no instance reads
     * an unset one */
#pragma GCC unroll 8
    for (int v = 0; v < GEMM_NV; v++)
        cv[v] = v < NV && !pre ? ukr_col(fe, v, nr) : v_zero();
    /* nothing to add when the bias is in already and no residual */
    if (!pre || fe->res) {
#pragma GCC unroll 16
        for (int i = 0; i < M; i++) {
            V rb = fe->row && !pre ? v_set1(fe->row[i]) : v_zero();
            const float *ri = fe->res ? fe->res + i * fe->ldr : 0;
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) {
                int64_t n = nr - v * VL;
                V x = pre ? r[i][v] : v_add(r[i][v], v_add(rb, cv[v]));
                if (ri && n > 0)
                    x = v_add(x, n >= VL ? v_load(ri + v * VL)
                                         : v_loadn(ri + v * VL, n));
                r[i][v] = x;
            }
        }
    }
    /* one loop per cheap row of core/act.def, the activation inlined;
     * the others never reach here (sm_gemm_act_fusable) */
    V aa = v_set1(fe->act_a), ab = v_set1(fe->act_b);
    switch (fe->act) {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    case SM_ACT_##ID:                                                          \
        if (cheap && SM_ACT_##ID != SM_ACT_NONE) {                             \
            _Pragma("GCC unroll 16") for (int i = 0; i < M; i++)               \
            {                                                                  \
                _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)           \
                {                                                              \
                    r[i][v] = vector(r[i][v], aa, ab);                         \
                }                                                              \
            }                                                                  \
        }                                                                      \
        break;
#include "core/act.def"
#undef ACT
    default: break;
    }
}

/*
 * The body of every micro-kernel: M (a compile-time constant once
 * inlined) rows. A panels hold GEMM_MR floats per k whatever M is. With
 * fe, the tile's epilogue runs in registers before the one store.
 */
VINL void ukr_body(const int M, const int NV, const int RS, const int KS,
                   int64_t kc, const float *a, const float *b, float *c,
                   int64_t ldc, int64_t cvs, int nr, int acc,
                   const sm_ukr_epi *fe)
{
    V r[GEMM_MR][GEMM_NV];
    const int pre = ukr_pre_bias(fe, acc);
#pragma GCC unroll 16
    for (int i = 0; i < M; i++)
#pragma GCC unroll 8
        for (int v = 0; v < GEMM_NV; v++)
            r[i][v] = v_zero(); /* the rows and vectors unused too */
    if (pre)                    /* from the one bias (ukr_pre_bias) */
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            V cv = ukr_col(fe, v, nr);
#pragma GCC unroll 16
            for (int i = 0; i < M; i++)
                r[i][v] = fe->col ? cv : v_set1(fe->row[i]);
        }
    /* B is prefetched every line of a step (two with AVX-512), as far
     * ahead as the rows make its stream fast: up to 8 rows (an MLP or a
     * classifier at small batch, B streamed from memory) 8 steps, one
     * row 32. The hardware prefetcher alone left the classifier's 1 x
     * 1280 x 1000 product at 29 GB/s from memory (2 threads), and one
     * line a step the MLP 5% slower. M is a constant of each instance. */
    const int pf = M == 1 ? GEMV_PF : M <= 8 ? GEMM8_PF : GEMM_PF;
#pragma GCC unroll 2
    for (int64_t k = 0; k < kc; k++) {
        V bv[GEMM_NV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            bv[v] = v_load(b + v * VL);
#pragma GCC unroll 8
        for (int o = 0; o < NR; o += 16)
            v_prefetch(b + pf * NR + o);
#pragma GCC unroll 16
        for (int i = 0; i < M; i++) {
            V ai = v_set1(a[i * RS]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++)
                r[i][v] = v_fma(ai, bv[v], r[i][v]);
        }
        a += KS;
        b += NR;
    }
    if (acc) {
#pragma GCC unroll 16
        for (int i = 0; i < M; i++) {
            float *ci = c + i * ldc;
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) {
                int64_t n = nr - v * VL;
                if (n >= VL)
                    r[i][v] = v_add(v_load(ci + v * cvs), r[i][v]);
                else if (n > 0)
                    r[i][v] = v_add(v_loadn(ci + v * cvs, n), r[i][v]);
            }
        }
    }
    if (fe)
        ukr_epi(M, NV, r, fe, nr, pre);
    if (nr == NV * VL) {
#pragma GCC unroll 16
        for (int i = 0; i < M; i++) {
            float *ci = c + i * ldc;
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++)
                v_store(ci + v * cvs, r[i][v]);
        }
        return;
    }
#pragma GCC unroll 16
    for (int i = 0; i < M; i++) {
        float *ci = c + i * ldc;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            int64_t n = nr - v * VL;
            if (n >= VL)
                v_store(ci + v * cvs, r[i][v]);
            else if (n > 0)
                v_storen(ci + v * cvs, r[i][v], n);
        }
    }
}

/* Per row count, the full-width kernel and, where a panel holds more
 * than one vector, a one-vector kernel for panels of at most VL columns
 * (a layer of 16 or 144 channels computed position-major: the full
 * kernel would spend half its FMAs, or a ninth, on zero columns). */
#if GEMM_NV > 1
#define UKR_DEF(M)                                                             \
    static void ukr_##M(int64_t kc, const float *a, const float *b, float *c,  \
                        int64_t ldc, int64_t cvs, int nr, int acc,             \
                        const sm_ukr_epi *fe)                                  \
    {                                                                          \
        if (nr <= VL)                                                          \
            ukr_body(M, 1, 1, GEMM_MR, kc, a, b, c, ldc, cvs, nr, acc, fe);    \
        else                                                                   \
            ukr_body(M, GEMM_NV, 1, GEMM_MR, kc, a, b, c, ldc, cvs, nr, acc,   \
                     fe);                                                      \
    }
#else
#define UKR_DEF(M)                                                             \
    static void ukr_##M(int64_t kc, const float *a, const float *b, float *c,  \
                        int64_t ldc, int64_t cvs, int nr, int acc,             \
                        const sm_ukr_epi *fe)                                  \
    {                                                                          \
        ukr_body(M, GEMM_NV, 1, GEMM_MR, kc, a, b, c, ldc, cvs, nr, acc, fe);  \
    }
#endif
UKR_DEF(1)
UKR_DEF(2)
UKR_DEF(3)
UKR_DEF(4)
#if GEMM_MR > 4
UKR_DEF(5)
UKR_DEF(6)
#endif
#if GEMM_MR > 6
UKR_DEF(7)
UKR_DEF(8)
UKR_DEF(9)
UKR_DEF(10)
UKR_DEF(11)
UKR_DEF(12)
#endif
#if GEMM_MR > 12
UKR_DEF(13)
UKR_DEF(14)
#endif
#if GEMM_MR != 4 && GEMM_MR != 6 && GEMM_MR != 12 && GEMM_MR != 14
#error "GEMM_MR must be 4, 6, 12 or 14"
#endif

typedef void (*ukr_fn)(int64_t, const float *, const float *, float *, int64_t,
                       int64_t, int, int, const sm_ukr_epi *);

/* Full tiles of GEMM_MR rows with A read in place: rows of exactly KD
 * floats, row-major (a channels-last 1x1 input of KD channels), so every
 * broadcast is at a constant offset and A needs no packing, which for a
 * short depth cost as much as the product (12544 x 16 x 32: packing A
 * took 40% of the micro-kernel's time). */
#define UKRD_DEF(KD)                                                           \
    static void ukrd_##KD(const float *a, const float *b, float *c,            \
                          int64_t ldc, int64_t cvs, int nr,                    \
                          const sm_ukr_epi *fe)                                \
    {                                                                          \
        if (GEMM_NV > 1 && nr <= VL)                                           \
            ukr_body(GEMM_MR, 1, KD, 1, KD, a, b, c, ldc, cvs, nr, 0, fe);     \
        else                                                                   \
            ukr_body(GEMM_MR, GEMM_NV, KD, 1, KD, a, b, c, ldc, cvs, nr, 0,    \
                     fe);                                                      \
    }
UKRD_DEF(16)
UKRD_DEF(24)
UKRD_DEF(32)
UKRD_DEF(64)
UKRD_DEF(96)
UKRD_DEF(144)
UKRD_DEF(192)
UKRD_DEF(384)

/* The in-place kernel for depth kd (one of SM_GEMM_ROWK's): a tile of
 * GEMM_MR rows at a (rows kd apart). */
static void gemm_ukr_rowk(int64_t kd, const float *a, const float *b, float *c,
                          int64_t ldc, int64_t cvs, int nr,
                          const sm_ukr_epi *fe)
{
    switch (kd) {
    case 16: ukrd_16(a, b, c, ldc, cvs, nr, fe); return;
    case 24: ukrd_24(a, b, c, ldc, cvs, nr, fe); return;
    case 32: ukrd_32(a, b, c, ldc, cvs, nr, fe); return;
    case 64: ukrd_64(a, b, c, ldc, cvs, nr, fe); return;
    case 96: ukrd_96(a, b, c, ldc, cvs, nr, fe); return;
    case 144: ukrd_144(a, b, c, ldc, cvs, nr, fe); return;
    case 192: ukrd_192(a, b, c, ldc, cvs, nr, fe); return;
    case 384: ukrd_384(a, b, c, ldc, cvs, nr, fe); return;
    default: break;
    }
}

/* The micro-kernel for mr rows: one compiled kernel per row count. */
static void gemm_ukr(int64_t kc, const float *a, const float *b, float *c,
                     int64_t ldc, int64_t cvs, int mr, int nr, int acc,
                     const sm_ukr_epi *fe)
{
    static const ukr_fn tab[GEMM_MR + 1] = {
        NULL,
        ukr_1,
        ukr_2,
        ukr_3,
        ukr_4,
#if GEMM_MR > 4
        ukr_5,
        ukr_6,
#endif
#if GEMM_MR > 6
        ukr_7,
        ukr_8,
        ukr_9,
        ukr_10,
        ukr_11,
        ukr_12,
#endif
#if GEMM_MR > 12
        ukr_13,
        ukr_14,
#endif
    };
    tab[mr](kc, a, b, c, ldc, cvs, nr, acc, fe);
}

/*
 * Packs an m x kc block of A into MR-row panels: panel p holds, for each
 * k, the GEMM_MR floats A[i0 + p*MR + 0..MR)[k0 + k] (zeros past m).
 * Row-major A (cs = 1) reads each row contiguously; column-major A
 * (rs = 1, from transA) copies MR contiguous floats per k.
 */
static void gemm_pack_a(const sm_matf *A, int64_t i0, int64_t m, int64_t k0,
                        int64_t kc, float *dst)
{
    for (int64_t p = 0; p < m; p += GEMM_MR, dst += kc * GEMM_MR) {
        int64_t mr = m - p < GEMM_MR ? m - p : GEMM_MR;
        const float *src = A->p + (i0 + p) * A->rs + k0 * A->cs;
        if (A->rs == 1) {
            /* column-major A (a weight gradient's X^T): the panel's
             * floats of one k are contiguous, a vector or two (masked
             * to mr, zeros past it); the float-by-float copy cost a
             * tenth of 256 x 768 x 1024's time */
            for (int64_t k = 0; k < kc; k++) {
                const float *s = src + k * A->cs;
                float *d = dst + k * GEMM_MR;
#pragma GCC unroll 2
                for (int i = 0; i < GEMM_MR; i += VL) {
                    int64_t cnt = mr - i, room = GEMM_MR - i;
                    V v = cnt >= VL ? v_load(s + i)
                          : cnt > 0 ? v_loadn(s + i, cnt)
                                    : v_zero();
                    if (room >= VL)
                        v_store(d + i, v);
                    else
                        v_storen(d + i, v, room);
                }
            }
            continue;
        }
        int64_t k = 0;
#if VL > 1
        /* row-major A (activations): VL values of k from each of the
         * panel's rows, transposed in registers into VL columns of the
         * panel (the rows past mr are zero lanes) */
        if (A->cs == 1) {
            for (; k + VL <= kc; k += VL) {
                V r[VL];
                for (int i = 0; i < VL; i++)
                    r[i] = i < mr ? v_load(src + i * A->rs + k) : v_zero();
                v_transpose(r);
                for (int c = 0; c < VL; c++)
                    v_storen(dst + (k + c) * GEMM_MR, r[c], GEMM_MR);
            }
        }
#endif
        for (int64_t i = 0; i < GEMM_MR; i++) {
            float *d = dst + i;
            if (i >= mr) {
                for (int64_t kk = k; kk < kc; kk++)
                    d[kk * GEMM_MR] = 0.0f;
                continue;
            }
            const float *s = src + i * A->rs;
            for (int64_t kk = k; kk < kc; kk++)
                d[kk * GEMM_MR] = s[kk * A->cs];
        }
    }
}

/*
 * Packs a kc x n block of B into NR-column panels: panel p holds, for
 * each k, the NR floats B[k0 + k][j0 + p*NR + 0..NR) (zeros past n).
 * Row-major B (cs = 1) moves whole vectors; transposed B gathers.
 */
static void gemm_pack_b(const sm_matf *B, int64_t k0, int64_t kc, int64_t j0,
                        int64_t n, float *dst)
{
    for (int64_t p = 0; p < n; p += NR, dst += kc * NR) {
        int64_t nr = n - p < NR ? n - p : NR;
        const float *src = B->p + k0 * B->rs + (j0 + p) * B->cs;
        if (B->cs == 1) {
            for (int64_t k = 0; k < kc; k++) {
                const float *s = src + k * B->rs;
                float *d = dst + k * NR;
                for (int64_t v = 0; v < NR; v += VL) {
                    int64_t cnt = nr - v;
                    v_store(d + v, cnt >= VL ? v_load(s + v)
                                   : cnt > 0 ? v_loadn(s + v, cnt)
                                             : v_zero());
                }
            }
            continue;
        }
        int64_t k = 0;
#if VL > 1
        /* B^T row-major (dX = dY W^T, Q K^T): VL values of k from each
         * of VL columns, transposed in registers into VL rows of the
         * panel (columns past nr are zero lanes), as gemm_pack_a does
         * for a row-major A */
        if (B->rs == 1) {
            for (; k + VL <= kc; k += VL)
                for (int64_t v = 0; v < NR; v += VL) {
                    V r[VL];
                    for (int c = 0; c < VL; c++)
                        r[c] = v + c < nr ? v_load(src + (v + c) * B->cs + k)
                                          : v_zero();
                    v_transpose(r);
                    for (int c = 0; c < VL; c++)
                        v_store(dst + (k + c) * NR + v, r[c]);
                }
        }
#endif
        for (int64_t j = 0; j < NR; j++) {
            float *d = dst + j;
            const float *s = src + j * B->cs;
            if (j >= nr)
                for (int64_t kk = k; kk < kc; kk++)
                    d[kk * NR] = 0.0f;
            else
                for (int64_t kk = k; kk < kc; kk++)
                    d[kk * NR] = s[kk * B->rs];
        }
    }
}

/*
 * y = act(alpha * y + t0 + t1) over an m x n tile while it is in L1,
 * right after the micro-kernel stored it: the epilogue costs no extra
 * pass over memory. The activation is a compile-time constant of each
 * instance (epi_tile dispatches once per tile), and each term is either a
 * row of values (cs = 1) or one value per row, broadcast once per row.
 */
VINL void epi_body(const sm_gemm_epi *e, float *c, int64_t ldc, int64_t i0,
                   int64_t j0, int64_t m, int64_t n, const int act)
{
    V alpha = v_set1(e->alpha), aa = v_set1(e->act_a), ab = v_set1(e->act_b);
    V s0 = v_set1(e->t[0].scale), s1 = v_set1(e->t[1].scale);
    int scale = e->alpha != 1.0f;
    const sm_epi_term *t0 = &e->t[0], *t1 = &e->t[1];
    for (int64_t i = 0; i < m; i++) {
        float *y = c + i * ldc;
        const float *p0 = t0->p ? t0->p + (i0 + i) * t0->rs + j0 * t0->cs : 0;
        const float *p1 = t1->p ? t1->p + (i0 + i) * t1->rs + j0 * t1->cs : 0;
        int row0 = p0 && t0->cs, row1 = p1 && t1->cs;
        V b0 = p0 && !row0 ? v_set1(*p0 * t0->scale) : v_zero();
        V b1 = p1 && !row1 ? v_set1(*p1 * t1->scale) : v_zero();
        for (int64_t j = 0; j < n; j += VL) {
            int64_t cnt = n - j;
            V x = cnt >= VL ? v_load(y + j) : v_loadn(y + j, cnt);
            if (scale)
                x = v_mul(x, alpha);
            if (row0)
                x = v_fma(cnt >= VL ? v_load(p0 + j) : v_loadn(p0 + j, cnt), s0,
                          x);
            else if (p0)
                x = v_add(x, b0);
            if (row1)
                x = v_fma(cnt >= VL ? v_load(p1 + j) : v_loadn(p1 + j, cnt), s1,
                          x);
            else if (p1)
                x = v_add(x, b1);
            x = v_act(x, act, aa, ab);
            if (cnt >= VL)
                v_store(y + j, x);
            else
                v_storen(y + j, x, cnt);
        }
    }
}

static void epi_tile(const sm_gemm_epi *e, float *c, int64_t ldc, int64_t i0,
                     int64_t j0, int64_t m, int64_t n)
{
    /* one instance per row of core/act.def, the activation a constant */
    switch (e->act) {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    case SM_ACT_##ID:                                                          \
        epi_body(e, c, ldc, i0, j0, m, n, SM_ACT_##ID);                        \
        return;
#include "core/act.def"
#undef ACT
    default: epi_body(e, c, ldc, i0, j0, m, n, SM_ACT_NONE); return;
    }
}
