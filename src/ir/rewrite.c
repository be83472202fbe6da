/*
 * rewrite.c - the use index and node lists behind graph rewrites.
 *
 * Every slot that can hold a value - input i of a node, return i of a
 * block - has a use record, linked into the list of the value it holds.
 * Node records are reached by node id, return records through a small
 * hash map from block to per-block information, which also holds the
 * block's node list (prev/next by node id). Records live in the
 * rewriter's arena and die with it.
 *
 * Names, cloning and graph copies are in clone.c.
 */
#include "ir/rewrite.h"

#include <string.h>

#include "core/alloc.h"
#include "ir/infer.h"
#include "ir/rewrite_impl.h"

/* ---- block map ----------------------------------------------------------- */

static size_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return (size_t)(x ^ (x >> 32));
}

sm_rw_block *sm_rw_binfo(const sm_rw *rw, const sm_block *b)
{
    if (!rw->bcap)
        return NULL;
    size_t mask = rw->bcap - 1;
    for (size_t i = ptr_hash(b) & mask;; i = (i + 1) & mask) {
        sm_rw_block *bi = rw->bslots[i];
        if (!bi || bi->b == b)
            return bi;
    }
}

static int bmap_put(sm_rw *rw, sm_rw_block *bi)
{
    if ((rw->bn + 1) * 2 > rw->bcap) {
        size_t nc = rw->bcap ? rw->bcap * 2 : 64;
        sm_rw_block **ns = sm_calloc(nc, sizeof *ns);
        if (!ns)
            return 0;
        for (size_t i = 0; i < rw->bcap; i++) {
            sm_rw_block *x = rw->bslots[i];
            if (!x)
                continue;
            size_t j = ptr_hash(x->b) & (nc - 1);
            while (ns[j])
                j = (j + 1) & (nc - 1);
            ns[j] = x;
        }
        sm_free(rw->bslots);
        rw->bslots = ns;
        rw->bcap = nc;
    }
    size_t mask = rw->bcap - 1, i = ptr_hash(bi->b) & mask;
    while (rw->bslots[i])
        i = (i + 1) & mask;
    rw->bslots[i] = bi;
    rw->bn++;
    return 1;
}

/* ---- per-id tables ------------------------------------------------------- */

/* Grows the node and value tables to cover every id the graph has made. */
smelt_status sm_rw_sync(sm_rw *rw)
{
    sm_graph *g = rw->g;
    if (g->n_nodes_all > rw->node_cap) {
        int nc = rw->node_cap ? rw->node_cap : 64;
        while (nc < g->n_nodes_all)
            nc *= 2;
        sm_rw_nodeinfo *p = sm_realloc(rw->nodes, sizeof *p * (size_t)nc);
        if (!p)
            return sm_err_nomem(rw->ctx);
        memset(p + rw->node_cap, 0, sizeof *p * (size_t)(nc - rw->node_cap));
        rw->nodes = p;
        rw->node_cap = nc;
    }
    if (g->n_values > rw->value_cap) {
        int nc = rw->value_cap ? rw->value_cap : 64;
        while (nc < g->n_values)
            nc *= 2;
        sm_rw_valinfo *p = sm_realloc(rw->vals, sizeof *p * (size_t)nc);
        if (!p)
            return sm_err_nomem(rw->ctx);
        memset(p + rw->value_cap, 0, sizeof *p * (size_t)(nc - rw->value_cap));
        rw->vals = p;
        rw->value_cap = nc;
    }
    return SMELT_OK;
}

/* ---- use records --------------------------------------------------------- */

static void use_link(sm_rw *rw, sm_use *u, sm_value *v)
{
    u->v = v;
    u->prev = u->next = NULL;
    if (!v)
        return;
    sm_rw_valinfo *vi = &rw->vals[v->id];
    u->next = vi->head;
    if (vi->head)
        vi->head->prev = u;
    vi->head = u;
    vi->n++;
}

static void use_unlink(sm_rw *rw, sm_use *u)
{
    if (!u->v)
        return;
    sm_rw_valinfo *vi = &rw->vals[u->v->id];
    if (u->prev)
        u->prev->next = u->next;
    else
        vi->head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    vi->n--;
    u->v = NULL;
    u->prev = u->next = NULL;
}

/* Links records recs[0..n) to the slots of n's inputs. */
static void link_inputs(sm_rw *rw, sm_node *n, sm_use *recs)
{
    for (int i = 0; i < n->n_in; i++) {
        recs[i].node = n;
        recs[i].block = NULL;
        recs[i].index = i;
        use_link(rw, &recs[i], n->in[i]);
    }
}

