/*
 * memplan.c - the memplan pass: a liveness-based memory plan for the top
 * block's values, so that buffers whose lifetimes do not overlap share
 * memory.
 *
 * Each node output of known size gets a buffer, except that an output of
 * a node the inplace pass marked takes over its dying input's buffer.
 * Buffers are placed greedily, largest first: each goes into the
 * smallest gap between the buffers already placed whose lifetimes
 * overlap its own (best fit), or after the highest of them. The pass
 * reports the arena size (peak_bytes) against the sum of all sizes
 * (total_bytes) and writes the plan to the debug dump.
 */
#include "core/interval_fit.h"
#include "passes/memplan.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "ir/shape_util.h"
#include "passes/pass.h"

/* Every value that b (and its sub-blocks) reads is live at position j. */
static void uses_in_block(const sm_block *b, int j, int *last)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k])
                last[n->in[k]->id] = j;
        for (int k = 0; k < n->n_blocks; k++)
            uses_in_block(n->blocks[k], j, last);
    }
    for (int i = 0; i < b->n_ret; i++)
        last[b->ret[i]->id] = j;
}

smelt_status sm_liveness_last_use(smelt_ctx_t *ctx, const sm_graph *g,
                                  int **out)
{
    int *last = sm_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    if (!last)
        return sm_err_nomem(ctx);
    for (int i = 0; i < g->n_values; i++)
        last[i] = -1;
    const sm_block *top = g->top;
    for (int j = 0; j < top->n_nodes; j++) {
        const sm_node *n = top->nodes[j];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k])
                last[n->in[k]->id] = j;
        for (int k = 0; k < n->n_blocks; k++)
            uses_in_block(n->blocks[k], j, last);
    }
    for (int i = 0; i < top->n_ret; i++)
        last[top->ret[i]->id] = top->n_nodes;
    *out = last;
    return SMELT_OK;
}

typedef sm_interval buffer;

/* The entries: one per top-block node output of known size. */
static smelt_status collect(smelt_ctx_t *ctx, const sm_graph *g,
                            const int *last, sm_memplan *p, int *entry_of)
{
    const sm_block *top = g->top;
    int cap = 0;
    for (int j = 0; j < top->n_nodes; j++)
        cap += top->nodes[j]->n_out;
    p->e = sm_calloc((size_t)cap + 1, sizeof *p->e);
    if (!p->e)
        return sm_err_nomem(ctx);
    for (int j = 0; j < top->n_nodes; j++)
        for (int k = 0; k < top->nodes[j]->n_out; k++) {
            const sm_value *v = top->nodes[j]->out[k];
            if (!sm_type_known(&v->type)) {
                p->unplanned++;
                continue;
            }
            double bytes = sm_type_bytes(&v->type);
            if (bytes > (double)(INT64_MAX / 4))
                return sm_err(ctx, SMELT_ERR_LIMIT,
                              "memplan: %%%s needs %.0f bytes", v->name, bytes);
            sm_mem_entry *e = &p->e[p->n];
            e->v = v;
            e->size = ((int64_t)bytes + SM_MEM_ALIGN - 1) / SM_MEM_ALIGN *
                      SM_MEM_ALIGN;
            e->first = j;
            e->last = last[v->id] > j ? last[v->id] : j;
            e->buffer = p->n;
            entry_of[v->id] = p->n++;
            p->total_bytes += e->size;
        }
    return SMELT_OK;
}

/* Outputs of marked nodes join their dying input's buffer. */
static void share_inplace(const sm_graph *g, const int *last, sm_memplan *p,
                          const int *entry_of)
{
    for (int j = 0; j < g->top->n_nodes; j++) {
        const sm_node *n = g->top->nodes[j];
        int i = n->inplace - 1;
        if (i < 0 || !sm_inplace_ok(g, n, j, i, last))
            continue;
        int eo = entry_of[n->out[0]->id], ei = entry_of[n->in[i]->id];
        if (eo < 0 || ei < 0 || p->e[eo].size != p->e[ei].size)
            continue;
        p->e[eo].buffer = p->e[ei].buffer;
        p->e[eo].inplace = 1;
        p->inplace++;
    }
}

