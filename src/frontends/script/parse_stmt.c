/*
 * parse_stmt.c - statements, function definitions and the module level of
 * the script language (the expression half is parser.c).
 *
 * The module level holds `def`s, imports (remembered only as aliases, so
 * that torch.relu(x) means relu(x)), constant assignments, docstrings and
 * an `if __name__ == "__main__":` block, which is skipped so that a script
 * can also run under Python.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/script/parse.h"

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

static sm_ast_stmt *new_stmt(sm_sparser *P, sm_ast_sk kind, const sm_ptok *at)
{
    sm_ast_stmt *s = sm_arena_alloc(P->arena, sizeof *s);
    if (!s)
        return sm_sp_nomem(P);
    s->kind = kind;
    s->line = at->line;
    s->col = at->col;
    return s;
}

/* Statements Python has and the language leaves out, with what to write
 * instead; NULL when t starts none of them. */
static const char *const refused[][3] = {
    {"class", "classes are not supported",
     "write the model as functions; helpers defined with def are inlined"},
    {"try", "try/except is not supported",
     "scripts cannot catch errors; test conditions with if instead"},
    {"with", "with blocks are not supported",
     "remove the with; write its body directly"},
    {"async", "async functions are not supported", "use a plain def"},
    {"break", "break is not supported",
     "use a while loop whose condition becomes false, or a for loop over "
     "range(n) with the right n"},
    {"continue", "continue is not supported",
     "put the rest of the loop body under an if"},
    {"raise", "raise is not supported",
     "scripts cannot raise errors; return a value instead"},
    {"global", "global and nonlocal are not supported",
     "pass values in as parameters and return the results"},
    {"nonlocal", "global and nonlocal are not supported",
     "pass values in as parameters and return the results"},
    {"del", "del is not supported", "stop using the variable instead"},
    {"assert", "assert is not supported",
     "remove it; shapes and dtypes are checked by shape inference"},
    {"yield", "generators are not supported", "return the values instead"},
    {"import", "imports inside functions are not supported",
     "import at module level"},
    {"from", "imports inside functions are not supported",
     "import at module level"},
    {"def", "nested functions are not supported",
     "define helpers at module level; they are inlined where called"},
};

static void *refuse(sm_sparser *P, const sm_ptok *t)
{
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        if (is_kw(t, refused[i][0]))
            return unsupported(P, t, refused[i][2], refused[i][1]);
    if (is_op(t, "@"))
        return unsupported(P, t, "remove the decorator",
                           "decorators inside functions are not supported");
    return NULL;
}

static sm_ast_stmt *parse_suite(sm_sparser *P);

/* An assignment target: a name, or a tuple or list of names. */
static int check_target(sm_sparser *P, const sm_ast_expr *e, int nested)
{
    const sm_ptok at = {.line = e->line, .col = e->col};
    if (e->kind == SM_EX_NAME)
        return 1;
    if ((e->kind == SM_EX_TUPLE || e->kind == SM_EX_LIST) && !nested) {
        for (int i = 0; i < e->n; i++)
            if (!check_target(P, e->items[i], 1))
                return 0;
        return e->n > 0 || !!fail(P, &at, NULL, "cannot assign to ()");
    }
    if (e->kind == SM_EX_INDEX)
        return !!unsupported(P, &at,
                             "tensors are values, not buffers: build a new "
                             "tensor with where(), concat() or an op",
                             "assigning to an element or slice is not "
                             "supported");
    if (e->kind == SM_EX_ATTR)
        return !!unsupported(P, &at, "assign to a variable instead",
                             "assigning to an attribute is not supported");
    if (e->kind == SM_EX_TUPLE || e->kind == SM_EX_LIST)
        return !!unsupported(P, &at, "unpack in two steps",
                             "nested unpacking is not supported");
    return !!fail(P, &at, "the left side of = must be a name or names",
                  "cannot assign to this expression");
}

static const struct {
    const char *op;
    sm_ast_op code;
} aug_ops[] = {
    {"+=", SM_AOP_ADD},    {"-=", SM_AOP_SUB},       {"*=", SM_AOP_MUL},
    {"/=", SM_AOP_DIV},    {"//=", SM_AOP_FLOORDIV}, {"%=", SM_AOP_MOD},
    {"**=", SM_AOP_POW},   {"@=", SM_AOP_MATMUL},    {"&=", SM_AOP_BITAND},
    {"|=", SM_AOP_BITOR},  {"^=", SM_AOP_BITXOR},    {"<<=", SM_AOP_LSHIFT},
    {">>=", SM_AOP_RSHIFT}};

