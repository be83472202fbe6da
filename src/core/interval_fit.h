/*
 * interval_fit.h - placing buffers with lifetimes into one arena: the
 * plan's offset assignment (plan/plan.c).
 */
#ifndef SM_INTERVAL_FIT_H
#define SM_INTERVAL_FIT_H

#include <stddef.h>
#include <stdint.h>

/* A buffer of `size` bytes live from step `first` to step `last`
 * (inclusive); `offset` is the result. */
typedef struct sm_interval {
    int64_t size, offset;
    int first, last;
} sm_interval;

/* Best-fit offsets for bufs[0..n), largest first: each buffer goes into
 * the smallest gap between the placed buffers whose lifetimes overlap its
 * own, or above them. scratch holds sm_interval_fit_scratch(n) bytes,
 * aligned as malloc aligns. Returns the peak (the arena size).
 * O((n + k) log n) for k overlapping pairs of buffers. */
int64_t sm_interval_fit(sm_interval *bufs, int n, void *scratch);
size_t sm_interval_fit_scratch(int n);

#endif
