/*
 * parse.c - the parser of the IR's text form (grammar in docs/IR.md).
 *
 * One pass, one token of lookahead, building the graph through the
 * construction API of ir.h as it goes. Value names live in one hash map
 * for the whole graph (names are unique graph-wide); each entry records
 * where the name was defined and whether it is visible now: a block's
 * definitions stop being visible when the block ends, and a node's outputs
 * become visible only after its sub-blocks. On any error the graph built
 * so far is freed with the parser's scratch memory.
 */
#include "ir/text.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/parse.h"

/* ---- names and scopes -------------------------------------------------- */

/* Registers a new value name (pending until its value exists); a name
 * already used anywhere in the graph is an error. */
static smelt_status define(sm_parser *p, const sm_token *t, const char *name,
                           size_t len, sm_parse_def **out)
{
    char f[80];
    sm_parse_def *d = sm_strmap_get(&p->defs, name, len);
    if (d)
        return sm_parse_err(p, t,
                            "redefinition of %%%s (first defined at %d:%d)",
                            sm_parse_shown(name, len, f), d->line, d->col);
    GROW(p, scope, p->n_scope + 1);
    d = sm_arena_alloc(&p->tmp, sizeof *d);
    if (!d)
        return sm_parse_nomem(p);
    d->name = name;
    d->len = len;
    d->line = t->line;
    d->col = t->col;
    d->state = SM_DEF_PENDING;
    if (!sm_strmap_put(&p->defs, name, len, d))
        return sm_parse_nomem(p);
    p->scope[p->n_scope++] = d;
    *out = d;
    return SMELT_OK;
}

/* The value the current %name token refers to, if visible here. */
static smelt_status use_value(sm_parser *p, sm_value **out)
{
    char f[80];
    const sm_token *t = &p->tok;
    const char *name = t->s;
    size_t len = t->n;
    if (t->quoted)
        SM_TRY(sm_parse_str(p, t, &name, &len));
    sm_parse_def *d = sm_strmap_get(&p->defs, name, len);
    const char *sh = sm_parse_shown(name, len, f);
    if (!d)
        return sm_parse_err(p, t, "undefined value %%%s", sh);
    if (d->state == SM_DEF_PENDING)
        return sm_parse_err(p, t,
                            "value %%%s is used before its definition at %d:%d",
                            sh, d->line, d->col);
    if (d->state == SM_DEF_CLOSED)
        return sm_parse_err(
            p, t,
            "value %%%s (defined at %d:%d) is not visible here: its "
            "block has ended",
            sh, d->line, d->col);
    *out = d->v;
    return SMELT_OK;
}

/* params := (value ':' type (',' value ':' type)*)? ')' */
static smelt_status parse_params(sm_parser *p, sm_block *b)
{
    char f[80];
    while (p->tok.kind != SM_TOK_RPAREN) {
        if (p->tok.kind != SM_TOK_VALUE)
            return sm_parse_err(p, &p->tok,
                                "expected a parameter or ')', found %s",
                                sm_parse_found(p, f, sizeof f));
        const char *name;
        size_t len;
        sm_parse_def *d;
        sm_token nt = p->tok;
        SM_TRY(sm_parse_str(p, &nt, &name, &len));
        SM_TRY(define(p, &nt, name, len, &d));
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_COLON) {
            char sh[80];
            return sm_parse_err(
                p, &p->tok, "parameter %%%s needs ': type', found %s",
                sm_parse_shown(name, len, sh), sm_parse_found(p, f, sizeof f));
        }
        SM_TRY(sm_parse_next(p));
        sm_type t;
        SM_TRY(sm_parse_type(p, &t));
        if (!(d->v = sm_block_add_param(b, name, &t)))
            return sm_parse_nomem(p);
        d->state = SM_DEF_LIVE;
        if (p->tok.kind != SM_TOK_COMMA)
            break;
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_VALUE)
            return sm_parse_err(p, &p->tok,
                                "expected a parameter after ',', found %s",
                                sm_parse_found(p, f, sizeof f));
    }
    return sm_parse_expect(p, SM_TOK_RPAREN, "',' or ')' after the parameters");
}

static smelt_status parse_body(sm_parser *p, sm_block *b);

