/*
 * quant_gemm.c - the int8 GEMM driver (quant_gemm.h): packing of A and
 * B into the 4-deep groups the micro-kernels read, the split over
 * threads, the zero-point correction and the epilogues; the scalar
 * micro-kernel; the tables the registry binds its int8 instances to.
 */
#include "kernels/cpu/quant_gemm.h"

#include <math.h>
#include <string.h>

#include "core/act.h"
#include "kernels/cpu/cpuid.h"

/* ---- tables ------------------------------------------------------------ */

/* Only name and features: the int8 hooks use no f32 primitive. */
const sm_cpu_ops sm_cpu_ops_q8_avx512vnni = {.name = "avx512vnni",
                                             .isa = SM_CPU_ISA_AVX512 |
                                                    SM_CPU_AVX512VNNI,
                                             .vl = 16};
const sm_cpu_ops sm_cpu_ops_q8_avxvnni = {
    .name = "avxvnni", .isa = SM_CPU_ISA_AVX2 | SM_CPU_AVXVNNI, .vl = 8};
const sm_cpu_ops sm_cpu_ops_q8_avx2 = {
    .name = "avx2", .isa = SM_CPU_ISA_AVX2, .vl = 8};
const sm_cpu_ops sm_cpu_ops_q8_scalar = {.name = "scalar", .isa = 0, .vl = 1};

const sm_cpu_ops *sm_q8_f32_ops(const sm_cpu_ops *ops)
{
    if (ops == &sm_cpu_ops_q8_avx512vnni)
        return &sm_cpu_ops_avx512;
    if (ops == &sm_cpu_ops_q8_avxvnni || ops == &sm_cpu_ops_q8_avx2)
        return &sm_cpu_ops_avx2;
    return &sm_cpu_ops_scalar;
}

const sm_q8_isa *sm_q8_isa_of(const sm_cpu_ops *ops)
{
    if (ops == &sm_cpu_ops_q8_avx512vnni)
        return &sm_q8_isa_avx512vnni;
    if (ops == &sm_cpu_ops_q8_avxvnni)
        return &sm_q8_isa_avxvnni;
    if (ops == &sm_cpu_ops_q8_avx2)
        return &sm_q8_isa_avx2;
    return &sm_q8_isa_scalar;
}

/* The scalar micro-kernel, 4 x 8: the oracle's arithmetic in the packed
 * layout. */
void sm_q8_ukr_scalar(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c,
                      int narrow)
{
    enum { MR = 4, NR = 8 };
    (void)narrow;
    int32_t acc[MR * NR] = {0};
    for (int64_t g = 0; g < kg; g++, a += MR * 4, b += NR * 4)
        for (int r = 0; r < MR; r++)
            for (int j = 0; j < NR; j++)
                for (int t = 0; t < 4; t++)
                    acc[r * NR + j] += (int32_t)a[r * 4 + t] * b[j * 4 + t];
    memcpy(c, acc, sizeof acc);
}

const sm_q8_isa sm_q8_isa_scalar = {
    .name = "scalar", .mr = 4, .nr = 8, .ukr = sm_q8_ukr_scalar};

/* ---- packing ----------------------------------------------------------- */

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

size_t sm_q8_pack_b_bytes(const sm_q8_isa *isa, int64_t k, int64_t n)
{
    int64_t kg = cdiv(k, 4);
    return align64(sizeof(sm_q8_b)) + align64((size_t)n * sizeof(int32_t)) +
           (size_t)(cdiv(n, isa->nr) * kg * isa->nr * 4);
}

