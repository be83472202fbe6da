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

/* The number of online CPUs (at least 1). */
int sm_cpu_count(void);

#endif
