/*
 * gemm.c - the f32 GEMM driver (gemm.h): packing of weights, cache
 * blocking, the split into tasks over the thread pool, batch offsets and
 * the epilogue call. The arithmetic is in the per-ISA tables.
 */
#include "kernels/cpu/gemm.h"

#include <string.h>

#include "core/alloc.h"
#include "core/act.h"

/* Work (flops) below which a product runs on the calling thread only. */
static double min_parallel_flops = 1e6;

double sm_gemm_set_parallel_threshold(double flops)
{
    double old = min_parallel_flops;
    min_parallel_flops = flops;
    return old;
}

/* Bytes of B above which even a product of few flops is split over the
 * threads: reading it dominates, and two cores read faster than one. */
#define SM_GEMM_STREAM_B (1024.0 * 1024.0)

/* Packs of at least this many bytes are laid on huge pages. */
#define SM_GEMM_HUGE_MIN ((size_t)4 << 20)

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

sm_gemm_epi sm_gemm_epi_none(void)
{
    sm_gemm_epi e;
    memset(&e, 0, sizeof e);
    e.alpha = 1.0f;
    e.t[0].scale = e.t[1].scale = 1.0f;
    return e;
}

static int epi_active(const sm_gemm_epi *e)
{
    return e->alpha != 1.0f || e->t[0].p || e->t[1].p || e->act != 0;
}

/* How a term fits the micro-kernel's fused epilogue (sm_ukr_epi): 0
 * absent, 1 one value per row, 2 one per column, 3 a row-major matrix,
 * -1 not at all (scaled, scalar, or a strided row term). */
static int term_kind(const sm_epi_term *t)
{
    if (!t->p)
        return 0;
    if (t->scale != 1.0f)
        return -1;
    if (t->cs == 0)
        return t->rs == 1 ? 1 : -1;
    return t->rs == 0 ? 2 : 3;
}

/* Whether the micro-kernel can apply e itself: no alpha, a cheap
 * activation, and terms of distinct kinds it knows. */
int sm_gemm_act_fusable(int act)
{
    return sm_act_is_cheap(act);
}

static int epi_fusable(const sm_gemm_epi *e)
{
    int k0 = term_kind(&e->t[0]), k1 = term_kind(&e->t[1]);
    return e->alpha == 1.0f && sm_gemm_act_fusable(e->act) && k0 >= 0 &&
           k1 >= 0 && (k0 == 0 || k0 != k1);
}

/* e (offset for its batch element) as the fused epilogue of the tile at
 * (i0, j0). */
static void ukr_epi_for(const sm_gemm_epi *e, int64_t i0, int64_t j0,
                        sm_ukr_epi *fe)
{
    memset(fe, 0, sizeof *fe);
    fe->act = e->act;
    fe->act_a = e->act_a;
    fe->act_b = e->act_b;
    for (int k = 0; k < 2; k++) {
        const sm_epi_term *t = &e->t[k];
        switch (term_kind(t)) {
        case 1: fe->row = t->p + i0; break;
        case 2: fe->col = t->p + j0; break;
        case 3:
            fe->res = t->p + i0 * t->rs + j0;
            fe->ldr = t->rs;
            break;
        default: break;
        }
    }
}

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

