/*
 * cse.c - the `cse` pass: common subexpression elimination.
 *
 * Two nodes are the same computation when they have the same op, the same
 * inputs (for commutative ops, in any order: operands are compared sorted
 * by value id) and equal attributes (deep: lists, strings and tensors by
 * content, schema defaults filled in), and own no sub-blocks. Two
 * constants are the same when dtype, shape and bytes agree. The later one
 * is replaced by the earlier.
 *
 * A MaxPool without its Indices output is the same computation as one
 * with them (the maxima do not depend on whether the indices are
 * written): the pair merges into one node with both outputs. This is the
 * pair a training step holds, the forward MaxPool and the second one
 * MaxPool's gradient rule adds for the indices (autograd/rules_pool.c):
 * merged, the window runs once per step instead of twice.
 *
 * Scoping follows the blocks: a hash table of what is visible is extended
 * while a block is walked and cut back when it ends, so a node in a
 * sub-block can reuse a node or constant of an enclosing block but never
 * the other way round.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

#define MAX_SORT 64

typedef struct entry {
    uint64_t h;
    sm_node *n;  /* a node, or */
    sm_value *c; /* a constant */
    int next;    /* next entry of the bucket, -1 at the end */
} entry;

typedef struct cse {
    sm_pass_ctx *pc;
    sm_rw *rw;
    int *buckets;
    size_t mask;
    entry *e;
    int ne, cap;
    int nodes, consts;
} cse;

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = mix(h, w);
    }
    for (; i < n; i++)
        h = mix(h, s[i]);
    return h;
}

static uint64_t hash_tensor(uint64_t h, const sm_tensor *t)
{
    h = mix(mix(h, (uint64_t)t->dtype), (uint64_t)t->ndim);
    h = hash_bytes(h, t->dims, sizeof(int64_t) * (size_t)t->ndim);
    return hash_bytes(h, t->data, t->nbytes);
}

static int commutative(sm_op op)
{
    return op == SM_OP_Add || op == SM_OP_Mul || op == SM_OP_Min ||
           op == SM_OP_Max || op == SM_OP_Sum || op == SM_OP_Equal ||
           op == SM_OP_And || op == SM_OP_Or;
}

static int by_id(const void *a, const void *b)
{
    const sm_value *x = *(sm_value *const *)a, *y = *(sm_value *const *)b;
    int ix = x ? x->id : -1, iy = y ? y->id : -1;
    return (ix > iy) - (ix < iy);
}

/* n's inputs, sorted by id when the op is commutative. */
static const sm_value *const *operands(const sm_node *n, sm_value **buf)
{
    if (!commutative(n->op))
        return (const sm_value *const *)n->in;
    memcpy(buf, n->in, sizeof(sm_value *) * (size_t)n->n_in);
    qsort(buf, (size_t)n->n_in, sizeof *buf, by_id);
    return (const sm_value *const *)buf;
}

static uint64_t hash_attr(uint64_t h, const sm_attr *a)
{
    h = mix(h, (uint64_t)a->kind + 1);
    switch (a->kind) {
    case SM_ATTR_INT: return mix(h, (uint64_t)a->v.i);
    case SM_ATTR_FLOAT: return hash_bytes(h, &a->v.f, sizeof a->v.f);
    case SM_ATTR_STRING: return hash_bytes(h, a->v.s, strlen(a->v.s));
    case SM_ATTR_INTS:
        return hash_bytes(h, a->v.ints, sizeof(int64_t) * (size_t)a->n);
    case SM_ATTR_FLOATS:
        return hash_bytes(h, a->v.floats, sizeof(double) * (size_t)a->n);
    case SM_ATTR_STRINGS:
        for (int i = 0; i < a->n; i++)
            h = hash_bytes(mix(h, 1), a->v.strs[i], strlen(a->v.strs[i]));
        return h;
    case SM_ATTR_TENSOR: return hash_tensor(h, a->v.t);
    default: return h;
    }
}

