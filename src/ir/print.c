/*
 * print.c - the canonical text form of a graph (docs/IR.md).
 *
 * Canonical means: two-space indent, one statement a line, constants first
 * in each block, then nodes in block order, attributes in stored order,
 * and numbers written so that they parse back to the same bits. The parser
 * reads everything printed here, so print(parse(print(g))) == print(g).
 */
#include "ir/text.h"

#include <stdint.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/strbuf.h"
#include "ir/lex.h"

/* A value or node name that can be written without quotes: NAME
 * characters only, and not ending in ':' (the lexer gives a trailing ':'
 * to the type that follows). */
static int bare_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || s[n - 1] == ':')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!sm_lex_is_name_char((unsigned char)s[i]))
            return 0;
    return 1;
}

/* "..." with escapes: quote, backslash, \n, \t, other control bytes and
 * bytes that are not part of valid UTF-8 as \xHH. */
static void put_quoted(sm_strbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    sm_strbuf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c == '"' || c == '\\') {
            sm_strbuf_putc(b, '\\');
            sm_strbuf_putc(b, (char)c);
        } else if (c == '\n') {
            sm_strbuf_puts(b, "\\n");
        } else if (c == '\t') {
            sm_strbuf_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            sm_strbuf_appendf(b, "\\x%02x", c);
        } else if (c >= 0x80) {
            size_t k = sm_utf8_len(u + i, n - i);
            if (k == 0)
                sm_strbuf_appendf(b, "\\x%02x", c);
            else
                sm_strbuf_append(b, s + i, k);
            i += k ? k : 1;
            continue;
        } else {
            sm_strbuf_putc(b, (char)c);
        }
        i++;
    }
    sm_strbuf_putc(b, '"');
}

/* An identifier-like name (graph, attribute, dimension): bare when it is
 * an IDENT, quoted otherwise. */
static void put_ident(sm_strbuf *b, const char *s)
{
    if (sm_lex_is_ident(s, strlen(s)))
        sm_strbuf_puts(b, s);
    else
        put_quoted(b, s);
}

static void put_name(sm_strbuf *b, char sigil, const char *s)
{
    sm_strbuf_putc(b, sigil);
    if (bare_name(s))
        sm_strbuf_puts(b, s);
    else
        put_quoted(b, s);
}

static void put_type(sm_strbuf *b, const sm_type *t)
{
    sm_strbuf_puts(b, smelt_dtype_name(t->dtype));
    sm_strbuf_putc(b, '[');
    if (t->ndim < 0)
        sm_strbuf_putc(b, '*');
    for (int i = 0; i < t->ndim; i++) {
        if (i)
            sm_strbuf_putc(b, ',');
        if (t->dims[i].size >= 0)
            sm_strbuf_appendf(b, "%lld", (long long)t->dims[i].size);
        else if (t->dims[i].sym)
            put_ident(b, t->dims[i].sym);
        else
            sm_strbuf_putc(b, '?');
    }
    sm_strbuf_putc(b, ']');
}

/* A float that reads back as a float (always with '.', 'e', nan or inf)
 * and to the same value: with prec significant digits, or with the fewest
 * digits that round-trip a double when prec is 0. */
static void put_float(sm_strbuf *b, double v, int prec)
{
    char buf[48];
    if (isnan(v)) {
        sm_strbuf_puts(b, "nan");
        return;
    }
    if (isinf(v)) {
        sm_strbuf_puts(b, v > 0 ? "inf" : "-inf");
        return;
    }
    if (prec > 0)
        snprintf(buf, sizeof buf, "%.*g", prec, v);
    else
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    sm_strbuf_puts(b, buf);
    if (!strpbrk(buf, ".e"))
        sm_strbuf_puts(b, ".0");
}

static void put_elem(sm_strbuf *b, const sm_tensor *t, int64_t i)
{
    smelt_dtype dt = t->dtype;
    if (dt == SMELT_DTYPE_BOOL)
        sm_strbuf_puts(b, sm_load_i64(dt, t->data, i) ? "true" : "false");
    else if (sm_dtype_is_float(dt))
        put_float(b, sm_load_f64(dt, t->data, i),
                  dt == SMELT_DTYPE_F64 ? 17 : 9);
    else if (dt == SMELT_DTYPE_U64) /* loads as its int64 bit pattern */
        sm_strbuf_appendf(b, "%llu",
                          (unsigned long long)sm_load_i64(dt, t->data, i));
    else
        sm_strbuf_appendf(b, "%lld", (long long)sm_load_i64(dt, t->data, i));
}