/* block := LABEL '(' params? ')' body, owned by node n. */
static smelt_status parse_block(sm_parser *p, sm_node *n)
{
    sm_token lt = p->tok;
    if (p->depth >= SM_PARSE_MAX_DEPTH)
        return sm_parse_err(p, &lt, "blocks nested deeper than %d",
                            SM_PARSE_MAX_DEPTH);
    const char *label;
    size_t len;
    SM_TRY(sm_parse_str(p, &lt, &label, &len));
    /* Blocks run by position: a label out of place would run silently as
     * the block its position says. */
    const sm_op_info *info = sm_op_info_get(n->op);
    const char *want = sm_op_block_label(n->op, n->n_blocks);
    char f[80];
    if (n->n_blocks >= info->n_blocks)
        return sm_parse_err(p, &lt, "%s owns %d sub-block%s; '%s' is one more",
                            info->name, info->n_blocks,
                            info->n_blocks == 1 ? "" : "s",
                            sm_parse_shown(label, len, f));
    if (want && (strlen(label) != len || strcmp(label, want) != 0))
        return sm_parse_err(p, &lt,
                            "sub-block %d of %s must be labelled '%s', not "
                            "'%s'",
                            n->n_blocks, info->name, want,
                            sm_parse_shown(label, len, f));
    sm_block *b = sm_block_new(p->g, label, n);
    if (!b || !sm_node_add_block(n, b))
        return sm_parse_nomem(p);
    SM_TRY(sm_parse_next(p));
    SM_TRY(sm_parse_expect(p, SM_TOK_LPAREN, "'(' after the block label"));
    size_t base = p->n_scope;
    SM_TRY(parse_params(p, b));
    p->depth++;
    SM_TRY(parse_body(p, b));
    p->depth--;
    for (size_t i = base; i < p->n_scope; i++)
        p->scope[i]->state = SM_DEF_CLOSED;
    p->n_scope = base;
    return SMELT_OK;
}

/* The known op name closest to an unknown one (edit distance, ignoring
 * case), for "did you mean" hints. */
static const char *closest_op(const char *s, size_t n)
{
    const char *best = NULL;
    int best_d = INT_MAX;
    if (n > 63)
        n = 63;
    for (int op = 0; op < SM_OP_COUNT; op++) {
        const char *name = sm_op_info_get((sm_op)op)->name;
        size_t m = strlen(name);
        if (m > 63)
            m = 63;
        int row[64];
        for (size_t j = 0; j <= m; j++)
            row[j] = (int)j;
        for (size_t i = 1; i <= n; i++) {
            int prev = row[0];
            row[0] = (int)i;
            for (size_t j = 1; j <= m; j++) {
                int cur = row[j];
                int a = s[i - 1], b = name[j - 1];
                a = a >= 'A' && a <= 'Z' ? a + 32 : a;
                b = b >= 'A' && b <= 'Z' ? b + 32 : b;
                int v = prev + (a != b);
                if (row[j] + 1 < v)
                    v = row[j] + 1;
                if (row[j - 1] + 1 < v)
                    v = row[j - 1] + 1;
                row[j] = v;
                prev = cur;
            }
        }
        if (row[m] < best_d) {
            best_d = row[m];
            best = name;
        }
    }
    return best;
}

/* The op named by the current token. */
static smelt_status parse_op(sm_parser *p, sm_op *op)
{
    char f[80];
    if (p->tok.kind != SM_TOK_IDENT)
        return sm_parse_err(p, &p->tok, "expected an op name, found %s",
                            sm_parse_found(p, f, sizeof f));
    *op = sm_op_from_name(p->tok.s, (int)p->tok.n);
    if (*op == SM_OP_COUNT)
        return sm_parse_err(p, &p->tok, "unknown op '%s' (did you mean '%s'?)",
                            sm_parse_shown(p->tok.s, p->tok.n, f),
                            closest_op(p->tok.s, p->tok.n));
    return sm_parse_next(p);
}

/* %w: TYPE = const LITERAL, with the one output already in p->outs. */
static smelt_status parse_const(sm_parser *p, sm_block *b, size_t n_out)
{
    char f[80], what[128];
    sm_token ct = p->tok;
    if (n_out != 1)
        return sm_parse_err(
            p, &ct, "'const' defines exactly one value, not %zu", n_out);
    sm_parse_out o = p->outs[0];
    snprintf(what, sizeof what, "constant %%%s",
             sm_parse_shown(o.name, strlen(o.name), f));
    if (!o.typed)
        return sm_parse_err(p, &ct, "%s needs a type", what);
    SM_TRY(sm_parse_need_known(p, &o.type_tok, &o.type, what));
    SM_TRY(sm_parse_next(p));
    sm_tensor *x;
    SM_TRY(sm_parse_literal(p, &o.type, what, &o.type_tok, &x));
    if (!(o.d->v = sm_block_add_const(b, o.name, x)))
        return sm_parse_nomem(p);
    o.d->state = SM_DEF_LIVE;
    return SMELT_OK;
}

/* The rest of a node statement from its op name on; p->outs holds its
 * n_out outputs. */
