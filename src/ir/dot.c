/*
 * dot.c - Graphviz DOT export of a graph, for looking at it.
 *
 * Op nodes are rounded boxes (op, node name, output types), constants are
 * small grey boxes, graph inputs and outputs are ellipses, and every edge
 * carries the name of the value it moves. Sub-blocks of If and Loop are
 * clusters; their returns meet in a "return" point joined to the owner.
 * Identifiers in the DOT text are derived from ids (n<node>, v<value>), so
 * only labels need escaping.
 */
#include "ir/text.h"

#include <string.h>

#include "core/strbuf.h"
#include "ir/lex.h"

/* Label text inside "...": quotes and backslashes escaped, newlines as
 * \n, other control bytes and invalid UTF-8 replaced, so that dot accepts
 * whatever the names hold. */
static void put_esc(sm_strbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c == '"' || c == '\\') {
            sm_strbuf_putc(b, '\\');
            sm_strbuf_putc(b, (char)c);
        } else if (c == '\n') {
            sm_strbuf_puts(b, "\\n");
        } else if (c < 0x20 || c == 0x7f) {
            sm_strbuf_putc(b, ' ');
        } else if (c >= 0x80) {
            size_t k = sm_utf8_len(u + i, n - i);
            if (k)
                sm_strbuf_append(b, s + i, k);
            else
                sm_strbuf_putc(b, '?');
            i += k ? k : 1;
            continue;
        } else {
            sm_strbuf_putc(b, (char)c);
        }
        i++;
    }
}

static void put_type(sm_strbuf *b, const sm_type *t)
{
    char buf[256];
    sm_type_str(t, buf, sizeof buf);
    put_esc(b, buf);
}

static int type_any_known(const sm_type *t)
{
    return t->dtype != SMELT_DTYPE_UNDEFINED || t->ndim != SM_RANK_UNKNOWN;
}

/* The DOT node that produces value v. */
static void put_src(sm_strbuf *b, const sm_value *v)
{
    if (v->def)
        sm_strbuf_appendf(b, "n%d", v->def->id);
    else
        sm_strbuf_appendf(b, "v%d", v->id);
}

static void put_edge_label(sm_strbuf *b, const sm_value *v)
{
    sm_strbuf_puts(b, " [label=\"%");
    put_esc(b, v->name);
    sm_strbuf_puts(b, "\"];\n");
}

static void indent_to(sm_strbuf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        sm_strbuf_puts(b, "  ");
}

/* A parameter or constant as a DOT node. */
static void put_value_node(sm_strbuf *b, const sm_value *v, const char *attrs,
                           int depth)
{
    indent_to(b, depth);
    sm_strbuf_appendf(b, "v%d [%s, label=\"%%", v->id, attrs);
    put_esc(b, v->name);
    if (type_any_known(&v->type)) {
        sm_strbuf_puts(b, "\\n");
        put_type(b, &v->type);
    }
    sm_strbuf_puts(b, "\"];\n");
}

static void put_block(sm_strbuf *b, const sm_block *blk, int depth,
                      int *clusters);