smelt_status sm_gemm_pack_new(smelt_ctx_t *ctx, const sm_cpu_ops *ops, int is_a,
                              const sm_matf *m, int64_t rows, int64_t cols,
                              int64_t count, int64_t mat_stride,
                              sm_gemm_pack **out)
{
    *out = NULL;
    int64_t depth = is_a ? cols : rows, width = is_a ? rows : cols;
    int64_t tile = is_a ? ops->mr : ops->nr;
    int64_t per = round_up(width, tile) * depth;
    size_t data_bytes = (size_t)(per * count) * 4;
    size_t bytes = ALIGN64(sizeof(sm_gemm_pack)) + data_bytes;
    if (rows < 0 || cols < 0 || count < 0 || bytes > SM_ALLOC_LIMIT)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "gemm: packing %lld matrices of %lld x %lld is too "
                      "large",
                      (long long)count, (long long)rows, (long long)cols);
    /* Large packs (an MLP's or a classifier's weights, read front to
     * back on every run) start on a huge page and ask for huge pages:
     * streaming them then takes one TLB entry per 2 MiB, not per 4 KiB. */
    int huge = data_bytes >= SM_GEMM_HUGE_MIN;
    size_t align = huge ? SM_HUGE_ALIGN : 64;
    char *blk = sm_malloc(bytes + align);
    if (!blk)
        return sm_err_nomem(ctx);
    sm_gemm_pack *p = (sm_gemm_pack *)blk;
    uintptr_t at = (uintptr_t)(blk + ALIGN64(sizeof(sm_gemm_pack)));
    p->data = (float *)((at + align - 1) & ~(uintptr_t)(align - 1));
    if (huge)
        sm_advise_huge(p->data, data_bytes);
    p->ops = ops;
    p->is_a = is_a;
    p->rows = rows;
    p->cols = cols;
    p->count = count;
    p->mat_stride = per;
    int64_t wpad = round_up(width, tile);
    for (int64_t i = 0; i < count && depth > 0 && width > 0; i++) {
        sm_matf v = {m->p + i * mat_stride, m->rs, m->cs};
        float *d = p->data + i * per;
        if (is_a) {
            ops->gemm_pack_a(&v, 0, rows, 0, cols, d);
            continue;
        }
        /* B block by block of KC rows, each block's panels contiguous:
         * the GEMM then reads B front to back (gemm.h) */
        for (int64_t pc = 0; pc < rows; pc += SM_GEMM_KC) {
            int64_t kc = rows - pc < SM_GEMM_KC ? rows - pc : SM_GEMM_KC;
            ops->gemm_pack_b(&v, pc, kc, 0, cols, d + pc * wpad);
        }
    }
    *out = p;
    return SMELT_OK;
}

/* Per-thread scratch: an MC x KC block of A and a KC x NC_PACK block of
 * B. */
static size_t thread_ws(void)
{
    return ALIGN64((size_t)SM_GEMM_MC * SM_GEMM_KC * 4) +
           ALIGN64((size_t)SM_GEMM_KC * SM_GEMM_NC_PACK * 4);
}

/* Bytes of B [K, N] packed whole in the widest table's panels (32): the
 * shared B's size for every table (narrower panels take less). */
static size_t shared_b_bytes(int64_t K, int64_t N)
{
    return ALIGN64((size_t)(K * round_up(N, 32)) * sizeof(float));
}

size_t sm_gemm_workspace(int n_threads, int64_t K, int64_t N, int b_packed)
{
    size_t ws = (size_t)(n_threads < 1 ? 1 : n_threads) * thread_ws() + 64;
    size_t sb = shared_b_bytes(K, N);
    if (!b_packed && n_threads > 1 && sb <= SM_GEMM_SHARED_B_MAX)
        ws += sb;
    return ws;
}

/* Bytes of A [M, K] packed whole in any table's panels: M rounded up to
 * a multiple of mr (14, 6 or 4) is at most M + 13 rows. */
static size_t shared_a_bytes(int64_t M, int64_t K)
{
    return ALIGN64((size_t)((M + 13) * K) * sizeof(float));
}

size_t sm_gemm_workspace_shared_a(int n_threads, int64_t M, int64_t K)
{
    size_t ws = sm_gemm_workspace(n_threads, 0, 0, 1);
    size_t sa = shared_a_bytes(M, K);
    if (n_threads > 1 && sa <= SM_GEMM_SHARED_A_MAX)
        ws += sa;
    return ws;
}

/* The work the tasks share: each task is one (batch, row block, column
 * block) rectangle of C. */
typedef struct job {
    const sm_cpu_ops *ops;
    const sm_gemm_args *g;
    int64_t sm, sn; /* row and column splits per batch element */
    int64_t tm, tn; /* rows and columns per split (multiples of mr / nr) */
    char *ws;
    int epi;
    int fuse_epi; /* the micro-kernel applies the epilogue (sm_ukr_epi) */
    const sm_gemm_pack *shared_b; /* B packed once for all tasks, or NULL */
    const sm_gemm_pack *shared_a; /* likewise A */
    int a_in_place;      /* full tiles read A unpacked (a_in_place()) */
    int64_t cvs;         /* between the vectors of a C row: VL, or with a
                            channel-blocked C and 16-float vectors its cblk */
    size_t shared_bytes; /* front of ws taken by a shared B or A */
} job;

/* Offsets of every operand for batch element b. */
static void batch_offsets(const sm_gemm_args *g, int64_t b,
                          int64_t off[SM_GB_COUNT])
{
    memset(off, 0, sizeof(int64_t) * SM_GB_COUNT);
    for (int d = g->nbd - 1; d >= 0; d--) {
        int64_t i = b % g->bdims[d];
        b /= g->bdims[d];
        for (int o = 0; o < SM_GB_COUNT; o++)
            off[o] += i * g->stride[o][d];
    }
}