static smelt_status parse_node(sm_parser *p, sm_block *b, size_t n_out)
{
    char f[80];
    sm_op op = SM_OP_COUNT;
    int line = p->tok.line, col = p->tok.col;
    SM_TRY(parse_op(p, &op));
    SM_TRY(sm_parse_expect(p, SM_TOK_LPAREN, "'(' after the op name"));
    size_t n_in = 0;
    while (p->tok.kind != SM_TOK_RPAREN) {
        GROW(p, args, n_in + 1);
        if (sm_parse_is_word(&p->tok, "_"))
            p->args[n_in] = NULL;
        else if (p->tok.kind == SM_TOK_VALUE)
            SM_TRY(use_value(p, &p->args[n_in]));
        else
            return sm_parse_err(p, &p->tok,
                                "expected a value or '_' as an input, found %s",
                                sm_parse_found(p, f, sizeof f));
        n_in++;
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_COMMA)
            break;
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind == SM_TOK_RPAREN)
            return sm_parse_err(p, &p->tok,
                                "expected an input after ',', found ')'");
    }
    SM_TRY(sm_parse_expect(p, SM_TOK_RPAREN, "',' or ')' after the inputs"));
    if (n_in > INT_MAX)
        return sm_parse_err(p, &p->tok, "too many inputs");
    GROW(p, names, n_out + 1);
    for (size_t i = 0; i < n_out; i++)
        p->names[i] = p->outs[i].name;
    sm_node *n =
        sm_node_new(b, op, NULL, (int)n_in, p->args, (int)n_out, p->names);
    if (!n)
        return sm_parse_nomem(p);
    n->src_line = line;
    n->src_col = col;
    for (size_t i = 0; i < n_out; i++) {
        if (p->outs[i].typed)
            n->out[i]->type = p->outs[i].type;
        p->outs[i].d->v = n->out[i];
    }
    if (p->tok.kind == SM_TOK_LBRACE)
        SM_TRY(sm_parse_attrs(p, n));
    if (p->tok.kind == SM_TOK_AT) {
        const char *name;
        size_t len;
        SM_TRY(sm_parse_str(p, &p->tok, &name, &len));
        if (!(n->name = sm_arena_strndup(&p->g->arena, name, len)))
            return sm_parse_nomem(p);
        SM_TRY(sm_parse_next(p));
    }
    /* sub-blocks: labels are identifiers that are not op names */
    while (sm_op_info_get(op)->n_blocks > 0 && p->tok.kind == SM_TOK_IDENT &&
           !sm_parse_is_word(&p->tok, "return") &&
           sm_op_from_name(p->tok.s, (int)p->tok.n) == SM_OP_COUNT)
        SM_TRY(parse_block(p, n));
    /* Shape inference and the runtime read every sub-block the op owns. */
    int want = sm_op_info_get(op)->n_blocks;
    if (n->n_blocks < want)
        return sm_parse_err(
            p, &p->tok,
            "%s owns %d sub-block%s, got %d; expected '%s' "
            "here, found %s",
            sm_op_info_get(op)->name, want, want == 1 ? "" : "s", n->n_blocks,
            sm_op_block_label(op, n->n_blocks), sm_parse_found(p, f, sizeof f));
    for (int i = 0; i < n->n_out; i++) {
        const char *nm = n->out[i]->name;
        sm_parse_def *d = sm_strmap_get(&p->defs, nm, strlen(nm));
        SM_ASSERT(d);
        d->state = SM_DEF_LIVE;
    }
    return SMELT_OK;
}

/* stmt := outs '=' ('const' literal | node) | node */
static smelt_status parse_stmt(sm_parser *p, sm_block *b)
{
    char f[80];
    size_t n_out = 0;
    if (p->tok.kind == SM_TOK_VALUE) {
        for (;;) {
            GROW(p, outs, n_out + 1);
            sm_parse_out *o = &p->outs[n_out];
            memset(o, 0, sizeof *o);
            sm_token nt = p->tok;
            size_t len;
            SM_TRY(sm_parse_str(p, &nt, &o->name, &len));
            SM_TRY(define(p, &nt, o->name, len, &o->d));
            SM_TRY(sm_parse_next(p));
            if (p->tok.kind == SM_TOK_COLON) {
                SM_TRY(sm_parse_next(p));
                o->type_tok = p->tok;
                SM_TRY(sm_parse_type(p, &o->type));
                o->typed = 1;
            }
            n_out++;
            if (n_out >= INT_MAX)
                return sm_parse_err(p, &nt, "too many outputs");
            if (p->tok.kind != SM_TOK_COMMA)
                break;
            SM_TRY(sm_parse_next(p));
            if (p->tok.kind != SM_TOK_VALUE)
                return sm_parse_err(
                    p, &p->tok, "expected an output value after ',', found %s",
                    sm_parse_found(p, f, sizeof f));
        }
        if (p->tok.kind != SM_TOK_EQUAL)
            return sm_parse_err(p, &p->tok,
                                "expected '=' after the outputs, found %s",
                                sm_parse_found(p, f, sizeof f));
        SM_TRY(sm_parse_next(p));
        if (sm_parse_is_word(&p->tok, "const"))
            return parse_const(p, b, n_out);
    } else if (p->tok.kind != SM_TOK_IDENT) {
        return sm_parse_err(p, &p->tok,
                            "expected a statement or 'return', found %s",
                            sm_parse_found(p, f, sizeof f));
    }
    return parse_node(p, b, n_out);
}

