/*
 * graph_query.c - the public accessors that read a graph: its name,
 * inputs and outputs with their types, node counts, the op of every
 * node and the constants (what `smelt info` shows). Construction and
 * mutation are graph.c's and rewrite.c's.
 */
#include "ir/ir.h"

const char *smelt_graph_name(const smelt_graph_t *g)
{
    return g ? g->name : NULL;
}

int smelt_graph_num_inputs(const smelt_graph_t *g)
{
    return g ? g->top->n_params : 0;
}

int smelt_graph_num_outputs(const smelt_graph_t *g)
{
    return g ? g->top->n_ret : 0;
}

const char *smelt_graph_input_name(const smelt_graph_t *g, int i)
{
    if (!g || i < 0 || i >= g->top->n_params)
        return NULL;
    return g->top->params[i]->name;
}

const char *smelt_graph_output_name(const smelt_graph_t *g, int i)
{
    if (!g || i < 0 || i >= g->top->n_ret)
        return NULL;
    return g->top->ret[i]->name;
}

/* Nodes of b and of every block nested in it. */
static int count_nodes(const sm_block *b)
{
    int n = b->n_nodes;
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_blocks; j++)
            n += count_nodes(b->nodes[i]->blocks[j]);
    return n;
}

int smelt_graph_num_nodes(const smelt_graph_t *g)
{
    return g ? count_nodes(g->top) : 0;
}

static const sm_type *output_type(const smelt_graph_t *g, int i)
{
    return g && i >= 0 && i < g->top->n_ret ? &g->top->ret[i]->type : NULL;
}

smelt_dtype smelt_graph_output_dtype(const smelt_graph_t *g, int i)
{
    const sm_type *t = output_type(g, i);
    return t ? t->dtype : SMELT_DTYPE_UNDEFINED;
}

int smelt_graph_output_ndim(const smelt_graph_t *g, int i)
{
    const sm_type *t = output_type(g, i);
    return t ? t->ndim : -1;
}

int64_t smelt_graph_output_dim(const smelt_graph_t *g, int i, int axis)
{
    const sm_type *t = output_type(g, i);
    return t && axis >= 0 && axis < t->ndim ? t->dims[axis].size : -1;
}

const char *smelt_graph_output_dim_name(const smelt_graph_t *g, int i, int axis)
{
    const sm_type *t = output_type(g, i);
    return t && axis >= 0 && axis < t->ndim ? t->dims[axis].sym : NULL;
}

/*
 * The node that is *i-th in the pre-order walk of b (each node, then the
 * nodes of its sub-blocks), counting *i down as nodes are passed; NULL
 * when b holds fewer.
 */
static const sm_node *nth_node(const sm_block *b, int *i)
{
    for (int k = 0; k < b->n_nodes; k++) {
        const sm_node *n = b->nodes[k];
        if ((*i)-- == 0)
            return n;
        for (int j = 0; j < n->n_blocks; j++) {
            const sm_node *hit = nth_node(n->blocks[j], i);
            if (hit)
                return hit;
        }
    }
    return NULL;
}

const char *smelt_graph_node_op(const smelt_graph_t *g, int i)
{
    if (!g || i < 0)
        return NULL;
    const sm_node *n = nth_node(g->top, &i);
    return n ? sm_op_info_get(n->op)->name : NULL;
}

/* Stores the op names of b's nodes in pre-order into ops[*k..n). */
static void node_ops(const sm_block *b, const char **ops, int n, int *k)
{
    for (int i = 0; i < b->n_nodes && *k < n; i++) {
        const sm_node *nd = b->nodes[i];
        ops[(*k)++] = sm_op_info_get(nd->op)->name;
        for (int j = 0; j < nd->n_blocks; j++)
            node_ops(nd->blocks[j], ops, n, k);
    }
}

int smelt_graph_node_ops(const smelt_graph_t *g, const char **ops, int n)
{
    int k = 0;
    if (g && ops && n > 0)
        node_ops(g->top, ops, n, &k);
    return k;
}

/* Adds the constants of b and of its nested blocks to the totals. */
static void add_constants(const sm_block *b, int64_t *count, int64_t *numel,
                          int64_t *bytes)
{
    for (int k = 0; k < b->n_consts; k++) {
        const sm_tensor *t = b->consts[k]->data;
        *count += 1;
        *numel += t ? t->numel : 0;
        *bytes += t ? (int64_t)t->nbytes : 0;
    }
    for (int k = 0; k < b->n_nodes; k++)
        for (int j = 0; j < b->nodes[k]->n_blocks; j++)
            add_constants(b->nodes[k]->blocks[j], count, numel, bytes);
}

void smelt_graph_constants(const smelt_graph_t *g, int64_t *count,
                           int64_t *numel, int64_t *bytes)
{
    int64_t c = 0, n = 0, b = 0;
    if (g)
        add_constants(g->top, &c, &n, &b);
    if (count)
        *count = c;
    if (numel)
        *numel = n;
    if (bytes)
        *bytes = b;
}

static const sm_type *input_type(const smelt_graph_t *g, int i)
{
    return g && i >= 0 && i < g->top->n_params ? &g->top->params[i]->type
                                               : NULL;
}

smelt_dtype smelt_graph_input_dtype(const smelt_graph_t *g, int i)
{
    const sm_type *t = input_type(g, i);
    return t ? t->dtype : SMELT_DTYPE_UNDEFINED;
}

int smelt_graph_input_ndim(const smelt_graph_t *g, int i)
{
    const sm_type *t = input_type(g, i);
    return t ? t->ndim : -1;
}

int64_t smelt_graph_input_dim(const smelt_graph_t *g, int i, int axis)
{
    const sm_type *t = input_type(g, i);
    return t && axis >= 0 && axis < t->ndim ? t->dims[axis].size : -1;
}

const char *smelt_graph_input_dim_name(const smelt_graph_t *g, int i, int axis)
{
    const sm_type *t = input_type(g, i);
    return t && axis >= 0 && axis < t->ndim ? t->dims[axis].sym : NULL;
}
