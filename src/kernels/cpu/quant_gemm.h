/*
 * quant_gemm.h - Smelt's int8 GEMM: u8 x s8 products summed in int32,
 * C = epilogue(sum_k (A[i,k] - za_i) (B[k,j] - zb_j)), with B packed
 * once (weights, at plan time) and A (activations) packed per call.
 *
 * Every operand is brought to the one form the micro-kernels multiply,
 * unsigned A times signed B, by an exact shift while packing: an s8 A is
 * stored as a + 128 (its zero point moves by +128), a u8 B as b - 128
 * (its zero point by -128). The zero points are then applied after the
 * product from row sums of A and column sums of B:
 *
 *   acc = raw - zb_j rowA_i - za_i colB_j + K za_i zb_j
 *
 * (raw = sum_k a'_ik b'_kj as the micro-kernel computes it), in wrapping
 * 32-bit arithmetic like the reference's int32 result.
 *
 * Packed layout: k in groups of 4 (the depth padded with zeros to a
 * multiple of 4); a B panel of nr columns holds, per group, nr x 4 bytes
 * (column j's four k values side by side in one 32-bit lane), an A panel
 * of mr rows mr x 4 bytes per group. One 32-bit broadcast of A times one
 * vector of B is then one vpdpbusd (VNNI) or vpmaddubsw + vpmaddwd
 * (AVX2).
 *
 * Micro-kernels per ISA (quant_avx512.c, quant_avxvnni.c, quant_avx2.c,
 * scalar here):
 *   avx512vnni  8 x 32 tile, vpdpbusd on zmm
 *   avxvnni     6 x 16 tile, VEX vpdpbusd on ymm
 *   avx2        4 x 16 tile; vpmaddubsw sums two u8 x s8 products into
 *               int16 with saturation, exact only while |b| <= 64. The
 *               packer records whether every packed weight lies in
 *               [-64, 63] ("narrow", e.g. a quantizer's reduce-range
 *               weights); such B takes vpmaddubsw + vpmaddwd(1). Any
 *               other B takes the exact split: even and odd bytes of
 *               each 32-bit lane widened to int16 in registers and
 *               multiplied by two vpmaddwd (int32 sums, no saturation).
 *               Results are bit-exact either way; the split costs
 *               more instructions per product.
 *   scalar      4 x 8 tile, plain C.
 */
#ifndef SM_CPU_QUANT_GEMM_H
#define SM_CPU_QUANT_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/threadpool.h"
#include "kernels/cpu/cpu_ops.h"

/* The largest tile of any ISA (the driver's tile buffer). */
#define SM_Q8_MR_MAX 8
#define SM_Q8_NR_MAX 32

/* One ISA's int8 micro-kernel: c[r * nr + j] = sum over kg groups of 4
 * of a (an mr-row panel) times b (an nr-column panel), for the full
 * mr x nr tile (c overwritten). narrow: every value of b lies in
 * [-64, 63] (the AVX2 kernel's fast path; the others ignore it). */
typedef struct sm_q8_isa {
    const char *name; /* "avx512vnni", "avxvnni", "avx2", "scalar" */
    int mr, nr;
    void (*ukr)(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c,
                int narrow);
    /* The dynamic quantization's two passes over n floats, n a multiple
     * of 16 (sm_q8_quantize_dynamic; NULL: the SSE2 ones): *lo = min(*lo,
     * x...) and *hi = max(*hi, x...) ignoring NaN; y = the u8 values
     * with scale and zero point zp. */
    void (*minmax)(const float *x, int64_t n, float *lo, float *hi);
    void (*quant)(const float *x, int64_t n, float scale, float zp, uint8_t *y);
    /* One row of a tile's f32 epilogue when A's zero point is per tensor
     * and every zero point of B is 0 (NULL: plain C): y[c] =
     * f32((int32)(t[c] - colk[c])) * sf[c] [+ bf[c] when bf], c < n. */
    void (*epi_f32)(const int32_t *t, const uint32_t *colk, const float *sf,
                    const float *bf, float *y, int n);
} sm_q8_isa;

