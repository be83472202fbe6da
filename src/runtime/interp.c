/*
 * interp.c - the reference interpreter.
 *
 * An environment maps value ids to tensors. Constants are borrowed from
 * the graph, block parameters from the caller, node outputs are owned. For
 * each node the op's shape function, given the concrete inputs, sizes the
 * outputs; the reference kernel fills them. Control ops get a callback
 * that runs a sub-block in the same environment, so sub-blocks see the
 * values of the blocks around them.
 */
#include "runtime/interp.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/infer.h"
#include "runtime/eval.h"

#define MAX_OPERANDS 64

typedef struct interp {
    smelt_ctx_t *ctx;
    const sm_graph *g;
    sm_tensor **env;      /* by value id */
    unsigned char *owned; /* env[id] is owned by the interpreter */
} interp;

static void env_set(interp *in, const sm_value *v, sm_tensor *t, int owned)
{
    if (in->owned[v->id])
        sm_tensor_free(in->env[v->id]);
    in->env[v->id] = t;
    in->owned[v->id] = (unsigned char)owned;
}

/* Frees the values a block defined, so a Loop body's values of one
 * iteration do not pile up, and leaves their slots empty. */
static void env_clear_block(interp *in, const sm_block *b)
{
    for (int i = 0; i < b->n_params; i++)
        env_set(in, b->params[i], NULL, 0);
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_out; j++)
            env_set(in, b->nodes[i]->out[j], NULL, 0);
}

static smelt_status run_block(interp *in, const sm_block *b, int n_in,
                              sm_tensor *const *args, int n_out,
                              sm_tensor **outs);

typedef struct block_call {
    interp *in;
    const sm_node *node;
} block_call;

static smelt_status run_sub_block(void *user, int block, int n_in,
                                  sm_tensor *const *args, int n_out,
                                  sm_tensor **outs)
{
    block_call *c = user;
    if (block < 0 || block >= c->node->n_blocks)
        return sm_err(c->in->ctx, SMELT_ERR_RUNTIME, "no sub-block %d", block);
    return run_block(c->in, c->node->blocks[block], n_in, args, n_out, outs);
}

static smelt_status run_node(interp *in, const sm_node *n)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    if (n->n_in > MAX_OPERANDS || n->n_out > MAX_OPERANDS)
        return sm_err(in->ctx, SMELT_ERR_LIMIT, "more than %d operands",
                      MAX_OPERANDS);
    sm_tensor *args[MAX_OPERANDS], *outs[MAX_OPERANDS] = {0};
    for (int i = 0; i < n->n_in; i++) {
        args[i] = n->in[i] ? in->env[n->in[i]->id] : NULL;
        if (n->in[i] && !args[i])
            return sm_err(in->ctx, SMELT_ERR_RUNTIME,
                          "input %%%s has no value (unverified graph?)",
                          n->in[i]->name);
    }
    smelt_status st;
    if (info->cls != SM_CLASS_CONTROL) {
        st = sm_eval_node(in->ctx, n, args, outs, 0);
    } else {
        /* control ops size their own outputs; the graph's declared types
         * help a Loop that runs zero times */
        block_call call = {in, n};
        sm_out_hint hints[MAX_OPERANDS];
        for (int i = 0; i < n->n_out; i++) {
            const sm_type *t = &n->out[i]->type;
            hints[i].dtype = t->dtype;
            hints[i].ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++)
                hints[i].dims[d] = t->dims[d].size;
        }
        sm_kargs a = {.op_name = info->name,
                      .attrs = sm_node_attrs(n),
                      .n_in = n->n_in,
                      .in = args,
                      .n_out = n->n_out,
                      .out = outs,
                      .ctx = in->ctx,
                      .run_block = run_sub_block,
                      .run_block_user = &call,
                      .out_hint = hints};
        st = info->ref(&a);
    }
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++)
        if (!outs[i])
            st =
                sm_err(in->ctx, SMELT_ERR_RUNTIME, "output %d was not made", i);
    if (st != SMELT_OK) {
        for (int i = 0; i < n->n_out; i++)
            sm_tensor_free(outs[i]);
        return st;
    }
    for (int i = 0; i < n->n_out; i++)
        env_set(in, n->out[i], outs[i], 1);
    return SMELT_OK;
}

/* Runs block b with its parameters bound to args; outs receive clones of
 * the returned values (the block's own values are freed on the way out,
 * except in the top block, whose values the caller's clones came from). */
