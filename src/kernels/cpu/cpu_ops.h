/*
 * cpu_ops.h - the per-ISA primitives of Smelt's optimized CPU kernels.
 *
 * Every primitive is written once, in a template (gemm.inc.h,
 * vmath.inc.h, rows.inc.h, ...) over a small vector vocabulary
 * (simd_avx512.h, simd_avx2.h, simd_scalar.h), and compiled three times:
 * isa_avx512.c, isa_avx2.c and isa_scalar.c each fill one sm_cpu_ops
 * table. Only those three files get ISA flags (a delimited block of the
 * top CMakeLists.txt); everything else, drivers included, is baseline
 * x86-64 and reaches the vector code through a table chosen at run time
 * (sm_cpu_ops_best) or forced (tests call every table directly).
 */
#ifndef SM_CPU_OPS_H
#define SM_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpuid.h"

struct sm_attn_args;      /* attention.h */
struct sm_attn_grad_args; /* attention_grad.h */

/* A strided f32 matrix view: element (r, c) is p[r * rs + c * cs]. */
typedef struct sm_matf {
    const float *p;
    int64_t rs, cs;
} sm_matf;

/* One term an epilogue adds, broadcast onto the [M, N] result: element
 * (i, j) adds scale * p[i * rs + j * cs], with cs 0 or 1 (a row-major
 * operand broadcast onto [M, N] has one of the two) and rs 0, 1 or a row
 * pitch. p NULL: no term. */
typedef struct sm_epi_term {
    const float *p;
    int64_t rs, cs;
    float scale;
} sm_epi_term;

/* What runs on each output tile while it is hot:
 * y = act(alpha * y + t[0] + t[1]), act one of sm_act_kind (core/act.def)
 * with its bounds or slope in act_a / act_b. */
typedef struct sm_gemm_epi {
    float alpha;
    sm_epi_term t[2];
    int act;
    float act_a, act_b;
} sm_gemm_epi;

/* The epilogue a micro-kernel applies while its tile is in registers:
 * the common cases of sm_gemm_epi resolved for one tile by the driver
 * (gemm.c), y = act(acc + row[i] + col[j] + res[i * ldr + j]) with act
 * one of the cheap rows of core/act.def. */
typedef struct sm_ukr_epi {
    const float *row; /* one value per tile row, or NULL */
    const float *col; /* one value per tile column, or NULL */
    const float *res; /* a row-major term, rows ldr apart, or NULL */
    int64_t ldr;
    int act;
    float act_a, act_b;
} sm_ukr_epi;

/* The depths gemm_ukr_rowk has kernels for: MobileNet's channel counts
 * up to KC. */
#define SM_GEMM_ROWK(k)                                                        \
    ((k) == 16 || (k) == 24 || (k) == 32 || (k) == 64 || (k) == 96 ||          \
     (k) == 144 || (k) == 192 || (k) == 384)

/* Elementwise unary functions: the activations (values of sm_act_kind,
 * reading act_a / act_b) followed by these. */
enum {
    SM_UNARY_EXP = 32,
    SM_UNARY_NEG,
    SM_UNARY_ABS,
    SM_UNARY_SQRT,
    SM_UNARY_ERF,
    SM_UNARY_RECIP
};

/* Elementwise binary functions. */
enum {
    SM_BIN_ADD,
    SM_BIN_SUB,
    SM_BIN_MUL,
    SM_BIN_DIV,
    SM_BIN_MAX,
    SM_BIN_MIN,
    SM_BIN_COUNT
};

/* Reductions. */
enum { SM_RED_SUM, SM_RED_MAX, SM_RED_MIN };

/* SM_CPU_* features each table needs (cpuid.h). */
#define SM_CPU_ISA_AVX512                                                      \
    (SM_CPU_AVX512F | SM_CPU_AVX512BW | SM_CPU_AVX2 | SM_CPU_FMA)
#define SM_CPU_ISA_AVX2 (SM_CPU_AVX2 | SM_CPU_FMA)

