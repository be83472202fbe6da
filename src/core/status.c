/*
 * status.c - error context: status names, messages, prefixes.
 */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"

smelt_ctx_t *smelt_ctx_init(void)
{
    return sm_calloc(1, sizeof(smelt_ctx_t));
}

void smelt_ctx_free(smelt_ctx_t *ctx)
{
    if (ctx && ctx->trace_free)
        ctx->trace_free(ctx->trace);
    sm_free(ctx);
}

const char *smelt_ctx_error(const smelt_ctx_t *ctx)
{
    return ctx ? ctx->msg : "";
}

smelt_status smelt_ctx_status(const smelt_ctx_t *ctx)
{
    return ctx ? ctx->code : SMELT_OK;
}

const char *smelt_status_name(smelt_status s)
{
    switch (s) {
    case SMELT_OK: return "ok";
    case SMELT_ERR_INVALID_ARG: return "invalid argument";
    case SMELT_ERR_NOMEM: return "out of memory";
    case SMELT_ERR_IO: return "i/o error";
    case SMELT_ERR_PARSE: return "parse error";
    case SMELT_ERR_TYPE: return "type error";
    case SMELT_ERR_SHAPE: return "shape error";
    case SMELT_ERR_VERIFY: return "invalid graph";
    case SMELT_ERR_UNSUPPORTED: return "unsupported";
    case SMELT_ERR_LIMIT: return "limit exceeded";
    case SMELT_ERR_RUNTIME: return "runtime error";
    case SMELT_ERR_NOT_FOUND: return "not found";
    }
    return "unknown status";
}

smelt_status sm_err(smelt_ctx_t *ctx, smelt_status code, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
        va_end(ap);
        ctx->code = code;
    }
    return code;
}

smelt_status sm_err_prefix(smelt_ctx_t *ctx, const char *fmt, ...)
{
    if (!ctx)
        return SMELT_ERR_INVALID_ARG;
    char pre[SM_ERR_MSG_MAX], old[SM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, ctx->msg, sizeof old);
    size_t k = strlen(pre);
    if (k >= sizeof ctx->msg)
        k = sizeof ctx->msg - 1;
    memcpy(ctx->msg, pre, k);
    size_t rest = strlen(old);
    if (rest > sizeof ctx->msg - 1 - k)
        rest = sizeof ctx->msg - 1 - k;
    memcpy(ctx->msg + k, old, rest);
    ctx->msg[k + rest] = 0;
    return ctx->code;
}

smelt_status sm_err_nomem(smelt_ctx_t *ctx)
{
    return sm_err(ctx, SMELT_ERR_NOMEM, "out of memory");
}
