/*
 * deadline.h - the time limit of one run (smelt_ctx_set_timeout, the
 * plan option timeout_ms). A run's entry point starts the clock on its
 * ctx; code that may run for long (a Loop's iterations, the steps of a
 * plan) asks whether the time is up, so a run never hangs.
 */
#ifndef SM_DEADLINE_H
#define SM_DEADLINE_H

#include <stdint.h>

#include "core/status.h"

/* Starts a run's clock on ctx: it must end within timeout_ms (> 0), or
 * else within the ctx's own timeout when one is set. Returns the deadline
 * that was in force before, for sm_run_end; a run nested in another
 * keeps the earlier deadline. ctx may be NULL (no limit). */
double sm_run_begin(smelt_ctx_t *ctx, int64_t timeout_ms);
void sm_run_end(smelt_ctx_t *ctx, double previous);

/* SMELT_ERR_LIMIT, naming `what` and the limit, once the run's time is
 * up; SMELT_OK otherwise (always when no limit is set). */
smelt_status sm_run_check_time(smelt_ctx_t *ctx, const char *what);

#endif
