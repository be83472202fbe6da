/*
 * executor.h - sessions: the run state of one thread running a plan
 * (executor.c), and the sub-block runner its control steps use
 * (exec_block.c).
 */
#ifndef SM_EXECUTOR_H
#define SM_EXECUTOR_H

#include "plan/plan.h"
#include "core/threadpool.h"

struct smelt_session {
    const sm_plan *p;
    void *arena_raw;
    char *arena;       /* 64-byte aligned, p->arena_bytes */
    sm_tensor *views;  /* one per slot: the tensor steps see */
    sm_tensor **owned; /* per slot: a tensor this run allocated, or NULL */
    sm_tensor **args;  /* per step: in[] then out[] pointers into views */
    sm_tensor **ctl;   /* room for a control step's new outputs */
    int max_out;
    sm_threadpool *tp;
    /* sub-block values by value id (control steps) */
    sm_tensor **env;
    unsigned char *env_owned;
    int profiling;
    double *t0, *t1; /* per step, ms from the run's start */
    double origin;   /* the last profiled run's start (CLOCK_MONOTONIC ms) */
    sm_pool_span *spans; /* the pool's work items in the last profiled run */
    int span_cap, n_spans;
};

typedef struct smelt_session sm_session;

/* Runs control step st (If, Loop, FusedElementwise) with its reference
 * kernel and a sub-block runner over s's values; outs (st->n_out) receive
 * new tensors owned by the caller. */
smelt_status sm_exec_control(smelt_ctx_t *ctx, sm_session *s, const sm_step *st,
                             sm_tensor **outs);

#endif