/*
 * One rectangle [m0, m1) x [n0, n1) of batch element b, blocked:
 * jc (NC columns) > pc (KC of K) > ic (MC rows) > jr (nr) > ir (mr).
 */
static void run_rect(const job *J, int64_t b, int64_t m0, int64_t m1,
                     int64_t n0, int64_t n1, float *abuf, float *bbuf)
{
    const sm_cpu_ops *ops = J->ops;
    const sm_gemm_args *g = J->g;
    int64_t off[SM_GB_COUNT];
    batch_offsets(g, b, off);
    sm_matf A = {g->a.p ? g->a.p + off[SM_GB_A] : NULL, g->a.rs, g->a.cs};
    sm_matf B = {g->b.p ? g->b.p + off[SM_GB_B] : NULL, g->b.rs, g->b.cs};
    float *C = g->c + off[SM_GB_C];
    sm_gemm_epi e = g->epi;
    if (e.t[0].p)
        e.t[0].p += off[SM_GB_T0];
    if (e.t[1].p)
        e.t[1].p += off[SM_GB_T1];
    const float *pa =
        g->pa ? g->pa->data + off[SM_GB_PA] * g->pa->mat_stride : NULL;
    const float *pb =
        g->pb ? g->pb->data + off[SM_GB_PB] * g->pb->mat_stride : NULL;
    int64_t K = g->K, mr = ops->mr, nr = ops->nr;
    if (K == 0) {
        for (int64_t i = m0; i < m1; i++)
            memset(C + i * g->ldc + n0, 0, (size_t)(n1 - n0) * 4);
        if (J->epi)
            ops->epi_tile(&e, C + m0 * g->ldc + n0, g->ldc, m0, n0, m1 - m0,
                          n1 - n0);
        return;
    }
    int64_t NC = pb ? SM_GEMM_NC : SM_GEMM_NC_PACK;
    for (int64_t jc = n0; jc < n1; jc += NC) {
        int64_t nc = n1 - jc < NC ? n1 - jc : NC;
        for (int64_t pc = 0; pc < K; pc += SM_GEMM_KC) {
            int64_t kc = K - pc < SM_GEMM_KC ? K - pc : SM_GEMM_KC;
            int last = pc + kc == K;
            const float *bp;
            int64_t bstride;
            if (pb) {
                bp = pb + pc * round_up(g->N, nr) + (jc / nr) * kc * nr;
                bstride = kc * nr;
            } else {
                if (g->pack_b)
                    g->pack_b(g->pack_b_user, b, pc, kc, jc, nc, (int)nr, bbuf);
                else
                    ops->gemm_pack_b(&B, pc, kc, jc, nc, bbuf);
                bp = bbuf;
                bstride = kc * nr;
            }
            for (int64_t ic = m0; ic < m1; ic += SM_GEMM_MC) {
                int64_t mc = m1 - ic < SM_GEMM_MC ? m1 - ic : SM_GEMM_MC;
                const float *ap = NULL;
                int64_t astride = kc * mr;
                if (J->a_in_place) {
                    /* full tiles read A where it is; an edge tile is
                     * packed on its own below */
                } else if (pa) {
                    ap = pa + (ic / mr) * K * mr + pc * mr;
                    astride = K * mr;
                } else if (g->pack_a) {
                    g->pack_a(g->pack_a_user, b, pc, kc, ic, mc, (int)mr, abuf);
                    ap = abuf;
                    astride = kc * mr;
                } else {
                    ops->gemm_pack_a(&A, ic, mc, pc, kc, abuf);
                    ap = abuf;
                    astride = kc * mr;
                }
                /* one A micro-panel against every B micro-panel of the
                 * block: the A panel stays in L1, B streams from L2 */
                for (int64_t ir = 0; ir < mc; ir += mr) {
                    int cm = (int)(mc - ir < mr ? mc - ir : mr);
                    const float *at = ap ? ap + (ir / mr) * astride : abuf;
                    int rowk = J->a_in_place && cm == mr;
                    if (J->a_in_place && !rowk)
                        ops->gemm_pack_a(&A, ic + ir, cm, pc, kc, abuf);
                    for (int64_t jr = 0; jr < nc; jr += nr) {
                        int cn = (int)(nc - jr < nr ? nc - jr : nr);
                        const float *bpp = bp + (jr / nr) * bstride;
                        int64_t j = jc + jr;
                        float *ct = C + (ic + ir) * g->ldc +
                                    (g->cblk ? j / 16 * g->cblk + j % 16 : j);
                        sm_ukr_epi fe, *fep = NULL;
                        if (last && J->epi && J->fuse_epi) {
                            ukr_epi_for(&e, ic + ir, jc + jr, &fe);
                            fep = &fe;
                        }
                        if (rowk)
                            ops->gemm_ukr_rowk(K, A.p + (ic + ir) * A.rs, bpp,
                                               ct, g->ldc, J->cvs, cn, fep);
                        else
                            ops->gemm_ukr(kc, at, bpp, ct, g->ldc, J->cvs, cm,
                                          cn, pc > 0, fep);
                        if (last && J->epi && !J->fuse_epi)
                            ops->epi_tile(&e, ct, g->ldc, ic + ir, jc + jr, cm,
                                          cn);
                    }
                }
            }
        }
    }
}

