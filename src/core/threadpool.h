/*
 * threadpool.h - a small pthread pool for intra-op parallelism.
 *
 * A pool of N threads is the caller plus N-1 workers. sm_parallel_for
 * splits [0, n) into chunks that the caller and the workers take in turn;
 * it returns when every chunk has run. A NULL pool, or a pool of one
 * thread, runs everything inline on the caller. One parallel_for at a
 * time per pool: a pool belongs to one session (one running thread), and
 * a nested call from inside a chunk runs inline.
 *
 * It lives in core, beneath every layer, so kernels (which include
 * nothing but core and themselves) can be handed a pool by the runtime
 * and split their work on it.
 */
#ifndef SM_THREADPOOL_H
#define SM_THREADPOOL_H

#include <stdint.h>

#include "smelt.h"

typedef struct sm_threadpool sm_threadpool;

/* One chunk [begin, end) of the range. tid in [0, threads) names the
 * thread running it (0: the caller), so a kernel can give each thread its
 * own slice of a workspace. */
typedef void (*sm_parallel_fn)(void *arg, int64_t begin, int64_t end, int tid);

/* A pool of n_threads threads in all (n_threads - 1 workers are started;
 * n_threads <= 0 means the number of online CPUs). */
smelt_status sm_threadpool_new(smelt_ctx_t *ctx, int n_threads,
                               sm_threadpool **out);
/* Stops and joins the workers. NULL is a no-op. */
void sm_threadpool_free(sm_threadpool *tp);
/* Threads in the pool (1 for NULL). */
int sm_threadpool_size(const sm_threadpool *tp);

/* Runs fn over [0, n) in chunks of `chunk` items (chunk <= 0: n split
 * evenly over the threads). Allocates nothing. */
void sm_parallel_for(sm_threadpool *tp, int64_t n, int64_t chunk,
                     sm_parallel_fn fn, void *arg);

/* One thread's turn in a parallel_for, recorded while the pool traces
 * (the profiler's work items): the thread, the tag the tracer gave the
 * job (the runtime's step index) and CLOCK_MONOTONIC milliseconds. */
typedef struct sm_pool_span {
    int thread, tag;
    double t0, t1;
} sm_pool_span;

/* Records, from now on, one span per thread per parallel_for it ran
 * chunks of, into spans[0..cap) (spans NULL: stop recording). The
 * buffer is the caller's and must outlive the recording; spans past cap
 * are counted but not kept. Call between parallel_fors only. */
void sm_threadpool_trace(sm_threadpool *tp, sm_pool_span *spans, int cap);
/* The tag later spans carry (between parallel_fors only). */
void sm_threadpool_trace_tag(sm_threadpool *tp, int tag);
/* Spans recorded since the last sm_threadpool_trace (may exceed cap);
 * 0 for a NULL pool. Resets the count to 0 when `reset`. */
int sm_threadpool_trace_count(sm_threadpool *tp, int reset);

/* The number of online CPUs (at least 1). */
int sm_cpu_count(void);

#endif
