/*
 * sized.c - reading and writing the public structs that carry their own
 * size (sized.h), so a caller built against an older or newer smelt.h
 * keeps working: fields are only ever appended.
 */
#include <string.h>

#include "core/sized.h"
#include "core/status.h"

/* The struct_size field every sized struct starts with. */
static size_t size_of(const void *s)
{
    size_t n;
    memcpy(&n, s, sizeof n);
    return n;
}

smelt_status sm_sized_check(smelt_ctx_t *ctx, const char *what, const void *dst,
                            size_t min)
{
    if (!dst)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "%s: NULL struct", what);
    size_t n = size_of(dst);
    if (n < min || n > SM_SIZED_MAX)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: struct_size %zu is not a size this struct ever "
                      "had (at least %zu); set it with the struct's _default "
                      "function or SMELT_STRUCT_INIT",
                      what, n, min);
    return SMELT_OK;
}

smelt_status sm_sized_in(smelt_ctx_t *ctx, const char *what, void *dst,
                         size_t size, size_t min, const void *src)
{
    SM_TRY(sm_sized_check(ctx, what, src, min));
    size_t n = size_of(src);
    /* A newer caller's struct: fine while the fields past ours are zero,
     * i.e. left at their defaults, which this library then ignores. */
    for (size_t i = size; i < n; i++)
        if (((const unsigned char *)src)[i] != 0)
            return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                          "%s: sets a field at byte %zu, past the %zu bytes "
                          "this library (smelt %d.%d.%d) knows",
                          what, i, size, SMELT_VERSION_MAJOR,
                          SMELT_VERSION_MINOR, SMELT_VERSION_PATCH);
    size_t keep = size_of(dst);
    memcpy(dst, src, n < size ? n : size);
    memcpy(dst, &keep, sizeof keep);
    return SMELT_OK;
}

void sm_sized_out(void *dst, const void *src, size_t size)
{
    size_t n = size_of(dst);
    /* The caller's struct_size stays; everything after it is filled. */
    size_t head = sizeof(size_t);
    if (n > size) {
        memset((char *)dst + size, 0, n - size);
        n = size;
    }
    if (n > head)
        memcpy((char *)dst + head, (const char *)src + head, n - head);
}

smelt_status sm_sized_init(void *o, size_t size, const void *defaults,
                           size_t lib_size, size_t min)
{
    if (!o || size < min || size > SM_SIZED_MAX)
        return SMELT_ERR_INVALID_ARG;
    memcpy(o, &size, sizeof size);
    sm_sized_out(o, defaults, lib_size);
    return SMELT_OK;
}