/* Tasks [begin, end) of the job: task t is rectangle (t mod per) of
 * batch element t / per, run with this thread's scratch. */
static void task(void *arg, int64_t begin, int64_t end, int tid)
{
    const job *J = arg;
    char *mine = J->ws + (size_t)tid * thread_ws() + J->shared_bytes;
    float *abuf = (float *)mine;
    float *bbuf =
        (float *)(mine + ALIGN64((size_t)SM_GEMM_MC * SM_GEMM_KC * 4));
    int64_t per = J->sm * J->sn;
    for (int64_t t = begin; t < end; t++) {
        int64_t b = t / per, r = t % per;
        int64_t mi = r / J->sn, ni = r % J->sn;
        int64_t m0 = mi * J->tm, n0 = ni * J->tn;
        int64_t m1 = m0 + J->tm < J->g->M ? m0 + J->tm : J->g->M;
        int64_t n1 = n0 + J->tn < J->g->N ? n0 + J->tn : J->g->N;
        if (m0 < m1 && n0 < n1)
            run_rect(J, b, m0, m1, n0, n1, abuf, bbuf);
    }
}

/* Whether the product's full row tiles read A in place (the ISA's
 * gemm_ukr_rowk): A row-major with rows of exactly K floats (a
 * channels-last 1x1 input), K one slice deep and one the kernel has. */
static int a_in_place(const sm_cpu_ops *ops, const sm_gemm_args *g)
{
    /* wide products (N of 960 or 1280 in MobileNet's last layers) ran
     * slower in place than packed; narrow ones gain most */
    return !g->pa && !g->pack_a && g->a.p && g->a.cs == 1 && g->a.rs == g->K &&
           g->K <= SM_GEMM_KC && SM_GEMM_ROWK(g->K) && g->N <= 384 &&
           ops->gemm_ukr_rowk;
}

/*
 * How to split one product over the threads: when the batch alone does
 * not give every thread several tasks, cut each product into rectangles
 * of whole tiles, handed out dynamically. Of the cuts into at most 12 x
 * threads / batch rectangles, the one whose waves of tasks cover the
 * least area wins (tasks / threads rounded up, times a rectangle's
 * area): 5 rectangles on 2 threads leave one thread a third idle,
 * where 2 or 10 do not. Fewer than about 3 x threads rectangles cost half
 * a wave more (a thread the OS deschedules holds the others up less
 * when the pieces are small), and rectangles far from square a little
 * (each re-reads the other operand's panels).
 */