/* Expression statement, assignment (also chained and annotated) or
 * augmented assignment. */
static sm_ast_stmt *parse_expr_stmt(sm_sparser *P)
{
    const sm_ptok *at = peek(P);
    sm_ast_expr *e = sm_sp_testlist(P);
    if (!e)
        return NULL;
    for (size_t i = 0; i < sizeof aug_ops / sizeof *aug_ops; i++)
        if (is_op(peek(P), aug_ops[i].op)) {
            const sm_ptok *t = next(P);
            if (e->kind != SM_EX_NAME)
                return check_target(P, e, 0)
                           ? fail(P, t, "write x = x op value",
                                  "augmented assignment needs a single "
                                  "name on the left")
                           : NULL;
            sm_ast_stmt *s = new_stmt(P, SM_ST_AUG, at);
            sm_ast_expr **tg = sm_arena_alloc(P->arena, sizeof *tg);
            if (!s || !tg)
                return s ? sm_sp_nomem(P) : NULL;
            tg[0] = e;
            s->targets = tg;
            s->n_targets = 1;
            s->op = aug_ops[i].code;
            return (s->value = sm_sp_testlist(P)) ? s : NULL;
        }
    sm_ast_expr *ann = NULL;
    if (accept_op(P, ":")) {
        if (e->kind != SM_EX_NAME)
            return fail(P, at, NULL, "only a name can be annotated");
        if (!(ann = sm_sp_test(P)))
            return NULL;
        if (!is_op(peek(P), "="))
            return fail(P, peek(P), "write name: type = value",
                        "an annotated variable needs a value");
    }
    if (!is_op(peek(P), "=")) {
        sm_ast_stmt *s = new_stmt(P, SM_ST_EXPR, at);
        if (s)
            s->value = e;
        return s;
    }
    sm_spvec targets = {0};
    while (accept_op(P, "=")) {
        if (!check_target(P, e, 0) || !sm_sp_push(P, &targets, e))
            return NULL;
        if (!(e = sm_sp_testlist(P)))
            return NULL;
    }
    sm_ast_stmt *s = new_stmt(P, SM_ST_ASSIGN, at);
    if (!s)
        return NULL;
    s->targets = (sm_ast_expr **)targets.items;
    s->n_targets = targets.n;
    s->value = e;
    s->ann = ann;
    return s;
}

/* One simple statement (no NEWLINE). */
static sm_ast_stmt *parse_small(sm_sparser *P)
{
    const sm_ptok *t = peek(P);
    if (is_kw(t, "pass")) {
        next(P);
        return new_stmt(P, SM_ST_PASS, t);
    }
    if (is_kw(t, "return")) {
        next(P);
        sm_ast_stmt *s = new_stmt(P, SM_ST_RETURN, t);
        const sm_ptok *n = peek(P);
        if (s && n->kind != SM_PTOK_NEWLINE && !is_op(n, ";") &&
            !(s->value = sm_sp_testlist(P)))
            return NULL;
        return s;
    }
    if (t->kind == SM_PTOK_KEYWORD && refuse(P, t) == NULL && P->st)
        return NULL;
    return parse_expr_stmt(P);
}

/* small (';' small)* [';'] NEWLINE, as a linked list; docstrings and
 * other bare strings are dropped. */
static sm_ast_stmt *parse_simple(sm_sparser *P, sm_ast_stmt **tail)
{
    sm_ast_stmt *head = NULL, *last = NULL;
    for (;;) {
        sm_ast_stmt *s = parse_small(P);
        if (!s)
            return NULL;
        if (!(s->kind == SM_ST_EXPR && s->value->kind == SM_EX_STR)) {
            if (last)
                last->next = s;
            else
                head = s;
            last = s;
        }
        if (!accept_op(P, ";"))
            break;
        if (peek(P)->kind == SM_PTOK_NEWLINE)
            break;
    }
    if (peek(P)->kind != SM_PTOK_NEWLINE)
        return sm_sp_expected(P, "end of line");
    next(P);
    if (!head && !(head = last = new_stmt(P, SM_ST_PASS, peek(P))))
        return NULL;
    *tail = last;
    return head;
}

