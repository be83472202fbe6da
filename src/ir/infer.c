/*
 * infer.c - shape and dtype inference. Runs each node's shape function in
 * block order, recursing into sub-blocks first, and merges what it learns
 * into the values' types. Small values whose inputs are all known are
 * evaluated with the reference kernels, so that shape computations that
 * PyTorch exports (Shape, Gather, Concat, Reshape) resolve to known dims.
 */
#include "ir/infer.h"

#include <string.h>

#include "core/alloc.h"
#include "ir/shape_util.h"
#include "ir/eval.h"

#define MAX_OPERANDS 64

smelt_status sm_node_shape(smelt_ctx_t *ctx, const sm_node *n,
                           const sm_tensor *const *known, sm_type *out)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    char why[96];
    if (sm_op_arity_error(n->op, n->n_in, n->n_out, why, sizeof why)) {
        char where[160];
        sm_node_where(n, where, sizeof where);
        return sm_err(ctx, SMELT_ERR_VERIFY, "%s: %s", where, why);
    }
    if (n->n_blocks != info->n_blocks) { /* shape functions read them all */
        char where[160];
        sm_node_where(n, where, sizeof where);
        return sm_err(ctx, SMELT_ERR_VERIFY,
                      "%s: must own %d sub-blocks, owns %d", where,
                      info->n_blocks, n->n_blocks);
    }
    sm_operand stack_ops[MAX_OPERANDS];
    sm_operand *ops = stack_ops;
    if (n->n_in > MAX_OPERANDS &&
        !(ops = sm_calloc((size_t)n->n_in, sizeof *ops)))
        return sm_err_nomem(ctx);
    for (int i = 0; i < n->n_in; i++) {
        const sm_value *v = n->in[i];
        ops[i].present = v != NULL;
        ops[i].type = v ? &v->type : NULL;
        ops[i].data = v ? (v->data ? v->data
                           : known ? known[v->id]
                                   : NULL)
                        : NULL;
    }
    for (int i = 0; i < n->n_out; i++)
        sm_type_unknown(&out[i]);
    sm_shape_ctx s = {info, sm_node_attrs(n), n->n_in, ops, n->n_out, out, n,
                      ctx};
    smelt_status st = info->shape(&s);
    if (ops != stack_ops)
        sm_free(ops);
    if (st != SMELT_OK) {
        char where[160];
        sm_node_where(n, where, sizeof where);
        sm_err_prefix(ctx, "%s: ", where);
    }
    return st;
}

/* Symbolic names compare by content; two different names may still be the
 * same size at run time, so they never conflict. */
int sm_type_merge(sm_type *into, const sm_type *t)
{
    if (t->dtype != SMELT_DTYPE_UNDEFINED) {
        if (into->dtype == SMELT_DTYPE_UNDEFINED)
            into->dtype = t->dtype;
        else if (into->dtype != t->dtype)
            return 1;
    }
    if (t->ndim < 0)
        return 0;
    if (into->ndim < 0) {
        into->ndim = t->ndim;
        memcpy(into->dims, t->dims, sizeof into->dims);
        return 0;
    }
    if (into->ndim != t->ndim)
        return 1;
    for (int i = 0; i < t->ndim; i++) {
        sm_dim *a = &into->dims[i];
        const sm_dim *b = &t->dims[i];
        if (a->size >= 0 && b->size >= 0 && a->size != b->size)
            return 1;
        if (a->size < 0 && b->size >= 0)
            *a = *b;
        else if (a->size < 0 && !a->sym && b->sym)
            *a = *b;
    }
    return 0;
}

static smelt_status conflict(smelt_ctx_t *ctx, const sm_node *n, int i,
                             const sm_type *declared, const sm_type *inferred)
{
    char where[160], a[160], b[160];
    sm_node_where(n, where, sizeof where);
    sm_type_str(declared, a, sizeof a);
    sm_type_str(inferred, b, sizeof b);
    return sm_err(ctx, SMELT_ERR_VERIFY,
                  "%s: output %%%s is declared %s but its inputs give %s",
                  where, n->out[i]->name, a, b);
}

