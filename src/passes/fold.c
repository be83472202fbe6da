/*
 * fold.c - the `fold` pass: constant folding and propagation.
 *
 * A node whose inputs are all constants is evaluated with the reference
 * kernels (ir/eval.c) and its outputs become constants, keeping their
 * names; nodes after it then see constants, so chains fold in one walk,
 * inside If branches and Loop bodies too. Shape of a value whose
 * dimensions are known folds without its input, and Constant nodes become
 * constants. A fold never makes a constant larger than
 * opt->fold_max_bytes (checked from the shape function before anything is
 * allocated); input constants left unused are freed at once, so folding a
 * chain of weight transforms holds at most two copies.
 */
#include <string.h>

#include "core/alloc.h"
#include "ir/infer.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "ir/eval.h"

#define MAX_OPERANDS 64

typedef struct folder {
    sm_pass_ctx *pc;
    sm_rw *rw;
    int folded, over_budget;
} folder;

static int used(const sm_rw *rw, const sm_node *n)
{
    for (int i = 0; i < n->n_out; i++)
        if (sm_rw_uses(rw, n->out[i]))
            return 1;
    return 0;
}

/* Replaces n's outputs by the tensors in outs (taking them) when their
 * types agree with what the graph declares. */
static smelt_status commit(folder *f, sm_node *n, sm_tensor **outs)
{
    for (int i = 0; i < n->n_out; i++) {
        sm_type t = n->out[i]->type, d;
        sm_type_from_tensor(&d, outs[i]);
        if (sm_type_merge(&t, &d)) {
            char where[160];
            sm_node_where(n, where, sizeof where);
            sm_pass_log(f->pc,
                        "not folded: %s evaluates to a type its "
                        "output does not declare",
                        where);
            for (int j = 0; j < n->n_out; j++)
                sm_tensor_free(outs[j]);
            return SMELT_OK;
        }
    }
    int n_out = n->n_out;
    SM_TRY(sm_rw_node_to_consts(f->rw, n, outs));
    f->folded += n_out;
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i])
            sm_rw_drop_const_if_dead(f->rw, n->in[i]);
    return SMELT_OK;
}

smelt_status sm_pass_shape_dims(smelt_ctx_t *ctx, const sm_node *shape,
                                sm_tensor **out)
{
    return sm_node_shape_dims(ctx, shape, out);
}

/* Shape(x) where the requested dimensions of x are known. */
static smelt_status fold_shape(folder *f, sm_node *n)
{
    sm_tensor *out;
    SM_TRY(sm_pass_shape_dims(f->pc->ctx, n, &out));
    for (int64_t i = 0; out && i < out->numel; i++)
        if (((int64_t *)out->data)[i] < 0) {
            sm_tensor_free(out);
            return SMELT_OK;
        }
    return out ? commit(f, n, &out) : SMELT_OK;
}

static smelt_status try_fold(folder *f, sm_node *n)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    if (info->cls == SM_CLASS_CONTROL || !used(f->rw, n) ||
        n->n_in > MAX_OPERANDS || n->n_out > MAX_OPERANDS)
        return SMELT_OK;
    if (n->op == SM_OP_Shape && !n->in[0]->data)
        return fold_shape(f, n);
    sm_tensor *args[MAX_OPERANDS], *outs[MAX_OPERANDS];
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] && !n->in[i]->data)
            return SMELT_OK;
        args[i] = n->in[i] ? n->in[i]->data : NULL;
    }
    smelt_ctx_t scratch = {0};
    smelt_status st =
        sm_eval_node(&scratch, n, args, outs, f->pc->opt->fold_max_bytes);
    if (st == SMELT_ERR_NOMEM)
        return sm_err_nomem(f->pc->ctx);
    char where[160];
    if (st != SMELT_OK)
        sm_node_where(n, where, sizeof where);
    if (st == SMELT_ERR_LIMIT) {
        f->over_budget++;
        sm_pass_log(f->pc, "not folded: %s: %s", where, scratch.msg);
        return SMELT_OK;
    }
    if (st != SMELT_OK) {
        sm_pass_log(f->pc, "not folded: %s fails: %s", where, scratch.msg);
        return SMELT_OK;
    }
    /* A wrapped integer (shape arithmetic that overflows) is the model's
     * error: report it here, at its node, rather than fold the wrong
     * value into a shape that fails somewhere else. */
    st = sm_eval_check_exact(&scratch, n, args, outs);
    if (st != SMELT_OK) {
        for (int i = 0; i < n->n_out; i++)
            sm_tensor_free(outs[i]);
        if (st == SMELT_ERR_NOMEM)
            return sm_err_nomem(f->pc->ctx);
        sm_node_where(n, where, sizeof where);
        return sm_err(f->pc->ctx, st, "%s: %s", where, scratch.msg);
    }
    return commit(f, n, outs);
}

static smelt_status fold_block(folder *f, sm_block *b)
{
    sm_node *n = sm_rw_first(f->rw, b);
    while (n) {
        sm_node *next = sm_rw_next(f->rw, n);
        for (int i = 0; i < n->n_blocks; i++)
            SM_TRY(fold_block(f, n->blocks[i]));
        SM_TRY(try_fold(f, n));
        n = next;
    }
    return SMELT_OK;
}

smelt_status sm_pass_fold(sm_pass_ctx *pc, sm_graph *g)
{
    folder f = {pc, NULL, 0, 0};
    SM_TRY(sm_rw_new(pc->ctx, g, &f.rw));
    smelt_status st = fold_block(&f, g->top);
    pc->stats->folded = f.folded;
    pc->stats->removed = sm_rw_removed(f.rw);
    pc->stats->changed = f.folded > 0;
    if (f.over_budget)
        sm_pass_log(pc, "%d node(s) kept: output larger than %zu bytes",
                    f.over_budget, pc->opt->fold_max_bytes);
    sm_rw_free(f.rw);
    return st;
}