static void link_rets(sm_rw *rw, sm_rw_block *bi)
{
    for (int i = 0; i < bi->b->n_ret; i++) {
        bi->ret[i].node = NULL;
        bi->ret[i].block = bi->b;
        bi->ret[i].index = i;
        use_link(rw, &bi->ret[i], bi->b->ret[i]);
    }
}

static smelt_status register_block(sm_rw *rw, sm_block *b);

/* Indexes n's input slots and its sub-blocks. */
smelt_status sm_rw_register_node(sm_rw *rw, sm_node *n)
{
    SM_TRY(sm_rw_sync(rw));
    sm_rw_nodeinfo *ni = &rw->nodes[n->id];
    ni->in = n->n_in
                 ? sm_arena_alloc(&rw->arena, sizeof(sm_use) * (size_t)n->n_in)
                 : NULL;
    if (n->n_in && !ni->in)
        return sm_err_nomem(rw->ctx);
    link_inputs(rw, n, ni->in);
    for (int i = 0; i < n->n_blocks; i++)
        SM_TRY(register_block(rw, n->blocks[i]));
    return SMELT_OK;
}

/* Information for b: its node list from b's array, its return records. */
static smelt_status register_block(sm_rw *rw, sm_block *b)
{
    sm_rw_block *bi = sm_arena_alloc(&rw->arena, sizeof *bi);
    int cap = b->n_ret > 4 ? b->n_ret : 4;
    sm_use *ret =
        bi ? sm_arena_alloc(&rw->arena, sizeof(sm_use) * (size_t)cap) : NULL;
    if (!ret)
        return sm_err_nomem(rw->ctx);
    bi->b = b;
    if (!bmap_put(rw, bi))
        return sm_err_nomem(rw->ctx);
    bi->ret = ret;
    bi->ret_cap = cap;
    SM_TRY(sm_rw_sync(rw));
    link_rets(rw, bi);
    for (int i = 0; i < b->n_nodes; i++) {
        sm_node *n = b->nodes[i];
        rw->nodes[n->id].prev = bi->tail;
        rw->nodes[n->id].next = NULL;
        if (bi->tail)
            rw->nodes[bi->tail->id].next = n;
        else
            bi->head = n;
        bi->tail = n;
        SM_TRY(sm_rw_register_node(rw, n));
    }
    return SMELT_OK;
}

smelt_status sm_rw_new(smelt_ctx_t *ctx, sm_graph *g, sm_rw **out)
{
    *out = NULL;
    sm_rw *rw = sm_calloc(1, sizeof *rw);
    if (!rw)
        return sm_err_nomem(ctx);
    rw->ctx = ctx;
    rw->g = g;
    sm_arena_init(&rw->arena);
    sm_strmap_init(&rw->names);
    smelt_status st = register_block(rw, g->top);
    if (st != SMELT_OK) {
        rw->no_commit = 1;
        sm_rw_free(rw);
        return st;
    }
    *out = rw;
    return SMELT_OK;
}

/* Writes b's node list into its array (which always has room: every node
 * of the list was appended to it at some point) and drops constants that
 * died or moved away. */
static void commit_block(sm_rw *rw, sm_rw_block *bi)
{
    sm_block *b = bi->b;
    int k = 0;
    for (sm_node *n = bi->head; n; n = rw->nodes[n->id].next) {
        SM_ASSERT(k < b->n_nodes);
        b->nodes[k++] = n;
    }
    b->n_nodes = k;
    k = 0;
    for (int i = 0; i < b->n_consts; i++) {
        sm_value *c = b->consts[i];
        /* A constant added after the tables last grew (their growth failed
         * for lack of memory) was never dropped: it stays. */
        if (c->block == b &&
            (c->id >= rw->value_cap || !(rw->vals[c->id].flags & SM_RW_DEAD)))
            b->consts[k++] = c;
    }
    b->n_consts = k;
}

void sm_rw_free(sm_rw *rw)
{
    if (!rw)
        return;
    for (size_t i = 0; i < rw->bcap && !rw->no_commit; i++)
        if (rw->bslots[i])
            commit_block(rw, rw->bslots[i]);
    sm_free(rw->bslots);
    sm_free(rw->nodes);
    sm_free(rw->vals);
    sm_strmap_free(&rw->names);
    sm_arena_free(&rw->arena);
    sm_free(rw);
}