smelt_status sm_infer_check_node(smelt_ctx_t *ctx, const sm_node *n)
{
    sm_type stack_out[MAX_OPERANDS];
    sm_type *out = stack_out;
    if (n->n_out > MAX_OPERANDS &&
        !(out = sm_calloc((size_t)n->n_out, sizeof *out)))
        return sm_err_nomem(ctx);
    smelt_status st = sm_node_shape(ctx, n, NULL, out);
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++) {
        sm_type t = n->out[i]->type;
        if (sm_type_merge(&t, &out[i]))
            st = conflict(ctx, n, i, &n->out[i]->type, &out[i]);
    }
    if (out != stack_out)
        sm_free(out);
    return st;
}

typedef struct inferer {
    smelt_ctx_t *ctx;
    sm_graph *g;
    sm_tensor **known; /* by value id: values evaluated during inference */
} inferer;

static int small_known_type(const sm_type *t)
{
    return sm_type_known(t) && sm_type_numel(t) <= SM_INFER_EVAL_MAX;
}

smelt_status sm_node_shape_dims(smelt_ctx_t *ctx, const sm_node *shape,
                                sm_tensor **out)
{
    *out = NULL;
    const sm_type *t = &shape->in[0]->type;
    if (t->ndim < 0)
        return SMELT_OK;
    sm_attrs a = sm_node_attrs(shape);
    int64_t r = t->ndim, start = sm_attrs_int(&a, "start", 0);
    int64_t end = sm_attrs_find(&a, "end") ? sm_attrs_int(&a, "end", r) : r;
    start = start < 0 ? start + r : start;
    end = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    SM_TRY(sm_tensor_new(ctx, SMELT_DTYPE_I64, 1, &len, out));
    for (int64_t i = 0; i < len; i++)
        ((int64_t *)(*out)->data)[i] = t->dims[start + i].size;
    return SMELT_OK;
}

/* Shape(x) of an x with no data whose requested dims are all known:
 * known from x's type alone, so that a chain Shape -> Gather -> Div ->
 * Reshape -> Shape -> ... (ShuffleNet's channel shuffle and chunk, as
 * PyTorch exports them) resolves in one inference instead of one link
 * per optimizer round. */
static void evaluate_shape(inferer *in, const sm_node *n)
{
    smelt_ctx_t scratch = {0};
    sm_tensor *t = NULL;
    if (sm_node_shape_dims(&scratch, n, &t) != SMELT_OK || !t)
        return;
    for (int64_t i = 0; i < t->numel; i++)
        if (((int64_t *)t->data)[i] < 0) {
            sm_tensor_free(t);
            return;
        }
    sm_tensor_free(in->known[n->out[0]->id]);
    in->known[n->out[0]->id] = t;
}

/* Evaluates n with its reference kernel when every input is known and
 * every output is small; failures only mean "not known". */
static void try_evaluate(inferer *in, const sm_node *n)
{
    if (n->op == SM_OP_Shape && n->n_in == 1 && n->n_out == 1 && n->in[0] &&
        !n->in[0]->data && !in->known[n->in[0]->id]) {
        evaluate_shape(in, n);
        return;
    }
    const sm_op_info *info = sm_op_info_get(n->op);
    if (info->cls == SM_CLASS_CONTROL || n->n_in > MAX_OPERANDS ||
        n->n_out > MAX_OPERANDS)
        return;
    sm_tensor *args[MAX_OPERANDS], *outs[MAX_OPERANDS] = {0};
    for (int i = 0; i < n->n_in; i++) {
        const sm_value *v = n->in[i];
        args[i] = v ? (v->data ? v->data : in->known[v->id]) : NULL;
        if (v && !args[i])
            return;
    }
    for (int i = 0; i < n->n_out; i++)
        if (!small_known_type(&n->out[i]->type))
            return;
    smelt_ctx_t scratch = {0};
    if (sm_eval_node(&scratch, n, args, outs, 0) != SMELT_OK)
        return;
    /* a value that wrapped is not known: folding reports it */
    if (sm_eval_check_exact(&scratch, n, args, outs) != SMELT_OK) {
        for (int i = 0; i < n->n_out; i++)
            sm_tensor_free(outs[i]);
        return;
    }
    for (int i = 0; i < n->n_out; i++)
        in->known[n->out[i]->id] = outs[i];
}