static sm_ast_stmt *parse_block_stmt(sm_sparser *P, sm_ast_stmt **tail);

/* if / elif / else, elif chains nesting in orelse. */
static sm_ast_stmt *parse_if(sm_sparser *P)
{
    const sm_ptok *t = next(P);
    sm_ast_stmt *s = new_stmt(P, SM_ST_IF, t);
    if (!s || !(s->value = sm_sp_test(P)) || !sm_sp_expect_op(P, ":") ||
        !(s->body = parse_suite(P)))
        return NULL;
    if (is_kw(peek(P), "elif")) {
        if (!(s->orelse = parse_if(P)))
            return NULL;
    } else if (is_kw(peek(P), "else")) {
        next(P);
        if (!sm_sp_expect_op(P, ":") || !(s->orelse = parse_suite(P)))
            return NULL;
    }
    return s;
}

static sm_ast_stmt *parse_loop(sm_sparser *P)
{
    const sm_ptok *t = next(P);
    int is_for = is_kw(t, "for");
    sm_ast_stmt *s = new_stmt(P, is_for ? SM_ST_FOR : SM_ST_WHILE, t);
    if (!s)
        return NULL;
    if (is_for) {
        const sm_ptok *v = peek(P);
        if (v->kind != SM_PTOK_NAME)
            return v->kind == SM_PTOK_OP &&
                           (is_op(v, "(") || is_op(peek2(P), ","))
                       ? unsupported(P, v, "loop over range(n) with one name",
                                     "a for loop must bind a single name")
                       : sm_sp_expected(P, "a loop variable");
        sm_ast_expr *var = sm_sp_expr_new(P, SM_EX_NAME, v);
        sm_ast_expr **tg = sm_arena_alloc(P->arena, sizeof *tg);
        if (!var || !tg || !(var->name = sm_sp_str(P, next(P))))
            return var && !tg ? sm_sp_nomem(P) : NULL;
        if (is_op(peek(P), ","))
            return unsupported(P, peek(P), "loop over range(n) with one name",
                               "a for loop must bind a single name");
        tg[0] = var;
        s->targets = tg;
        s->n_targets = 1;
        if (!is_kw(peek(P), "in"))
            return sm_sp_expected(P, "'in'");
        next(P);
    }
    if (!(s->value = sm_sp_test(P)) || !sm_sp_expect_op(P, ":") ||
        !(s->body = parse_suite(P)))
        return NULL;
    if (is_kw(peek(P), "else"))
        return unsupported(P, peek(P), "put the code after the loop",
                           "else after a loop is not supported");
    return s;
}

/* One statement of a block: compound, or a line of simple statements. */
static sm_ast_stmt *parse_block_stmt(sm_sparser *P, sm_ast_stmt **tail)
{
    const sm_ptok *t = peek(P);
    sm_ast_stmt *s;
    if (is_kw(t, "if"))
        s = parse_if(P);
    else if (is_kw(t, "for") || is_kw(t, "while"))
        s = parse_loop(P);
    else if (t->kind == SM_PTOK_INDENT)
        return fail(P, t, "indent only the body of a def, if, for or while",
                    "unexpected indentation");
    else if (is_op(t, "@") || is_kw(t, "def") || is_kw(t, "class") ||
             is_kw(t, "try") || is_kw(t, "with") || is_kw(t, "async"))
        return refuse(P, t);
    else
        return parse_simple(P, tail);
    *tail = s;
    return s;
}

/* The body after a ':' : statements on the same line, or an indented
 * block. */
static sm_ast_stmt *parse_suite(sm_sparser *P)
{
    sm_ast_stmt *tail;
    if (peek(P)->kind != SM_PTOK_NEWLINE)
        return parse_simple(P, &tail);
    next(P);
    if (peek(P)->kind != SM_PTOK_INDENT)
        return sm_sp_expected(P, "an indented block");
    next(P);
    sm_ast_stmt *head = NULL, *last = NULL;
    while (peek(P)->kind != SM_PTOK_DEDENT && peek(P)->kind != SM_PTOK_EOF) {
        sm_ast_stmt *s = parse_block_stmt(P, &tail);
        if (!s)
            return NULL;
        if (last)
            last->next = s;
        else
            head = s;
        last = tail;
    }
    next(P);
    return head;
}