extern const sm_q8_isa sm_q8_isa_avx512vnni;
extern const sm_q8_isa sm_q8_isa_avxvnni;
extern const sm_q8_isa sm_q8_isa_avx2;
extern const sm_q8_isa sm_q8_isa_scalar;

/* The scalar micro-kernel (also the stand-in of the vector ISAs in a
 * build without their flags, where no CPU selects them). */
void sm_q8_ukr_scalar(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c,
                      int narrow);

/* The registry's int8 instances are bound to these tables (registry.c,
 * isas Q8): they carry only a name and the features; the int8 hooks
 * reach their micro-kernel through sm_q8_isa_of and call no f32
 * primitive. */
extern const sm_cpu_ops sm_cpu_ops_q8_avx512vnni;
extern const sm_cpu_ops sm_cpu_ops_q8_avxvnni;
extern const sm_cpu_ops sm_cpu_ops_q8_avx2;
extern const sm_cpu_ops sm_cpu_ops_q8_scalar;

/* The int8 ISA of one of the tables above (the scalar one otherwise). */
const sm_q8_isa *sm_q8_isa_of(const sm_cpu_ops *ops);

/* A packed B [K, N]: header, column sums, panels, in one block. */
typedef struct sm_q8_b {
    const sm_q8_isa *isa; /* packed for its nr */
    int64_t k, n, kg;     /* depth, columns, groups of 4 */
    int bshift;           /* 128: B was u8 and is stored minus 128 */
    int narrow;           /* every stored value lies in [-64, 63] */
    int32_t *colsum;      /* n: sum over k of the stored values */
    int8_t *data;         /* ceil(n / nr) panels of kg * nr * 4 bytes */
} sm_q8_b;

/* Bytes sm_q8_pack_b needs for a K x N operand on isa. */
size_t sm_q8_pack_b_bytes(const sm_q8_isa *isa, int64_t k, int64_t n);

/* Packs B (dtype u8 or s8; element (k, j) at b[k * rs + j * cs]) into
 * mem (sm_q8_pack_b_bytes of it, 64-byte aligned); the returned header
 * lies at the start of mem. */
sm_q8_b *sm_q8_pack_b(const sm_q8_isa *isa, const void *b, smelt_dtype dt,
                      int64_t rs, int64_t cs, int64_t k, int64_t n, void *mem);

/* What the product's result becomes (per element (i, j), acc the int32
 * sum with the zero points applied). */
typedef enum sm_q8_out_kind {
    SM_Q8_OUT_I32, /* y = acc (MatMulInteger, ConvInteger) */
    SM_Q8_OUT_F32, /* y = act(acc * sa_i * sb_j + bias_j + res_ij) */
    SM_Q8_OUT_Q8   /* y = saturate(round_half_even((acc + bias_j) *
                      (sa_i * sb_j / sy)) + zy), u8 or s8, in double as
                      the reference (bias: QLinearConv's i32) */
} sm_q8_out_kind;

/* A per-row or per-column parameter: row (column) i reads value i % n;
 * n 1 for a per-tensor value. */
typedef struct sm_q8_vec {
    const void *p;  /* NULL: absent (0 for a zero point, 1 for a scale) */
    smelt_dtype dt; /* u8, s8, i32 (zero points) or f32 (scales, bias) */
    int64_t n;      /* values; index i reads value i % n */
} sm_q8_vec;

/* The product's epilogue. */
typedef struct sm_q8_epi {
    sm_q8_out_kind kind;
    sm_q8_vec za;   /* A's zero point per row (or per tensor) */
    sm_q8_vec zb;   /* B's zero point per column (or per tensor) */
    sm_q8_vec sa;   /* A's scale per row (F32, Q8) */
    sm_q8_vec sb;   /* B's scale per column (F32, Q8) */
    sm_q8_vec bias; /* F32 (f32), Q8 (i32): per column, or absent */
    /* F32: a residual added after the bias, res[i * res_rs + j] (NULL:
     * none) */
    const float *res;
    int64_t res_rs;
    int act; /* F32: an sm_act_kind (core/act.def) */
    double act_a, act_b;
    /* F32: applies act to a run of outputs in place (an f32 table's
     * unary, vectorized); NULL: the reference scalar function per
     * element */
    void (*vact)(int f, float a, float b, const float *x, float *y, int64_t n);
    double sy; /* Q8: the output's scale and zero point */
    int64_t zy;
    smelt_dtype ydt; /* Q8: u8 or s8 */
} sm_q8_epi;

