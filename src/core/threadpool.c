/*
 * threadpool.c - the intra-op thread pool (threadpool.h).
 *
 * Every parallel_for is a job: the caller publishes it by bumping a
 * generation counter and runs chunks itself. Chunks are handed out
 * through an atomic counter, so uneven chunks balance themselves. A
 * worker joins a job before it takes chunks; once the caller has taken
 * the last chunk it closes the job and waits only for the workers that
 * joined. A worker the OS has not scheduled yet (a busy VM's vCPU) does
 * not hold the caller up: it finds the job closed, or joins a later one.
 * Between jobs a worker spins a little (kernels of one plan come back to back,
 * and waking a sleeping thread costs tens of microseconds), then sleeps on a
 * condition variable. Nothing is allocated after the pool is made.
 */
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/status.h"

/* Spins before a waiting worker sleeps (a pause is tens of cycles), and
 * before the caller, waiting for the last chunks, starts yielding its
 * CPU (a worker it waits for may need it when threads outnumber CPUs). */
#define SPIN_LIMIT 20000
#define CALLER_SPIN_LIMIT 2000

typedef struct worker {
    struct sm_threadpool *tp;
    int tid;
    pthread_t th;
} worker;

struct sm_threadpool {
    int n_threads;
    worker *workers; /* n_threads - 1 */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int sleepers; /* under mu */
    atomic_ulong gen;
    atomic_int stop;
    atomic_uint state; /* workers in the job, | JOB_CLOSED */
    /* the job (written by the caller before gen is bumped) */
    sm_parallel_fn fn;
    void *arg;
    int64_t n, chunk;
    atomic_llong next;
    /* tracing (sm_threadpool_trace): set between jobs only */
    sm_pool_span *spans;
    int span_cap, tag;
    atomic_int n_spans;
};

/* state's flag: the job takes no more workers (its chunks are all
 * taken, or it is being replaced). */
#define JOB_CLOSED 0x80000000u

/* Set while a thread runs chunks, so a nested parallel_for runs inline. */
static _Thread_local int in_pool;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int sm_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Keeps this thread's turn in the job as a span, when tracing and it ran
 * any chunk: one atomic add into the preallocated buffer. */
static void trace_turn(sm_threadpool *tp, int tid, double t0, int ran)
{
    if (!ran)
        return;
    int k = atomic_fetch_add_explicit(&tp->n_spans, 1, memory_order_relaxed);
    if (k < tp->span_cap)
        tp->spans[k] = (sm_pool_span){tid, tp->tag, t0, now_ms()};
}

/* Takes chunks of the current job until none are left. */
static void run_chunks(sm_threadpool *tp, int tid)
{
    in_pool = 1;
    int tracing = tp->spans != NULL, ran = 0;
    double t0 = tracing ? now_ms() : 0;
    for (;;) {
        int64_t i =
            atomic_fetch_add_explicit(&tp->next, 1, memory_order_relaxed);
        int64_t b = i * tp->chunk;
        if (b >= tp->n)
            break;
        int64_t e = b + tp->chunk < tp->n ? b + tp->chunk : tp->n;
        tp->fn(tp->arg, b, e, tid);
        ran = 1;
    }
    if (tracing)
        trace_turn(tp, tid, t0, ran);
    in_pool = 0;
}

/* Waits (spinning, then sleeping) for a generation other than seen. */
static unsigned long wait_job(sm_threadpool *tp, unsigned long seen)
{
    unsigned long g;
    for (int s = 0; s < SPIN_LIMIT; s++) {
        g = atomic_load_explicit(&tp->gen, memory_order_acquire);
        if (g != seen || atomic_load(&tp->stop))
            return g;
        cpu_relax();
    }
    pthread_mutex_lock(&tp->mu);
    tp->sleepers++;
    while ((g = atomic_load(&tp->gen)) == seen && !atomic_load(&tp->stop))
        pthread_cond_wait(&tp->cv, &tp->mu);
    tp->sleepers--;
    pthread_mutex_unlock(&tp->mu);
    return g;
}

/* Counts the calling worker into the open job; 0 when it is closed.
 * The job's fields are read only after this (they are stable until the
 * worker leaves: the caller waits for it before publishing another). */
static int join_job(sm_threadpool *tp)
{
    unsigned x = atomic_load_explicit(&tp->state, memory_order_acquire);
    while (!(x & JOB_CLOSED))
        if (atomic_compare_exchange_weak_explicit(&tp->state, &x, x + 1,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire))
            return 1;
    return 0;
}

