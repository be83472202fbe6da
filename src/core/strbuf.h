/*
 * strbuf.h - a growable string builder whose memory goes through
 * sm_malloc.
 *
 * Appends never fail loudly: an allocation failure is recorded in the
 * builder, later appends become no-ops, and sm_strbuf_take() reports it.
 * A printer can therefore append freely and check once at the end.
 */
#ifndef SM_STRBUF_H
#define SM_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "smelt.h"

typedef struct sm_strbuf {
    char *data; /* NUL-terminated when len > 0 or after a successful take */
    size_t len;
    size_t cap;
    int failed; /* an allocation failed: the content is incomplete */
} sm_strbuf;

void sm_strbuf_init(sm_strbuf *b);
/* Releases the buffer (safe on a buffer that failed or was taken). */
void sm_strbuf_free(sm_strbuf *b);
void sm_strbuf_append(sm_strbuf *b, const char *s, size_t n);
void sm_strbuf_puts(sm_strbuf *b, const char *s);
void sm_strbuf_putc(sm_strbuf *b, char c);
void sm_strbuf_appendf(sm_strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void sm_strbuf_vappendf(sm_strbuf *b, const char *fmt, va_list ap);
/* The content so far ("" when empty), valid until the next append. */
const char *sm_strbuf_str(const sm_strbuf *b);
/* Hands the NUL-terminated result to *out (release with sm_free or
 * smelt_string_free) and resets the builder. When an earlier append ran
 * out of memory, frees everything, sets *out to NULL and returns
 * SMELT_ERR_NOMEM recorded on ctx. */
smelt_status sm_strbuf_take(sm_strbuf *b, smelt_ctx_t *ctx, char **out);

/* Whether name is one of the comma-separated names of list (NULL: no). */
int sm_str_listed(const char *list, const char *name);

#endif
