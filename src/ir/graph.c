/*
 * graph.c - building graphs: blocks, values, nodes, attributes.
 */
#include "ir/ir.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"

/* Grows a pointer array *arr (count *n, capacity *cap) by one slot. */
static int grow(void ***arr, int *n, int *cap)
{
    if (*n < *cap)
        return 1;
    int nc = *cap ? *cap * 2 : 8;
    void **p = sm_realloc(*arr, sizeof(void *) * (size_t)nc);
    if (!p)
        return 0;
    *arr = p;
    *cap = nc;
    return 1;
}

#define PUSH(arr, n, cap, x)                                                   \
    (grow((void ***)&(arr), &(n), &(cap)) ? ((arr)[(n)++] = (x), 1) : 0)

smelt_status sm_graph_new(smelt_ctx_t *ctx, const char *name, sm_graph **out)
{
    *out = NULL;
    sm_graph *g = sm_calloc(1, sizeof *g);
    if (!g)
        return sm_err_nomem(ctx);
    sm_arena_init(&g->arena);
    g->name = sm_arena_strdup(&g->arena, name ? name : "main");
    g->top = g->name ? sm_block_new(g, NULL, NULL) : NULL;
    if (!g->top) {
        sm_graph_free(g);
        return sm_err_nomem(ctx);
    }
    *out = g;
    return SMELT_OK;
}

void sm_graph_free(sm_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_values; i++)
        sm_tensor_free(g->values[i]->data);
    for (int i = 0; i < g->n_nodes_all; i++) {
        sm_node *n = g->nodes_all[i];
        for (int j = 0; j < n->n_attr; j++)
            if (n->attrs[j].kind == SM_ATTR_TENSOR)
                sm_tensor_free(n->attrs[j].v.t);
        sm_free(n->attrs);
    }
    for (int i = 0; i < g->n_blocks_all; i++) {
        sm_block *b = g->blocks_all[i];
        sm_free(b->params);
        sm_free(b->consts);
        sm_free(b->nodes);
        sm_free(b->ret);
    }
    sm_free(g->values);
    sm_free(g->nodes_all);
    sm_free(g->blocks_all);
    sm_arena_free(&g->arena);
    sm_free(g);
}

void smelt_graph_free(smelt_graph_t *g)
{
    sm_graph_free(g);
}

sm_block *sm_block_new(sm_graph *g, const char *label, sm_node *parent)
{
    sm_block *b = sm_arena_alloc(&g->arena, sizeof *b);
    if (!b)
        return NULL;
    b->graph = g;
    b->parent = parent;
    if (label && !(b->label = sm_arena_strdup(&g->arena, label)))
        return NULL;
    if (!PUSH(g->blocks_all, g->n_blocks_all, g->cap_blocks_all, b))
        return NULL;
    return b;
}

void sm_type_unknown(sm_type *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = SMELT_DTYPE_UNDEFINED;
    t->ndim = SM_RANK_UNKNOWN;
}

/* A new value defined in b, named `name` or "%<id>" when name is NULL. */
static sm_value *value_new(sm_block *b, const char *name)
{
    sm_graph *g = b->graph;
    sm_value *v = sm_arena_alloc(&g->arena, sizeof *v);
    if (!v)
        return NULL;
    v->id = g->n_values;
    v->block = b;
    sm_type_unknown(&v->type);
    char buf[32];
    if (!name) {
        snprintf(buf, sizeof buf, "v%d", v->id);
        name = buf;
    }
    if (!(v->name = sm_arena_strdup(&g->arena, name)))
        return NULL;
    if (!PUSH(g->values, g->n_values, g->cap_values, v))
        return NULL;
    return v;
}

sm_value *sm_block_add_param(sm_block *b, const char *name, const sm_type *t)
{
    sm_value *v = value_new(b, name);
    if (!v || !PUSH(b->params, b->n_params, b->cap_params, v))
        return NULL;
    if (t)
        v->type = *t;
    return v;
}

sm_value *sm_block_add_const(sm_block *b, const char *name, sm_tensor *data)
{
    sm_value *v = value_new(b, name);
    if (!v) {
        sm_tensor_free(data);
        return NULL;
    }
    v->data = data; /* owned from here: freed with the graph */
    sm_type_from_tensor(&v->type, data);
    if (!PUSH(b->consts, b->n_consts, b->cap_consts, v))
        return NULL;
    return v;
}

int sm_block_add_return(sm_block *b, sm_value *v)
{
    return PUSH(b->ret, b->n_ret, b->cap_ret, v);
}