static smelt_status infer_block(inferer *in, sm_block *b, int depth);

/* Loop body parameters take the types of the iteration count, the
 * condition and the carried inputs when the text leaves them open. */
static void seed_loop_params(sm_node *n)
{
    sm_block *body = n->blocks[0];
    if (body->n_params != n->n_in)
        return;
    sm_type t;
    sm_type_set(&t, SMELT_DTYPE_I64, 0, NULL);
    sm_type_merge(&body->params[0]->type, &t);
    sm_type_set(&t, SMELT_DTYPE_BOOL, 0, NULL);
    sm_type_merge(&body->params[1]->type, &t);
    for (int i = 2; i < n->n_in; i++)
        if (n->in[i] && body->params[i]->type.ndim < 0)
            sm_type_merge(&body->params[i]->type, &n->in[i]->type);
}

static smelt_status infer_node(inferer *in, sm_node *n, int depth)
{
    if (n->op == SM_OP_Loop && n->n_blocks == 1)
        seed_loop_params(n);
    /* A fused region's parameters learn what its inputs' types learn. */
    if (n->op == SM_OP_FusedElementwise && n->n_blocks == 1 &&
        n->blocks[0]->n_params == n->n_in)
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i])
                sm_type_merge(&n->blocks[0]->params[i]->type, &n->in[i]->type);
    for (int i = 0; i < n->n_blocks; i++)
        SM_TRY(infer_block(in, n->blocks[i], depth + 1));
    sm_type stack_out[MAX_OPERANDS];
    sm_type *out = stack_out;
    if (n->n_out > MAX_OPERANDS &&
        !(out = sm_calloc((size_t)n->n_out, sizeof *out)))
        return sm_err_nomem(in->ctx);
    smelt_status st =
        sm_node_shape(in->ctx, n, (const sm_tensor *const *)in->known, out);
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++) {
        sm_type before = n->out[i]->type;
        if (sm_type_merge(&n->out[i]->type, &out[i]))
            st = conflict(in->ctx, n, i, &before, &out[i]);
    }
    if (out != stack_out)
        sm_free(out);
    if (st == SMELT_OK)
        try_evaluate(in, n);
    return st;
}

static smelt_status infer_block(inferer *in, sm_block *b, int depth)
{
    if (depth > SM_MAX_BLOCK_DEPTH)
        return sm_err(in->ctx, SMELT_ERR_LIMIT,
                      "sub-blocks nest deeper than %d", SM_MAX_BLOCK_DEPTH);
    for (int i = 0; i < b->n_nodes; i++)
        SM_TRY(infer_node(in, b->nodes[i], depth));
    return SMELT_OK;
}

smelt_status sm_graph_infer(smelt_ctx_t *ctx, sm_graph *g)
{
    inferer in = {ctx, g,
                  sm_calloc((size_t)g->n_values + 1, sizeof(sm_tensor *))};
    if (!in.known)
        return sm_err_nomem(ctx);
    smelt_status st = infer_block(&in, g->top, 0);
    for (int i = 0; i < g->n_values; i++)
        sm_tensor_free(in.known[i]);
    sm_free(in.known);
    return st;
}

smelt_status smelt_graph_infer(smelt_ctx_t *ctx, smelt_graph_t *g)
{
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_graph_infer: NULL");
    return sm_graph_infer(ctx, g);
}