int sm_rw_removed(const sm_rw *rw)
{
    return rw->removed;
}

/* ---- walking ------------------------------------------------------------- */

sm_node *sm_rw_first(sm_rw *rw, const sm_block *b)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    return bi ? bi->head : NULL;
}

sm_node *sm_rw_last(sm_rw *rw, const sm_block *b)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    return bi ? bi->tail : NULL;
}

sm_node *sm_rw_next(sm_rw *rw, const sm_node *n)
{
    return rw->nodes[n->id].next;
}

sm_node *sm_rw_prev(sm_rw *rw, const sm_node *n)
{
    return rw->nodes[n->id].prev;
}

int sm_rw_is_removed(const sm_rw *rw, const sm_node *n)
{
    return (rw->nodes[n->id].flags & SM_RW_REMOVED) != 0;
}

static void list_unlink(sm_rw *rw, sm_node *n)
{
    sm_rw_block *bi = sm_rw_binfo(rw, n->owner);
    sm_rw_nodeinfo *ni = &rw->nodes[n->id];
    if (ni->prev)
        rw->nodes[ni->prev->id].next = ni->next;
    else
        bi->head = ni->next;
    if (ni->next)
        rw->nodes[ni->next->id].prev = ni->prev;
    else
        bi->tail = ni->prev;
    ni->prev = ni->next = NULL;
}

/* Links n into b's list before `before` (NULL: at the end). */
static void list_insert(sm_rw *rw, sm_block *b, sm_node *n, sm_node *before)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    sm_rw_nodeinfo *ni = &rw->nodes[n->id];
    ni->next = before;
    ni->prev = before ? rw->nodes[before->id].prev : bi->tail;
    if (ni->prev)
        rw->nodes[ni->prev->id].next = n;
    else
        bi->head = n;
    if (before)
        rw->nodes[before->id].prev = n;
    else
        bi->tail = n;
}

/* ---- uses ---------------------------------------------------------------- */

int sm_rw_uses(const sm_rw *rw, const sm_value *v)
{
    return v->id < rw->value_cap ? rw->vals[v->id].n : 0;
}

int sm_rw_is_output(const sm_rw *rw, const sm_value *v)
{
    if (v->id >= rw->value_cap)
        return 0;
    for (const sm_use *u = rw->vals[v->id].head; u; u = u->next)
        if (!u->node && u->block == rw->g->top)
            return 1;
    return 0;
}

sm_node *sm_rw_single_user(const sm_rw *rw, const sm_value *v)
{
    if (sm_rw_uses(rw, v) != 1)
        return NULL;
    return rw->vals[v->id].head->node;
}

/* Points the slot of record u at v. */
static void slot_set(sm_use *u, sm_value *v)
{
    if (u->node)
        u->node->in[u->index] = v;
    else
        u->block->ret[u->index] = v;
}

void sm_rw_replace_uses(sm_rw *rw, sm_value *old_v, sm_value *new_v)
{
    if (old_v == new_v || old_v->id >= rw->value_cap)
        return;
    sm_use *u = rw->vals[old_v->id].head;
    while (u) {
        sm_use *next = u->next;
        use_unlink(rw, u);
        slot_set(u, new_v);
        use_link(rw, u, new_v);
        u = next;
    }
}

/* Whether x may take over the name of a graph output. */
static int can_rename(const sm_rw *rw, const sm_value *x)
{
    return x->def && x->block == rw->g->top && !sm_rw_is_output(rw, x);
}

int sm_rw_can_forward(const sm_rw *rw, const sm_value *y, const sm_value *x)
{
    return !sm_rw_is_output(rw, y) || can_rename(rw, x);
}