static sm_ast_func *parse_def(sm_sparser *P)
{
    const sm_ptok *t = next(P);
    sm_ast_func *f = sm_arena_alloc(P->arena, sizeof *f);
    if (!f)
        return sm_sp_nomem(P);
    f->line = t->line;
    f->col = t->col;
    const sm_ptok *name = peek(P);
    if (name->kind != SM_PTOK_NAME)
        return sm_sp_expected(P, "a function name");
    if (!(f->name = sm_sp_str(P, next(P))) || !sm_sp_expect_op(P, "("))
        return NULL;
    sm_spvec params = {0};
    while (!is_op(peek(P), ")")) {
        const sm_ptok *p = peek(P);
        if (is_op(p, "*") || is_op(p, "**") || is_op(p, "/"))
            return unsupported(P, p, "list the parameters one by one",
                               "*args, **kwargs and / are not supported");
        if (p->kind != SM_PTOK_NAME)
            return sm_sp_expected(P, "a parameter name");
        sm_ast_param *prm = sm_arena_alloc(P->arena, sizeof *prm);
        if (!prm || !(prm->name = sm_sp_str(P, next(P))))
            return prm ? NULL : sm_sp_nomem(P);
        prm->line = p->line;
        prm->col = p->col;
        if (params.n >= SM_SCRIPT_MAX_PARAMS)
            return fail(P, p, "pass a list, or split the function",
                        "too many parameters");
        for (int i = 0; i < params.n; i++)
            if (!strcmp(((sm_ast_param *)params.items[i])->name, prm->name))
                return fail(P, p, NULL, "duplicate parameter name");
        if (accept_op(P, ":") && !(prm->type = sm_sp_test(P)))
            return NULL;
        if (accept_op(P, "=") && !(prm->def = sm_sp_test(P)))
            return NULL;
        if (!sm_sp_push(P, &params, prm))
            return NULL;
        if (!accept_op(P, ","))
            break;
    }
    if (!sm_sp_expect_op(P, ")"))
        return NULL;
    if (accept_op(P, "->") && !(f->ret = sm_sp_test(P)))
        return NULL;
    if (!sm_sp_expect_op(P, ":") || !(f->body = parse_suite(P)))
        return NULL;
    f->n_params = params.n;
    if (params.n && !(f->params = sm_arena_alloc(
                          P->arena, sizeof(sm_ast_param) * (size_t)params.n)))
        return sm_sp_nomem(P);
    for (int i = 0; i < params.n; i++)
        f->params[i] = *(sm_ast_param *)params.items[i];
    return f;
}

/* import a.b.c [as x], ... : records the names calls may go through. */
static int parse_import(sm_sparser *P, sm_ast_module *m)
{
    const sm_ptok *t = next(P);
    if (is_kw(t, "from")) { /* from m import names: names are ignored */
        while (peek(P)->kind != SM_PTOK_NEWLINE && peek(P)->kind != SM_PTOK_EOF)
            next(P);
        next(P);
        return 1;
    }
    do {
        const sm_ptok *first = peek(P), *alias = first;
        if (first->kind != SM_PTOK_NAME)
            return !!sm_sp_expected(P, "a module name");
        next(P);
        while (accept_op(P, ".")) {
            if (peek(P)->kind != SM_PTOK_NAME)
                return !!sm_sp_expected(P, "a module name");
            next(P);
        }
        if (is_kw(peek(P), "as")) {
            next(P);
            if ((alias = peek(P))->kind != SM_PTOK_NAME)
                return !!sm_sp_expected(P, "a name after 'as'");
            next(P);
        }
        sm_ast_import *im = sm_arena_alloc(P->arena, sizeof *im);
        if (!im || !(im->alias = sm_sp_str(P, alias)))
            return im ? 0 : !!sm_sp_nomem(P);
        im->next = m->imports;
        m->imports = im;
    } while (accept_op(P, ","));
    if (peek(P)->kind != SM_PTOK_NEWLINE)
        return !!sm_sp_expected(P, "end of line");
    next(P);
    return 1;
}

/* `if __name__ == ...:` at module level. */
static int is_main_guard(const sm_sparser *P)
{
    const sm_ptok *n = peek2(P);
    return is_kw(peek(P), "if") && n->kind == SM_PTOK_NAME && n->len == 8 &&
           !memcmp(n->text, "__name__", 8);
}

