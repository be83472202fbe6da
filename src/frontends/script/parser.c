/*
 * parser.c - recursive descent over the tokens of lexer.c into the AST of
 * script.h, allocated in an arena.
 *
 * The grammar is Python's, cut down to what the language supports
 * (docs/SCRIPT.md). Constructs of Python that the language leaves out
 * (lambda, comprehensions, try, classes, ...) are recognised here, so that
 * the diagnostic names the construct and the supported alternative
 * rather than reporting a bare syntax error. Recursion is bounded: every
 * expression node records the height of its tree and the parser refuses
 * trees higher than SM_SCRIPT_MAX_EXPR, so later stages may recurse freely.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/script/parse.h"

/* "'text'" or a description of a layout token, for messages. */
static void describe(const sm_ptok *t, char *buf, size_t size)
{
    switch (t->kind) {
    case SM_PTOK_EOF: snprintf(buf, size, "end of input"); return;
    case SM_PTOK_NEWLINE: snprintf(buf, size, "end of line"); return;
    case SM_PTOK_INDENT: snprintf(buf, size, "an indented block"); return;
    case SM_PTOK_DEDENT: snprintf(buf, size, "end of block"); return;
    default: break;
    }
    size_t n = t->len < 40 ? t->len : 40;
    char tmp[48];
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t->text[i];
        tmp[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    tmp[n] = 0;
    snprintf(buf, size, "'%s%s'", tmp, t->len > n ? "..." : "");
}

/* Records an error at token t (once: the first error wins) and returns
 * NULL so that callers can `return fail(...)`. */
void *sm_sp_fail(sm_sparser *P, const sm_ptok *t, smelt_status code,
                 const char *hint, const char *msg)
{
    if (!P->st)
        P->st = sm_script_error(P->src, t->line, t->col, code, hint, "%s", msg);
    return NULL;
}

static void *fail(sm_sparser *P, const sm_ptok *t, const char *hint,
                  const char *msg)
{
    return sm_sp_fail(P, t, SMELT_ERR_PARSE, hint, msg);
}

static void *unsupported(sm_sparser *P, const sm_ptok *t, const char *hint,
                         const char *msg)
{
    return sm_sp_fail(P, t, SMELT_ERR_UNSUPPORTED, hint, msg);
}

void *sm_sp_nomem(sm_sparser *P)
{
    if (!P->st)
        P->st = sm_err_nomem(P->src->ctx);
    return NULL;
}

/* "expected X, got Y" at the current token. */
void *sm_sp_expected(sm_sparser *P, const char *what)
{
    char got[80], msg[160];
    describe(peek(P), got, sizeof got);
    snprintf(msg, sizeof msg, "expected %s, got %s", what, got);
    return fail(P, peek(P), NULL, msg);
}

int sm_sp_expect_op(sm_sparser *P, const char *op)
{
    if (accept_op(P, op))
        return 1;
    char what[16];
    snprintf(what, sizeof what, "'%s'", op);
    sm_sp_expected(P, what);
    return 0;
}

int sm_sp_push(sm_sparser *P, sm_spvec *v, void *x)
{
    if (v->n == v->cap) {
        int nc = v->cap ? v->cap * 2 : 4;
        void **p = sm_arena_alloc(P->arena, sizeof(void *) * (size_t)nc);
        if (!p) {
            sm_sp_nomem(P);
            return 0;
        }
        if (v->n)
            memcpy(p, v->items, sizeof(void *) * (size_t)v->n);
        v->items = p;
        v->cap = nc;
    }
    v->items[v->n++] = x;
    return 1;
}

char *sm_sp_str(sm_sparser *P, const sm_ptok *t)
{
    char *s = sm_arena_strndup(P->arena, t->text, t->len);
    if (!s)
        sm_sp_nomem(P);
    return s;
}

sm_ast_expr *sm_sp_expr_new(sm_sparser *P, sm_ast_ek kind, const sm_ptok *at)
{
    sm_ast_expr *e = sm_arena_alloc(P->arena, sizeof *e);
    if (!e)
        return sm_sp_nomem(P);
    e->kind = kind;
    e->line = at->line;
    e->col = at->col;
    e->depth = 1;
    return e;
}

/* Accounts for child c in e's height; fails when the tree grows too high
 * for the later stages to walk recursively. */
static int grow(sm_sparser *P, sm_ast_expr *e, const sm_ast_expr *c)
{
    if (c && c->depth + 1 > e->depth)
        e->depth = c->depth + 1;
    if (e->depth > SM_SCRIPT_MAX_EXPR) {
        const sm_ptok t = {.line = e->line, .col = e->col};
        fail(P, &t, "split it into several assignments",
             "expression is nested too deeply");
        return 0;
    }
    return 1;
}

static sm_ast_expr *binary(sm_sparser *P, sm_ast_ek kind, sm_ast_op op,
                           const sm_ptok *at, sm_ast_expr *a, sm_ast_expr *b)
{
    sm_ast_expr *e = sm_sp_expr_new(P, kind, at);
    if (!e)
        return NULL;
    e->op = op;
    e->a = a;
    e->b = b;
    return grow(P, e, a) && grow(P, e, b) ? e : NULL;
}

/* Bounds the recursion of the expression functions themselves (chains of
 * unary operators recurse without building height on the way down). */
static int enter(sm_sparser *P)
{
    if (++P->depth > 2 * SM_SCRIPT_MAX_EXPR) {
        fail(P, peek(P), "split it into several assignments",
             "expression is nested too deeply");
        return 0;
    }
    return 1;
}

static sm_ast_expr *parse_factor(sm_sparser *P);
static sm_ast_expr *parse_or(sm_sparser *P);

static void *comprehension(sm_sparser *P, const sm_ptok *at, const char *what)
{
    char msg[96];
    snprintf(msg, sizeof msg, "%s are not supported", what);
    return unsupported(P, at,
                       "build the values with a for loop over range(n), or "
                       "call an op on a whole tensor",
                       msg);
}

/* Items of a list, tuple or call up to the closing bracket `close`;
 * keyword arguments allowed when kw is not NULL. */
static int parse_items(sm_sparser *P, const char *close, sm_spvec *items,
                       sm_spvec *kw, int *trailing_comma, const char *what)
{
    *trailing_comma = 0;
    while (!is_op(peek(P), close)) {
        const sm_ptok *at = peek(P);
        if (is_op(at, "*") || is_op(at, "**"))
            return !!unsupported(P, at, "pass the arguments one by one",
                                 "argument unpacking with * and ** is not "
                                 "supported");
        const char *name = NULL;
        if (kw && at->kind == SM_PTOK_NAME && is_op(peek2(P), "=")) {
            if (!(name = sm_sp_str(P, at)))
                return 0;
            next(P);
            next(P);
        } else if (kw && kw->n > 0 && kw->items[kw->n - 1]) {
            return !!fail(P, at, "put positional arguments first",
                          "positional argument follows keyword argument");
        }
        sm_ast_expr *e = sm_sp_test(P);
        if (!e)
            return 0;
        if (is_kw(peek(P), "for"))
            return !!comprehension(P, peek(P), what);
        if (!sm_sp_push(P, items, e) ||
            (kw && !sm_sp_push(P, kw, (void *)name)))
            return 0;
        *trailing_comma = 0;
        if (!accept_op(P, ","))
            break;
        *trailing_comma = 1;
    }
    return sm_sp_expect_op(P, close);
}

static sm_ast_expr *seq_expr(sm_sparser *P, sm_ast_ek kind, const sm_ptok *at,
                             sm_spvec *items)
{
    sm_ast_expr *e = sm_sp_expr_new(P, kind, at);
    if (!e)
        return NULL;
    e->n = items->n;
    e->items = (sm_ast_expr **)items->items;
    for (int i = 0; i < items->n; i++)
        if (!grow(P, e, e->items[i]))
            return NULL;
    return e;
}

static sm_ast_expr *parse_atom(sm_sparser *P)
{
    const sm_ptok *t = peek(P);
    sm_ast_expr *e;
    if (t->kind == SM_PTOK_NAME) {
        next(P);
        if (!(e = sm_sp_expr_new(P, SM_EX_NAME, t)) ||
            !(e->name = sm_sp_str(P, t)))
            return NULL;
        return e;
    }
    if (t->kind == SM_PTOK_INT || t->kind == SM_PTOK_FLOAT) {
        next(P);
        e = sm_sp_expr_new(P, t->kind == SM_PTOK_INT ? SM_EX_INT : SM_EX_FLOAT,
                           t);
        if (e) {
            e->i = t->i;
            e->f = t->f;
        }
        return e;
    }
    if (t->kind == SM_PTOK_STRING) {
        if (!(e = sm_sp_expr_new(P, SM_EX_STR, t)))
            return NULL;
        e->name = t->s;
        int n = 0;
        size_t len = 0;
        while (P->t[P->pos + n].kind == SM_PTOK_STRING)
            len += strlen(P->t[P->pos + n++].s);
        if (n == 1) {
            next(P);
            return e;
        }
        char *s = sm_arena_alloc(P->arena, len + 1); /* "a" "b" is "ab" */
        if (!s)
            return sm_sp_nomem(P);
        e->name = s;
        for (int i = 0; i < n; i++) {
            size_t k = strlen(peek(P)->s);
            memcpy(s, next(P)->s, k);
            s += k;
        }
        *s = 0;
        return e;
    }
    if (is_kw(t, "True") || is_kw(t, "False")) {
        next(P);
        if ((e = sm_sp_expr_new(P, SM_EX_BOOL, t)))
            e->i = is_kw(t, "True");
        return e;
    }
    if (is_kw(t, "None")) {
        next(P);
        return sm_sp_expr_new(P, SM_EX_NONE, t);
    }
    if (is_op(t, "(") || is_op(t, "[")) {
        int paren = is_op(t, "(");
        next(P);
        sm_spvec items = {0};
        int comma;
        if (!parse_items(P, paren ? ")" : "]", &items, NULL, &comma,
                         paren ? "generator expressions"
                               : "list comprehensions"))
            return NULL;
        if (paren && items.n == 1 && !comma)
            return items.items[0]; /* parenthesized expression */
        return seq_expr(P, paren ? SM_EX_TUPLE : SM_EX_LIST, t, &items);
    }
    if (is_op(t, "{"))
        return unsupported(P, t, "use separate variables, or a list",
                           "dict and set literals are not supported");
    if (is_kw(t, "lambda"))
        return unsupported(P, t,
                           "define a helper function with def at module "
                           "level; helpers are inlined where they are called",
                           "lambda expressions are not supported");
    if (is_kw(t, "yield") || is_kw(t, "await"))
        return unsupported(P, t, "return the values instead",
                           "generators and coroutines are not supported");
    if (is_op(t, "..."))
        return unsupported(P, t, "write the indices out",
                           "'...' (Ellipsis) is not supported");
    return sm_sp_expected(P, "an expression");
}

/* The inside of x[...]: one index or slice, or several (a tuple). */
static sm_ast_expr *parse_subscript(sm_sparser *P)
{
    const sm_ptok *at = peek(P);
    sm_ast_expr *lo = NULL, *parts[3] = {0};
    if (!is_op(at, ":") && !(lo = sm_sp_test(P)))
        return NULL;
    if (!is_op(peek(P), ":"))
        return lo;
    parts[0] = lo;
    for (int k = 1; k < 3 && accept_op(P, ":"); k++)
        if (!is_op(peek(P), ":") && !is_op(peek(P), "]") &&
            !is_op(peek(P), ",") && !(parts[k] = sm_sp_test(P)))
            return NULL;
    sm_ast_expr *e = sm_sp_expr_new(P, SM_EX_SLICE, at);
    if (!e)
        return NULL;
    e->a = parts[0];
    e->b = parts[1];
    e->c = parts[2];
    return grow(P, e, e->a) && grow(P, e, e->b) && grow(P, e, e->c) ? e : NULL;
}

static sm_ast_expr *parse_trailers(sm_sparser *P, sm_ast_expr *e)
{
    for (;;) {
        const sm_ptok *t = peek(P);
        if (accept_op(P, "(")) {
            sm_spvec args = {0}, kw = {0};
            int comma;
            if (!parse_items(P, ")", &args, &kw, &comma,
                             "generator expressions"))
                return NULL;
            sm_ast_expr *c = seq_expr(P, SM_EX_CALL, t, &args);
            if (!c)
                return NULL;
            c->line = e->line; /* a call is where its callee is */
            c->col = e->col;
            c->a = e;
            c->kw = (const char **)kw.items;
            if (!grow(P, c, e))
                return NULL;
            e = c;
        } else if (accept_op(P, "[")) {
            sm_spvec items = {0};
            for (;;) {
                sm_ast_expr *s = parse_subscript(P);
                if (!s || !sm_sp_push(P, &items, s))
                    return NULL;
                if (!accept_op(P, ",") || is_op(peek(P), "]"))
                    break;
            }
            if (!sm_sp_expect_op(P, "]"))
                return NULL;
            sm_ast_expr *idx = items.items[0];
            if (items.n > 1 && !(idx = seq_expr(P, SM_EX_TUPLE, t, &items)))
                return NULL;
            const sm_ptok start = {.line = e->line, .col = e->col};
            if (!(e = binary(P, SM_EX_INDEX, SM_AOP_ADD, &start, e, idx)))
                return NULL;
        } else if (accept_op(P, ".")) {
            const sm_ptok *name = peek(P);
            if (name->kind != SM_PTOK_NAME)
                return sm_sp_expected(P, "an attribute name after '.'");
            next(P);
            sm_ast_expr *a = sm_sp_expr_new(P, SM_EX_ATTR, name);
            if (!a || !(a->name = sm_sp_str(P, name)))
                return NULL;
            a->a = e;
            if (!grow(P, a, e))
                return NULL;
            e = a;
        } else {
            return e;
        }
    }
}

static sm_ast_expr *parse_power(sm_sparser *P)
{
    sm_ast_expr *e = parse_atom(P);
    if (!e || !(e = parse_trailers(P, e)))
        return NULL;
    const sm_ptok *t = peek(P);
    if (!accept_op(P, "**"))
        return e;
    sm_ast_expr *r = parse_factor(P); /* right-associative */
    return r ? binary(P, SM_EX_BINOP, SM_AOP_POW, t, e, r) : NULL;
}

static sm_ast_expr *parse_factor(sm_sparser *P)
{
    const sm_ptok *t = peek(P);
    sm_ast_op op;
    if (is_op(t, "-"))
        op = SM_AOP_NEG;
    else if (is_op(t, "+"))
        op = SM_AOP_POS;
    else if (is_op(t, "~"))
        op = SM_AOP_INVERT;
    else
        return parse_power(P);
    if (!enter(P))
        return NULL;
    next(P);
    sm_ast_expr *a = parse_factor(P);
    P->depth--;
    return a ? binary(P, SM_EX_UNARY, op, t, a, NULL) : NULL;
}

/* One level of left-associative binary operators. */
typedef struct level {
    const char *ops[5];
    sm_ast_op codes[5];
} level;

static const level levels[] = {
    {{"|"}, {SM_AOP_BITOR}},
    {{"^"}, {SM_AOP_BITXOR}},
    {{"&"}, {SM_AOP_BITAND}},
    {{"<<", ">>"}, {SM_AOP_LSHIFT, SM_AOP_RSHIFT}},
    {{"+", "-"}, {SM_AOP_ADD, SM_AOP_SUB}},
    {{"*", "/", "//", "%", "@"},
     {SM_AOP_MUL, SM_AOP_DIV, SM_AOP_FLOORDIV, SM_AOP_MOD, SM_AOP_MATMUL}},
};
#define N_LEVELS ((int)(sizeof levels / sizeof *levels))

static sm_ast_expr *parse_level(sm_sparser *P, int lv)
{
    if (lv == N_LEVELS)
        return parse_factor(P);
    sm_ast_expr *e = parse_level(P, lv + 1);
    while (e) {
        const sm_ptok *t = peek(P);
        int k = -1;
        for (int i = 0; i < 5 && levels[lv].ops[i]; i++)
            if (is_op(t, levels[lv].ops[i]))
                k = i;
        if (k < 0)
            return e;
        next(P);
        sm_ast_expr *r = parse_level(P, lv + 1);
        e = r ? binary(P, SM_EX_BINOP, levels[lv].codes[k], t, e, r) : NULL;
    }
    return NULL;
}

/* A comparison operator at the current token, or -1. Membership and
 * identity tests fail here with a hint. */
static int compare_op(sm_sparser *P, sm_ast_op *op)
{
    static const char *const ops[] = {"<", ">", "==", "!=", "<=", ">="};
    static const sm_ast_op codes[] = {SM_AOP_LT, SM_AOP_GT, SM_AOP_EQ,
                                      SM_AOP_NE, SM_AOP_LE, SM_AOP_GE};
    const sm_ptok *t = peek(P);
    for (int i = 0; i < 6; i++)
        if (is_op(t, ops[i])) {
            *op = codes[i];
            return 1;
        }
    if (is_kw(t, "in") || (is_kw(t, "not") && is_kw(peek2(P), "in"))) {
        unsupported(P, t, "compare values with == and combine with or",
                    "membership tests ('in') are not supported");
        return -1;
    }
    if (is_kw(t, "is")) {
        unsupported(P, t, "compare values with == or !=",
                    "identity tests ('is') are not supported");
        return -1;
    }
    return 0;
}

static sm_ast_expr *parse_comparison(sm_sparser *P)
{
    sm_ast_expr *e = parse_level(P, 0);
    sm_ast_op op;
    int r = 0;
    if (!e || (r = compare_op(P, &op)) <= 0)
        return r < 0 ? NULL : e;
    const sm_ptok *at = peek(P);
    sm_spvec items = {0}, ops = {0};
    if (!sm_sp_push(P, &items, e))
        return NULL;
    while ((r = compare_op(P, &op)) > 0) {
        next(P);
        sm_ast_expr *b = parse_level(P, 0);
        sm_ast_op *o = sm_arena_alloc(P->arena, sizeof *o);
        if (!b || !o || !sm_sp_push(P, &items, b) || !sm_sp_push(P, &ops, o))
            return o ? NULL : sm_sp_nomem(P);
        *o = op;
    }
    if (r < 0)
        return NULL;
    sm_ast_expr *c = seq_expr(P, SM_EX_COMPARE, at, &items);
    if (!c ||
        !(c->ops = sm_arena_alloc(P->arena, sizeof(sm_ast_op) * (size_t)ops.n)))
        return c ? sm_sp_nomem(P) : NULL;
    for (int i = 0; i < ops.n; i++)
        c->ops[i] = *(sm_ast_op *)ops.items[i];
    return c;
}

static sm_ast_expr *parse_not(sm_sparser *P)
{
    const sm_ptok *t = peek(P);
    if (!is_kw(t, "not"))
        return parse_comparison(P);
    if (!enter(P))
        return NULL;
    next(P);
    sm_ast_expr *a = parse_not(P);
    P->depth--;
    return a ? binary(P, SM_EX_UNARY, SM_AOP_NOT, t, a, NULL) : NULL;
}

static sm_ast_expr *parse_and(sm_sparser *P)
{
    sm_ast_expr *e = parse_not(P);
    while (e && is_kw(peek(P), "and")) {
        const sm_ptok *t = next(P);
        sm_ast_expr *r = parse_not(P);
        e = r ? binary(P, SM_EX_BOOLOP, SM_AOP_AND, t, e, r) : NULL;
    }
    return e;
}

static sm_ast_expr *parse_or(sm_sparser *P)
{
    sm_ast_expr *e = parse_and(P);
    while (e && is_kw(peek(P), "or")) {
        const sm_ptok *t = next(P);
        sm_ast_expr *r = parse_and(P);
        e = r ? binary(P, SM_EX_BOOLOP, SM_AOP_OR, t, e, r) : NULL;
    }
    return e;
}

sm_ast_expr *sm_sp_test(sm_sparser *P)
{
    if (!enter(P))
        return NULL;
    sm_ast_expr *e = parse_or(P);
    const sm_ptok *t = peek(P);
    if (e && is_kw(t, "if")) {
        next(P);
        sm_ast_expr *c = parse_or(P), *b = NULL;
        if (c && (is_kw(peek(P), "else") || sm_sp_expected(P, "'else'"))) {
            next(P);
            b = sm_sp_test(P);
        }
        sm_ast_expr *x = b ? binary(P, SM_EX_IFEXP, SM_AOP_ADD, t, e, b) : NULL;
        if (x) {
            x->c = c;
            e = grow(P, x, c) ? x : NULL;
        } else {
            e = NULL;
        }
    }
    if (e && is_op(peek(P), ":="))
        e = unsupported(P, peek(P), "assign with = in a statement of its own",
                        "assignment expressions (:=) are not supported");
    P->depth--;
    return e;
}

/* test (',' test)* [','] : a tuple when there is a comma. */
sm_ast_expr *sm_sp_testlist(sm_sparser *P)
{
    const sm_ptok *at = peek(P);
    sm_ast_expr *e = sm_sp_test(P);
    if (!e || !is_op(peek(P), ","))
        return e;
    sm_spvec items = {0};
    if (!sm_sp_push(P, &items, e))
        return NULL;
    while (accept_op(P, ",")) {
        const sm_ptok *t = peek(P);
        if (t->kind == SM_PTOK_NEWLINE || is_op(t, "=") || is_op(t, ")") ||
            is_op(t, ";") || is_op(t, ":"))
            break;
        if (!(e = sm_sp_test(P)) || !sm_sp_push(P, &items, e))
            return NULL;
    }
    return seq_expr(P, SM_EX_TUPLE, at, &items);
}