static void choose_split(job *J, int64_t batch, int threads)
{
    const sm_gemm_args *g = J->g;
    int64_t mr = J->ops->mr, nr = J->ops->nr;
    int64_t mt = (g->M + mr - 1) / mr, nt = (g->N + nr - 1) / nr;
    int64_t want = threads > 1 && batch < 4 * threads
                       ? (3 * threads + batch - 1) / batch
                       : 1;
    /* an A that a hook packs (the position-major convolution's im2col)
     * for a batch of products is packed by each task for its own rows,
     * so every column block would gather it again, at more cost than
     * the block's product on a small plane (ResNet-18's 6 x 6 layers at
     * batch 2 ran 3x slower on 2 threads than on 1): the batch and the
     * rows split such products, never the columns */
    int rows_only = g->pack_a && batch > 1;
    int64_t ncut = rows_only ? 1 : nt;
    int64_t bm = 1, bn = want < ncut ? want : ncut;
    double best = -1.0;
    /* one row of tiles (an MLP or a classifier at small batch) streams
     * B from memory: a few long column blocks, one sequential stream
     * each, keep the prefetchers ahead, where the finer cut the area
     * count prefers gives each thread many short streams */
    for (int64_t sm = 1; want > 1 && mt > 1 && sm <= mt && sm <= 4 * want; sm++)
        for (int64_t sn = 1; sn <= ncut && sm * sn <= 4 * want; sn++) {
            int64_t tmt = (mt + sm - 1) / sm, tnt = (nt + sn - 1) / sn;
            if ((mt + tmt - 1) / tmt != sm || (nt + tnt - 1) / tnt != sn)
                continue; /* the same rectangles as a smaller cut */
            int64_t tasks = batch * sm * sn;
            double h = (double)(tmt * mr), w = (double)(tnt * nr);
            double waves = (double)((tasks + threads - 1) / threads);
            if (sm * sn < want)
                waves += 0.5;
            double cost =
                waves * h * w * (1.0 + 0.02 * (h > w ? h / w : w / h));
            /* splitting the columns of an A packed on the fly packs it
             * once more, in a pass of its own (about 10 FMAs a float),
             * so such products prefer row splits; an A read in place
             * costs nothing to share and is split either way */
            if (sn > 1 && !g->pa && batch == 1)
                cost += 10.0 * (double)g->M / threads;
            if (best < 0 || cost < best) {
                best = cost;
                bm = sm;
                bn = sn;
            }
        }
    int64_t tmt = (mt + bm - 1) / bm, tnt = (nt + bn - 1) / bn;
    J->tm = tmt * mr;
    J->tn = tnt * nr;
    J->sm = (mt + tmt - 1) / tmt;
    J->sn = (nt + tnt - 1) / tnt;
    if (J->sm < 1)
        J->sm = 1;
    if (J->sn < 1)
        J->sn = 1;
}

/* Panels [begin, end) of the shared A, in the prepacked layout (each
 * panel K x mr: all of K, as sm_gemm_pack_new packs an A). */
static void pack_shared_a(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const job *J = arg;
    const sm_gemm_args *g = J->g;
    int64_t mr = J->ops->mr;
    for (int64_t p = begin; p < end; p++) {
        int64_t i0 = p * mr, m = g->M - i0 < mr ? g->M - i0 : mr;
        float *dst = J->shared_a->data + p * g->K * mr;
        if (g->pack_a)
            g->pack_a(g->pack_a_user, 0, 0, g->K, i0, m, (int)mr, dst);
        else
            J->ops->gemm_pack_a(&g->a, i0, m, 0, g->K, dst);
    }
}

/* Panels [begin, end) of the shared B, in the prepacked layout (each KC
 * block's panels contiguous). */
static void pack_shared(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const job *J = arg;
    const sm_gemm_args *g = J->g;
    int64_t nr = J->ops->nr, K = g->K, npad = round_up(g->N, nr);
    float *dst = J->shared_b->data;
    for (int64_t p = begin; p < end; p++) {
        int64_t j0 = p * nr, n = g->N - j0 < nr ? g->N - j0 : nr;
        for (int64_t pc = 0; pc < K; pc += SM_GEMM_KC) {
            int64_t kc = K - pc < SM_GEMM_KC ? K - pc : SM_GEMM_KC;
            float *d = dst + pc * npad + p * kc * nr;
            if (g->pack_b)
                g->pack_b(g->pack_b_user, 0, pc, kc, j0, n, (int)nr, d);
            else
                J->ops->gemm_pack_b(&g->b, pc, kc, j0, n, d);
        }
    }
}

