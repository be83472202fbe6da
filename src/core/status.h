/*
 * status.h - the error context behind smelt_ctx_t.
 */
#ifndef SM_STATUS_H
#define SM_STATUS_H

#include <assert.h>

#include "smelt.h"

#define SM_ERR_MSG_MAX 1024

struct smelt_ctx {
    smelt_status code;
    char msg[SM_ERR_MSG_MAX];
    /* The tracer's state (frontends/trace), opaque here, and the function
     * that releases it with the ctx; both NULL until a trace begins. */
    void *trace;
    void (*trace_free)(void *trace);
    /* The time limit of each run (smelt_ctx_set_timeout, 0: none) and,
     * while a run is in progress, the monotonic time in ms it must end by
     * and the limit that set it (core/deadline.c). */
    int64_t timeout_ms, limit_ms;
    double deadline_ms;
    /* Asked at the same points as the time limit: nonzero cancels the
     * run (smelt_ctx_set_cancel; NULL: never). */
    int (*cancel)(void *user);
    void *cancel_user;
};

/* Record an error on ctx (which may be NULL) and return its code, so a
 * failing path reads `return sm_err(ctx, SMELT_ERR_SHAPE, "...", ...);`. */
smelt_status sm_err(smelt_ctx_t *ctx, smelt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefix the message already on ctx with more context ("node 'x': "). */
smelt_status sm_err_prefix(smelt_ctx_t *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

smelt_status sm_err_nomem(smelt_ctx_t *ctx);

/* Internal invariants: a broken one is a bug in Smelt, not bad input. */
#define SM_ASSERT(x) assert(x)

#define SM_TRY(expr)                                                           \
    do {                                                                       \
        smelt_status sm_try_s_ = (expr);                                       \
        if (sm_try_s_ != SMELT_OK)                                             \
            return sm_try_s_;                                                  \
    } while (0)

#endif