/* Skips an if/elif/else clause and the ones chained to it, token by
 * token: what runs under Python only need not be in the language. */
static int skip_clause(sm_sparser *P)
{
    do {
        while (!(is_op(peek(P), ":") && peek2(P)->kind == SM_PTOK_NEWLINE)) {
            if (peek(P)->kind == SM_PTOK_NEWLINE ||
                peek(P)->kind == SM_PTOK_EOF)
                return !!sm_sp_expected(P, "':' and an indented block");
            next(P);
        }
        next(P);
        next(P);
        if (peek(P)->kind != SM_PTOK_INDENT)
            return !!sm_sp_expected(P, "an indented block");
        int depth = 0;
        do {
            const sm_ptok *t = next(P);
            depth += t->kind == SM_PTOK_INDENT;
            depth -= t->kind == SM_PTOK_DEDENT;
            if (t->kind == SM_PTOK_EOF)
                break;
        } while (depth > 0);
    } while (is_kw(peek(P), "elif") || is_kw(peek(P), "else"));
    return 1;
}

/* A module-level statement that is neither def nor import. */
static int parse_module_stmt(sm_sparser *P, sm_ast_module *m)
{
    if (is_main_guard(P))
        return skip_clause(P);
    sm_ast_stmt *tail, *s = parse_block_stmt(P, &tail);
    for (; s; s = s->next) {
        if (s->kind == SM_ST_PASS)
            continue;
        if (s->kind != SM_ST_ASSIGN || s->n_targets != 1 ||
            s->targets[0]->kind != SM_EX_NAME) {
            const sm_ptok at = {.line = s->line, .col = s->col};
            return !!unsupported(
                P, &at,
                "move the code into a function; at module level only "
                "def, import and NAME = constant are allowed",
                "statements at module level are not supported");
        }
        sm_ast_global *g = sm_arena_alloc(P->arena, sizeof *g);
        if (!g)
            return !!sm_sp_nomem(P);
        g->name = s->targets[0]->name;
        g->line = s->line;
        g->col = s->col;
        g->value = s->value;
        g->next = m->globals;
        m->globals = g;
        if (s == tail)
            break;
    }
    return P->st == SMELT_OK;
}

/* Skips a decorator line (`@torch.jit.script`) before a def. */
static int skip_decorator(sm_sparser *P)
{
    next(P);
    if (!sm_sp_test(P))
        return 0;
    if (peek(P)->kind != SM_PTOK_NEWLINE)
        return !!sm_sp_expected(P, "end of line after the decorator");
    next(P);
    if (!is_kw(peek(P), "def") && !is_op(peek(P), "@"))
        return !!unsupported(P, peek(P), "decorate only functions",
                             "a decorator must be followed by def");
    return 1;
}

smelt_status sm_script_parse(const sm_script_src *src, sm_arena *arena,
                             sm_ast_module **out)
{
    *out = NULL;
    sm_ptok *toks;
    int n;
    SM_TRY(sm_script_lex(src, arena, &toks, &n));
    sm_sparser P = {src, arena, toks, n, 0, 0, SMELT_OK};
    sm_ast_module *m = sm_arena_alloc(arena, sizeof *m);
    if (!m)
        sm_sp_nomem(&P);
    sm_ast_func *last = NULL;
    while (!P.st && peek(&P)->kind != SM_PTOK_EOF) {
        const sm_ptok *t = peek(&P);
        if (t->kind == SM_PTOK_NEWLINE) {
            next(&P);
        } else if (is_op(t, "@")) {
            skip_decorator(&P);
        } else if (is_kw(t, "def")) {
            sm_ast_func *f = parse_def(&P);
            if (f) {
                if (last)
                    last->next = f;
                else
                    m->funcs = f;
                last = f;
            }
        } else if (is_kw(t, "import") || is_kw(t, "from")) {
            parse_import(&P, m);
        } else {
            parse_module_stmt(&P, m);
        }
    }
    sm_free(toks);
    if (P.st)
        return P.st;
    *out = m;
    return SMELT_OK;
}

const sm_ast_func *sm_script_find_func(const sm_ast_module *m, const char *fn)
{
    const sm_ast_func *hit = NULL;
    for (const sm_ast_func *f = m->funcs; f; f = f->next)
        if (!fn || !strcmp(f->name, fn))
            hit = f;
    return hit;
}