smelt_status sm_memplan_build(smelt_ctx_t *ctx, const sm_graph *g,
                              sm_memplan *p)
{
    memset(p, 0, sizeof *p);
    p->n_nodes = g->top->n_nodes;
    int *last = NULL;
    SM_TRY(sm_liveness_last_use(ctx, g, &last));
    int *entry_of = sm_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    smelt_status st = entry_of ? SMELT_OK : sm_err_nomem(ctx);
    for (int i = 0; entry_of && i < g->n_values; i++)
        entry_of[i] = -1;
    if (st == SMELT_OK)
        st = collect(ctx, g, last, p, entry_of);
    buffer *bufs = NULL;
    buffer **scratch = NULL;
    if (st == SMELT_OK) {
        share_inplace(g, last, p, entry_of);
        bufs = sm_calloc((size_t)p->n + 1, sizeof *bufs);
        scratch = sm_calloc(2 * (size_t)p->n + 1, sizeof *scratch);
        if (!bufs || !scratch)
            st = sm_err_nomem(ctx);
    }
    if (st == SMELT_OK) {
        /* buffer i belongs to entry i; sharers widen their root's life */
        for (int i = 0; i < p->n; i++) {
            bufs[i].first = p->e[i].first;
            bufs[i].last = p->e[i].buffer == i ? p->e[i].last : -1;
            bufs[i].size = p->e[i].buffer == i ? p->e[i].size : 0;
        }
        for (int i = 0; i < p->n; i++) {
            buffer *r = &bufs[p->e[i].buffer];
            if (p->e[i].last > r->last)
                r->last = p->e[i].last;
        }
        p->peak_bytes = sm_interval_fit(bufs, p->n, scratch);
        for (int i = 0; i < p->n; i++)
            p->e[i].offset = bufs[p->e[i].buffer].offset;
    }
    sm_free(scratch);
    sm_free(bufs);
    sm_free(entry_of);
    sm_free(last);
    if (st != SMELT_OK)
        sm_memplan_free(p);
    return st;
}

void sm_memplan_free(sm_memplan *p)
{
    sm_free(p->e);
    memset(p, 0, sizeof *p);
}

smelt_status sm_memplan_text(smelt_ctx_t *ctx, const sm_memplan *p, char **out)
{
    sm_strbuf b;
    sm_strbuf_init(&b);
    sm_strbuf_appendf(&b,
                      "# memory plan: %d values, peak %lld bytes, total %lld "
                      "bytes, %d in place, %d of unknown size left out\n"
                      "# positions index the top block's nodes; last = %d: "
                      "a graph output\n",
                      p->n, (long long)p->peak_bytes, (long long)p->total_bytes,
                      p->inplace, p->unplanned, p->n_nodes);
    sm_strbuf_appendf(&b, "%-32s %12s %12s %6s %6s\n", "value", "bytes",
                      "offset", "first", "last");
    for (int i = 0; i < p->n; i++) {
        const sm_mem_entry *e = &p->e[i];
        sm_strbuf_appendf(&b, "%%%-31s %12lld %12lld %6d %6d%s\n", e->v->name,
                          (long long)e->size, (long long)e->offset, e->first,
                          e->last, e->inplace ? "  in place" : "");
    }
    return sm_strbuf_take(&b, ctx, out);
}

smelt_status sm_pass_memplan(sm_pass_ctx *pc, sm_graph *g)
{
    sm_memplan p;
    SM_TRY(sm_memplan_build(pc->ctx, g, &p));
    pc->stats->peak_bytes = p.peak_bytes;
    pc->stats->total_bytes = p.total_bytes;
    sm_pass_log(pc,
                "planned peak %lld bytes for %lld bytes of tensors (%d "
                "values, %d in place)",
                (long long)p.peak_bytes, (long long)p.total_bytes, p.n,
                p.inplace);
    char *text = NULL;
    smelt_status st = SMELT_OK;
    if (pc->dump) {
        st = sm_memplan_text(pc->ctx, &p, &text);
        if (st == SMELT_OK)
            st = sm_pass_dump_file(pc, "plan.txt", text, strlen(text));
    }
    sm_free(text);
    sm_memplan_free(&p);
    return st;
}