static void put_node(sm_strbuf *b, const sm_node *n, int depth, int *clusters)
{
    indent_to(b, depth);
    sm_strbuf_appendf(b,
                      "n%d [shape=box, style=\"rounded,filled\", "
                      "fillcolor=\"#dde8f8\", label=\"%s",
                      n->id, sm_op_info_get(n->op)->name);
    if (n->name) {
        sm_strbuf_puts(b, "\\n@");
        put_esc(b, n->name);
    }
    for (int i = 0; i < n->n_out; i++)
        if (type_any_known(&n->out[i]->type)) {
            sm_strbuf_puts(b, "\\n");
            put_type(b, &n->out[i]->type);
        }
    sm_strbuf_puts(b, "\"];\n");
    for (int i = 0; i < n->n_in; i++) {
        if (!n->in[i])
            continue;
        indent_to(b, depth);
        put_src(b, n->in[i]);
        sm_strbuf_appendf(b, " -> n%d", n->id);
        put_edge_label(b, n->in[i]);
    }
    for (int i = 0; i < n->n_blocks; i++) {
        const sm_block *sub = n->blocks[i];
        int k = (*clusters)++;
        indent_to(b, depth);
        sm_strbuf_appendf(b, "subgraph cluster_%d {\n", k);
        indent_to(b, depth + 1);
        sm_strbuf_appendf(b, "label=\"%s", sm_op_info_get(n->op)->name);
        if (n->name) {
            sm_strbuf_puts(b, " @");
            put_esc(b, n->name);
        }
        sm_strbuf_puts(b, ": ");
        put_esc(b, sub->label ? sub->label : "block");
        sm_strbuf_puts(b, "\";\n");
        indent_to(b, depth + 1);
        sm_strbuf_puts(b, "style=dashed;\n");
        put_block(b, sub, depth + 1, clusters);
        indent_to(b, depth + 1);
        sm_strbuf_appendf(b, "ret%d [shape=point];\n", k);
        for (int j = 0; j < sub->n_ret; j++) {
            indent_to(b, depth + 1);
            put_src(b, sub->ret[j]);
            sm_strbuf_appendf(b, " -> ret%d", k);
            put_edge_label(b, sub->ret[j]);
        }
        indent_to(b, depth);
        sm_strbuf_puts(b, "}\n");
        indent_to(b, depth);
        sm_strbuf_appendf(b, "ret%d -> n%d [style=dotted];\n", k, n->id);
    }
}

/* Parameters (of sub-blocks), constants and nodes of blk. */
static void put_block(sm_strbuf *b, const sm_block *blk, int depth,
                      int *clusters)
{
    if (blk->parent)
        for (int i = 0; i < blk->n_params; i++)
            put_value_node(b, blk->params[i], "shape=ellipse, style=dashed",
                           depth);
    for (int i = 0; i < blk->n_consts; i++)
        put_value_node(b, blk->consts[i],
                       "shape=box, style=filled, fillcolor=\"#eeeeee\", "
                       "fontsize=8, height=0.2",
                       depth);
    for (int i = 0; i < blk->n_nodes && !b->failed; i++)
        put_node(b, blk->nodes[i], depth, clusters);
}

smelt_status sm_ir_dot(smelt_ctx_t *ctx, const sm_graph *g, char **out)
{
    sm_strbuf b;
    sm_strbuf_init(&b);
    const char *name = g->name ? g->name : "main";
    const sm_block *top = g->top;
    int clusters = 0;
    sm_strbuf_puts(&b, "digraph \"");
    put_esc(&b, name);
    sm_strbuf_puts(&b, "\" {\n  graph [rankdir=TB, fontname=\"Helvetica\", "
                       "labelloc=t, label=\"graph ");
    put_esc(&b, name);
    sm_strbuf_puts(&b, "\"];\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=8];\n");
    for (int i = 0; i < top->n_params; i++)
        put_value_node(&b, top->params[i], "shape=ellipse", 1);
    put_block(&b, top, 1, &clusters);
    for (int i = 0; i < top->n_ret; i++) {
        const sm_value *v = top->ret[i];
        sm_strbuf_appendf(&b, "  out%d [shape=ellipse, style=bold, label=\"%%",
                          i);
        put_esc(&b, v->name);
        if (type_any_known(&v->type)) {
            sm_strbuf_puts(&b, "\\n");
            put_type(&b, &v->type);
        }
        sm_strbuf_puts(&b, "\"];\n  ");
        put_src(&b, v);
        sm_strbuf_appendf(&b, " -> out%d", i);
        put_edge_label(&b, v);
    }
    sm_strbuf_puts(&b, "}\n");
    return sm_strbuf_take(&b, ctx, out);
}

smelt_status smelt_graph_dot(smelt_ctx_t *ctx, const smelt_graph_t *g,
                             char **out)
{
    if (!g || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_dot: NULL argument");
    return sm_ir_dot(ctx, g, out);
}