sm_node *sm_node_new(sm_block *b, sm_op op, const char *name, int n_in,
                     sm_value *const *in, int n_out,
                     const char *const *out_names)
{
    sm_graph *g = b->graph;
    sm_node *n = sm_arena_alloc(&g->arena, sizeof *n);
    if (!n || !PUSH(g->nodes_all, g->n_nodes_all, g->cap_nodes_all, n))
        return NULL;
    n->id = g->n_nodes_all - 1;
    n->op = op;
    n->owner = b;
    if (name && !(n->name = sm_arena_strdup(&g->arena, name)))
        return NULL;
    n->n_in = n_in;
    n->in = sm_arena_alloc(&g->arena, sizeof(sm_value *) * (size_t)(n_in + 1));
    n->n_out = n_out;
    n->out =
        sm_arena_alloc(&g->arena, sizeof(sm_value *) * (size_t)(n_out + 1));
    if (!n->in || !n->out)
        return NULL;
    if (n_in)
        memcpy(n->in, in, sizeof(sm_value *) * (size_t)n_in);
    for (int i = 0; i < n_out; i++) {
        sm_value *v = value_new(b, out_names ? out_names[i] : NULL);
        if (!v)
            return NULL;
        v->def = n;
        v->def_index = i;
        n->out[i] = v;
    }
    if (!PUSH(b->nodes, b->n_nodes, b->cap_nodes, n))
        return NULL;
    return n;
}

void sm_block_move_node(sm_block *b, sm_node *n, int pos)
{
    int at = -1;
    for (int i = 0; i < b->n_nodes; i++)
        if (b->nodes[i] == n)
            at = i;
    SM_ASSERT(at >= 0 && pos >= 0 && pos < b->n_nodes);
    if (at < pos)
        memmove(&b->nodes[at], &b->nodes[at + 1],
                sizeof(sm_node *) * (size_t)(pos - at));
    else if (at > pos)
        memmove(&b->nodes[pos + 1], &b->nodes[pos],
                sizeof(sm_node *) * (size_t)(at - pos));
    b->nodes[pos] = n;
}

int sm_node_add_block(sm_node *n, sm_block *blk)
{
    sm_graph *g = n->owner->graph;
    sm_block **nb = sm_arena_alloc(&g->arena, sizeof(sm_block *) *
                                                  (size_t)(n->n_blocks + 1));
    if (!nb)
        return 0;
    if (n->n_blocks)
        memcpy(nb, n->blocks, sizeof(sm_block *) * (size_t)n->n_blocks);
    nb[n->n_blocks++] = blk;
    n->blocks = nb;
    blk->parent = n;
    return 1;
}

/* The new output goes in a fresh array (the arena does not grow one in
 * place); the old array stays in the arena until the graph is freed. */
sm_value *sm_node_add_output(sm_node *n, const char *name)
{
    sm_graph *g = n->owner->graph;
    sm_value **out =
        sm_arena_alloc(&g->arena, sizeof(sm_value *) * (size_t)(n->n_out + 2));
    sm_value *v = out ? value_new(n->owner, name) : NULL;
    if (!v)
        return NULL;
    if (n->n_out)
        memcpy(out, n->out, sizeof(sm_value *) * (size_t)n->n_out);
    v->def = n;
    v->def_index = n->n_out;
    out[n->n_out++] = v;
    n->out = out;
    return v;
}

/* The slot for attribute `name`: the existing one (its old value released)
 * or a new one at the end. */
static sm_attr *attr_slot(sm_node *n, const char *name)
{
    for (int i = 0; i < n->n_attr; i++)
        if (strcmp(n->attrs[i].name, name) == 0) {
            if (n->attrs[i].kind == SM_ATTR_TENSOR)
                sm_tensor_free(n->attrs[i].v.t);
            n->attrs[i].kind = SM_ATTR_INT;
            return &n->attrs[i];
        }
    sm_attr *a =
        sm_realloc(n->attrs, sizeof(sm_attr) * (size_t)(n->n_attr + 1));
    if (!a)
        return NULL;
    n->attrs = a;
    sm_attr *s = &a[n->n_attr];
    memset(s, 0, sizeof *s);
    s->name = sm_arena_strdup(&n->owner->graph->arena, name);
    if (!s->name)
        return NULL;
    n->n_attr++;
    return s;
}

int sm_node_set_int(sm_node *n, const char *name, int64_t v)
{
    sm_attr *a = attr_slot(n, name);
    if (!a)
        return 0;
    a->kind = SM_ATTR_INT;
    a->v.i = v;
    return 1;
}

int sm_node_set_float(sm_node *n, const char *name, double v)
{
    sm_attr *a = attr_slot(n, name);
    if (!a)
        return 0;
    a->kind = SM_ATTR_FLOAT;
    a->v.f = v;
    return 1;
}

int sm_node_set_string(sm_node *n, const char *name, const char *s)
{
    const char *d = sm_arena_strdup(&n->owner->graph->arena, s);
    sm_attr *a = d ? attr_slot(n, name) : NULL;
    if (!a)
        return 0;
    a->kind = SM_ATTR_STRING;
    a->v.s = d;
    return 1;
}

