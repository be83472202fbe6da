/*
 * gemm.h - Smelt's f32 GEMM: C = epilogue(A B), A [M, K] and B [K, N]
 * strided views or prepacked (weights, packed once at plan time), C
 * row-major, batched over up to SMELT_MAX_DIMS broadcast dims, split over
 * a thread pool.
 *
 * Blocking (Goto / BLIS): for each NC-wide block of columns and KC-deep
 * slice of K, B's block is packed (or found prepacked) into NR-wide
 * panels; for each MC-tall block of rows, A's block is packed (or found
 * prepacked) into MR-tall panels; the micro-kernel (gemm.inc.h) then
 * sweeps MR x NR tiles, and after the last K slice the epilogue (bias,
 * residual, activation) runs on each tile while it sits in L1.
 */
#ifndef SM_CPU_GEMM_H
#define SM_CPU_GEMM_H

#include "core/status.h"
#include "kernels/cpu/cpu_ops.h"
#include "core/threadpool.h"

/*
 * Cache blocking, measured on Zen 4 (32 KB L1d, 1 MB L2 per core) with
 * bench/gemm_bench: KC 512 deep slices, MC 84 rows of A per packed block,
 * NC 1024 columns per block of prepacked B (read in place) and 384 when
 * B is packed on the fly (the KC x NC block then stays within L2).
 */
#ifndef SM_GEMM_KC
#define SM_GEMM_KC 512
#endif
#ifndef SM_GEMM_MC
#define SM_GEMM_MC 84 /* a multiple of every table's mr (4, 6, 14) */
#endif
#ifndef SM_GEMM_NC
#define SM_GEMM_NC 1024 /* a multiple of every table's nr (4, 16, 32) */
#endif
#ifndef SM_GEMM_NC_PACK
#define SM_GEMM_NC_PACK 384
#endif
/* A B packed on the fly is packed once and shared by the threads when the
 * split is over rows only (few columns, many rows: a convolution's late
 * layers) and it takes at most this many bytes. */
#define SM_GEMM_SHARED_B_MAX ((size_t)4 << 20)
/* Likewise an A from a pack_a hook, packed once when the split is over
 * columns only (a convolution's late layers computed position-major). */
#define SM_GEMM_SHARED_A_MAX ((size_t)4 << 20)

/* A prepacked operand: `count` matrices (a batch of weights). A [M, K]
 * as ceil(M / mr) panels of K x mr; B [K, N] as blocks of KC rows (the
 * last may be shorter), each block ceil(N / nr) panels of kc x nr, so
 * that a product with few rows (an MLP's batch) streams B from memory
 * front to back. */
typedef struct sm_gemm_pack {
    const sm_cpu_ops *ops; /* the table whose mr / nr it was packed for */
    int is_a;              /* 1: an A operand, 0: a B operand */
    int64_t rows, cols;    /* M x K (A) or K x N (B) */
    int64_t count;         /* matrices in the batch */
    int64_t mat_stride;    /* floats from one matrix to the next */
    float *data;           /* 64-byte aligned, inside the same block */
} sm_gemm_pack;

/* Packs `count` matrices, the i-th at m + i * mat_stride (a view of
 * rows x cols), as A (is_a) or B operands for ops; one sm_malloc'd block,
 * freed with sm_free. */
smelt_status sm_gemm_pack_new(smelt_ctx_t *ctx, const sm_cpu_ops *ops, int is_a,
                              const sm_matf *m, int64_t rows, int64_t cols,
                              int64_t count, int64_t mat_stride,
                              sm_gemm_pack **out);

/* Custom packing (implicit-GEMM convolution): writes ceil(n / nr)
 * panels of kc x nr floats for depth [k0, k0+kc) and positions
 * [j0, j0+n) of batch element `batch`'s operand, zero-padding the last
 * panel. As B's packer, positions are columns and nr the table's nr; as
 * A's, positions are rows, and nr is mr (an A panel holds mr floats per
 * k, as a B panel holds nr). */
typedef void (*sm_gemm_pack_fn)(const void *user, int64_t batch, int64_t k0,
                                int64_t kc, int64_t j0, int64_t n, int nr,
                                float *dst);

/* Operands whose batch offsets the driver computes. */
enum {
    SM_GB_A,
    SM_GB_B,
    SM_GB_C,
    SM_GB_T0,
    SM_GB_T1,
    SM_GB_PA,
    SM_GB_PB,
    SM_GB_COUNT
};

typedef struct sm_gemm_args {
    int64_t M, N, K;
    sm_matf a, b; /* ignored where pa / pb / pack_a / pack_b give it */
    const sm_gemm_pack *pa, *pb;
    sm_gemm_pack_fn pack_a, pack_b;
    const void *pack_a_user, *pack_b_user;
    float *c;
    int64_t ldc;
    /* Channel-blocked C (0: row-major): columns in blocks of 16, block b
     * at c + b * cblk, rows 16 floats apart inside it (ldc must be 16);
     * N a multiple of 16, and only epilogues the micro-kernel applies
     * itself, without a full residual. */
    int64_t cblk;
    sm_gemm_epi epi; /* alpha 1, no terms, act 0: nothing to do */
    /* Batch: nbd dims of sizes bdims; stride[op][d] is how far operand op
     * moves (in floats; for PA / PB in packed matrices) per step of dim
     * d (0 where it broadcasts). nbd = 0: one matrix product. */
    int nbd;
    int64_t bdims[SMELT_MAX_DIMS];
    int64_t stride[SM_GB_COUNT][SMELT_MAX_DIMS];
} sm_gemm_args;

/* Whether the micro-kernel applies activation act (an sm_act_kind)
 * itself: the rows of core/act.def marked cheap. */
int sm_gemm_act_fusable(int act);

/* An epilogue that does nothing. */
sm_gemm_epi sm_gemm_epi_none(void);

/* Products of fewer flops than this run on the calling thread (waking
 * the pool costs more); returns the previous value. Default 1e6. Tests
 * set 0 to run the threaded paths on small shapes. */
double sm_gemm_set_parallel_threshold(double flops);

/* Scratch bytes sm_gemm_f32 needs with n_threads threads: per-thread
 * packing buffers, plus room to pack a K x N B once for all threads when
 * B is not prepacked (b_packed 0) and small enough to share. */
size_t sm_gemm_workspace(int n_threads, int64_t K, int64_t N, int b_packed);

/* The same for a product whose B is prepacked and whose A [M, K] comes
 * from a pack_a hook: room to pack A once for all threads (tasks that
 * split only the columns then share it) when it is small enough. */
size_t sm_gemm_workspace_shared_a(int n_threads, int64_t M, int64_t K);

/*
 * Runs the product. ws (64-byte aligned, ws_bytes >= sm_gemm_workspace
 * of the pool's size) may be NULL, in which case the scratch is
 * allocated here (SMELT_ERR_NOMEM on failure). pa / pb must come from
 * ops. C must not overlap A, B or the epilogue's terms (C holds partial
 * sums until the last K slice).
 */
smelt_status sm_gemm_f32(smelt_ctx_t *ctx, const sm_cpu_ops *ops,
                         const sm_gemm_args *g, sm_threadpool *tp, void *ws,
                         size_t ws_bytes);

#endif