smelt_status sm_rw_forward(sm_rw *rw, sm_value *y, sm_value *x)
{
    if (!sm_rw_is_output(rw, y)) {
        sm_rw_replace_uses(rw, y, x);
        return SMELT_OK;
    }
    /* y, about to die, gives its name away and takes a fresh one, so
     * that no two values of the graph share a name (sm_graph_find_value
     * stays unambiguous) */
    const char *name = y->name, *fresh = sm_rw_unique_name(rw, y->name);
    if (!fresh)
        return SMELT_ERR_NOMEM;
    if (can_rename(rw, x)) {
        x->name = name;
        y->name = fresh;
        sm_rw_replace_uses(rw, y, x);
        return SMELT_OK;
    }
    /* The output keeps its name through an Identity placed last. */
    sm_block *top = rw->g->top;
    sm_node *id = sm_node_new(top, SM_OP_Identity, NULL, 1, &x, 1, &name);
    if (!id || sm_rw_sync(rw) != SMELT_OK)
        return sm_err_nomem(rw->ctx);
    y->name = fresh;
    SM_TRY(sm_rw_register_node(rw, id));
    list_insert(rw, top, id, NULL);
    id->out[0]->type = x->type;
    sm_use *u = rw->vals[y->id].head;
    while (u) {
        sm_use *next = u->next;
        sm_value *to = (!u->node && u->block == top) ? id->out[0] : x;
        use_unlink(rw, u);
        slot_set(u, to);
        use_link(rw, u, to);
        u = next;
    }
    return SMELT_OK;
}

/* ---- editing ------------------------------------------------------------- */

smelt_status sm_rw_set_input(sm_rw *rw, sm_node *n, int i, sm_value *v)
{
    SM_ASSERT(i >= 0 && i < n->n_in);
    sm_use *u = &rw->nodes[n->id].in[i];
    use_unlink(rw, u);
    n->in[i] = v;
    use_link(rw, u, v);
    return SMELT_OK;
}

smelt_status sm_rw_remove_input(sm_rw *rw, sm_node *n, int i)
{
    SM_ASSERT(i >= 0 && i < n->n_in);
    sm_use *recs = rw->nodes[n->id].in;
    for (int j = 0; j < n->n_in; j++)
        use_unlink(rw, &recs[j]);
    memmove(&n->in[i], &n->in[i + 1],
            sizeof(sm_value *) * (size_t)(n->n_in - i - 1));
    n->n_in--;
    link_inputs(rw, n, recs);
    return SMELT_OK;
}

void sm_rw_remove_output(sm_rw *rw, sm_node *n, int i)
{
    (void)rw; /* only the assertion reads it */
    SM_ASSERT(i >= 0 && i < n->n_out && sm_rw_uses(rw, n->out[i]) == 0);
    memmove(&n->out[i], &n->out[i + 1],
            sizeof(sm_value *) * (size_t)(n->n_out - i - 1));
    n->n_out--;
    for (int j = i; j < n->n_out; j++)
        n->out[j]->def_index = j;
}

sm_value *sm_rw_add_output(sm_rw *rw, sm_node *n, const char *name)
{
    const char *nm = sm_rw_unique_name(rw, name ? name : "t");
    sm_value *v = nm ? sm_node_add_output(n, nm) : NULL;
    if (!v || sm_rw_sync(rw) != SMELT_OK) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    return v;
}

smelt_status sm_rw_set_ret(sm_rw *rw, sm_block *b, int i, sm_value *v)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    SM_ASSERT(bi && i >= 0 && i < b->n_ret);
    use_unlink(rw, &bi->ret[i]);
    b->ret[i] = v;
    use_link(rw, &bi->ret[i], v);
    return SMELT_OK;
}

smelt_status sm_rw_remove_ret(sm_rw *rw, sm_block *b, int i)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    SM_ASSERT(bi && i >= 0 && i < b->n_ret);
    for (int j = 0; j < b->n_ret; j++)
        use_unlink(rw, &bi->ret[j]);
    memmove(&b->ret[i], &b->ret[i + 1],
            sizeof(sm_value *) * (size_t)(b->n_ret - i - 1));
    b->n_ret--;
    link_rets(rw, bi);
    return SMELT_OK;
}

smelt_status sm_rw_add_ret(sm_rw *rw, sm_block *b, sm_value *v)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    SM_ASSERT(bi);
    if (b->n_ret + 1 > bi->ret_cap) {
        int nc = bi->ret_cap * 2;
        sm_use *nr = sm_arena_alloc(&rw->arena, sizeof(sm_use) * (size_t)nc);
        if (!nr)
            return sm_err_nomem(rw->ctx);
        for (int j = 0; j < b->n_ret; j++)
            use_unlink(rw, &bi->ret[j]);
        bi->ret = nr;
        bi->ret_cap = nc;
        link_rets(rw, bi);
    }
    if (!sm_block_add_return(b, v))
        return sm_err_nomem(rw->ctx);
    int i = b->n_ret - 1;
    bi->ret[i].node = NULL;
    bi->ret[i].block = b;
    bi->ret[i].index = i;
    use_link(rw, &bi->ret[i], v);
    return SMELT_OK;
}

