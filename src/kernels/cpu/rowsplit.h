/*
 * rowsplit.h - padded, phase-split input rows for sliding-window kernels
 * (depthwise convolution, pooling): for stride s, a row is stored as s
 * phases of L floats, phase r holding padded[j * s + r], so that the
 * inputs of tap kx for consecutive outputs are contiguous whatever the
 * stride, and the padding is a fill value (0, or -inf for max pooling)
 * instead of bounds checks.
 */
#ifndef SM_CPU_ROWSPLIT_H
#define SM_CPU_ROWSPLIT_H

#include <stdint.h>

/* d[j] = x[2 j] for j < n: the vectorized stride-2 copy of an ISA
 * (cpu_ops.h gather2), or NULL for the plain loop. */
typedef void (*sm_rowsplit_gather2)(const float *x, float *d, int64_t n);

/* Strides up to this have each phase's input span precomputed. */
#define SM_ROWSPLIT_MAX_S 8

typedef struct sm_rowsplit {
    int64_t s, d, pad, W; /* stride, dilation, padding before, input width */
    int64_t L;            /* floats per phase */
    sm_rowsplit_gather2 gather2;
    /* phase p takes inputs into [lo[p], hi[p]) (s <= SM_ROWSPLIT_MAX_S):
     * computed once, not per row */
    int64_t lo[SM_ROWSPLIT_MAX_S], hi[SM_ROWSPLIT_MAX_S];
} sm_rowsplit;

/* The layout for `out` outputs of a window of k taps. */
void sm_rowsplit_init(sm_rowsplit *r, int64_t out, int64_t k, int64_t stride,
                      int64_t dil, int64_t pad0, int64_t W,
                      sm_rowsplit_gather2 gather2);
/* Floats of one split row (s * L). */
int64_t sm_rowsplit_len(const sm_rowsplit *r);
/* Offset in a split row of tap kx's input for output 0 (output o reads
 * offset + o). */
int64_t sm_rowsplit_tap(const sm_rowsplit *r, int64_t kx);
/* Input row x (W floats) split into dst, padding with fill. */
void sm_rowsplit_row(const sm_rowsplit *r, const float *x, float fill,
                     float *dst);
/* The same with phase p at dst + p * pitch (pitch >= L): phases in
 * separate planes, so that a kernel can sweep one phase's rows as one
 * flat run. */
void sm_rowsplit_row_pitch(const sm_rowsplit *r, const float *x, float fill,
                           float *dst, int64_t pitch);
/* A row of nothing but fill (the rows above and below the input). */
void sm_rowsplit_fill(const sm_rowsplit *r, float fill, float *dst);

#endif
