/*
 * interval_fit.h - placing buffers with lifetimes into one arena: the
 * plan's offset assignment (plan/plan.c).
 */
#ifndef SM_INTERVAL_FIT_H
#define SM_INTERVAL_FIT_H

#include <stdint.h>

/* A buffer of `size` bytes live from step `first` to step `last`
 * (inclusive); `offset` is the result. */
typedef struct sm_interval {
    int64_t size, offset;
    int first, last;
} sm_interval;

/* Best-fit offsets for bufs[0..n), largest first: each buffer goes into
 * the smallest gap between the placed buffers whose lifetimes overlap its
 * own, or above them. scratch has room for 2n pointers. Returns the peak
 * (the arena size). Quadratic in n, which is fine at graph sizes. */
int64_t sm_interval_fit(sm_interval *bufs, int n, sm_interval **scratch);

#endif