void sm_rw_remove_param(sm_rw *rw, sm_block *b, int i)
{
    SM_ASSERT(i >= 0 && i < b->n_params && sm_rw_uses(rw, b->params[i]) == 0);
    (void)rw;
    memmove(&b->params[i], &b->params[i + 1],
            sizeof(sm_value *) * (size_t)(b->n_params - i - 1));
    b->n_params--;
}

sm_value *sm_rw_add_param(sm_rw *rw, sm_block *b, const char *name,
                          const sm_type *t)
{
    const char *nm = sm_rw_unique_name(rw, name ? name : "p");
    sm_value *v = nm ? sm_block_add_param(b, nm, t) : NULL;
    if (!v || sm_rw_sync(rw) != SMELT_OK) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    return v;
}

sm_block *sm_rw_block_new(sm_rw *rw, sm_node *n, const char *label)
{
    sm_block *b = sm_block_new(rw->g, label, n);
    if (!b || !sm_node_add_block(n, b) || register_block(rw, b) != SMELT_OK) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    return b;
}

sm_node *sm_rw_node_new(sm_rw *rw, sm_block *b, sm_node *before, sm_op op,
                        const char *name, int n_in, sm_value *const *in,
                        int n_out, const char *const *out_names)
{
    const char *stack_names[8] = {0};
    const char **names = stack_names;
    if (n_out > 8 && !(names = sm_calloc((size_t)n_out, sizeof *names))) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    sm_node *n = NULL;
    int ok = 1;
    for (int i = 0; i < n_out && ok; i++) {
        const char *base = out_names && out_names[i] ? out_names[i] : "t";
        ok = (names[i] = sm_rw_unique_name(rw, base)) != NULL;
    }
    if (ok)
        n = sm_node_new(b, op, name, n_in, in, n_out, names);
    if (names != stack_names)
        sm_free(names);
    if (!n || sm_rw_register_node(rw, n) != SMELT_OK) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    list_insert(rw, b, n, before);
    return n;
}

smelt_status sm_rw_infer_node(sm_rw *rw, sm_node *n)
{
    sm_type stack_out[8];
    sm_type *out = stack_out;
    if (n->n_out > 8 && !(out = sm_calloc((size_t)n->n_out, sizeof *out)))
        return sm_err_nomem(rw->ctx);
    smelt_status st = sm_node_shape(rw->ctx, n, NULL, out);
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++)
        if (sm_type_merge(&n->out[i]->type, &out[i]))
            st = sm_err(rw->ctx, SMELT_ERR_TYPE,
                        "%s: inferred type of output %d contradicts its "
                        "declared type",
                        sm_op_info_get(n->op)->name, i);
    if (out != stack_out)
        sm_free(out);
    return st;
}

static void kill_block(sm_rw *rw, sm_block *b);

/* Drops n's uses and marks it (and its sub-blocks' contents) removed. */
static void kill_node(sm_rw *rw, sm_node *n)
{
    sm_rw_nodeinfo *ni = &rw->nodes[n->id];
    for (int i = 0; i < n->n_in; i++)
        use_unlink(rw, &ni->in[i]);
    ni->flags |= SM_RW_REMOVED;
    rw->removed++;
    for (int i = 0; i < n->n_blocks; i++)
        kill_block(rw, n->blocks[i]);
}

static void kill_block(sm_rw *rw, sm_block *b)
{
    sm_rw_block *bi = sm_rw_binfo(rw, b);
    if (!bi) /* only when registering it ran out of memory: nothing of it
                is indexed */
        return;
    for (int i = 0; i < b->n_ret; i++)
        use_unlink(rw, &bi->ret[i]);
    for (sm_node *n = bi->head; n; n = rw->nodes[n->id].next)
        kill_node(rw, n);
    for (int i = 0; i < b->n_consts; i++) {
        sm_value *c = b->consts[i];
        if (c->block == b) {
            sm_tensor_free(c->data);
            c->data = NULL;
            rw->vals[c->id].flags |= SM_RW_DEAD;
        }
    }
}

void sm_rw_remove_node(sm_rw *rw, sm_node *n)
{
    SM_ASSERT(!sm_rw_is_removed(rw, n));
#ifndef NDEBUG
    for (int i = 0; i < n->n_out; i++)
        SM_ASSERT(sm_rw_uses(rw, n->out[i]) == 0 || n->out[i]->def != n);
#endif
    list_unlink(rw, n);
    kill_node(rw, n);
}

