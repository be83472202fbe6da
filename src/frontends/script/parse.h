/*
 * parse.h - the parser's state and the helpers its two halves share:
 * parser.c (expressions) and parse_stmt.c (statements and the module).
 */
#ifndef SM_SCRIPT_PARSE_H
#define SM_SCRIPT_PARSE_H

#include <string.h>

#include "frontends/script/script.h"

typedef struct sm_sparser {
    const sm_script_src *src;
    sm_arena *arena;
    const sm_ptok *t;
    int n, pos;
    int depth; /* recursion of the expression functions */
    smelt_status st;
} sm_sparser;

/* A growable array in the arena (outgrown storage is abandoned). */
typedef struct sm_spvec {
    void **items;
    int n, cap;
} sm_spvec;

static inline const sm_ptok *peek(const sm_sparser *P)
{
    return &P->t[P->pos];
}

static inline const sm_ptok *peek2(const sm_sparser *P)
{
    return &P->t[P->pos + 1 < P->n ? P->pos + 1 : P->pos];
}

static inline const sm_ptok *next(sm_sparser *P)
{
    const sm_ptok *t = &P->t[P->pos];
    if (t->kind != SM_PTOK_EOF)
        P->pos++;
    return t;
}

static inline int is_op(const sm_ptok *t, const char *op)
{
    return t->kind == SM_PTOK_OP && t->len == strlen(op) &&
           !memcmp(t->text, op, t->len);
}

static inline int is_kw(const sm_ptok *t, const char *kw)
{
    return t->kind == SM_PTOK_KEYWORD && t->len == strlen(kw) &&
           !memcmp(t->text, kw, t->len);
}

static inline int accept_op(sm_sparser *P, const char *op)
{
    if (!is_op(peek(P), op))
        return 0;
    next(P);
    return 1;
}

/* Records an error at token t (the first error wins) and returns NULL, so
 * that callers can `return sm_sp_fail(...)`. */
void *sm_sp_fail(sm_sparser *P, const sm_ptok *t, smelt_status code,
                 const char *hint, const char *msg);
void *sm_sp_nomem(sm_sparser *P);
/* "expected WHAT, got <the current token>". */
void *sm_sp_expected(sm_sparser *P, const char *what);
int sm_sp_expect_op(sm_sparser *P, const char *op);
int sm_sp_push(sm_sparser *P, sm_spvec *v, void *x);
/* The token's text, NUL-terminated, in the arena. */
char *sm_sp_str(sm_sparser *P, const sm_ptok *t);
sm_ast_expr *sm_sp_expr_new(sm_sparser *P, sm_ast_ek kind, const sm_ptok *at);
sm_ast_expr *sm_sp_test(sm_sparser *P);
/* test (',' test)* [','] : a TUPLE when there is a comma. */
sm_ast_expr *sm_sp_testlist(sm_sparser *P);

#endif
