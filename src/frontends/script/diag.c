/*
 * diag.c - diagnostics of the script frontend: the location, the message,
 * the source line with a caret under the column, and a hint, all in the
 * context's message so that a caller can print it as it is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "frontends/script/script.h"

/* Longest part of a source line shown; a longer line is cut around the
 * column, with "..." where it was cut. */
#define SHOW_MAX 120
#define SHOW_BEFORE 60

/* Start and length of line `line` (1-based) of the source. */
static void find_line(const sm_script_src *src, int line, size_t *start,
                      size_t *len)
{
    size_t p = 0;
    for (int l = 1; l < line && p < src->len; p++)
        if (src->text[p] == '\n')
            l++;
    size_t e = p;
    while (e < src->len && src->text[e] != '\n' && src->text[e] != '\r')
        e++;
    *start = p;
    *len = e - p;
}

/* Appends the shown part of the line and the caret line to out. Bytes that
 * are not printable ASCII show as '?'; tabs stay tabs in both lines so the
 * caret lines up. */
static void show_line(const sm_script_src *src, int line, int col, char *out,
                      size_t size)
{
    size_t start, len;
    find_line(src, line, &start, &len);
    size_t c = col > 0 ? (size_t)col - 1 : 0;
    if (c > len)
        c = len;
    size_t from = c > SHOW_BEFORE ? c - SHOW_BEFORE : 0;
    size_t to = from + SHOW_MAX < len ? from + SHOW_MAX : len;
    char text[SHOW_MAX + 8], caret[SHOW_MAX + 8];
    size_t k = 0, m = 0;
    if (from > 0) {
        memcpy(text, "...", 3);
        memcpy(caret, "   ", 3);
        k = m = 3;
    }
    for (size_t i = from; i < to; i++) {
        unsigned char ch = (unsigned char)src->text[start + i];
        text[k++] = ch == '\t' || (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
        if (i < c)
            caret[m++] = ch == '\t' ? '\t' : ' ';
    }
    if (to < len) {
        memcpy(text + k, "...", 3);
        k += 3;
    }
    text[k] = 0;
    caret[m++] = '^';
    caret[m] = 0;
    snprintf(out, size, "\n%s\n%s", text, caret);
}

smelt_status sm_script_error(const sm_script_src *src, int line, int col,
                             smelt_status code, const char *hint,
                             const char *fmt, ...)
{
    if (code == SMELT_ERR_NOMEM)
        return sm_err_nomem(src->ctx);
    char msg[SM_ERR_MSG_MAX / 2], shown[2 * SHOW_MAX + 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shown[0] = 0;
    if (line > 0)
        show_line(src, line, col, shown, sizeof shown);
    return sm_err(src->ctx, code, "%.200s:%d:%d: error: %s%s%s%.200s",
                  src->file, line, col, msg, shown, hint ? "\nhint: " : "",
                  hint ? hint : "");
}
