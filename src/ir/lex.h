/*
 * lex.h - the lexer of the IR's text form (docs/IR.md).
 *
 * Tokens point into the source text, which need not be NUL-terminated.
 * The lexer checks bytes as it goes: NUL bytes, stray non-ASCII bytes and
 * invalid UTF-8 inside strings and comments are errors (a leading UTF-8
 * byte order mark is skipped), reported as
 * "FILE:LINE:COL: error: message" (SMELT_ERR_PARSE) on the context.
 */
#ifndef SM_LEX_H
#define SM_LEX_H

#include <stddef.h>

#include "smelt.h"

typedef enum sm_tok_kind {
    SM_TOK_EOF,
    SM_TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
    SM_TOK_INT,    /* -?[0-9]+ */
    SM_TOK_FLOAT,  /* a number with '.' or an exponent, or -inf */
    SM_TOK_STRING, /* "..." : payload is the text between the quotes */
    SM_TOK_VALUE,  /* %name or %"name": payload is the name */
    SM_TOK_AT,     /* @name or @"name": payload is the name */
    SM_TOK_LPAREN,
    SM_TOK_RPAREN,
    SM_TOK_LBRACE,
    SM_TOK_RBRACE,
    SM_TOK_LBRACKET,
    SM_TOK_RBRACKET,
    SM_TOK_COMMA,
    SM_TOK_EQUAL,
    SM_TOK_COLON,
    SM_TOK_STAR,
    SM_TOK_QUESTION
} sm_tok_kind;

typedef struct sm_token {
    sm_tok_kind kind;
    const char *text; /* the whole token as written */
    size_t text_len;
    const char *s; /* payload: name, string contents (escapes undecoded) */
    size_t n;
    int quoted; /* payload is a quoted string with escapes */
    int line, col;
} sm_token;

typedef struct sm_lexer {
    smelt_ctx_t *ctx;
    const char *file;
    const char *src;
    size_t len, pos;
    int line, col;
} sm_lexer;

void sm_lex_init(sm_lexer *lx, smelt_ctx_t *ctx, const char *src, size_t len,
                 const char *file);
smelt_status sm_lex_next(sm_lexer *lx, sm_token *t);
/* Records "FILE:LINE:COL: error: message" with the given code. */
smelt_status sm_lex_error(const sm_lexer *lx, int line, int col,
                          smelt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* "'text'" (shortened, non-printable bytes as '?') or "end of input". */
void sm_lex_describe(const sm_token *t, char *buf, size_t size);
/* Decodes the escapes of a quoted payload (the lexer has checked them)
 * into out, which has room for n + 1 bytes; returns the decoded length. */
size_t sm_lex_unescape(const char *s, size_t n, char *out);
/* Length of the valid UTF-8 sequence at s (avail bytes left), 0 when the
 * bytes there are not valid UTF-8. */
size_t sm_utf8_len(const unsigned char *s, size_t avail);
/* Characters of a bare name: [A-Za-z0-9_.:/-]. */
int sm_lex_is_name_char(int c);
int sm_lex_is_ident(const char *s, size_t n);

#endif