/* body := '{' stmt* 'return' (value (',' value)*)? '}' */
static smelt_status parse_body(sm_parser *p, sm_block *b)
{
    char f[80];
    SM_TRY(sm_parse_expect(p, SM_TOK_LBRACE, "'{' to open the block"));
    while (!sm_parse_is_word(&p->tok, "return")) {
        if (p->tok.kind == SM_TOK_RBRACE)
            return sm_parse_err(p, &p->tok,
                                "missing 'return' at the end of the block");
        if (p->tok.kind == SM_TOK_EOF)
            return sm_parse_err(
                p, &p->tok,
                "unexpected end of input: missing 'return' and '}'");
        SM_TRY(parse_stmt(p, b));
    }
    SM_TRY(sm_parse_next(p));
    while (p->tok.kind == SM_TOK_VALUE) {
        sm_value *v;
        SM_TRY(use_value(p, &v));
        if (!sm_block_add_return(b, v))
            return sm_parse_nomem(p);
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_COMMA)
            break;
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_VALUE)
            return sm_parse_err(p, &p->tok,
                                "expected a value after ',', found %s",
                                sm_parse_found(p, f, sizeof f));
    }
    return sm_parse_expect(p, SM_TOK_RBRACE, "'}' after the return");
}

/* graph := 'graph' NAME '(' params? ')' body EOF */
static smelt_status parse_graph(sm_parser *p)
{
    char f[80];
    if (!sm_parse_is_word(&p->tok, "graph"))
        return sm_parse_err(p, &p->tok, "expected 'graph', found %s",
                            sm_parse_found(p, f, sizeof f));
    SM_TRY(sm_parse_next(p));
    if (p->tok.kind != SM_TOK_IDENT && p->tok.kind != SM_TOK_STRING)
        return sm_parse_err(p, &p->tok, "expected the graph's name, found %s",
                            sm_parse_found(p, f, sizeof f));
    const char *name;
    SM_TRY(sm_parse_str(p, &p->tok, &name, NULL));
    if (sm_graph_new(p->ctx, name, &p->g) != SMELT_OK)
        return sm_parse_nomem(p);
    if (p->lx.file &&
        !(p->g->src_file = sm_arena_strdup(&p->g->arena, p->lx.file)))
        return sm_parse_nomem(p);
    SM_TRY(sm_parse_next(p));
    SM_TRY(sm_parse_expect(p, SM_TOK_LPAREN, "'(' after the graph's name"));
    SM_TRY(parse_params(p, p->g->top));
    SM_TRY(parse_body(p, p->g->top));
    if (p->tok.kind != SM_TOK_EOF)
        return sm_parse_err(p, &p->tok,
                            "unexpected %s after the end of the graph",
                            sm_parse_found(p, f, sizeof f));
    return SMELT_OK;
}

smelt_status sm_ir_parse(smelt_ctx_t *ctx, const char *text, size_t len,
                         const char *filename, sm_graph **out)
{
    *out = NULL;
    sm_parser p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    sm_lex_init(&p.lx, ctx, text, len, filename);
    sm_arena_init(&p.tmp);
    sm_strmap_init(&p.defs);
    sm_strmap_init(&p.syms);
    smelt_status s = sm_parse_next(&p);
    if (s == SMELT_OK)
        s = parse_graph(&p);
    sm_strmap_free(&p.defs);
    sm_strmap_free(&p.syms);
    sm_arena_free(&p.tmp);
    sm_free(p.scope);
    sm_free(p.buf);
    sm_free(p.items);
    sm_free(p.args);
    sm_free(p.outs);
    sm_free(p.names);
    if (s != SMELT_OK) {
        sm_graph_free(p.g);
        return s;
    }
    *out = p.g;
    return SMELT_OK;
}

smelt_status smelt_graph_parse(smelt_ctx_t *ctx, const char *text, size_t len,
                               const char *filename, smelt_graph_t **out)
{
    if (!out || (!text && len))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_parse: NULL argument");
    return sm_ir_parse(ctx, text, len, filename, out);
}
