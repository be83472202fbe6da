/*
 * lexer.c - tokens of the script language, the way Python's tokenizer makes
 * them: NEWLINE ends a logical line, INDENT and DEDENT mark changes of
 * indentation, newlines inside brackets and after a backslash join lines,
 * blank and comment-only lines are skipped.
 *
 * The whole source is tokenized up front into one array so that the parser
 * can look ahead freely. Bytes are checked as they are read: NUL, stray
 * non-ASCII (outside strings and comments) and invalid UTF-8 are errors.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/script/script.h"

static const char *const keywords[] = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

/* Operators, longest first so that the first match is the longest. */
static const char *const operators[] = {
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "==", "!=", "<=", ">=",
    "+=",  "-=",  "*=",  "/=",  "%=",  "@=", "&=", "|=", "^=", "<<", ">>", ":=",
    "+",   "-",   "*",   "/",   "%",   "@",  "<",  ">",  "=",  "(",  ")",  "[",
    "]",   "{",   "}",   ",",   ":",   ".",  ";",  "&",  "|",  "^",  "~"};

typedef struct lexer {
    const sm_script_src *src;
    sm_arena *arena;
    const char *p; /* source */
    size_t len, pos;
    int line;
    size_t line_start; /* offset of the current line's first byte */
    sm_ptok *toks;
    int n, cap;
    int indent[SM_SCRIPT_MAX_INDENT + 1];
    int n_indent;
    int depth; /* open brackets */
    int open_line[SM_SCRIPT_MAX_NEST], open_col[SM_SCRIPT_MAX_NEST];
    char open_ch[SM_SCRIPT_MAX_NEST];
} lexer;

static int col_of(const lexer *lx, size_t pos)
{
    return (int)(pos - lx->line_start) + 1;
}

static smelt_status fail(const lexer *lx, size_t pos, const char *hint,
                         const char *msg)
{
    return sm_script_error(lx->src, lx->line, col_of(lx, pos), SMELT_ERR_PARSE,
                           hint, "%s", msg);
}

