/*
 * exec_block.c - sub-blocks of a plan's control steps (If, Loop, a
 * FusedElementwise run as a whole), run node by node with the reference
 * kernels, as the interpreter does.
 *
 * Sub-block values live in the session's env by value id, owned there
 * and freed when their block finishes; a value from outside the block is
 * the session's view of its slot. This is the part of a plan that
 * allocates while running (docs/RUNTIME.md).
 */
#include <string.h>

#include "core/alloc.h"
#include "runtime/eval.h"
#include "runtime/executor.h"

#define MAX_OPERANDS SM_KERNEL_MAX_OPERANDS

typedef struct block_call {
    smelt_ctx_t *ctx;
    sm_session *s;
    const sm_node *node;
} block_call;

static sm_tensor *lookup(sm_session *s, const sm_value *v)
{
    if (s->env[v->id])
        return s->env[v->id];
    int sl = s->p->slot_of[v->id];
    return sl >= 0 ? &s->views[sl] : NULL;
}

static void env_set(sm_session *s, const sm_value *v, sm_tensor *t, int owned)
{
    if (s->env_owned[v->id])
        sm_tensor_free(s->env[v->id]);
    s->env[v->id] = t;
    s->env_owned[v->id] = (unsigned char)owned;
}

static smelt_status run_block(smelt_ctx_t *ctx, sm_session *s,
                              const sm_block *b, int n_in,
                              sm_tensor *const *args, int n_out,
                              sm_tensor **outs);

static smelt_status run_sub(void *user, int block, int n_in,
                            sm_tensor *const *args, int n_out, sm_tensor **outs)
{
    block_call *c = user;
    if (block < 0 || block >= c->node->n_blocks)
        return sm_err(c->ctx, SMELT_ERR_RUNTIME, "no sub-block %d", block);
    return run_block(c->ctx, c->s, c->node->blocks[block], n_in, args, n_out,
                     outs);
}

/* The reference kernel of control node n on args, with a runner for its
 * sub-blocks; outs receive new tensors. */
static smelt_status run_control(smelt_ctx_t *ctx, sm_session *s,
                                const sm_node *n, sm_tensor *const *args,
                                const sm_out_hint *hints, sm_tensor **outs)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    block_call call = {ctx, s, n};
    for (int i = 0; i < n->n_out; i++)
        outs[i] = NULL;
    sm_kargs a = {.op_name = info->name,
                  .attrs = sm_node_attrs(n),
                  .n_in = n->n_in,
                  .in = args,
                  .n_out = n->n_out,
                  .out = outs,
                  .ctx = ctx,
                  .run_block = run_sub,
                  .run_block_user = &call,
                  .out_hint = hints};
    smelt_status st = info->ref(&a);
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++)
        if (!outs[i])
            st = sm_err(ctx, SMELT_ERR_RUNTIME, "output %d was not made", i);
    if (st != SMELT_OK)
        for (int i = 0; i < n->n_out; i++) {
            sm_tensor_free(outs[i]);
            outs[i] = NULL;
        }
    return st;
}

static smelt_status run_node(smelt_ctx_t *ctx, sm_session *s, const sm_node *n)
{
    if (n->n_in > MAX_OPERANDS || n->n_out > MAX_OPERANDS)
        return sm_err(ctx, SMELT_ERR_LIMIT, "more than %d operands",
                      MAX_OPERANDS);
    sm_tensor *args[MAX_OPERANDS], *outs[MAX_OPERANDS];
    for (int i = 0; i < n->n_in; i++) {
        args[i] = n->in[i] ? lookup(s, n->in[i]) : NULL;
        if (n->in[i] && !args[i])
            return sm_err(ctx, SMELT_ERR_RUNTIME, "input %%%s has no value",
                          n->in[i]->name);
    }
    smelt_status st;
    if (sm_op_info_get(n->op)->cls == SM_CLASS_CONTROL) {
        sm_out_hint hints[MAX_OPERANDS];
        for (int i = 0; i < n->n_out; i++) {
            const sm_type *t = &n->out[i]->type;
            hints[i].dtype = t->dtype;
            hints[i].ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++)
                hints[i].dims[d] = t->dims[d].size;
        }
        st = run_control(ctx, s, n, args, hints, outs);
    } else {
        st = sm_eval_node(ctx, n, args, outs, 0);
    }
    if (st != SMELT_OK)
        return st;
    for (int i = 0; i < n->n_out; i++)
        env_set(s, n->out[i], outs[i], 1);
    return SMELT_OK;
}

/* Runs b with its parameters bound to args; outs receive copies of the
 * returned values, and b's own values are freed on the way out. */
static smelt_status run_block(smelt_ctx_t *ctx, sm_session *s,
                              const sm_block *b, int n_in,
                              sm_tensor *const *args, int n_out,
                              sm_tensor **outs)
{
    if (n_in != b->n_params || n_out != b->n_ret)
        return sm_err(ctx, SMELT_ERR_RUNTIME,
                      "block %s takes %d values and returns %d; called with "
                      "%d and %d",
                      b->label ? b->label : "main", b->n_params, b->n_ret, n_in,
                      n_out);
    for (int i = 0; i < b->n_params; i++)
        env_set(s, b->params[i], args[i], 0);
    for (int i = 0; i < b->n_consts; i++)
        env_set(s, b->consts[i], b->consts[i]->data, 0);
    smelt_status st = SMELT_OK;
    for (int i = 0; i < b->n_nodes && st == SMELT_OK; i++) {
        st = run_node(ctx, s, b->nodes[i]);
        if (st != SMELT_OK && st != SMELT_ERR_NOMEM) {
            char where[160];
            sm_node_where(b->nodes[i], where, sizeof where);
            sm_err_prefix(ctx, "%s: ", where);
        }
    }
    for (int i = 0; i < n_out; i++)
        outs[i] = NULL;
    for (int i = 0; i < n_out && st == SMELT_OK; i++) {
        const sm_tensor *t = lookup(s, b->ret[i]);
        st = t ? sm_tensor_clone(ctx, t, &outs[i])
               : sm_err(ctx, SMELT_ERR_RUNTIME,
                        "returned value %%%s has no value", b->ret[i]->name);
    }
    if (st != SMELT_OK)
        for (int i = 0; i < n_out; i++) {
            sm_tensor_free(outs[i]);
            outs[i] = NULL;
        }
    for (int i = 0; i < b->n_params; i++)
        env_set(s, b->params[i], NULL, 0);
    for (int i = 0; i < b->n_consts; i++)
        env_set(s, b->consts[i], NULL, 0);
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_out; j++)
            env_set(s, b->nodes[i]->out[j], NULL, 0);
    return st;
}

smelt_status sm_exec_control(smelt_ctx_t *ctx, sm_session *s, const sm_step *st,
                             sm_tensor **outs)
{
    sm_tensor *args[MAX_OPERANDS];
    for (int i = 0; i < st->n_in; i++)
        args[i] = st->in[i] >= 0 ? &s->views[st->in[i]] : NULL;
    return run_control(ctx, s, st->node, args, st->hints, outs);
}
