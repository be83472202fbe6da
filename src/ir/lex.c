/*
 * lex.c - tokens of the IR text form, with byte-level checks of the input.
 */
#include "ir/lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"

void sm_lex_init(sm_lexer *lx, smelt_ctx_t *ctx, const char *src, size_t len,
                 const char *file)
{
    lx->ctx = ctx;
    lx->file = file ? file : "<input>";
    lx->src = src;
    lx->len = src ? len : 0;
    lx->pos = 0;
    lx->line = 1;
    lx->col = 1;
    if (lx->len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0)
        lx->pos = 3; /* a UTF-8 byte order mark is not text */
}

smelt_status sm_lex_error(const sm_lexer *lx, int line, int col,
                          smelt_status code, const char *fmt, ...)
{
    char msg[SM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sm_err(lx->ctx, code, "%s:%d:%d: error: %s", lx->file, line, col,
                  msg);
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident_char(int c)
{
    return is_ident_start(c) || is_digit(c);
}

int sm_lex_is_name_char(int c)
{
    return is_ident_char(c) || c == '.' || c == ':' || c == '/' || c == '-';
}

int sm_lex_is_ident(const char *s, size_t n)
{
    if (n == 0 || !is_ident_start((unsigned char)s[0]))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!is_ident_char((unsigned char)s[i]))
            return 0;
    return 1;
}

size_t sm_utf8_len(const unsigned char *s, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    if (avail < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

void sm_lex_describe(const sm_token *t, char *buf, size_t size)
{
    if (t->kind == SM_TOK_EOF) {
        snprintf(buf, size, "end of input");
        return;
    }
    char tmp[48];
    size_t n = t->text_len < 40 ? t->text_len : 40, k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t->text[i];
        tmp[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    tmp[k] = 0;
    snprintf(buf, size, "'%s%s'", tmp, t->text_len > n ? "..." : "");
}

static int hex_val(int c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t sm_lex_unescape(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            char e = s[++i];
            if (e == 'n')
                c = '\n';
            else if (e == 't')
                c = '\t';
            else if (e == 'x' && i + 2 < n) {
                c = (char)(hex_val((unsigned char)s[i + 1]) * 16 +
                           hex_val((unsigned char)s[i + 2]));
                i += 2;
            } else
                c = e;
        }
        out[k++] = c;
    }
    out[k] = 0;
    return k;
}

/* Moves over n bytes of the current line. */
static void skip_cols(sm_lexer *lx, size_t n)
{
    lx->pos += n;
    lx->col = (size_t)lx->col + n < 0x7fffffff ? lx->col + (int)n : 0x7fffffff;
}

/* An error at byte offset `at`, which lies on the current line. */
static smelt_status err_at(const sm_lexer *lx, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static smelt_status err_at(const sm_lexer *lx, size_t at, const char *fmt, ...)
{
    size_t d = at - lx->pos;
    int col = (size_t)lx->col + d < 0x7fffffff ? lx->col + (int)d : 0x7fffffff;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sm_lex_error(lx, lx->line, col, SMELT_ERR_PARSE, "%s", msg);
}

/* Checks a comment from '#' to the end of its line (its bytes must be
 * valid UTF-8 without NUL) and moves past it. */
static smelt_status skip_comment(sm_lexer *lx)
{
    size_t i = lx->pos;
    const unsigned char *s = (const unsigned char *)lx->src;
    while (i < lx->len && s[i] != '\n') {
        if (s[i] == 0)
            return err_at(lx, i, "NUL byte in input");
        size_t k = sm_utf8_len(s + i, lx->len - i);
        if (k == 0)
            return err_at(lx, i, "invalid UTF-8 byte 0x%02X in comment", s[i]);
        i += k;
    }
    skip_cols(lx, i - lx->pos);
    return SMELT_OK;
}

/* Scans a quoted string starting at lx->pos (the opening quote) and
 * checks its escapes and bytes; *end is the offset of the closing quote. */
static smelt_status scan_string(sm_lexer *lx, size_t *end)
{
    const unsigned char *s = (const unsigned char *)lx->src;
    size_t i = lx->pos + 1;
    for (;;) {
        if (i >= lx->len || s[i] == '\n')
            return err_at(lx, lx->pos, "unterminated string");
        unsigned c = s[i];
        if (c == '"')
            break;
        if (c == 0)
            return err_at(lx, i, "NUL byte in input");
        if (c == '\\') {
            if (i + 1 >= lx->len)
                return err_at(lx, lx->pos, "unterminated string");
            unsigned e = s[i + 1];
            if (e == '"' || e == '\\' || e == 'n' || e == 't') {
                i += 2;
                continue;
            }
            if (e != 'x') {
                if (e >= 0x20 && e < 0x7f) {
                    char esc[2] = {(char)e, 0};
                    return err_at(lx, i, "invalid escape '\\%s' in string",
                                  esc);
                }
                return err_at(lx, i, "invalid escape in string");
            }
            if (i + 3 >= lx->len || hex_val(s[i + 2]) < 0 ||
                hex_val(s[i + 3]) < 0)
                return err_at(lx, i, "\\x escape needs two hex digits");
            if (hex_val(s[i + 2]) == 0 && hex_val(s[i + 3]) == 0)
                return err_at(lx, i, "\\x00 is not allowed in strings");
            i += 4;
            continue;
        }
        if (c < 0x20 && c != '\t')
            return err_at(lx, i,
                          "control byte 0x%02X in string (write an escape)", c);
        size_t k = sm_utf8_len(s + i, lx->len - i);
        if (k == 0)
            return err_at(lx, i, "invalid UTF-8 byte 0x%02X in string", c);
        i += k;
    }
    *end = i;
    return SMELT_OK;
}

/* True when the text at i starts with a dtype name followed by '[', as in
 * the ":f32[" of "%x:f32[2]": there the ':' ends the name. */
static int dtype_follows(const sm_lexer *lx, size_t i)
{
    size_t j = i;
    while (j < lx->len && is_ident_char((unsigned char)lx->src[j]) && j - i < 8)
        j++;
    if (j >= lx->len || lx->src[j] != '[' || j == i)
        return 0;
    int n = (int)(j - i);
    return sm_dtype_from_name(lx->src + i, n) != SMELT_DTYPE_UNDEFINED ||
           (n == 5 && memcmp(lx->src + i, "undef", 5) == 0);
}

/* %name, %"name", @name or @"name". */
static smelt_status lex_name(sm_lexer *lx, sm_token *t)
{
    size_t start = lx->pos + 1;
    if (start < lx->len && lx->src[start] == '"') {
        size_t save = lx->pos, end;
        lx->pos = start;
        lx->col++;
        smelt_status s = scan_string(lx, &end);
        lx->pos = save;
        lx->col--;
        if (s != SMELT_OK)
            return s;
        t->s = lx->src + start + 1;
        t->n = end - start - 1;
        t->quoted = 1;
        skip_cols(lx, end + 1 - lx->pos);
        return SMELT_OK;
    }
    size_t i = start;
    while (i < lx->len && sm_lex_is_name_char((unsigned char)lx->src[i])) {
        if (lx->src[i] == ':' && dtype_follows(lx, i + 1))
            break;
        i++;
    }
    while (i > start && lx->src[i - 1] == ':')
        i--; /* "%x: f32[2]": the colon belongs to the type */
    if (i == start)
        return err_at(lx, lx->pos, "expected a name after '%s'",
                      t->kind == SM_TOK_VALUE ? "%" : "@");
    t->s = lx->src + start;
    t->n = i - start;
    skip_cols(lx, i - lx->pos);
    return SMELT_OK;
}

static smelt_status lex_number(sm_lexer *lx, sm_token *t)
{
    const char *s = lx->src;
    size_t i = lx->pos, n = lx->len;
    int is_float = 0;
    if (s[i] == '-')
        i++;
    if (i + 3 <= n && memcmp(s + i, "inf", 3) == 0 &&
        (i + 3 == n || !is_ident_char((unsigned char)s[i + 3]))) {
        t->kind = SM_TOK_FLOAT;
        skip_cols(lx, i + 3 - lx->pos);
        return SMELT_OK;
    }
    if (i >= n || !is_digit((unsigned char)s[i]))
        return err_at(lx, lx->pos, "unexpected '-'");
    while (i < n && is_digit((unsigned char)s[i]))
        i++;
    if (i < n && s[i] == '.') {
        is_float = 1;
        i++;
        while (i < n && is_digit((unsigned char)s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < n && is_digit((unsigned char)s[j])) {
            is_float = 1;
            i = j;
            while (i < n && is_digit((unsigned char)s[i]))
                i++;
        }
    }
    if (i < n && (sm_lex_is_name_char((unsigned char)s[i]) && s[i] != ':' &&
                  s[i] != '-')) {
        /* the digits before the name character may be many: show 40 */
        size_t j = i;
        while (j < n && sm_lex_is_name_char((unsigned char)s[j]) &&
               j - lx->pos < 40)
            j++;
        size_t k = j - lx->pos < 40 ? j - lx->pos : 40;
        char tmp[48];
        memcpy(tmp, s + lx->pos, k);
        tmp[k] = 0;
        return err_at(lx, lx->pos, "malformed number '%s%s'", tmp,
                      j - lx->pos > 40 ? "..." : "");
    }
    t->kind = is_float ? SM_TOK_FLOAT : SM_TOK_INT;
    skip_cols(lx, i - lx->pos);
    return SMELT_OK;
}

/* Skips whitespace and comments. */
static smelt_status skip_space(sm_lexer *lx)
{
    while (lx->pos < lx->len) {
        char c = lx->src[lx->pos];
        if (c == ' ' || c == '\t' || c == '\r') {
            skip_cols(lx, 1);
        } else if (c == '\n') {
            lx->pos++;
            if (lx->line < 0x7fffffff)
                lx->line++;
            lx->col = 1;
        } else if (c == '#') {
            SM_TRY(skip_comment(lx));
        } else
            break;
    }
    return SMELT_OK;
}

smelt_status sm_lex_next(sm_lexer *lx, sm_token *t)
{
    memset(t, 0, sizeof *t);
    SM_TRY(skip_space(lx));
    t->line = lx->line;
    t->col = lx->col;
    t->text = lx->src + lx->pos;
    size_t start = lx->pos;
    if (lx->pos >= lx->len) {
        t->kind = SM_TOK_EOF;
        t->text = "";
        return SMELT_OK;
    }
    unsigned char c = (unsigned char)lx->src[lx->pos];
    static const char punct[] = "(){}[],=:*?";
    const char *pp = c ? strchr(punct, c) : NULL;
    if (pp) {
        t->kind = (sm_tok_kind)(SM_TOK_LPAREN + (pp - punct));
        skip_cols(lx, 1);
    } else if (c == '"') {
        size_t end;
        SM_TRY(scan_string(lx, &end));
        t->kind = SM_TOK_STRING;
        t->s = lx->src + lx->pos + 1;
        t->n = end - lx->pos - 1;
        t->quoted = 1;
        skip_cols(lx, end + 1 - lx->pos);
    } else if (c == '%' || c == '@') {
        t->kind = c == '%' ? SM_TOK_VALUE : SM_TOK_AT;
        SM_TRY(lex_name(lx, t));
    } else if (c == '-' || is_digit(c)) {
        SM_TRY(lex_number(lx, t));
    } else if (is_ident_start(c)) {
        size_t i = lx->pos;
        while (i < lx->len && is_ident_char((unsigned char)lx->src[i]))
            i++;
        t->kind = SM_TOK_IDENT;
        skip_cols(lx, i - lx->pos);
    } else if (c == 0) {
        return err_at(lx, lx->pos, "NUL byte in input");
    } else if (c >= 0x80) {
        return err_at(lx, lx->pos,
                      "unexpected byte 0x%02X outside a string or comment", c);
    } else if (c >= 0x20 && c < 0x7f) {
        char ch[2] = {(char)c, 0};
        return err_at(lx, lx->pos, "unexpected character '%s'", ch);
    } else {
        return err_at(lx, lx->pos, "unexpected control byte 0x%02X", c);
    }
    t->text_len = lx->pos - start;
    if (!t->s) {
        t->s = t->text;
        t->n = t->text_len;
    }
    return SMELT_OK;
}