static sm_ptok *push(lexer *lx, sm_ptok_kind kind, size_t pos, size_t len)
{
    if (lx->n == lx->cap) {
        int nc = lx->cap ? lx->cap * 2 : 256;
        sm_ptok *t = sm_realloc(lx->toks, sizeof *t * (size_t)nc);
        if (!t)
            return NULL;
        lx->toks = t;
        lx->cap = nc;
    }
    sm_ptok *t = &lx->toks[lx->n++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->text = lx->p + pos;
    t->len = len;
    t->line = lx->line;
    t->col = col_of(lx, pos);
    return t;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int at(const lexer *lx, size_t pos)
{
    return pos < lx->len ? (unsigned char)lx->p[pos] : -1;
}

/* Length of the valid UTF-8 sequence at pos, 0 when invalid. */
static size_t utf8_len(const lexer *lx, size_t pos)
{
    const unsigned char *s = (const unsigned char *)lx->p + pos;
    size_t avail = lx->len - pos, n;
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : lo;
        hi = c == 0xED ? 0x9F : hi;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : lo;
        hi = c == 0xF4 ? 0x8F : hi;
    } else
        return 0;
    if (avail < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* Checks one byte of a string or comment at pos; returns its sequence
 * length or 0 after recording the error. */
static size_t text_char(lexer *lx, size_t pos)
{
    int c = at(lx, pos);
    if (c == 0) {
        fail(lx, pos, NULL, "NUL byte in the source");
        return 0;
    }
    size_t k = utf8_len(lx, pos);
    if (!k)
        fail(lx, pos, "save the file as UTF-8", "invalid UTF-8 byte");
    return k;
}

static void newline(lexer *lx, size_t next)
{
    lx->line++;
    lx->line_start = next;
}

/* Appends the digits of base `base` at lx->pos to buf (underscores between
 * digits dropped, as Python allows them); returns how many digits. */
static int digits(lexer *lx, int base, char *buf, size_t *k, size_t size)
{
    int n = 0;
    for (;;) {
        int c = at(lx, lx->pos), d = -1;
        if (is_digit(c))
            d = c - '0';
        else if (c >= 0 && strchr("abcdefABCDEF", c) && c)
            d = (c | 0x20) - 'a' + 10;
        if (c == '_' && n > 0 && at(lx, lx->pos + 1) >= 0 &&
            (is_digit(at(lx, lx->pos + 1)) || base == 16)) {
            lx->pos++;
            continue;
        }
        if (d < 0 || d >= base)
            return n;
        if (*k < size - 1)
            buf[(*k)++] = (char)c;
        lx->pos++;
        n++;
    }
}

/* Decimal, hex, octal or binary integer, or a decimal float. */
static smelt_status lex_number(lexer *lx)
{
    size_t s = lx->pos;
    char buf[400];
    size_t k = 0;
    int base = 10, is_float = 0;
    int x = at(lx, s + 1) | 0x20;
    if (at(lx, s) == '0' && (x == 'x' || x == 'o' || x == 'b')) {
        base = x == 'x' ? 16 : x == 'o' ? 8 : 2;
        lx->pos += 2;
        if (!digits(lx, base, buf, &k, sizeof buf))
            return fail(lx, s, NULL, "malformed number");
    } else {
        digits(lx, 10, buf, &k, sizeof buf);
        if (at(lx, lx->pos) == '.') {
            is_float = 1;
            if (k < sizeof buf - 1)
                buf[k++] = '.';
            lx->pos++;
            digits(lx, 10, buf, &k, sizeof buf);
        }
        int e = at(lx, lx->pos);
        if (e == 'e' || e == 'E') {
            is_float = 1;
            if (k < sizeof buf - 1)
                buf[k++] = 'e';
            lx->pos++;
            int sign = at(lx, lx->pos);
            if ((sign == '+' || sign == '-') && k < sizeof buf - 1) {
                buf[k++] = (char)sign;
                lx->pos++;
            }
            if (!digits(lx, 10, buf, &k, sizeof buf))
                return fail(lx, s, NULL, "malformed number");
        }
    }
    buf[k] = 0;
    int c = at(lx, lx->pos);
    if (c == 'j' || c == 'J')
        return fail(lx, lx->pos, "use float or int values",
                    "complex numbers are not supported");
    if (is_ident_start(c) || is_digit(c) || c == '.')
        return fail(lx, s, NULL, "malformed number");
    if (k >= sizeof buf - 1)
        return fail(lx, s, NULL, "number literal is too long");
    sm_ptok *t =
        push(lx, is_float ? SM_PTOK_FLOAT : SM_PTOK_INT, s, lx->pos - s);
    if (!t)
        return sm_err_nomem(lx->src->ctx);
    if (is_float) {
        t->f = strtod(buf, NULL);
        return SMELT_OK;
    }
    uint64_t v = 0;
    for (const char *q = buf; *q; q++) {
        uint64_t d =
            (uint64_t)(is_digit(*q) ? *q - '0' : (*q | 0x20) - 'a' + 10);
        if (v > ((uint64_t)INT64_MAX - d) / (uint64_t)base)
            return fail(lx, s, "integers are 64-bit",
                        "integer literal is too large");
        v = v * (uint64_t)base + d;
    }
    t->i = (int64_t)v;
    return SMELT_OK;
}

/* Decodes a string literal's escapes; prefix r keeps backslashes. */
static smelt_status lex_string(lexer *lx, size_t prefix, int raw)
{
    size_t s = lx->pos, e = s + prefix;
    int q = at(lx, e);
    int triple = at(lx, e + 1) == q && at(lx, e + 2) == q;
    e += triple ? 3 : 1;
    int line0 = lx->line;
    size_t ls0 = lx->line_start;
    size_t end = e; /* first find the closing quote, to size the copy */
    for (;;) {
        int c = at(lx, end);
        if (c < 0 || (!triple && c == '\n'))
            return fail(lx, s,
                        "close it with the same quote on the same line, or "
                        "use triple quotes",
                        "string literal is not closed");
        if (c == q &&
            (!triple || (at(lx, end + 1) == q && at(lx, end + 2) == q)))
            break;
        end += c == '\\' && end + 1 < lx->len ? 2 : 1;
    }
    char *out = sm_arena_alloc(lx->arena, end - e + 1);
    if (!out)
        return sm_err_nomem(lx->src->ctx);
    size_t k = 0;
    for (;;) {
        int c = at(lx, e);
        if (e >= end)
            break;
        if (c == '\\' && !raw && e + 1 < lx->len) {
            int d = at(lx, e + 1);
            const char *from = "ntr0\\'\"", *to = "\n\t\r\0\\'\"";
            const char *hit = d > 0 ? strchr(from, d) : NULL;
            if (d == '\n') {
                newline(lx, e + 2);
            } else if (hit) {
                out[k++] = to[hit - from];
            } else {
                out[k++] = '\\';
                e += 1;
                continue;
            }
            e += 2;
            continue;
        }
        size_t n = text_char(lx, e);
        if (!n)
            return lx->src->ctx ? lx->src->ctx->code : SMELT_ERR_PARSE;
        if (c == '\n')
            newline(lx, e + 1);
        memcpy(out + k, lx->p + e, n);
        k += n;
        e += n;
    }
    e += triple ? 3 : 1;
    out[k] = 0;
    int line1 = lx->line;
    size_t ls1 = lx->line_start;
    lx->line = line0;
    lx->line_start = ls0;
    sm_ptok *t = push(lx, SM_PTOK_STRING, s, e - s);
    lx->line = line1;
    lx->line_start = ls1;
    if (!t)
        return sm_err_nomem(lx->src->ctx);
    t->s = out;
    lx->pos = e;
    return SMELT_OK;
}

static int is_keyword(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        if (strlen(keywords[i]) == n && !memcmp(keywords[i], s, n))
            return 1;
    return 0;
}

static smelt_status lex_name(lexer *lx)
{
    size_t s = lx->pos, e = s;
    while (is_ident_start(at(lx, e)) || is_digit(at(lx, e)))
        e++;
    int q = at(lx, e);
    if (q == '\'' || q == '"') { /* string prefix */
        size_t n = e - s;
        int raw = 0, ok = n <= 2;
        for (size_t i = 0; i < n && ok; i++) {
            int c = lx->p[s + i] | 0x20;
            if (c == 'f')
                return fail(lx, s, "build values with operators, not strings",
                            "f-strings are not supported");
            raw |= c == 'r';
            ok = c == 'r' || c == 'b' || c == 'u';
        }
        if (ok)
            return lex_string(lx, n, raw);
    }
    if (at(lx, e) >= 0x80)
        return fail(lx, e, "names are ASCII letters, digits and '_'",
                    "non-ASCII character in a name");
    sm_ptok *t =
        push(lx, is_keyword(lx->p + s, e - s) ? SM_PTOK_KEYWORD : SM_PTOK_NAME,
             s, e - s);
    if (!t)
        return sm_err_nomem(lx->src->ctx);
    lx->pos = e;
    return SMELT_OK;
}

static smelt_status lex_operator(lexer *lx)
{
    size_t s = lx->pos;
    for (size_t i = 0; i < sizeof operators / sizeof *operators; i++) {
        size_t n = strlen(operators[i]);
        if (n > lx->len - s || memcmp(lx->p + s, operators[i], n))
            continue;
        char c = operators[i][0];
        if (n == 1 && strchr("([{", c)) {
            if (lx->depth >= SM_SCRIPT_MAX_NEST)
                return fail(lx, s, NULL, "brackets nested too deeply");
            lx->open_line[lx->depth] = lx->line;
            lx->open_col[lx->depth] = col_of(lx, s);
            lx->open_ch[lx->depth++] = c;
        } else if (n == 1 && strchr(")]}", c)) {
            char want = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (lx->depth == 0 || lx->open_ch[lx->depth - 1] != want)
                return fail(lx, s, NULL, "unmatched closing bracket");
            lx->depth--;
        }
        if (!push(lx, SM_PTOK_OP, s, n))
            return sm_err_nomem(lx->src->ctx);
        lx->pos = s + n;
        return SMELT_OK;
    }
    int c = at(lx, s);
    if (c == 0)
        return fail(lx, s, NULL, "NUL byte in the source");
    if (c >= 0x80)
        return fail(lx, s, "names are ASCII letters, digits and '_'",
                    "non-ASCII character outside a string or comment");
    return fail(lx, s, NULL, "unexpected character");
}

/* At the start of a logical line: measures the indentation and emits
 * INDENT or DEDENTs; blank and comment-only lines produce nothing. Returns
 * with lx->pos at the line's first token (or at a newline / EOF). */
static smelt_status lex_indent(lexer *lx, int *blank)
{
    int width = 0;
    size_t p = lx->pos;
    for (;; p++) {
        int c = at(lx, p);
        if (c == ' ')
            width++;
        else if (c == '\t')
            width = (width / 8 + 1) * 8;
        else if (c == '\f')
            width = 0;
        else
            break;
    }
    lx->pos = p;
    int c = at(lx, p);
    *blank = c < 0 || c == '\n' || c == '\r' || c == '#' ||
             (c == '\\' && at(lx, p + 1) == '\n');
    if (*blank)
        return SMELT_OK;
    int top = lx->indent[lx->n_indent - 1];
    if (width > top) {
        if (lx->n_indent > SM_SCRIPT_MAX_INDENT)
            return fail(lx, p, NULL, "blocks nested too deeply");
        lx->indent[lx->n_indent++] = width;
        if (!push(lx, SM_PTOK_INDENT, p, 0))
            return sm_err_nomem(lx->src->ctx);
    }
    while (width < lx->indent[lx->n_indent - 1]) {
        lx->n_indent--;
        if (!push(lx, SM_PTOK_DEDENT, p, 0))
            return sm_err_nomem(lx->src->ctx);
    }
    if (width != lx->indent[lx->n_indent - 1])
        return fail(lx, p, "indent each block by the same amount",
                    "unindent does not match any outer indentation level");
    return SMELT_OK;
}

/* Runs of one logical line and the NEWLINE after it. */
static smelt_status lex_line(lexer *lx)
{
    int any = 0;
    for (;;) {
        int c = at(lx, lx->pos);
        if (c < 0) {
            if (lx->depth > 0) {
                int d = lx->depth - 1;
                return sm_script_error(lx->src, lx->open_line[d],
                                       lx->open_col[d], SMELT_ERR_PARSE, NULL,
                                       "'%c' is never closed", lx->open_ch[d]);
            }
            break;
        }
        if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
            lx->pos++;
        } else if (c == '#') {
            while (at(lx, lx->pos) >= 0 && at(lx, lx->pos) != '\n') {
                size_t n = text_char(lx, lx->pos);
                if (!n)
                    return lx->src->ctx ? lx->src->ctx->code : SMELT_ERR_PARSE;
                lx->pos += n;
            }
        } else if (c == '\\' && (at(lx, lx->pos + 1) == '\n' ||
                                 (at(lx, lx->pos + 1) == '\r' &&
                                  at(lx, lx->pos + 2) == '\n'))) {
            lx->pos += at(lx, lx->pos + 1) == '\r' ? 3 : 2;
            newline(lx, lx->pos);
        } else if (c == '\n') {
            lx->pos++;
            if (lx->depth == 0) {
                if (any && !push(lx, SM_PTOK_NEWLINE, lx->pos - 1, 0))
                    return sm_err_nomem(lx->src->ctx);
                newline(lx, lx->pos);
                return SMELT_OK;
            }
            newline(lx, lx->pos);
        } else {
            smelt_status st;
            if (is_digit(c) || (c == '.' && is_digit(at(lx, lx->pos + 1))))
                st = lex_number(lx);
            else if (is_ident_start(c))
                st = lex_name(lx);
            else if (c == '\'' || c == '"')
                st = lex_string(lx, 0, 0);
            else
                st = lex_operator(lx);
            if (st)
                return st;
            any = 1;
        }
    }
    if (any && !push(lx, SM_PTOK_NEWLINE, lx->pos, 0))
        return sm_err_nomem(lx->src->ctx);
    return SMELT_OK;
}

smelt_status sm_script_lex(const sm_script_src *src, sm_arena *arena,
                           sm_ptok **toks, int *n)
{
    lexer lx;
    memset(&lx, 0, sizeof lx);
    lx.src = src;
    lx.arena = arena;
    lx.p = src->text;
    lx.len = src->len;
    lx.line = 1;
    lx.n_indent = 1;
    *toks = NULL;
    *n = 0;
    smelt_status st = SMELT_OK;
    if (lx.len > SM_SCRIPT_MAX_BYTES)
        st = sm_err(src->ctx, SMELT_ERR_LIMIT,
                    "%s: script is larger than %zu bytes", src->file,
                    SM_SCRIPT_MAX_BYTES);
    while (!st && lx.pos < lx.len) {
        int blank;
        st = lex_indent(&lx, &blank);
        if (!st)
            st = lex_line(&lx);
    }
    while (!st && lx.n_indent > 1) {
        lx.n_indent--;
        if (!push(&lx, SM_PTOK_DEDENT, lx.pos, 0))
            st = sm_err_nomem(src->ctx);
    }
    if (!st && !push(&lx, SM_PTOK_EOF, lx.pos, 0))
        st = sm_err_nomem(src->ctx);
    if (st) {
        sm_free(lx.toks);
        return st;
    }
    *toks = lx.toks;
    *n = lx.n;
    return SMELT_OK;
}
