/*
 * rewrite_impl.h - the rewriter's internals, shared by rewrite.c (uses,
 * node lists, edits) and clone.c (names, copies). Nothing else includes
 * this.
 */
#ifndef SM_REWRITE_IMPL_H
#define SM_REWRITE_IMPL_H

#include "core/arena.h"
#include "core/strmap.h"
#include "ir/rewrite.h"

/* One slot holding a value: input `index` of `node`, or return `index` of
 * `block` when node is NULL. Linked into the list of the value it holds. */
typedef struct sm_use {
    struct sm_use *prev, *next;
    sm_value *v; /* NULL: the slot is empty (absent input) */
    sm_node *node;
    sm_block *block;
    int index;
} sm_use;

enum { SM_RW_REMOVED = 1, SM_RW_DEAD = 1 };

typedef struct sm_rw_nodeinfo {
    sm_node *prev, *next; /* neighbours in the owner block's list */
    sm_use *in;           /* n_in records */
    unsigned char flags;  /* SM_RW_REMOVED */
} sm_rw_nodeinfo;

typedef struct sm_rw_valinfo {
    sm_use *head;
    int n;
    unsigned char flags; /* SM_RW_DEAD: a dropped constant */
} sm_rw_valinfo;

typedef struct sm_rw_block {
    sm_block *b;
    sm_node *head, *tail;
    sm_use *ret; /* ret_cap records, the first b->n_ret in use */
    int ret_cap;
} sm_rw_block;

struct sm_rw {
    smelt_ctx_t *ctx;
    sm_graph *g;
    sm_arena arena;
    sm_rw_nodeinfo *nodes; /* by node id */
    int node_cap;
    sm_rw_valinfo *vals; /* by value id */
    int value_cap;
    sm_rw_block **bslots; /* open addressing, keyed by block */
    size_t bcap, bn;
    sm_strmap names; /* every value name, once names_built */
    int names_built;
    unsigned uniq; /* suffix counter for fresh names */
    int removed;
    int no_commit;
};

sm_rw_block *sm_rw_binfo(const sm_rw *rw, const sm_block *b);
smelt_status sm_rw_sync(sm_rw *rw);
smelt_status sm_rw_register_node(sm_rw *rw, sm_node *n);

#endif