/* A scalar for rank 0, a flat row-major list otherwise. */
static void put_literal(sm_strbuf *b, const sm_tensor *t)
{
    if (t->ndim == 0) {
        put_elem(b, t, 0);
        return;
    }
    sm_strbuf_putc(b, '[');
    for (int64_t i = 0; i < t->numel && !b->failed; i++) {
        if (i)
            sm_strbuf_puts(b, ", ");
        put_elem(b, t, i);
    }
    sm_strbuf_putc(b, ']');
}

/* FNV-1a over the bytes of t: a summary's checksum, so two summaries of
 * different weights differ. */
static uint32_t fnv1a(const sm_tensor *t)
{
    uint32_t h = 2166136261u;
    const unsigned char *p = t->data;
    for (size_t i = 0; i < t->nbytes; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* A constant in one line: its count, checksum and first (up to 8)
 * values. Deliberately not valid text IR (`const <...>`), so a
 * summary is never mistaken for the model. */
static void put_summary(sm_strbuf *b, const sm_tensor *t)
{
    const int64_t max = 8;
    sm_strbuf_appendf(b, "<%lld values, fnv1a %08x> [", (long long)t->numel,
                      (unsigned)fnv1a(t));
    for (int64_t i = 0; i < max && i < t->numel && !b->failed; i++) {
        if (i)
            sm_strbuf_puts(b, ", ");
        put_elem(b, t, i);
    }
    sm_strbuf_puts(b, ", ...]");
}

static void put_tensor_type(sm_strbuf *b, const sm_tensor *x)
{
    sm_type t;
    sm_type_from_tensor(&t, x);
    put_type(b, &t);
}

static void put_attr(sm_strbuf *b, const sm_attr *a)
{
    put_ident(b, a->name);
    sm_strbuf_puts(b, " = ");
    switch (a->kind) {
    case SM_ATTR_INT: sm_strbuf_appendf(b, "%lld", (long long)a->v.i); break;
    case SM_ATTR_FLOAT: put_float(b, a->v.f, 0); break;
    case SM_ATTR_STRING: put_quoted(b, a->v.s); break;
    case SM_ATTR_TENSOR:
        sm_strbuf_puts(b, "tensor ");
        put_tensor_type(b, a->v.t);
        sm_strbuf_putc(b, ' ');
        put_literal(b, a->v.t);
        break;
    case SM_ATTR_INTS:
    case SM_ATTR_FLOATS:
    case SM_ATTR_STRINGS:
        sm_strbuf_putc(b, '[');
        for (int i = 0; i < a->n; i++) {
            if (i)
                sm_strbuf_puts(b, ", ");
            if (a->kind == SM_ATTR_INTS)
                sm_strbuf_appendf(b, "%lld", (long long)a->v.ints[i]);
            else if (a->kind == SM_ATTR_FLOATS)
                put_float(b, a->v.floats[i], 0);
            else
                put_quoted(b, a->v.strs[i]);
        }
        sm_strbuf_putc(b, ']');
        break;
    default: sm_strbuf_puts(b, "0"); break;
    }
}

/* "%x" followed by ": type" unless nothing at all is known of the type. */
static void put_decl(sm_strbuf *b, const sm_value *v, int always_type)
{
    put_name(b, '%', v->name);
    if (always_type || v->type.dtype != SMELT_DTYPE_UNDEFINED ||
        v->type.ndim != SM_RANK_UNKNOWN) {
        sm_strbuf_puts(b, ": ");
        put_type(b, &v->type);
    }
}

static void put_params(sm_strbuf *b, const sm_block *blk)
{
    sm_strbuf_putc(b, '(');
    for (int i = 0; i < blk->n_params; i++) {
        if (i)
            sm_strbuf_puts(b, ", ");
        put_decl(b, blk->params[i], 1);
    }
    sm_strbuf_putc(b, ')');
}

static void indent_to(sm_strbuf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        sm_strbuf_puts(b, "  ");
}

static void put_block(sm_strbuf *b, const sm_block *blk, int depth,
                      int64_t max);

static void put_node(sm_strbuf *b, const sm_node *n, int depth, int64_t max)
{
    indent_to(b, depth);
    for (int i = 0; i < n->n_out; i++) {
        if (i)
            sm_strbuf_puts(b, ", ");
        put_decl(b, n->out[i], 0);
    }
    if (n->n_out)
        sm_strbuf_puts(b, " = ");
    sm_strbuf_puts(b, sm_op_info_get(n->op)->name);
    sm_strbuf_putc(b, '(');
    for (int i = 0; i < n->n_in; i++) {
        if (i)
            sm_strbuf_puts(b, ", ");
        if (n->in[i])
            put_name(b, '%', n->in[i]->name);
        else
            sm_strbuf_putc(b, '_');
    }
    sm_strbuf_putc(b, ')');
    if (n->n_attr) {
        sm_strbuf_puts(b, " {");
        for (int i = 0; i < n->n_attr; i++) {
            if (i)
                sm_strbuf_puts(b, ", ");
            put_attr(b, &n->attrs[i]);
        }
        sm_strbuf_putc(b, '}');
    }
    if (n->name) {
        sm_strbuf_putc(b, ' ');
        put_name(b, '@', n->name);
    }
    for (int i = 0; i < n->n_blocks; i++) {
        const sm_block *sub = n->blocks[i];
        sm_strbuf_putc(b, ' ');
        put_ident(b, sub->label ? sub->label : "block");
        put_params(b, sub);
        sm_strbuf_puts(b, " {\n");
        put_block(b, sub, depth + 1, max);
        indent_to(b, depth);
        sm_strbuf_putc(b, '}');
    }
    sm_strbuf_putc(b, '\n');
}

/* The statements of blk at the given depth: constants, nodes, return.
 * Constants of more than max values print as a summary; max < 0: every
 * value (the text then parses back to the same graph). */
static void put_block(sm_strbuf *b, const sm_block *blk, int depth, int64_t max)
{
    for (int i = 0; i < blk->n_consts && !b->failed; i++) {
        const sm_value *v = blk->consts[i];
        indent_to(b, depth);
        put_name(b, '%', v->name);
        sm_strbuf_puts(b, ": ");
        put_tensor_type(b, v->data);
        sm_strbuf_puts(b, " = const ");
        if (max >= 0 && v->data->numel > max)
            put_summary(b, v->data);
        else
            put_literal(b, v->data);
        sm_strbuf_putc(b, '\n');
    }
    for (int i = 0; i < blk->n_nodes && !b->failed; i++)
        put_node(b, blk->nodes[i], depth, max);
    indent_to(b, depth);
    sm_strbuf_puts(b, "return");
    for (int i = 0; i < blk->n_ret; i++) {
        sm_strbuf_puts(b, i ? ", " : " ");
        put_name(b, '%', blk->ret[i]->name);
    }
    sm_strbuf_putc(b, '\n');
}

/* The graph's text, constants summarized above max values (< 0: none). */
static smelt_status print_graph(smelt_ctx_t *ctx, const sm_graph *g,
                                int64_t max, char **out)
{
    sm_strbuf b;
    sm_strbuf_init(&b);
    sm_strbuf_puts(&b, "graph ");
    put_ident(&b, g->name ? g->name : "main");
    put_params(&b, g->top);
    sm_strbuf_puts(&b, " {\n");
    put_block(&b, g->top, 1, max);
    sm_strbuf_puts(&b, "}\n");
    return sm_strbuf_take(&b, ctx, out);
}

smelt_status sm_ir_print(smelt_ctx_t *ctx, const sm_graph *g, char **out)
{
    return print_graph(ctx, g, -1, out);
}

smelt_status smelt_graph_print(smelt_ctx_t *ctx, const smelt_graph_t *g,
                               char **out)
{
    if (!g || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_print: NULL argument");
    return sm_ir_print(ctx, g, out);
}

smelt_status smelt_graph_print_summary(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                       int64_t max_values, char **out)
{
    if (!g || !out || max_values < 0)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_print_summary: NULL argument or negative "
                      "max_values");
    return print_graph(ctx, g, max_values, out);
}