typedef struct sm_cpu_ops {
    const char *name; /* "avx512", "avx2", "scalar" */
    unsigned isa;     /* SM_CPU_* features the table needs */
    int vl;           /* floats per vector */

    /* ---- GEMM (gemm.inc.h) ---- */
    int mr, nr; /* register tile: mr rows x nr columns */
    /* C[mr x nr] (+)= A panel (kc x MR, MR floats per k) times B panel
     * (kc x NR): stores only the mr rows and nr columns of C (rows
     * ldc apart, vectors of a row cvs apart: VL, or a channel-blocked
     * C's block stride); acc = 0 overwrites C, 1 adds to it. fe (or
     * NULL): the tile's epilogue, applied in registers before the
     * store. */
    void (*gemm_ukr)(int64_t kc, const float *a, const float *b, float *c,
                     int64_t ldc, int64_t cvs, int mr, int nr, int acc,
                     const sm_ukr_epi *fe);
    /* The same for a full tile of MR rows whose A is read in place:
     * row-major rows of exactly kd floats at a, for the whole depth kd
     * (C overwritten); kd one of SM_GEMM_ROWK's. */
    void (*gemm_ukr_rowk)(int64_t kd, const float *a, const float *b, float *c,
                          int64_t ldc, int64_t cvs, int nr,
                          const sm_ukr_epi *fe);
    /* Packs rows [i0, i0+m) x cols [k0, k0+kc) of A into ceil(m / MR)
     * panels of kc x MR floats (zero rows pad the last). */
    void (*gemm_pack_a)(const sm_matf *a, int64_t i0, int64_t m, int64_t k0,
                        int64_t kc, float *dst);
    /* Packs rows [k0, k0+kc) x cols [j0, j0+n) of B into ceil(n / NR)
     * panels of kc x NR floats (zero columns pad the last). */
    void (*gemm_pack_b)(const sm_matf *b, int64_t k0, int64_t kc, int64_t j0,
                        int64_t n, float *dst);
    /* Applies e to the m x n tile at c (rows ldc apart) whose first
     * element is (i0, j0) of the result. */
    void (*epi_tile)(const sm_gemm_epi *e, float *c, int64_t ldc, int64_t i0,
                     int64_t j0, int64_t m, int64_t n);

    /* ---- elementwise (rows.inc.h) ---- */
    /* y[i] = f(x[i]), f an activation or SM_UNARY_*; y may be x. */
    void (*unary)(int f, float a, float b, const float *x, float *y, int64_t n);
    /* y[i] = a[i * sa] op b[i * sb], sa and sb 0 or 1; y may alias. */
    void (*binary)(int op, const float *a, int64_t sa, const float *b,
                   int64_t sb, float *y, int64_t n);
    /* The reduction of x[0..n). */
    float (*reduce)(int kind, const float *x, int64_t n);
    /* y[i] = y[i] op x[i] (op a reduction kind: sum, max, min). */
    void (*reduce_acc)(int kind, float *y, const float *x, int64_t n);

    /* ---- normalization (rows.inc.h) ---- */
    /* Softmax (log_ = 0) or LogSoftmax (1) of x[0..n) into y. */
    void (*softmax_row)(const float *x, float *y, int64_t n, int log_);
    /* The same along a strided axis: n groups of `inner` contiguous
     * floats, normalized across the groups for each of the inner lanes. */
    void (*softmax_cols)(const float *x, float *y, int64_t n, int64_t inner,
                         int log_);
    /* y = (x - mean) / sqrt(var + eps) * g + b over x[0..n); g, b may
     * be NULL (1, 0); mean and rstd (may be NULL) receive the statistics. */
    void (*layernorm_row)(const float *x, float *y, int64_t n, const float *g,
                          const float *b, float eps, float *mean, float *rstd);

    /* ---- convolution helpers (conv.inc.h) ---- */
    /* y[i] += w * x[i * sx] for i in [0, n) (depthwise taps, pooling
     * sums with w = 1). */
    void (*axpy_strided)(float w, const float *x, int64_t sx, float *y,
                         int64_t n);
    /* y[i] = max(y[i], x[i * sx]) for i in [0, n). */
    void (*max_strided)(const float *x, int64_t sx, float *y, int64_t n);
    /* y[i] = max over t of taps[t][i] for i in [0, n) (a max pooling
     * output row). */
    void (*max_taps)(const float *const *taps, int ntaps, float *y, int64_t n);
    /* d[j] = x[2 j] for j < n (stride-2 row splits, rowsplit.h). */
    void (*gather2)(const float *x, float *d, int64_t n);
    /* y[i] = act(bias + sum over t of w[t] * taps[t][i]) (a depthwise
     * output row; act an sm_act_kind with its act_a / act_b). */
    void (*dw_row)(const float *const *taps, const float *w, int ntaps,
                   float *y, int64_t n, float bias, int act, float act_a,
                   float act_b);
    /* A block of vl channels of a depthwise convolution on channel-
     * interleaved input in (rows pitch floats apart, pixels ps floats
     * apart: vl in a padded scratch buffer, 16 in a channel-blocked
     * tensor read in place): out[oy * ors + ox * os + l] = act(bias[l] +
     * sum over taps t of wt[t * vl + l] * in[oy * sh * pitch + ox * sw *
     * ps + off[t] + l]) (conv_depthwise_blocked.c); os is vl, or the channel
     * count of an NHWC output. */
    void (*dw_cblock)(const float *in, int64_t pitch, int64_t ps, int64_t sh,
                      int64_t sw, const float *wt, const int64_t *off,
                      int ntaps, const float *bias, int act, float act_a,
                      float act_b, int64_t OH, int64_t OW, float *out,
                      int64_t os, int64_t ors);
    /* y[m][i] = act(b[m] + sum over t < nt of w[t * 8 + m] * taps[t][i])
     * for 8 output channels m and i < n: one output row, or a flat band
     * of rows, of a direct convolution (conv_direct.c). The taps are
     * read up to a vector (VL floats) past n. */
    void (*cdir_row)(const float *const *taps, int nt, const float *w,
                     const float *b, int act, float act_a, float act_b,
                     float *const *y, int64_t n);
    /* Channel interleaving, vl rows at a time (VL x VL register
     * transposes): lanes_in d[j * vl + l] = s[l][j]; lanes_out
     * d[l][j] = s[j * stride + l]; for l < vl, j < n. */
    void (*lanes_in)(const float *const *s, int64_t n, float *d);
    void (*lanes_out)(const float *s, int64_t n, int64_t stride,
                      float *const *d);

    /* ---- Winograd F(4x4, 3x3) transforms (conv_winograd.inc.h) ---- */
    /* B^T d B of n tiles whose 6 input rows are phase-split (4 phases of
     * L floats each): value xi of tile k to v[xi * vstride + k]. */
    void (*wino_in)(const float *const *rows, int64_t L, float *v,
                    int64_t vstride, int64_t n);
    /* A^T M A of n tiles (value xi of tile k at z[xi * zstride + k]) into
     * 4 output rows of 4 n floats, ostride apart. */
    void (*wino_out)(const float *z, int64_t zstride, float *out,
                     int64_t ostride, int64_t n);

    /* ---- flash attention (attention.inc.h) ---- */
    int attn_bq; /* queries per block */
    /* Queries [i0, i0 + nb attn_bq) of batch b, query head h (nb <=
     * SM_ATTN_GROUP blocks sharing each sweep over the keys): the output
     * rows, with ws of (SM_ATTN_GROUP (head_dim + v_dim + 3) + SM_ATTN_BK
     * + 1) * attn_bq floats, 64-byte aligned (attention.c). */
    void (*attn_block)(const struct sm_attn_args *a, int64_t b, int64_t h,
                       int64_t i0, int nb, float *ws);
    /* The attention backward's task (batch b, kv head hk): that kv
     * head's dK and dV and its query heads' dQ rows, with ws of
     * sm_cpu_attention_grad_ws_floats floats (attention_grad.inc.h). */
    void (*attn_grad_task)(const struct sm_attn_grad_args *a, int64_t b,
                           int64_t hk, float *ws);
} sm_cpu_ops;

extern const sm_cpu_ops sm_cpu_ops_avx512;
extern const sm_cpu_ops sm_cpu_ops_avx2;
extern const sm_cpu_ops sm_cpu_ops_scalar;

/* The widest table whose isa is within `features` (sm_cpu_features()). */
const sm_cpu_ops *sm_cpu_ops_for(unsigned features);
/* The table for this CPU, lowered by SMELT_ISA (kernels/cpu/cpuid.h). */
const sm_cpu_ops *sm_cpu_ops_best(void);

#endif