static void *worker_main(void *p)
{
    worker *w = p;
    sm_threadpool *tp = w->tp;
    unsigned long seen = 0;
    for (;;) {
        seen = wait_job(tp, seen);
        if (atomic_load(&tp->stop))
            return NULL;
        if (join_job(tp)) {
            run_chunks(tp, w->tid);
            atomic_fetch_sub_explicit(&tp->state, 1, memory_order_release);
        }
    }
}

/* Joins workers[0..started) after telling them to stop. */
static void stop_workers(sm_threadpool *tp, int started)
{
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->stop, 1);
    pthread_cond_broadcast(&tp->cv);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < started; i++)
        pthread_join(tp->workers[i].th, NULL);
}

smelt_status sm_threadpool_new(smelt_ctx_t *ctx, int n_threads,
                               sm_threadpool **out)
{
    *out = NULL;
    if (n_threads <= 0)
        n_threads = sm_cpu_count();
    if (n_threads > 1024)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "thread pool: %d threads (at most 1024)", n_threads);
    sm_threadpool *tp = sm_calloc(1, sizeof *tp);
    if (!tp)
        return sm_err_nomem(ctx);
    tp->n_threads = n_threads;
    tp->workers = sm_calloc((size_t)n_threads, sizeof *tp->workers);
    if (!tp->workers) {
        sm_free(tp);
        return sm_err_nomem(ctx);
    }
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->cv, NULL);
    atomic_init(&tp->gen, 0);
    atomic_init(&tp->stop, 0);
    atomic_init(&tp->state, JOB_CLOSED);
    atomic_init(&tp->next, 0);
    for (int i = 0; i < n_threads - 1; i++) {
        tp->workers[i].tp = tp;
        tp->workers[i].tid = i + 1;
        if (pthread_create(&tp->workers[i].th, NULL, worker_main,
                           &tp->workers[i]) != 0) {
            stop_workers(tp, i);
            pthread_cond_destroy(&tp->cv);
            pthread_mutex_destroy(&tp->mu);
            sm_free(tp->workers);
            sm_free(tp);
            return sm_err(ctx, SMELT_ERR_RUNTIME,
                          "thread pool: could not start thread %d of %d", i + 2,
                          n_threads);
        }
    }
    *out = tp;
    return SMELT_OK;
}

void sm_threadpool_free(sm_threadpool *tp)
{
    if (!tp)
        return;
    stop_workers(tp, tp->n_threads - 1);
    pthread_cond_destroy(&tp->cv);
    pthread_mutex_destroy(&tp->mu);
    sm_free(tp->workers);
    sm_free(tp);
}

void sm_threadpool_trace(sm_threadpool *tp, sm_pool_span *spans, int cap)
{
    if (!tp)
        return;
    tp->spans = cap > 0 ? spans : NULL;
    tp->span_cap = cap > 0 ? cap : 0;
    atomic_store(&tp->n_spans, 0);
}

void sm_threadpool_trace_tag(sm_threadpool *tp, int tag)
{
    if (tp)
        tp->tag = tag;
}

int sm_threadpool_trace_count(sm_threadpool *tp, int reset)
{
    if (!tp)
        return 0;
    return reset ? atomic_exchange(&tp->n_spans, 0) : atomic_load(&tp->n_spans);
}

int sm_threadpool_size(const sm_threadpool *tp)
{
    return tp ? tp->n_threads : 1;
}

void sm_parallel_for(sm_threadpool *tp, int64_t n, int64_t chunk,
                     sm_parallel_fn fn, void *arg)
{
    if (n <= 0)
        return;
    int t = tp ? tp->n_threads : 1;
    if (chunk <= 0)
        chunk = (n + t - 1) / t;
    if (t == 1 || in_pool || n <= chunk) {
        fn(arg, 0, n, 0);
        return;
    }
    /* the state is closed and empty here: no worker reads the fields */
    tp->fn = fn;
    tp->arg = arg;
    tp->n = n;
    tp->chunk = chunk;
    atomic_store_explicit(&tp->next, 0, memory_order_relaxed);
    atomic_store_explicit(&tp->state, 0, memory_order_release); /* open */
    atomic_fetch_add_explicit(&tp->gen, 1, memory_order_release);
    pthread_mutex_lock(&tp->mu);
    if (tp->sleepers)
        pthread_cond_broadcast(&tp->cv);
    pthread_mutex_unlock(&tp->mu);
    run_chunks(tp, 0);
    /* every chunk is taken: close, then wait for the workers inside */
    atomic_fetch_or_explicit(&tp->state, JOB_CLOSED, memory_order_acq_rel);
    for (int s = 0; (atomic_load_explicit(&tp->state, memory_order_acquire) &
                     ~JOB_CLOSED) != 0;
         s++) {
        if (s < CALLER_SPIN_LIMIT)
            cpu_relax();
        else
            sched_yield();
    }
}