int sm_rw_remove_if_dead(sm_rw *rw, sm_node *n)
{
    for (int i = 0; i < n->n_out; i++)
        if (sm_rw_uses(rw, n->out[i]))
            return 0;
    sm_rw_remove_node(rw, n);
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i])
            sm_rw_drop_const_if_dead(rw, n->in[i]);
    return 1;
}

/* Appends x to a block pointer array (arr, n, cap). */
static int push_ptr(void ***arr, int *n, int *cap, void *x)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 8;
        void **p = sm_realloc(*arr, sizeof(void *) * (size_t)nc);
        if (!p)
            return 0;
        *arr = p;
        *cap = nc;
    }
    (*arr)[(*n)++] = x;
    return 1;
}

smelt_status sm_rw_move_node(sm_rw *rw, sm_node *n, sm_node *before)
{
    sm_block *dst = before->owner;
    if (!push_ptr((void ***)&dst->nodes, &dst->n_nodes, &dst->cap_nodes, n))
        return sm_err_nomem(rw->ctx);
    list_unlink(rw, n);
    n->owner = dst;
    for (int i = 0; i < n->n_out; i++)
        n->out[i]->block = dst;
    list_insert(rw, dst, n, before);
    return SMELT_OK;
}

/* ---- constants ----------------------------------------------------------- */

sm_value *sm_rw_add_const(sm_rw *rw, sm_block *b, const char *name,
                          sm_tensor *data)
{
    const char *nm = sm_rw_unique_name(rw, name ? name : "c");
    sm_value *v =
        nm ? sm_block_add_const(b, nm, data) : (sm_tensor_free(data), NULL);
    if (!v || sm_rw_sync(rw) != SMELT_OK) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    return v;
}

smelt_status sm_rw_node_to_consts(sm_rw *rw, sm_node *n, sm_tensor **data)
{
    sm_block *b = n->owner;
    int need = b->n_consts + n->n_out;
    if (need > b->cap_consts) {
        sm_value **p = sm_realloc(b->consts, sizeof *p * (size_t)need);
        if (!p) {
            for (int i = 0; i < n->n_out; i++) {
                sm_tensor_free(data[i]);
                data[i] = NULL;
            }
            return sm_err_nomem(rw->ctx);
        }
        b->consts = p;
        b->cap_consts = need;
    }
    list_unlink(rw, n);
    kill_node(rw, n);
    for (int i = 0; i < n->n_out; i++) {
        sm_value *v = n->out[i];
        v->def = NULL;
        v->def_index = 0;
        v->data = data[i];
        data[i] = NULL;
        sm_type_from_tensor(&v->type, v->data);
        b->consts[b->n_consts++] = v;
    }
    return SMELT_OK;
}

void sm_rw_drop_const(sm_rw *rw, sm_value *v)
{
    SM_ASSERT(v->data && !v->def && sm_rw_uses(rw, v) == 0);
    sm_tensor_free(v->data);
    v->data = NULL;
    rw->vals[v->id].flags |= SM_RW_DEAD;
}

int sm_rw_drop_const_if_dead(sm_rw *rw, sm_value *v)
{
    if (!v->data || v->def || sm_rw_uses(rw, v) ||
        (rw->vals[v->id].flags & SM_RW_DEAD))
        return 0;
    sm_rw_drop_const(rw, v);
    return 1;
}

smelt_status sm_rw_move_const(sm_rw *rw, sm_value *v, sm_block *dst)
{
    if (!push_ptr((void ***)&dst->consts, &dst->n_consts, &dst->cap_consts, v))
        return sm_err_nomem(rw->ctx);
    v->block = dst; /* the old block drops it when committed */
    return SMELT_OK;
}

int sm_block_count_nodes(const sm_block *b)
{
    int k = b->n_nodes;
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_blocks; j++)
            k += sm_block_count_nodes(b->nodes[i]->blocks[j]);
    return k;
}

sm_value *sm_rw_lift_const(sm_rw *rw, sm_value *c)
{
    sm_value *p = sm_rw_add_param(rw, rw->g->top, "lifted", &c->type);
    if (!p)
        return NULL;
    /* The input takes the initializer's name; the dropped constant keeps
     * the fresh one. */
    const char *name = c->name;
    c->name = p->name;
    p->name = name;
    sm_rw_replace_uses(rw, c, p);
    sm_rw_drop_const(rw, c);
    return p;
}