sm_q8_b *sm_q8_pack_b(const sm_q8_isa *isa, const void *b, smelt_dtype dt,
                      int64_t rs, int64_t cs, int64_t k, int64_t n, void *mem)
{
    sm_q8_b *p = mem;
    char *at = (char *)mem + align64(sizeof *p);
    int nr = isa->nr;
    p->isa = isa;
    p->k = k;
    p->n = n;
    p->kg = cdiv(k, 4);
    p->bshift = dt == SMELT_DTYPE_U8 ? 128 : 0;
    p->colsum = (int32_t *)at;
    p->data = (int8_t *)(at + align64((size_t)n * sizeof(int32_t)));
    p->narrow = 1;
    const uint8_t *bu = b;
    const int8_t *bs = b;
    int64_t panel = p->kg * nr * 4;
    for (int64_t j0 = 0; j0 < n; j0 += nr) {
        int8_t *dst = p->data + (j0 / nr) * panel;
        memset(dst, 0, (size_t)panel);
        for (int64_t jj = 0; jj < nr && j0 + jj < n; jj++) {
            int64_t j = j0 + jj;
            int32_t sum = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                int64_t src = kk * rs + j * cs;
                int v = p->bshift ? (int)bu[src] - 128 : bs[src];
                dst[((kk >> 2) * nr + jj) * 4 + (kk & 3)] = (int8_t)v;
                sum += v;
                p->narrow &= v >= -64 && v <= 63;
            }
            p->colsum[j] = sum;
        }
    }
    return p;
}

/* Packed A (panels of mr rows) and its row sums inside the workspace. */
static size_t a_bytes(const sm_q8_isa *isa, int64_t m, int64_t k)
{
    return align64((size_t)(cdiv(m, isa->mr) * cdiv(k, 4) * isa->mr * 4));
}

/* The per-column epilogue parameters (col_params) in the workspace:
 * zbe and colk (uint32), sf and bf (f32), n of each. */
static size_t cols_bytes(int64_t n)
{
    return align64((size_t)n * 16);
}

size_t sm_q8_gemm_workspace(const sm_q8_isa *isa, int64_t m, int64_t k,
                            int64_t n, int pack_b)
{
    size_t w = a_bytes(isa, m, k) + align64((size_t)m * sizeof(int32_t)) +
               cols_bytes(n);
    return w + (pack_b ? sm_q8_pack_b_bytes(isa, k, n) : 0);
}

/* ---- the product ------------------------------------------------------- */

/* What the threads share. */
typedef struct q8_job {
    const sm_q8_isa *isa;
    int64_t m, k, kg;
    const uint8_t *a; /* the caller's A */
    smelt_dtype adt;
    int64_t a_rs;
    uint8_t *ap;     /* packed A */
    int32_t *rowsum; /* m sums of the packed rows */
    const sm_q8_b *bp;
    const sm_q8_epi *e;
    void *c;
    int64_t c_rs, c_cs;
    int64_t np, nrb, rb; /* column panels, row blocks, panels per block */
    /* per column, computed once per call (col_params): zbe = zb - bshift
     * and colk = colsum - K zbe, so that acc = raw - zbe rowsum - zae
     * colk; F32: sf = f32(sa * sb) (per-tensor sa) and the bias */
    uint32_t *zbe, *colk;
    float *sf, *bf;
    int za_const; /* F32, A's zero point per tensor: colk = zae colk */
    int zb_zero;  /* every zbe is 0 */
    /* sm_q8_gemm_f32a: the f32 A (rows af_rs apart) each task quantizes
     * with (qs, qz) into a (rows k apart) before packing it */
    const float *af;
    int64_t af_rs;
    float qs;
    uint8_t qz;
} q8_job;

/* Packs row panels [p0, p1) of A: a' = a (u8) or a + 128 (s8), zero
 * padded, with each row's sum. A row is copied 4 bytes (one group) at a
 * time into its lane of the panel; the sum is a separate pass the
 * compiler vectorizes. */
