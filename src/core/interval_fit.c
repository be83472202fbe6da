/*
 * interval_fit.c - best-fit offset assignment for buffers with lifetimes.
 *
 * Buffers are placed largest first; each one needs the placed buffers
 * whose lifetimes overlap its own. Scanning every placed buffer for that
 * made the fit quadratic (a 50k-step plan spent seconds here), so the
 * placed buffers sit in a max-segment tree over the buffers sorted by
 * their first step: a query visits only subtrees that hold a placed
 * buffer live at or after the new buffer's first step, among those that
 * start no later than its last step. Its cost is O((k + 1) log n) for k
 * overlapping buffers, and the offsets are the ones the plain scan gave.
 */
#include "core/interval_fit.h"

#include <limits.h>
#include <stdlib.h>

static int by_size(const void *a, const void *b)
{
    const sm_interval *x = *(const sm_interval *const *)a;
    const sm_interval *y = *(const sm_interval *const *)b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

static int by_first(const void *a, const void *b)
{
    const sm_interval *x = *(const sm_interval *const *)a;
    const sm_interval *y = *(const sm_interval *const *)b;
    if (x->first != y->first)
        return (x->first > y->first) - (x->first < y->first);
    return (x > y) - (x < y);
}

static int by_offset(const void *a, const void *b)
{
    const sm_interval *x = *(const sm_interval *const *)a;
    const sm_interval *y = *(const sm_interval *const *)b;
    if (x->offset != y->offset)
        return (x->offset > y->offset) - (x->offset < y->offset);
    return (x > y) - (x < y);
}

/* a + b for byte counts, held at INT64_MAX rather than wrapping: a
 * hostile graph's sizes must not turn into a small or negative arena. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int leaves_for(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

size_t sm_interval_fit_scratch(int n)
{
    size_t p = (size_t)leaves_for(n > 0 ? n : 1);
    return 3 * sizeof(sm_interval *) * (size_t)(n > 0 ? n : 1) +
           sizeof(int) * (2 * p + (size_t)(n > 0 ? n : 1));
}

/* The tree over leaves 0..P-1 (buffers by first step) and what a query
 * collects into. tree[i] is the largest `last` of a placed buffer under
 * node i, INT_MIN where none is placed. */
typedef struct fit_tree {
    int *tree, leaves;
    sm_interval **by_first, **live;
    int n_live;
} fit_tree;

/* Collects the placed buffers under `node` (covering leaves [lo, hi))
 * whose leaf is below `end` and whose last step is >= `first`. */
static void tree_query(fit_tree *t, int node, int lo, int hi, int end,
                       int first)
{
    if (lo >= end || t->tree[node] < first)
        return;
    if (hi - lo == 1) {
        t->live[t->n_live++] = t->by_first[lo];
        return;
    }
    int mid = lo + (hi - lo) / 2;
    tree_query(t, 2 * node, lo, mid, end, first);
    tree_query(t, 2 * node + 1, mid, hi, end, first);
}

/* Marks leaf `leaf` as placed, live until step `last`. */
static void tree_place(fit_tree *t, int leaf, int last)
{
    int i = t->leaves + leaf;
    t->tree[i] = last;
    for (i /= 2; i >= 1; i /= 2) {
        int a = t->tree[2 * i], b = t->tree[2 * i + 1];
        t->tree[i] = a > b ? a : b;
    }
}

/* The number of leaves whose buffer starts at or before step `last`. */
static int starts_until(const fit_tree *t, int n, int last)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->by_first[mid]->first <= last)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t sm_interval_fit(sm_interval *bufs, int n, void *scratch)
{
    if (n <= 0)
        return 0;
    sm_interval **order = scratch;
    fit_tree t = {.leaves = leaves_for(n)};
    t.live = order + n;
    t.by_first = order + 2 * n;
    t.tree = (int *)(void *)(order + 3 * n);
    int *leaf_of = t.tree + 2 * t.leaves;
    for (int i = 0; i < n; i++)
        order[i] = t.by_first[i] = &bufs[i];
    qsort(order, (size_t)n, sizeof *order, by_size);
    qsort(t.by_first, (size_t)n, sizeof *t.by_first, by_first);
    for (int i = 0; i < n; i++)
        leaf_of[t.by_first[i] - bufs] = i;
    for (int i = 0; i < 2 * t.leaves; i++)
        t.tree[i] = INT_MIN;
    int64_t peak = 0;
    for (int i = 0; i < n; i++) {
        sm_interval *b = order[i];
        t.n_live = 0;
        tree_query(&t, 1, 0, t.leaves, starts_until(&t, n, b->last), b->first);
        int k = t.n_live;
        sm_interval **live = t.live;
        qsort(live, (size_t)k, sizeof *live, by_offset);
        int64_t cur = 0, best = -1, best_gap = INT64_MAX;
        for (int q = 0; q < k; q++) {
            int64_t gap = live[q]->offset - cur;
            if (gap >= b->size && gap < best_gap) {
                best = cur;
                best_gap = gap;
            }
            int64_t end = sat_add(live[q]->offset, live[q]->size);
            if (end > cur)
                cur = end;
        }
        b->offset = best >= 0 ? best : cur;
        if (sat_add(b->offset, b->size) > peak)
            peak = sat_add(b->offset, b->size);
        tree_place(&t, leaf_of[b - bufs], b->last);
    }
    return peak;
}
