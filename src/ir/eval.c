/*
 * eval.c - one node on concrete tensors: shape function, then reference
 * kernel (through kernels/kernel.h). Used by shape inference (small shape
 * computations), constant folding, eager ops and the runtime's walker.
 */
#include "ir/eval.h"

#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"

#define MAX_OPERANDS 64

/* Output types from the shape function given the concrete inputs. */
static smelt_status eval_shapes(smelt_ctx_t *ctx, const sm_node *n,
                                sm_tensor *const *args, sm_type *types_out)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    sm_type types_in[MAX_OPERANDS];
    sm_operand ops[MAX_OPERANDS];
    for (int i = 0; i < n->n_in; i++) {
        ops[i].present = args[i] != NULL;
        ops[i].type = &types_in[i];
        ops[i].data = args[i];
        if (args[i])
            sm_type_from_tensor(&types_in[i], args[i]);
        else
            sm_type_unknown(&types_in[i]);
    }
    for (int i = 0; i < n->n_out; i++)
        sm_type_unknown(&types_out[i]);
    sm_shape_ctx s = {info,     sm_node_attrs(n), n->n_in, ops,
                      n->n_out, types_out,        NULL,    ctx};
    return info->shape(&s);
}

smelt_status sm_eval_node(smelt_ctx_t *ctx, const sm_node *n,
                          sm_tensor *const *args, sm_tensor **outs,
                          size_t max_bytes)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    for (int i = 0; i < n->n_out; i++)
        outs[i] = NULL;
    if (info->cls == SM_CLASS_CONTROL)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "%s: control ops are not evaluated node by node",
                      info->name);
    if (n->n_in > MAX_OPERANDS || n->n_out > MAX_OPERANDS)
        return sm_err(ctx, SMELT_ERR_LIMIT, "%s: more than %d operands",
                      info->name, MAX_OPERANDS);
    sm_type types[MAX_OPERANDS];
    SM_TRY(eval_shapes(ctx, n, args, types));
    int64_t dims[MAX_OPERANDS][SMELT_MAX_DIMS];
    for (int i = 0; i < n->n_out; i++) {
        const sm_type *t = &types[i];
        if (!sm_type_known(t))
            return sm_err(ctx, SMELT_ERR_RUNTIME,
                          "%s: output %d's shape could not be determined",
                          info->name, i);
        for (int d = 0; d < t->ndim; d++)
            dims[i][d] = t->dims[d].size;
        int64_t numel;
        SM_TRY(sm_shape_numel(ctx, t->ndim, dims[i], smelt_dtype_size(t->dtype),
                              &numel));
        size_t bytes = (size_t)numel * smelt_dtype_size(t->dtype);
        if (max_bytes && bytes > max_bytes)
            return sm_err(ctx, SMELT_ERR_LIMIT,
                          "%s: output %d would take %zu bytes (limit %zu)",
                          info->name, i, bytes, max_bytes);
    }
    smelt_status st = SMELT_OK;
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++)
        st = sm_tensor_new(ctx, types[i].dtype, types[i].ndim, dims[i],
                           &outs[i]);
    sm_kargs a = {.op_name = info->name,
                  .attrs = sm_node_attrs(n),
                  .n_in = n->n_in,
                  .in = args,
                  .n_out = n->n_out,
                  .out = outs,
                  .ctx = ctx};
    if (st == SMELT_OK)
        st = info->ref(&a);
    if (st != SMELT_OK)
        for (int i = 0; i < n->n_out; i++) {
            sm_tensor_free(outs[i]);
            outs[i] = NULL;
        }
    return st;
}