static int attr_equal(const sm_attr *a, const sm_attr *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case SM_ATTR_INT: return a->v.i == b->v.i;
    case SM_ATTR_FLOAT: return !memcmp(&a->v.f, &b->v.f, sizeof a->v.f);
    case SM_ATTR_STRING: return !strcmp(a->v.s, b->v.s);
    case SM_ATTR_INTS:
        return a->n == b->n &&
               !memcmp(a->v.ints, b->v.ints, sizeof(int64_t) * (size_t)a->n);
    case SM_ATTR_FLOATS:
        return a->n == b->n &&
               !memcmp(a->v.floats, b->v.floats, sizeof(double) * (size_t)a->n);
    case SM_ATTR_STRINGS:
        if (a->n != b->n)
            return 0;
        for (int i = 0; i < a->n; i++)
            if (strcmp(a->v.strs[i], b->v.strs[i]))
                return 0;
        return 1;
    case SM_ATTR_TENSOR: return sm_tensor_equal(a->v.t, b->v.t);
    default: return 0;
    }
}

/* Ops whose later outputs are optional extras that leave the earlier ones
 * unchanged: nodes of them that differ only in how many outputs they have
 * are one computation (the file's comment). */
static int outputs_optional(sm_op op)
{
    return op == SM_OP_MaxPool;
}

/* Attributes as the kernel sees them: the node's, else the default. */
static uint64_t hash_node(const sm_node *n, sm_value **buf)
{
    uint64_t nout = outputs_optional(n->op) ? 0 : (uint64_t)n->n_out;
    uint64_t h = mix(mix(mix(0, (uint64_t)n->op), (uint64_t)n->n_in), nout);
    const sm_value *const *in = operands(n, buf);
    for (int i = 0; i < n->n_in; i++)
        h = mix(h, in[i] ? (uint64_t)in[i]->id + 1 : 0);
    sm_attrs a = sm_node_attrs(n);
    for (int i = 0; i < a.n_spec; i++) {
        const sm_attr *x = sm_attrs_find(&a, a.spec[i].name);
        if (x)
            h = hash_attr(h, x);
    }
    return h;
}

static int node_equal(const sm_node *x, const sm_node *y, sm_value **bx,
                      sm_value **by)
{
    if (x->op != y->op || x->n_in != y->n_in ||
        (x->n_out != y->n_out && !outputs_optional(x->op)) || x->n_blocks ||
        y->n_blocks)
        return 0;
    const sm_value *const *ix = operands(x, bx), *const *iy = operands(y, by);
    for (int i = 0; i < x->n_in; i++)
        if (ix[i] != iy[i])
            return 0;
    sm_attrs ax = sm_node_attrs(x), ay = sm_node_attrs(y);
    for (int i = 0; i < ax.n_spec; i++)
        if (!attr_equal(sm_attrs_find(&ax, ax.spec[i].name),
                        sm_attrs_find(&ay, ax.spec[i].name)))
            return 0;
    return 1;
}

static int push(cse *c, uint64_t h, sm_node *n, sm_value *v)
{
    if (c->ne == c->cap) {
        int nc = c->cap ? c->cap * 2 : 256;
        entry *p = sm_realloc(c->e, sizeof *p * (size_t)nc);
        if (!p)
            return 0;
        c->e = p;
        c->cap = nc;
    }
    size_t b = (size_t)h & c->mask;
    c->e[c->ne] = (entry){h, n, v, c->buckets[b]};
    c->buckets[b] = c->ne++;
    return 1;
}

/* Drops entries back to `mark` (they are at the heads of their chains). */
static void pop_to(cse *c, int mark)
{
    while (c->ne > mark) {
        entry *e = &c->e[--c->ne];
        c->buckets[(size_t)e->h & c->mask] = e->next;
    }
}

static smelt_status visit_const(cse *c, sm_value *v)
{
    uint64_t h = hash_tensor(7, v->data);
    for (int i = c->buckets[(size_t)h & c->mask]; i >= 0; i = c->e[i].next) {
        sm_value *o = c->e[i].c;
        if (c->e[i].h != h || !o || !sm_tensor_equal(o->data, v->data))
            continue;
        if (!sm_rw_can_forward(c->rw, v, o))
            break;
        SM_TRY(sm_rw_forward(c->rw, v, o));
        sm_rw_drop_const(c->rw, v);
        c->consts++;
        return SMELT_OK;
    }
    return push(c, h, NULL, v) ? SMELT_OK : sm_err_nomem(c->pc->ctx);
}