/* The plain int32 epilogue with no zero points. */
sm_q8_epi sm_q8_epi_i32(void);

/* The f32 table whose vector functions (activations) go with int8 table
 * ops (the same vector width). */
const sm_cpu_ops *sm_q8_f32_ops(const sm_cpu_ops *ops);

/*
 * DynamicQuantizeLinear of x[0..n) into y (u8) with its *scale and *zp,
 * bit-exact with the reference: scale and zero point in the reference's
 * double arithmetic, q = round(x / scale) + zp in f32, halves to even,
 * saturated to [0, 255], NaN to 0. isa's vector passes when it has them
 * (NULL: the SSE2 ones); split over tp's threads when x is large.
 */
void sm_q8_quantize_dynamic(const sm_q8_isa *isa, const float *x, int64_t n,
                            uint8_t *y, float *scale, uint8_t *zp,
                            sm_threadpool *tp);

/* sm_q8_quantize_dynamic in two steps, for a caller that quantizes
 * parts of x where it uses them: the scale and zero point of all of x
 * (split over tp when x is large), then any range of x quantized with
 * them, on the calling thread (the same bytes as the whole call's). */
void sm_q8_dynamic_params(const sm_q8_isa *isa, const float *x, int64_t n,
                          float *scale, uint8_t *zp, sm_threadpool *tp);
void sm_q8_quantize_with(const sm_q8_isa *isa, const float *x, int64_t n,
                         float scale, uint8_t zp, uint8_t *y);

/* The SSE2 passes (quant_conv.c), in the isa hooks' form. */
void sm_q8_minmax_sse2(const float *x, int64_t n, float *lo, float *hi);
void sm_q8_quant_sse2(const float *x, int64_t n, float scale, float zp,
                      uint8_t *y);

/* Products of fewer multiply-adds run on the calling thread (tests set
 * 0 so that small shapes take the threaded paths). */
void sm_q8_set_parallel_threshold(int64_t macs);

/* Workspace bytes sm_q8_gemm needs: packed A for M x K, and a packed B
 * of K x N when pack_b (B not prepacked). */
size_t sm_q8_gemm_workspace(const sm_q8_isa *isa, int64_t m, int64_t k,
                            int64_t n, int pack_b);

/*
 * C = epi(A B): A [M, K] (u8 or s8, element (i, k) at a[i * a_rs + k]),
 * B packed (bp, for isa), C element (i, j) at c[i * c_rs + j * c_cs]
 * (int32, f32, or u8 / s8 per epi->kind). ws: sm_q8_gemm_workspace(isa,
 * M, K, N, 0) bytes, 64-byte aligned. Split over tp's threads.
 */
void sm_q8_gemm(const sm_q8_isa *isa, int64_t m, const void *a, smelt_dtype adt,
                int64_t a_rs, const sm_q8_b *bp, const sm_q8_epi *epi, void *c,
                int64_t c_rs, int64_t c_cs, void *ws, sm_threadpool *tp);

/*
 * sm_q8_gemm of an f32 A [M, K] (element (i, k) at a[i * a_rs + k])
 * quantized with scale sa and zero point za (sm_q8_dynamic_params) into
 * qa (M x K bytes, rows K apart) as part of the product: the same
 * result as sm_q8_quantize_with then sm_q8_gemm. epi's sa and za are
 * the caller's (per tensor). Small M is split by rows, each thread
 * quantizing and packing its own (quant_gemm.c).
 */
void sm_q8_gemm_f32a(const sm_q8_isa *isa, int64_t m, const float *a,
                     int64_t a_rs, float sa, uint8_t za, uint8_t *qa,
                     const sm_q8_b *bp, const sm_q8_epi *epi, void *c,
                     int64_t c_rs, int64_t c_cs, void *ws, sm_threadpool *tp);

#endif
