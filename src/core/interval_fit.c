/*
 * interval_fit.c - best-fit offset assignment for buffers with lifetimes.
 */
#include "core/interval_fit.h"

#include <stdlib.h>

static int by_size(const void *a, const void *b)
{
    const sm_interval *x = *(const sm_interval *const *)a;
    const sm_interval *y = *(const sm_interval *const *)b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

static int by_offset(const void *a, const void *b)
{
    const sm_interval *x = *(const sm_interval *const *)a;
    const sm_interval *y = *(const sm_interval *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

int64_t sm_interval_fit(sm_interval *bufs, int n, sm_interval **scratch)
{
    sm_interval **order = scratch, **live = scratch + n;
    for (int i = 0; i < n; i++)
        order[i] = &bufs[i];
    qsort(order, (size_t)n, sizeof *order, by_size);
    int64_t peak = 0;
    for (int i = 0; i < n; i++) {
        sm_interval *b = order[i];
        int k = 0;
        for (int q = 0; q < i; q++)
            if (order[q]->first <= b->last && b->first <= order[q]->last)
                live[k++] = order[q];
        qsort(live, (size_t)k, sizeof *live, by_offset);
        int64_t cur = 0, best = -1, best_gap = INT64_MAX;
        for (int q = 0; q < k; q++) {
            int64_t gap = live[q]->offset - cur;
            if (gap >= b->size && gap < best_gap) {
                best = cur;
                best_gap = gap;
            }
            if (live[q]->offset + live[q]->size > cur)
                cur = live[q]->offset + live[q]->size;
        }
        b->offset = best >= 0 ? best : cur;
        if (b->offset + b->size > peak)
            peak = b->offset + b->size;
    }
    return peak;
}
