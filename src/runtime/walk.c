/*
 * walk.c - the block walker (walk.h), shared by the reference
 * interpreter and the plan executor's control steps.
 *
 * Constants are borrowed from the graph and block parameters from the
 * caller; node outputs are owned by the walk. A block's values are
 * released when it finishes, so a Loop body's values of one iteration do
 * not pile up. Sub-blocks run in the same environment and so see the
 * values of the blocks around them.
 */
#include "runtime/walk.h"

#include "core/alloc.h"
#include "ir/eval.h"

#define MAX_OPERANDS 64

sm_tensor *sm_walk_value(const sm_walk *w, const sm_value *v)
{
    if (w->env[v->id])
        return w->env[v->id];
    return w->lookup ? w->lookup(w->lookup_user, v) : NULL;
}

static void walk_set(sm_walk *w, const sm_value *v, sm_tensor *t, int owned)
{
    if (w->owned[v->id])
        sm_tensor_free(w->env[v->id]);
    w->env[v->id] = t;
    w->owned[v->id] = (unsigned char)owned;
}

/* What a control kernel's run_block callback carries. */
typedef struct block_call {
    sm_walk *w;
    const sm_node *node;
} block_call;

static smelt_status run_sub_block(void *user, int block, int n_in,
                                  sm_tensor *const *args, int n_out,
                                  sm_tensor **outs)
{
    block_call *c = user;
    if (block < 0 || block >= c->node->n_blocks)
        return sm_err(c->w->ctx, SMELT_ERR_RUNTIME, "no sub-block %d", block);
    return sm_walk_block(c->w, c->node->blocks[block], n_in, args, n_out, outs);
}

smelt_status sm_walk_control(sm_walk *w, const sm_node *n,
                             sm_tensor *const *args, const sm_out_hint *hints,
                             sm_tensor **outs)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    if (n->n_out > MAX_OPERANDS)
        return sm_err(w->ctx, SMELT_ERR_LIMIT, "more than %d operands",
                      MAX_OPERANDS);
    sm_out_hint declared[MAX_OPERANDS];
    if (!hints) {
        for (int i = 0; i < n->n_out; i++) {
            const sm_type *t = &n->out[i]->type;
            declared[i].dtype = t->dtype;
            declared[i].ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++)
                declared[i].dims[d] = t->dims[d].size;
        }
        hints = declared;
    }
    for (int i = 0; i < n->n_out; i++)
        outs[i] = NULL;
    block_call call = {w, n};
    sm_kargs a = {.op_name = info->name,
                  .attrs = sm_node_attrs(n),
                  .n_in = n->n_in,
                  .in = args,
                  .n_out = n->n_out,
                  .out = outs,
                  .ctx = w->ctx,
                  .run_block = run_sub_block,
                  .run_block_user = &call,
                  .out_hint = hints};
    smelt_status st = info->ref(&a);
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++)
        if (!outs[i])
            st = sm_err(w->ctx, SMELT_ERR_RUNTIME, "output %d was not made", i);
    if (st != SMELT_OK)
        for (int i = 0; i < n->n_out; i++) {
            sm_tensor_free(outs[i]);
            outs[i] = NULL;
        }
    return st;
}

/* Runs node n on the values it reads, binding its outputs. */
static smelt_status walk_node(sm_walk *w, const sm_node *n)
{
    if (n->n_in > MAX_OPERANDS || n->n_out > MAX_OPERANDS)
        return sm_err(w->ctx, SMELT_ERR_LIMIT, "more than %d operands",
                      MAX_OPERANDS);
    sm_tensor *args[MAX_OPERANDS], *outs[MAX_OPERANDS];
    for (int i = 0; i < n->n_in; i++) {
        args[i] = n->in[i] ? sm_walk_value(w, n->in[i]) : NULL;
        if (n->in[i] && !args[i])
            return sm_err(w->ctx, SMELT_ERR_RUNTIME,
                          "input %%%s has no value (unverified graph?)",
                          n->in[i]->name);
    }
    smelt_status st = sm_op_info_get(n->op)->cls == SM_CLASS_CONTROL
                          ? sm_walk_control(w, n, args, NULL, outs)
                          : sm_eval_node(w->ctx, n, args, outs, 0);
    if (st != SMELT_OK)
        return st;
    for (int i = 0; i < n->n_out; i++)
        walk_set(w, n->out[i], outs[i], 1);
    return SMELT_OK;
}

/* Unbinds (freeing what the walk owns) every value block b bound. */
static void walk_clear_block(sm_walk *w, const sm_block *b)
{
    for (int i = 0; i < b->n_params; i++)
        walk_set(w, b->params[i], NULL, 0);
    for (int i = 0; i < b->n_consts; i++)
        walk_set(w, b->consts[i], NULL, 0);
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_out; j++)
            walk_set(w, b->nodes[i]->out[j], NULL, 0);
}

smelt_status sm_walk_block(sm_walk *w, const sm_block *b, int n_in,
                           sm_tensor *const *args, int n_out, sm_tensor **outs)
{
    if (n_in != b->n_params || n_out != b->n_ret)
        return sm_err(w->ctx, SMELT_ERR_RUNTIME,
                      "block %s takes %d values and returns %d; called with "
                      "%d and %d",
                      b->label ? b->label : "main", b->n_params, b->n_ret, n_in,
                      n_out);
    for (int i = 0; i < b->n_params; i++)
        walk_set(w, b->params[i], args[i], 0);
    for (int i = 0; i < b->n_consts; i++)
        walk_set(w, b->consts[i], b->consts[i]->data, 0);
    smelt_status st = SMELT_OK;
    for (int i = 0; i < b->n_nodes && st == SMELT_OK; i++) {
        st = walk_node(w, b->nodes[i]);
        if (st != SMELT_OK && st != SMELT_ERR_NOMEM) {
            char where[160];
            sm_node_where(b->nodes[i], where, sizeof where);
            sm_err_prefix(w->ctx, "%s: ", where);
        }
    }
    for (int i = 0; i < n_out; i++)
        outs[i] = NULL;
    for (int i = 0; i < n_out && st == SMELT_OK; i++) {
        const sm_tensor *t = sm_walk_value(w, b->ret[i]);
        st = t ? sm_tensor_clone(w->ctx, t, &outs[i])
               : sm_err(w->ctx, SMELT_ERR_RUNTIME,
                        "returned value %%%s has no value", b->ret[i]->name);
    }
    if (st != SMELT_OK)
        for (int i = 0; i < n_out; i++) {
            sm_tensor_free(outs[i]);
            outs[i] = NULL;
        }
    walk_clear_block(w, b);
    return st;
}