smelt_status sm_gemm_f32(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                         const sm_gemm_args *g, sm_threadpool *tp, void *ws,
                         size_t ws_bytes)
{
    if (g->M < 0 || g->N < 0 || g->K < 0 || g->nbd < 0 ||
        g->nbd > SMELT_MAX_DIMS)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "gemm: bad sizes M=%lld N=%lld K=%lld", (long long)g->M,
                      (long long)g->N, (long long)g->K);
    if ((g->pa && (g->pa->ops != ops || !g->pa->is_a)) ||
        (g->pb && (g->pb->ops != ops || g->pb->is_a)))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "gemm: a prepacked operand was packed for another ISA "
                      "or side");
    if (g->cblk && (g->ldc != 16 || g->N % 16 || ops->vl > 16 || g->K == 0 ||
                    !epi_fusable(&g->epi) || term_kind(&g->epi.t[0]) == 3 ||
                    term_kind(&g->epi.t[1]) == 3))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "gemm: a channel-blocked C takes rows of 16, a multiple "
                      "of 16 columns and an epilogue without a full term");
    int64_t batch = 1;
    for (int d = 0; d < g->nbd; d++)
        batch *= g->bdims[d];
    if (batch == 0 || g->M == 0 || g->N == 0)
        return SMELT_OK;
    /* Below about 10 us of work, waking the other threads costs more
     * than it saves, unless the product streams a large B (a classifier
     * or an MLP at batch 1: memory-bound, and one core alone does not
     * reach the memory's bandwidth). */
    double flops =
        2.0 * (double)batch * (double)g->M * (double)g->N * (double)g->K;
    double b_bytes = 4.0 * (double)g->K * (double)g->N;
    int threads = flops < min_parallel_flops && b_bytes < SM_GEMM_STREAM_B
                      ? 1
                      : sm_threadpool_size(tp);
    void *own = NULL;
    size_t need = sm_gemm_workspace(threads, 0, 0, 1);
    if (!ws || ws_bytes < need) {
        /* allocating anyway: with room for a shared B */
        need = sm_gemm_workspace(threads, g->K, g->N, g->pb != NULL);
        own = sm_malloc(need);
        if (!own)
            return sm_err_nomem(ctx);
        ws = own;
        ws_bytes = need;
    }
    job J = {.ops = ops,
             .g = g,
             .epi = epi_active(&g->epi),
             .fuse_epi = epi_fusable(&g->epi)};
    J.ws = (char *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
    J.a_in_place = a_in_place(ops, g);
    J.cvs = g->cblk && ops->vl >= 16 ? g->cblk : ops->vl;
    choose_split(&J, batch, threads);
    int64_t ntasks = batch * J.sm * J.sn;
    /* Tasks that split the rows would each pack the same B: pack it once,
     * in parallel, into the front of the workspace, and have every task
     * read it as if prepacked. With A packed on the fly only when the
     * columns are not split too (else A is shared, below); with A
     * prepacked (a convolution's weights) whatever the split. (The tasks
     * used to pack B again anyway: VGG's 256-channel 8 x 8 im2col layer,
     * cut into 19 x 2 tiles, gathered its B 19 times.) */
    sm_gemm_args shared_args;
    sm_gemm_pack shared;
    size_t sb = shared_b_bytes(g->K, g->N);
    if (!g->pb && batch == 1 && (J.sn == 1 || g->pa) && J.sm > 1 && g->K > 0 &&
        threads > 1 && sb <= SM_GEMM_SHARED_B_MAX &&
        ws_bytes >= sm_gemm_workspace(threads, 0, 0, 1) + sb) {
        shared = (sm_gemm_pack){
            ops, 0, g->K, g->N, 1, (int64_t)(sb / 4), (float *)J.ws};
        J.shared_b = &shared;
        J.shared_bytes = sb;
        sm_parallel_for(tp, (g->N + ops->nr - 1) / ops->nr, 1, pack_shared, &J);
        shared_args = *g;
        shared_args.pb = &shared;
        shared_args.pack_b = NULL;
        J.g = &shared_args;
    }
    /* Likewise A when the columns are split (each column block would pack
     * its rows of A again): packed once, then read by every task as if
     * prepacked, whatever the split of the rows. */
    sm_gemm_pack shared_a;
    size_t sa = shared_a_bytes(g->M, g->K);
    if (!g->pa && !J.shared_b && !J.a_in_place && batch == 1 && J.sn > 1 &&
        g->K > 0 && threads > 1 && sa <= SM_GEMM_SHARED_A_MAX &&
        ws_bytes >= sm_gemm_workspace(threads, 0, 0, 1) + sa) {
        shared_a = (sm_gemm_pack){
            ops, 1, g->M, g->K, 1, (int64_t)(sa / 4), (float *)J.ws};
        J.shared_a = &shared_a;
        J.shared_bytes = sa;
        sm_parallel_for(tp, (g->M + ops->mr - 1) / ops->mr, 1, pack_shared_a,
                        &J);
        shared_args = *g;
        shared_args.pa = &shared_a;
        shared_args.pack_a = NULL;
        J.g = &shared_args;
    }
    if (threads <= 1 || ntasks == 1)
        task(&J, 0, ntasks, 0);
    else
        sm_parallel_for(tp, ntasks, 1, task, &J);
    sm_free(own);
    return SMELT_OK;
}