static void pack_a_range(void *arg, int64_t p0, int64_t p1, int tid)
{
    (void)tid;
    const q8_job *j = arg;
    int mr = j->isa->mr;
    uint8_t flip = j->adt == SMELT_DTYPE_I8 ? 0x80 : 0;
    int64_t full = j->k >> 2, rest = j->k & 3;
    for (int64_t p = p0; p < p1; p++) {
        uint8_t *dst = j->ap + p * j->kg * mr * 4;
        int rows = (int)(j->m - p * mr < mr ? j->m - p * mr : mr);
        if (rows < mr || rest)
            memset(dst, 0, (size_t)(j->kg * mr * 4));
        for (int r = 0; r < rows; r++) {
            int64_t i = p * mr + r;
            const uint8_t *src = j->a + i * j->a_rs;
            uint32_t sum = 0;
            /* the row sums only serve B's zero points (acc = raw - zbe
             * rowsum - ...): none to apply, none to compute */
            int sums = !j->zb_zero;
            if (flip) {
                for (int64_t kk = 0; sums && kk < j->k; kk++)
                    sum += (uint8_t)(src[kk] ^ flip);
                uint32_t f4 = 0x80808080u;
                for (int64_t g = 0; g < full; g++) {
                    uint32_t w;
                    memcpy(&w, src + 4 * g, 4);
                    w ^= f4;
                    memcpy(dst + (g * mr + r) * 4, &w, 4);
                }
            } else {
                for (int64_t kk = 0; sums && kk < j->k; kk++)
                    sum += src[kk];
                for (int64_t g = 0; g < full; g++)
                    memcpy(dst + (g * mr + r) * 4, src + 4 * g, 4);
            }
            for (int64_t t = 0; t < rest; t++)
                dst[(full * mr + r) * 4 + t] =
                    (uint8_t)(src[4 * full + t] ^ flip);
            j->rowsum[i] = (int32_t)sum;
        }
    }
}

/* Value i % n of v as a double; def when v is absent. */
static double vec_f64(const sm_q8_vec *v, int64_t i, double def)
{
    return v->p && v->n > 0 ? sm_load_f64(v->dt, v->p, i % v->n) : def;
}

static int64_t vec_i64(const sm_q8_vec *v, int64_t i)
{
    return v->p && v->n > 0 ? sm_load_i64(v->dt, v->p, i % v->n) : 0;
}

