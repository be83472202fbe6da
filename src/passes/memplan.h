/*
 * memplan.h - liveness over the top block and the memory plan built from
 * it (memplan.c), and the in-place rule (inplace.c) that both the inplace
 * pass and the plan apply.
 *
 * Positions are indices into the top block's node list. A value defined
 * by the node at position j lives from j to its last use: the last node
 * that reads it (also from inside that node's sub-blocks), or n_nodes
 * when the graph returns it. Graph inputs and constants are owned by the
 * caller and the graph, so the plan covers node outputs only.
 */
#ifndef SM_MEMPLAN_H
#define SM_MEMPLAN_H

#include <stdint.h>

#include "ir/ir.h"

/* Buffers start at multiples of this many bytes. */
#define SM_MEM_ALIGN 64

typedef struct sm_mem_entry {
    const sm_value *v;
    int64_t size;   /* bytes, rounded up to SM_MEM_ALIGN */
    int64_t offset; /* into the arena */
    int first;      /* position of the defining node */
    int last;       /* position of the last use (n_nodes: a graph output) */
    int buffer;     /* entries with the same buffer share memory in place */
    int inplace;    /* reuses the buffer of an input that dies here */
} sm_mem_entry;

typedef struct sm_memplan {
    int n;
    sm_mem_entry *e;     /* in definition order */
    int n_nodes;         /* top-block nodes */
    int64_t peak_bytes;  /* arena size: the highest offset + size */
    int64_t total_bytes; /* every entry's size summed: no sharing at all */
    int inplace;         /* entries reusing an input's buffer */
    int unplanned;       /* node outputs of unknown size, left out */
} sm_memplan;

/* last[value id] = position of the last use of each top-block value (-1:
 * unused), n_nodes for graph outputs. *last is sm_malloc'd, g->n_values
 * entries. */
smelt_status sm_liveness_last_use(smelt_ctx_t *ctx, const sm_graph *g,
                                  int **last);

/* Whether the node at position j of the top block may write its output
 * into the buffer of input i: it is elementwise (or a FusedElementwise)
 * with one output, the input is a top-block node output that dies at j
 * (not a graph input, constant or output), and both have the same known
 * dtype and shape. */
int sm_inplace_ok(const sm_graph *g, const sm_node *n, int j, int i,
                  const int *last);

/* The plan: liveness, in-place reuse where nodes are marked (and the rule
 * still holds), then greedy best-fit offsets over buffers by decreasing
 * size, so buffers whose lifetimes overlap never overlap in memory. */
smelt_status sm_memplan_build(smelt_ctx_t *ctx, const sm_graph *g,
                              sm_memplan *out);
void sm_memplan_free(sm_memplan *p);
/* The plan as text, one line per value: name, bytes, offset, first and
 * last use. *out is released with sm_free. */
smelt_status sm_memplan_text(smelt_ctx_t *ctx, const sm_memplan *p, char **out);

#endif
