/*
 * deadline.c - the time limit of one run, kept on its ctx.
 */
#include "core/deadline.h"

#include <time.h>

#include "smelt.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void smelt_ctx_set_timeout(smelt_ctx_t *ctx, int64_t timeout_ms)
{
    if (ctx)
        ctx->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
}

double sm_run_begin(smelt_ctx_t *ctx, int64_t timeout_ms)
{
    if (!ctx)
        return 0;
    double previous = ctx->deadline_ms;
    int64_t limit = timeout_ms > 0 ? timeout_ms : ctx->timeout_ms;
    if (previous == 0 && limit > 0) {
        ctx->deadline_ms = now_ms() + (double)limit;
        ctx->limit_ms = limit;
    }
    return previous;
}

void sm_run_end(smelt_ctx_t *ctx, double previous)
{
    if (ctx)
        ctx->deadline_ms = previous;
}

void smelt_ctx_set_cancel(smelt_ctx_t *ctx, int (*cancel)(void *user),
                          void *user)
{
    if (ctx) {
        ctx->cancel = cancel;
        ctx->cancel_user = cancel ? user : NULL;
    }
}

smelt_status sm_run_check_time(smelt_ctx_t *ctx, const char *what)
{
    if (ctx && ctx->cancel && ctx->cancel(ctx->cancel_user))
        return sm_err(ctx, SMELT_ERR_LIMIT, "%s: the run was cancelled", what);
    if (!ctx || ctx->deadline_ms == 0 || now_ms() < ctx->deadline_ms)
        return SMELT_OK;
    return sm_err(ctx, SMELT_ERR_LIMIT,
                  "%s: the run's time limit (timeout) of %lld ms is up", what,
                  (long long)ctx->limit_ms);
}