/* u8 / s8 saturation of a whole number (NaN to 0). */
static int64_t sat_q(smelt_dtype dt, double v)
{
    double lo = dt == SMELT_DTYPE_U8 ? 0 : -128;
    double hi = dt == SMELT_DTYPE_U8 ? 255 : 127;
    if (isnan(v))
        return 0;
    return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

/*
 * The f32 epilogue of a tile (tile_out's arguments): y = act(f32(acc) *
 * f32(sa_i * sb_j) + bias_j + res_ij), each step rounded to f32 as the
 * Cast, Mul and Adds it replaces (no bias: no addition, so a -0 stays -0;
 * the residual's Add, which ends a residual block, while the tile is
 * still in L1). The
 * column parameters come from col_params, so the loop over a row's
 * columns is plain arithmetic the compiler vectorizes; the activation
 * then runs over the row's run of outputs (vectorized when e->vact is
 * set).
 */
static void tile_out_f32(const q8_job *j, const int32_t *t, int nr, int64_t i0,
                         int64_t j0, int mi, int nj)
{
    const sm_q8_epi *e = j->e;
    uint32_t ashift = j->adt == SMELT_DTYPE_I8 ? 128 : 0;
    const uint32_t *zbe = j->zbe + j0, *colk = j->colk + j0;
    const float *bf = j->bf + j0;
    float sfr[SM_Q8_NR_MAX], v[SM_Q8_NR_MAX];
    const float *sf = j->sf + j0;
    int per_row = e->sa.p && e->sa.n > 1;
    const sm_act_info *ai = e->act ? sm_act_info_get(e->act) : NULL;
    /* a vector activation runs once over the whole tile, gathered here
     * (rows nj apart), rather than once per row */
    float buf[SM_Q8_MR_MAX * SM_Q8_NR_MAX];
    int whole = ai && e->vact;
    for (int r = 0; r < mi; r++) {
        int64_t i = i0 + r;
        int has_bias = e->bias.p != NULL;
        uint32_t rs = (uint32_t)j->rowsum[i];
        if (per_row) {
            double sai = vec_f64(&e->sa, i, 1);
            for (int c = 0; c < nj; c++)
                sfr[c] = (float)(sai * vec_f64(&e->sb, j0 + c, 1));
            sf = sfr;
        }
        float *y = (float *)j->c + i * j->c_rs + j0 * j->c_cs;
        float *o = whole ? buf + r * nj : j->c_cs == 1 ? y : v;
        const int32_t *tr = t + r * nr;
        if (j->za_const && j->zb_zero && j->isa->epi_f32) {
            j->isa->epi_f32(tr, colk, sf, has_bias ? bf : NULL, o, nj);
            has_bias = 0;
        } else if (j->za_const && j->zb_zero) {
            /* colk holds zae colk: acc = raw - colk */
            for (int c = 0; c < nj; c++)
                o[c] = (float)(int32_t)((uint32_t)tr[c] - colk[c]) * sf[c];
        } else if (j->za_const) {
            for (int c = 0; c < nj; c++)
                o[c] =
                    (float)(int32_t)((uint32_t)tr[c] - zbe[c] * rs - colk[c]) *
                    sf[c];
        } else {
            uint32_t zae = (uint32_t)vec_i64(&e->za, i) + ashift;
            for (int c = 0; c < nj; c++)
                o[c] = (float)(int32_t)((uint32_t)tr[c] - zbe[c] * rs -
                                        zae * colk[c]) *
                       sf[c];
        }
        if (has_bias)
            for (int c = 0; c < nj; c++)
                o[c] = o[c] + bf[c];
        if (e->res) {
            const float *rr = e->res + i * e->res_rs + j0;
            for (int c = 0; c < nj; c++)
                o[c] = o[c] + rr[c];
        }
        if (ai && !whole)
            for (int c = 0; c < nj; c++)
                o[c] = (float)ai->scalar(o[c], e->act_a, e->act_b);
        if (o == v)
            for (int c = 0; c < nj; c++)
                y[c * j->c_cs] = v[c];
    }
    if (!whole)
        return;
    e->vact(e->act, (float)e->act_a, (float)e->act_b, buf, buf, mi * nj);
    for (int r = 0; r < mi; r++) {
        float *y = (float *)j->c + (i0 + r) * j->c_rs + j0 * j->c_cs;
        if (j->c_cs == 1)
            memcpy(y, buf + r * nj, (size_t)nj * sizeof(float));
        else
            for (int c = 0; c < nj; c++)
                y[c * j->c_cs] = buf[r * nj + c];
    }
}

/* Value c of f32 vector v (c % n), def when absent; the common case of
 * the per-column loops, without sm_load's dtype switch. */
static inline double vec_at(const sm_q8_vec *v, int64_t c, double def)
{
    if (!v->p || v->n <= 0)
        return def;
    if (v->dt == SMELT_DTYPE_F32)
        return ((const float *)v->p)[v->n == 1 ? 0 : c % v->n];
    return vec_f64(v, c, def);
}

/* Fills the per-column parameters of j (q8_job) for all n columns. */
static void col_params(q8_job *j)
{
    const sm_q8_epi *e = j->e;
    int64_t n = j->bp->n;
    uint32_t K = (uint32_t)j->k;
    double sa = vec_f64(&e->sa, 0, 1);
    int f32 = e->kind == SM_Q8_OUT_F32;
    /* F32 with one zero point for A: colk folds it in */
    j->za_const = f32 && (!e->za.p || e->za.n == 1);
    uint32_t zae =
        (uint32_t)vec_i64(&e->za, 0) + (j->adt == SMELT_DTYPE_I8 ? 128 : 0);
    j->zb_zero = 1;
    if (f32 && !e->zb.p && (!e->sb.p || e->sb.dt == SMELT_DTYPE_F32) &&
        (!e->bias.p || e->bias.dt == SMELT_DTYPE_F32)) {
        /* the common case (no zero points for B, f32 scales and bias)
         * without the per-element dtype dispatch: the same values */
        uint32_t zbe = (uint32_t)-j->bp->bshift;
        const float *sb = e->sb.n > 0 ? e->sb.p : NULL;
        const float *bias = e->bias.n > 0 ? e->bias.p : NULL;
        int64_t nsb = e->sb.n, nb = e->bias.n;
        uint32_t mul = j->za_const ? zae : 1;
        j->zb_zero = zbe == 0;
        for (int64_t c = 0; c < n; c++) {
            j->zbe[c] = zbe;
            j->colk[c] = ((uint32_t)j->bp->colsum[c] - K * zbe) * mul;
            j->sf[c] =
                (float)(sa * (sb ? (double)sb[nsb == 1 ? 0 : c % nsb] : 1.0));
            j->bf[c] = bias ? bias[nb == 1 ? 0 : c % nb] : 0.0f;
        }
        return;
    }
    for (int64_t c = 0; c < n; c++) {
        int64_t zb = e->zb.p ? vec_i64(&e->zb, c) : 0;
        j->zbe[c] = (uint32_t)(zb - j->bp->bshift);
        j->colk[c] = (uint32_t)j->bp->colsum[c] - K * j->zbe[c];
        j->zb_zero &= j->zbe[c] == 0;
        if (j->za_const)
            j->colk[c] *= zae;
        if (f32) {
            j->sf[c] = (float)(sa * vec_at(&e->sb, c, 1));
            j->bf[c] = (float)vec_at(&e->bias, c, 0);
        }
    }
}

/*
 * The epilogue of one mr x nr tile whose raw sums are t (rows nr apart),
 * first element (i0, j0), real size mi x nj: zero points applied, then
 * the output kind. Per-row and per-column parameters are read once per
 * tile.
 */
static void tile_out(const q8_job *j, const int32_t *t, int nr, int64_t i0,
                     int64_t j0, int mi, int nj)
{
    const sm_q8_epi *e = j->e;
    if (e->kind == SM_Q8_OUT_F32) {
        tile_out_f32(j, t, nr, i0, j0, mi, nj);
        return;
    }
    uint32_t ashift = j->adt == SMELT_DTYPE_I8 ? 128 : 0;
    const uint32_t *zbe = j->zbe + j0, *colk = j->colk + j0;
    double sbj[SM_Q8_NR_MAX], bqj[SM_Q8_NR_MAX];
    if (e->kind == SM_Q8_OUT_Q8)
        for (int c = 0; c < nj; c++) {
            sbj[c] = vec_f64(&e->sb, j0 + c, 1);
            bqj[c] = vec_f64(&e->bias, j0 + c, 0);
        }
    for (int r = 0; r < mi; r++) {
        int64_t i = i0 + r;
        uint32_t zae = (uint32_t)vec_i64(&e->za, i) + ashift;
        uint32_t rs = (uint32_t)j->rowsum[i];
        double sai = vec_f64(&e->sa, i, 1);
        if (e->kind == SM_Q8_OUT_I32) {
            int32_t *y = (int32_t *)j->c + i * j->c_rs + j0 * j->c_cs;
            const int32_t *tr = t + r * nr;
            if (j->c_cs == 1)
                for (int c = 0; c < nj; c++)
                    y[c] = (int32_t)((uint32_t)tr[c] - zbe[c] * rs -
                                     zae * colk[c]);
            else
                for (int c = 0; c < nj; c++)
                    y[c * j->c_cs] = (int32_t)((uint32_t)tr[c] - zbe[c] * rs -
                                               zae * colk[c]);
            continue;
        }
        for (int c = 0; c < nj; c++) {
            uint32_t u = (uint32_t)t[r * nr + c] - zbe[c] * rs - zae * colk[c];
            int32_t acc = (int32_t)u;
            int64_t at = i * j->c_rs + (j0 + c) * j->c_cs;
            double v = ((double)acc + bqj[c]) * (sai * sbj[c] / e->sy);
            int64_t q = sat_q(e->ydt, nearbyint(v) + (double)e->zy);
            if (e->ydt == SMELT_DTYPE_U8)
                ((uint8_t *)j->c)[at] = (uint8_t)q;
            else
                ((int8_t *)j->c)[at] = (int8_t)q;
        }
    }
}

/* Tasks [t0, t1): task t is column panel t / nrb against row block
 * t % nrb, so one thread's consecutive tasks reuse a B panel. */
static void gemm_range(void *arg, int64_t t0, int64_t t1, int tid)
{
    (void)tid;
    const q8_job *j = arg;
    int mr = j->isa->mr, nr = j->isa->nr;
    int32_t tile[SM_Q8_MR_MAX * SM_Q8_NR_MAX];
    for (int64_t t = t0; t < t1; t++) {
        int64_t jp = t / j->nrb, rb = t % j->nrb;
        int64_t j0 = jp * nr;
        int nj = (int)(j->bp->n - j0 < nr ? j->bp->n - j0 : nr);
        const int8_t *b = j->bp->data + jp * j->kg * nr * 4;
        for (int64_t p = rb * j->rb; p < (rb + 1) * j->rb; p++) {
            int64_t i0 = p * mr;
            if (i0 >= j->m)
                break;
            int mi = (int)(j->m - i0 < mr ? j->m - i0 : mr);
            j->isa->ukr(j->kg, j->ap + p * j->kg * mr * 4, b, tile,
                        j->bp->narrow);
            tile_out(j, tile, nr, i0, j0, mi, nj);
        }
    }
}

static int64_t par_threshold = (int64_t)1 << 16;

void sm_q8_set_parallel_threshold(int64_t macs)
{
    par_threshold = macs;
}

sm_q8_epi sm_q8_epi_i32(void)
{
    sm_q8_epi e;
    memset(&e, 0, sizeof e);
    e.kind = SM_Q8_OUT_I32;
    e.sy = 1;
    return e;
}

/* Row blocks of up to 64 rows; A is packed once (split by panels), then
 * the (column panel, row block) tasks are split evenly. */
void sm_q8_gemm(const sm_q8_isa *isa, int64_t m, const void *a, smelt_dtype adt,
                int64_t a_rs, const sm_q8_b *bp, const sm_q8_epi *epi, void *c,
                int64_t c_rs, int64_t c_cs, void *ws, sm_threadpool *tp)
{
    if (m <= 0 || bp->n <= 0)
        return;
    q8_job j = {.isa = isa,
                .m = m,
                .k = bp->k,
                .kg = bp->kg,
                .a = a,
                .adt = adt,
                .a_rs = a_rs,
                .ap = ws,
                .rowsum = (int32_t *)((char *)ws + a_bytes(isa, m, bp->k)),
                .bp = bp,
                .e = epi,
                .c = c,
                .c_rs = c_rs,
                .c_cs = c_cs};
    int64_t panels = cdiv(m, isa->mr);
    j.rb = cdiv(64, isa->mr);
    j.nrb = cdiv(panels, j.rb);
    j.np = cdiv(bp->n, isa->nr);
    char *cols = (char *)j.rowsum + align64((size_t)m * sizeof(int32_t));
    j.zbe = (uint32_t *)cols;
    j.colk = j.zbe + bp->n;
    j.sf = (float *)(j.colk + bp->n);
    j.bf = j.sf + bp->n;
    col_params(&j);
    int64_t work = m * bp->n * (bp->k ? bp->k : 1);
    sm_threadpool *use = work >= par_threshold ? tp : NULL;
    sm_parallel_for(use, panels, 0, pack_a_range, &j);
    sm_parallel_for(use, j.np * j.nrb, 0, gemm_range, &j);
}

/* Quantizes rows [r0, r1) of j's f32 A into j->a (rows k apart). */
static void quant_rows(const q8_job *j, int64_t r0, int64_t r1)
{
    uint8_t *q = (uint8_t *)j->a;
    if (j->af_rs == j->k) {
        sm_q8_quantize_with(j->isa, j->af + r0 * j->k, (r1 - r0) * j->k, j->qs,
                            j->qz, q + r0 * j->k);
        return;
    }
    for (int64_t i = r0; i < r1; i++)
        sm_q8_quantize_with(j->isa, j->af + i * j->af_rs, j->k, j->qs, j->qz,
                            q + i * j->k);
}

static void quant_rows_range(void *arg, int64_t r0, int64_t r1, int tid)
{
    (void)tid;
    quant_rows(arg, r0, r1);
}

/* Tasks [t0, t1) of the row split: task t owns row panels [t rb, (t + 1)
 * rb) and does all of their work, so the threads never wait for one
 * another: it quantizes its rows, packs them, and runs them against
 * every column panel (each B panel, K x nr bytes, stays in L1 over the
 * task's row panels). */
static void rows_range(void *arg, int64_t t0, int64_t t1, int tid)
{
    const q8_job *j = arg;
    int mr = j->isa->mr, nr = j->isa->nr;
    int32_t tile[SM_Q8_MR_MAX * SM_Q8_NR_MAX];
    int64_t panels = cdiv(j->m, mr);
    for (int64_t t = t0; t < t1; t++) {
        int64_t p0 = t * j->rb;
        int64_t p1 = p0 + j->rb < panels ? p0 + j->rb : panels;
        int64_t r1 = p1 * mr < j->m ? p1 * mr : j->m;
        quant_rows(j, p0 * mr, r1);
        pack_a_range(arg, p0, p1, tid);
        for (int64_t jp = 0; jp < j->np; jp++) {
            int64_t j0 = jp * nr;
            int nj = (int)(j->bp->n - j0 < nr ? j->bp->n - j0 : nr);
            const int8_t *b = j->bp->data + jp * j->kg * nr * 4;
            for (int64_t p = p0; p < p1; p++) {
                int64_t i0 = p * mr;
                int mi = (int)(j->m - i0 < mr ? j->m - i0 : mr);
                j->isa->ukr(j->kg, j->ap + p * j->kg * mr * 4, b, tile,
                            j->bp->narrow);
                tile_out(j, tile, nr, i0, j0, mi, nj);
            }
        }
    }
}

/*
 * The split: with T threads and M <= 64 T rows (BERT's 64-token
 * products), each thread takes a band of M / T rows and quantizes,
 * packs and multiplies it alone: one parallel region instead of three
 * (quantize, pack, product), and no thread waits for another's packing.
 * Each band reads all of B, so larger M, where B would be read from
 * memory once per band, and one-panel M (the MLP's 8 rows, split by
 * columns), quantize over the threads and take sm_q8_gemm.
 */
void sm_q8_gemm_f32a(const sm_q8_isa *isa, int64_t m, const float *a,
                     int64_t a_rs, float sa, uint8_t za, uint8_t *qa,
                     const sm_q8_b *bp, const sm_q8_epi *epi, void *c,
                     int64_t c_rs, int64_t c_cs, void *ws, sm_threadpool *tp)
{
    if (m <= 0 || bp->n <= 0)
        return;
    int64_t k = bp->k, panels = cdiv(m, isa->mr);
    int64_t work = m * bp->n * (k ? k : 1);
    sm_threadpool *use = work >= par_threshold ? tp : NULL;
    int64_t T = sm_threadpool_size(use);
    q8_job j = {.isa = isa,
                .m = m,
                .k = k,
                .kg = bp->kg,
                .a = qa,
                .adt = SMELT_DTYPE_U8,
                .a_rs = k,
                .ap = ws,
                .rowsum = (int32_t *)((char *)ws + a_bytes(isa, m, k)),
                .bp = bp,
                .e = epi,
                .c = c,
                .c_rs = c_rs,
                .c_cs = c_cs,
                .af = a,
                .af_rs = a_rs,
                .qs = sa,
                .qz = za};
    if (m > 64 * T || panels < T) {
        int64_t rows = k > 0 ? cdiv(8192, k) : m;
        sm_parallel_for(m * k >= 16384 ? use : NULL, m, rows, quant_rows_range,
                        &j);
        sm_q8_gemm(isa, m, qa, SMELT_DTYPE_U8, k, bp, epi, c, c_rs, c_cs, ws,
                   tp);
        return;
    }
    j.rb = cdiv(panels, T);
    j.np = cdiv(bp->n, isa->nr);
    char *cols = (char *)j.rowsum + align64((size_t)m * sizeof(int32_t));
    j.zbe = (uint32_t *)cols;
    j.colk = j.zbe + bp->n;
    j.sf = (float *)(j.colk + bp->n);
    j.bf = j.sf + bp->n;
    col_params(&j);
    sm_parallel_for(use, cdiv(panels, j.rb), 1, rows_range, &j);
}
