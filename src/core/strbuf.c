/*
 * strbuf.c - growable strings with deferred allocation-failure reporting.
 */
#include "core/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

void sm_strbuf_init(sm_strbuf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}

void sm_strbuf_free(sm_strbuf *b)
{
    sm_free(b->data);
    sm_strbuf_init(b);
}

/* Makes room for `extra` more bytes plus the terminating NUL; on failure
 * marks the builder failed and returns 0. */
static int reserve(sm_strbuf *b, size_t extra)
{
    if (b->failed)
        return 0;
    if (extra > SIZE_MAX - 1 - b->len) {
        b->failed = 1;
        return 0;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 1;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < need)
        nc = nc > SIZE_MAX / 2 ? need : nc * 2;
    char *p = sm_realloc(b->data, nc);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->data = p;
    b->cap = nc;
    return 1;
}

void sm_strbuf_append(sm_strbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void sm_strbuf_puts(sm_strbuf *b, const char *s)
{
    sm_strbuf_append(b, s, strlen(s));
}

void sm_strbuf_putc(sm_strbuf *b, char c)
{
    sm_strbuf_append(b, &c, 1);
}

/* Formats straight into the spare room; when it does not fit, grows to
 * the size vsnprintf reported and formats again. */
void sm_strbuf_vappendf(sm_strbuf *b, const char *fmt, va_list ap)
{
    if (!reserve(b, 64))
        return;
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap - b->len;
    int k = vsnprintf(b->data + b->len, room, fmt, ap);
    if (k < 0) { /* encoding error: keep what was there */
        b->data[b->len] = 0;
        va_end(ap2);
        return;
    }
    if ((size_t)k >= room) {
        if (!reserve(b, (size_t)k)) {
            b->data[b->len] = 0;
            va_end(ap2);
            return;
        }
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
    }
    va_end(ap2);
    b->len += (size_t)k;
}

void sm_strbuf_appendf(sm_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sm_strbuf_vappendf(b, fmt, ap);
    va_end(ap);
}

const char *sm_strbuf_str(const sm_strbuf *b)
{
    return b->data && !b->failed ? b->data : "";
}

smelt_status sm_strbuf_take(sm_strbuf *b, smelt_ctx_t *ctx, char **out)
{
    *out = NULL;
    if (!b->failed && !b->data)
        reserve(b, 0); /* an empty result is still a string */
    if (b->failed) {
        sm_strbuf_free(b);
        return sm_err_nomem(ctx);
    }
    b->data[b->len] = 0;
    *out = b->data;
    sm_strbuf_init(b);
    return SMELT_OK;
}

void smelt_string_free(char *s)
{
    sm_free(s);
}

/* Whether name is one of the comma-separated names of list. */
int sm_str_listed(const char *list, const char *name)
{
    if (!list || !name)
        return 0;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}