static smelt_status run_block(interp *in, const sm_block *b, int n_in,
                              sm_tensor *const *args, int n_out,
                              sm_tensor **outs)
{
    if (n_in != b->n_params || n_out != b->n_ret)
        return sm_err(in->ctx, SMELT_ERR_RUNTIME,
                      "block %s takes %d values and returns %d; called with "
                      "%d and %d",
                      b->label ? b->label : "main", b->n_params, b->n_ret, n_in,
                      n_out);
    for (int i = 0; i < b->n_params; i++)
        env_set(in, b->params[i], args[i], 0);
    for (int i = 0; i < b->n_consts; i++)
        env_set(in, b->consts[i], b->consts[i]->data, 0);
    smelt_status st = SMELT_OK;
    for (int i = 0; i < b->n_nodes && st == SMELT_OK; i++) {
        st = run_node(in, b->nodes[i]);
        if (st != SMELT_OK && st != SMELT_ERR_NOMEM) {
            char where[160];
            sm_node_where(b->nodes[i], where, sizeof where);
            sm_err_prefix(in->ctx, "%s: ", where);
        }
    }
    for (int i = 0; i < n_out; i++)
        outs[i] = NULL;
    for (int i = 0; i < n_out && st == SMELT_OK; i++) {
        const sm_tensor *t = in->env[b->ret[i]->id];
        st = t ? sm_tensor_clone(in->ctx, t, &outs[i])
               : sm_err(in->ctx, SMELT_ERR_RUNTIME,
                        "returned value %%%s has no value", b->ret[i]->name);
    }
    if (st != SMELT_OK)
        for (int i = 0; i < n_out; i++) {
            sm_tensor_free(outs[i]);
            outs[i] = NULL;
        }
    env_clear_block(in, b);
    return st;
}

/* Checks a caller's input against the declared type of graph input p. */
static smelt_status check_input(smelt_ctx_t *ctx, const sm_value *p,
                                const sm_tensor *t)
{
    const sm_type *ty = &p->type;
    int ok = ty->dtype == SMELT_DTYPE_UNDEFINED || ty->dtype == t->dtype;
    if (ok && ty->ndim >= 0) {
        ok = ty->ndim == t->ndim;
        for (int i = 0; ok && i < t->ndim; i++)
            ok = ty->dims[i].size < 0 || ty->dims[i].size == t->dims[i];
    }
    if (ok)
        return SMELT_OK;
    char want[160], got[160];
    sm_type_str(ty, want, sizeof want);
    sm_shape_str(t->dtype, t->ndim, t->dims, got, sizeof got);
    return sm_err(ctx, SMELT_ERR_SHAPE, "input '%s': expected %s, got %s",
                  p->name, want, got);
}

/* Each symbolic dimension name must bind to one size across inputs. */
static smelt_status check_symbols(smelt_ctx_t *ctx, const sm_block *top,
                                  sm_tensor *const *inputs)
{
    for (int i = 0; i < top->n_params; i++)
        for (int d = 0; d < top->params[i]->type.ndim; d++) {
            const char *sym = top->params[i]->type.dims[d].sym;
            if (!sym)
                continue;
            for (int j = 0; j <= i; j++)
                for (int e = 0; e < top->params[j]->type.ndim; e++) {
                    const char *s2 = top->params[j]->type.dims[e].sym;
                    if (s2 && !strcmp(sym, s2) &&
                        inputs[i]->dims[d] != inputs[j]->dims[e])
                        return sm_err(
                            ctx, SMELT_ERR_SHAPE,
                            "dimension '%s' is %lld in input '%s' but %lld "
                            "in input '%s'",
                            sym, (long long)inputs[j]->dims[e],
                            top->params[j]->name, (long long)inputs[i]->dims[d],
                            top->params[i]->name);
                }
        }
    return SMELT_OK;
}

smelt_status sm_interp_run(smelt_ctx_t *ctx, const sm_graph *g,
                           sm_tensor *const *inputs, int n_inputs,
                           sm_tensor **outputs, int n_outputs)
{
    const sm_block *top = g->top;
    if (n_inputs != top->n_params)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "graph '%s' takes %d inputs, %d given", g->name,
                      top->n_params, n_inputs);
    if (n_outputs != top->n_ret)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "graph '%s' gives %d outputs, %d requested", g->name,
                      top->n_ret, n_outputs);
    for (int i = 0; i < n_inputs; i++) {
        if (!inputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG, "input '%s' is NULL",
                          top->params[i]->name);
        SM_TRY(check_input(ctx, top->params[i], inputs[i]));
    }
    SM_TRY(check_symbols(ctx, top, inputs));
    interp in = {ctx, g,
                 sm_calloc((size_t)g->n_values + 1, sizeof(sm_tensor *)),
                 sm_calloc((size_t)g->n_values + 1, 1)};
    smelt_status st = SMELT_OK;
    if (!in.env || !in.owned)
        st = sm_err_nomem(ctx);
    else
        st = run_block(&in, top, n_inputs, inputs, n_outputs, outputs);
    if (in.env && in.owned)
        for (int i = 0; i < g->n_values; i++)
            if (in.owned[i])
                sm_tensor_free(in.env[i]);
    sm_free(in.env);
    sm_free(in.owned);
    return st;
}

smelt_status smelt_graph_run_reference(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                       smelt_tensor_t *const *inputs,
                                       int n_inputs, smelt_tensor_t **outputs,
                                       int n_outputs)
{
    if (!g || (n_inputs && !inputs) || (n_outputs && !outputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_run_reference: NULL argument");
    return sm_interp_run(ctx, g, inputs, n_inputs, outputs, n_outputs);
}