/* Copies cnt elements of size sz into the graph's arena. */
static void *arena_copy(sm_node *n, const void *src, size_t sz, int cnt)
{
    void *d = sm_arena_alloc(&n->owner->graph->arena, sz * (size_t)(cnt + 1));
    if (d && cnt)
        memcpy(d, src, sz * (size_t)cnt);
    return d;
}

int sm_node_set_ints(sm_node *n, const char *name, const int64_t *v, int cnt)
{
    int64_t *d = arena_copy(n, v, sizeof *v, cnt);
    sm_attr *a = d ? attr_slot(n, name) : NULL;
    if (!a)
        return 0;
    a->kind = SM_ATTR_INTS;
    a->n = cnt;
    a->v.ints = d;
    return 1;
}

int sm_node_set_floats(sm_node *n, const char *name, const double *v, int cnt)
{
    double *d = arena_copy(n, v, sizeof *v, cnt);
    sm_attr *a = d ? attr_slot(n, name) : NULL;
    if (!a)
        return 0;
    a->kind = SM_ATTR_FLOATS;
    a->n = cnt;
    a->v.floats = d;
    return 1;
}

int sm_node_set_strings(sm_node *n, const char *name, const char *const *v,
                        int cnt)
{
    const char **d = arena_copy(n, v, sizeof *v, cnt);
    if (!d)
        return 0;
    for (int i = 0; i < cnt; i++)
        if (!(d[i] = sm_arena_strdup(&n->owner->graph->arena, v[i])))
            return 0;
    sm_attr *a = attr_slot(n, name);
    if (!a)
        return 0;
    a->kind = SM_ATTR_STRINGS;
    a->n = cnt;
    a->v.strs = d;
    return 1;
}

int sm_node_set_tensor(sm_node *n, const char *name, sm_tensor *t)
{
    sm_attr *a = attr_slot(n, name);
    if (!a) {
        sm_tensor_free(t);
        return 0;
    }
    a->kind = SM_ATTR_TENSOR;
    a->v.t = t;
    return 1;
}

const sm_attr *sm_node_attr(const sm_node *n, const char *name)
{
    for (int i = 0; i < n->n_attr; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

sm_attrs sm_node_attrs(const sm_node *n)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    sm_attrs a = {n->attrs, n->n_attr, info->spec, info->n_spec};
    return a;
}

sm_value *sm_graph_find_value(const sm_graph *g, const char *name)
{
    for (int i = g->n_values - 1; i >= 0; i--)
        if (strcmp(g->values[i]->name, name) == 0)
            return g->values[i];
    return NULL;
}

int sm_type_known(const sm_type *t)
{
    if (t->dtype == SMELT_DTYPE_UNDEFINED || t->ndim < 0)
        return 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->dims[i].size < 0)
            return 0;
    return 1;
}

int sm_type_equal(const sm_type *a, const sm_type *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++) {
        if (a->dims[i].size != b->dims[i].size)
            return 0;
        const char *x = a->dims[i].sym, *y = b->dims[i].sym;
        if ((x == NULL) != (y == NULL) || (x && strcmp(x, y) != 0))
            return 0;
    }
    return 1;
}

void sm_type_from_tensor(sm_type *t, const sm_tensor *x)
{
    memset(t, 0, sizeof *t);
    t->dtype = x->dtype;
    t->ndim = x->ndim;
    for (int i = 0; i < x->ndim; i++)
        t->dims[i].size = x->dims[i];
}

void sm_type_str(const sm_type *t, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "%s[", smelt_dtype_name(t->dtype));
    if (t->ndim < 0) {
        if (k < size)
            snprintf(buf + k, size - k, "*]");
        return;
    }
    for (int i = 0; i < t->ndim && k < size; i++) {
        const char *sep = i ? "," : "";
        if (t->dims[i].size >= 0)
            k += (size_t)snprintf(buf + k, size - k, "%s%lld", sep,
                                  (long long)t->dims[i].size);
        else if (t->dims[i].sym)
            k += (size_t)snprintf(buf + k, size - k, "%s%s", sep,
                                  t->dims[i].sym);
        else
            k += (size_t)snprintf(buf + k, size - k, "%s?", sep);
    }
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

void sm_node_where(const sm_node *n, char *buf, size_t size)
{
    const char *op = sm_op_info_get(n->op)->name;
    const sm_graph *g = n->owner->graph;
    int k = 0;
    if (n->src_line > 0 && g->src_file)
        k = snprintf(buf, size, "%s:%d:%d: ", g->src_file, n->src_line,
                     n->src_col);
    if (k < 0 || (size_t)k >= size)
        k = 0;
    if (n->name)
        snprintf(buf + k, size - (size_t)k, "node '%s' (%s)", n->name, op);
    else if (n->n_out > 0)
        snprintf(buf + k, size - (size_t)k, "%s node defining %%%s", op,
                 n->out[0]->name);
    else
        snprintf(buf + k, size - (size_t)k, "%s node", op);
}