/* Gives o the outputs n has beyond o's own (outputs_optional), typed by
 * o's shape function, so that n's can forward to them. */
static smelt_status add_outputs(cse *c, sm_node *o, const sm_node *n)
{
    if (o->n_out >= n->n_out)
        return SMELT_OK;
    while (o->n_out < n->n_out)
        if (!sm_rw_add_output(c->rw, o, n->out[o->n_out]->name))
            return sm_err_nomem(c->pc->ctx);
    return sm_rw_infer_node(c->rw, o);
}

static smelt_status visit_node(cse *c, sm_node *n)
{
    if (n->n_blocks || n->n_out == 0 || n->n_in > MAX_SORT)
        return SMELT_OK;
    sm_value *bx[MAX_SORT], *by[MAX_SORT];
    uint64_t h = hash_node(n, bx);
    for (int i = c->buckets[(size_t)h & c->mask]; i >= 0; i = c->e[i].next) {
        sm_node *o = c->e[i].n;
        if (c->e[i].h != h || !o || !node_equal(o, n, bx, by))
            continue;
        int ok = 1;
        for (int j = 0; j < n->n_out && j < o->n_out && ok; j++)
            ok = sm_rw_can_forward(c->rw, n->out[j], o->out[j]);
        if (!ok)
            break;
        SM_TRY(add_outputs(c, o, n));
        for (int j = 0; j < n->n_out; j++)
            SM_TRY(sm_rw_forward(c->rw, n->out[j], o->out[j]));
        sm_rw_remove_node(c->rw, n);
        c->nodes++;
        return SMELT_OK;
    }
    return push(c, h, n, NULL) ? SMELT_OK : sm_err_nomem(c->pc->ctx);
}

static smelt_status cse_block(cse *c, sm_block *b)
{
    int mark = c->ne;
    smelt_status st = SMELT_OK;
    int n_consts = b->n_consts; /* merged ones stay listed until commit */
    for (int i = 0; i < n_consts && st == SMELT_OK; i++)
        if (b->consts[i]->block == b && b->consts[i]->data)
            st = visit_const(c, b->consts[i]);
    sm_node *n = sm_rw_first(c->rw, b);
    while (n && st == SMELT_OK) {
        sm_node *next = sm_rw_next(c->rw, n);
        for (int i = 0; i < n->n_blocks && st == SMELT_OK; i++)
            st = cse_block(c, n->blocks[i]);
        if (st == SMELT_OK)
            st = visit_node(c, n);
        n = next;
    }
    pop_to(c, mark);
    return st;
}

static int count_items(const sm_block *b)
{
    int k = b->n_nodes + b->n_consts;
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_blocks; j++)
            k += count_items(b->nodes[i]->blocks[j]);
    return k;
}

smelt_status sm_pass_cse(sm_pass_ctx *pc, sm_graph *g)
{
    cse c = {pc, NULL, NULL, 0, NULL, 0, 0, 0, 0};
    size_t nb = 64;
    while (nb < (size_t)count_items(g->top) * 2)
        nb *= 2;
    c.buckets = sm_malloc(nb * sizeof *c.buckets);
    if (!c.buckets)
        return sm_err_nomem(pc->ctx);
    memset(c.buckets, 0xff, nb * sizeof *c.buckets); /* all -1 */
    c.mask = nb - 1;
    smelt_status st = sm_rw_new(pc->ctx, g, &c.rw);
    if (st == SMELT_OK)
        st = cse_block(&c, g->top);
    if (c.rw) {
        pc->stats->removed = sm_rw_removed(c.rw);
        sm_rw_free(c.rw);
    }
    pc->stats->changed = c.nodes || c.consts;
    if (c.nodes || c.consts)
        sm_pass_log(pc, "merged %d node(s) and %d constant(s)", c.nodes,
                    c.consts);
    sm_free(c.buckets);
    sm_free(c.e);
    return st;
}
