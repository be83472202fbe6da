/*
 * sized.h - the public structs that grow (smelt.h's "structs that grow"):
 * each begins with `size_t struct_size`, the sizeof the caller compiled
 * with, and the library reads or writes only the bytes that size covers.
 */
#ifndef SM_SIZED_H
#define SM_SIZED_H

#include <stddef.h>

#include "smelt.h"

/* The end of a field: the smallest struct_size a caller may pass is the
 * end of the last field of the struct's first version. */
#define SM_FIELD_END(type, field)                                              \
    (offsetof(type, field) + sizeof(((type *)0)->field))

/* No public struct is near this; a larger struct_size is garbage (an
 * uninitialized field), not a newer header. */
#define SM_SIZED_MAX 4096

/* Copies the caller's struct `src` of src->struct_size bytes into dst, a
 * struct of this library's `size` already filled with defaults, so fields
 * an older caller lacks keep their defaults. `min` is the first version's
 * size. A size below min or above SM_SIZED_MAX, or a newer caller's
 * struct that sets fields this library does not know, is refused with an
 * error naming `what`. */
smelt_status sm_sized_in(smelt_ctx_t *ctx, const char *what, void *dst,
                         size_t size, size_t min, const void *src);

/* Checks the struct_size of a caller's output struct `dst` before the
 * library fills it; `what`, `min` as for sm_sized_in. */
smelt_status sm_sized_check(smelt_ctx_t *ctx, const char *what, const void *dst,
                            size_t min);

/* Fills the caller's struct o of `size` bytes (the sizeof it was compiled
 * with) from `defaults`, this library's struct of `lib_size` bytes: the
 * fields both know get the defaults, newer ones zero, struct_size = size.
 * A size the struct never had (see sm_sized_check) leaves o untouched and
 * returns SMELT_ERR_INVALID_ARG. */
smelt_status sm_sized_init(void *o, size_t size, const void *defaults,
                           size_t lib_size, size_t min);

/* Copies the library's filled struct src (`size` bytes) into the caller's
 * dst, only as far as dst's struct_size reaches (fields newer than the
 * library are zeroed), keeping dst's struct_size. dst was checked with
 * sm_sized_check. */
void sm_sized_out(void *dst, const void *src, size_t size);

#endif
