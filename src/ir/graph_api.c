/*
 * graph_api.c - the public graph accessors.
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
