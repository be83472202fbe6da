/*
 * parse.h - the parser's state and the helpers its two files share:
 * parse.c (names, scopes, blocks, statements) and parse_value.c (numbers,
 * types, literals, attributes). Internal to the text-form parser.
 */
#ifndef SM_PARSE_H
#define SM_PARSE_H

#include "core/arena.h"
#include "core/strmap.h"
#include "ir/ir.h"
#include "ir/lex.h"

enum { SM_DEF_PENDING, SM_DEF_LIVE, SM_DEF_CLOSED };

/* A value name seen in the text. */
typedef struct sm_parse_def {
    const char *name;
    size_t len;
    sm_value *v; /* NULL while pending */
    int line, col;
    int state;
} sm_parse_def;

/* One output of the statement being parsed. */
typedef struct sm_parse_out {
    const char *name;
    sm_parse_def *d;
    sm_type type;
    int typed;
    sm_token type_tok;
} sm_parse_out;

/* One element of a list attribute while its kind is not yet settled. */
typedef struct sm_parse_item {
    int64_t i;
    double f;
    const char *s;
} sm_parse_item;

typedef struct sm_parser {
    smelt_ctx_t *ctx;
    sm_lexer lx;
    sm_token tok;
    sm_graph *g;
    sm_arena tmp;         /* names and definitions, freed after parsing */
    sm_strmap defs;       /* value name -> sm_parse_def */
    sm_strmap syms;       /* symbolic dim -> string in the graph's arena */
    sm_parse_def **scope; /* definitions of the open blocks, innermost last */
    size_t n_scope, cap_scope;
    int depth;
    /* scratch, reused by statement (never live across a sub-block) */
    unsigned char *buf;
    size_t cap_buf;
    sm_parse_item *items;
    size_t cap_items;
    sm_value **args;
    size_t cap_args;
    sm_parse_out *outs;
    size_t cap_outs;
    const char **names;
    size_t cap_names;
} sm_parser;

/* The scratch array old (capacity *cap elements of elem bytes) grown to
 * hold need >= 1 elements: old itself when big enough, the moved array
 * when it grew, NULL when out of memory (old kept). */
void *sm_parse_grow(void *old, size_t *cap, size_t need, size_t elem);

/* GROW(p, arr, need): makes p->arr hold need elements or returns nomem. */
#define GROW(p, arr, need)                                                     \
    do {                                                                       \
        void *grown_ = sm_parse_grow((p)->arr, &(p)->cap_##arr, (need),        \
                                     sizeof *(p)->arr);                        \
        if (!grown_)                                                           \
            return sm_parse_nomem(p);                                          \
        (p)->arr = grown_;                                                     \
    } while (0)

/* Records "FILE:LINE:COL: error: message" at token t (SMELT_ERR_PARSE). */
smelt_status sm_parse_err(sm_parser *p, const sm_token *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* SMELT_ERR_NOMEM, located at the current token. */
smelt_status sm_parse_nomem(sm_parser *p);
smelt_status sm_parse_next(sm_parser *p);
/* The current token for "found X" in messages, written into buf. */
const char *sm_parse_found(sm_parser *p, char *buf, size_t size);
/* Moves past a token of kind k, or fails with "expected <what>". */
smelt_status sm_parse_expect(sm_parser *p, sm_tok_kind k, const char *what);
int sm_parse_is_word(const sm_token *t, const char *w);
/* A name for messages (needs 80 bytes of buf): shortened, with
 * non-printable bytes as '?'. */
const char *sm_parse_shown(const char *s, size_t n, char *buf);
/* The token's payload, escapes decoded, NUL-terminated in p->tmp. */
smelt_status sm_parse_str(sm_parser *p, const sm_token *t, const char **out,
                          size_t *len);
smelt_status sm_parse_type(sm_parser *p, sm_type *t);
/* A literal of type t (fully known) into a new tensor; `what` names it in
 * messages, type_tok is where its type was written. */
smelt_status sm_parse_literal(sm_parser *p, const sm_type *t, const char *what,
                              const sm_token *type_tok, sm_tensor **out);
/* Fails unless t is fully known (as constants and tensors need). */
smelt_status sm_parse_need_known(sm_parser *p, const sm_token *at,
                                 const sm_type *t, const char *what);
/* '{' name = value, ... '}' onto node n. */
smelt_status sm_parse_attrs(sm_parser *p, sm_node *n);

#endif
