/*
 * eval.c - one node on concrete tensors: shape function, then reference
 * kernel (through kernels/kernel.h). Used by shape inference (small shape
 * computations), constant folding, eager ops and the runtime's walker.
 */
#include "ir/eval.h"

#include <math.h>
#include <stdio.h>
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

/* How many leading inputs of an integer op carry the numbers its result
 * is computed from (the rest are axes); 0 for ops not checked. */
static int exact_inputs(const sm_node *n)
{
    switch (n->op) {
    case SM_OP_Add:
    case SM_OP_Sub:
    case SM_OP_Mul:
    case SM_OP_Sum:
    case SM_OP_Neg:
    case SM_OP_Abs: return n->n_in;
    case SM_OP_ReduceSum:
    case SM_OP_ReduceProd:
    case SM_OP_CumSum: return 1;
    default: return 0;
    }
}

/* "[1, 2, 3, ...]": up to four values of t, for messages. */
static void show_values(const sm_tensor *t, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int64_t i = 0; i < t->numel && i < 4 && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%.17g", i ? ", " : "",
                              sm_load_f64(t->dtype, t->data, i));
    if (k < size)
        snprintf(buf + k, size - k, "%s]", t->numel > 4 ? ", ..." : "");
}

/* The integer inputs among the first k of args as new f64 tensors in
 * f[] (others shared); returns 0 when out of memory. */
static int to_f64(sm_tensor *const *args, int n_in, int k, sm_tensor **f,
                  unsigned char *made)
{
    for (int i = 0; i < n_in; i++) {
        f[i] = args[i];
        made[i] = 0;
        if (i >= k || !args[i] || !sm_dtype_is_int(args[i]->dtype))
            continue;
        if (sm_tensor_new(NULL, SMELT_DTYPE_F64, args[i]->ndim, args[i]->dims,
                          &f[i]) != SMELT_OK)
            return 0;
        made[i] = 1;
        for (int64_t j = 0; j < args[i]->numel; j++)
            ((double *)f[i]->data)[j] =
                sm_load_f64(args[i]->dtype, args[i]->data, j);
    }
    return 1;
}

smelt_status sm_eval_check_exact(smelt_ctx_t *ctx, const sm_node *n,
                                 sm_tensor *const *args, sm_tensor *const *outs)
{
    int k = exact_inputs(n);
    if (!k || n->n_out != 1 || n->n_in > MAX_OPERANDS ||
        !sm_dtype_is_int(outs[0]->dtype))
        return SMELT_OK;
    sm_tensor *f[MAX_OPERANDS], *want = NULL;
    unsigned char made[MAX_OPERANDS] = {0};
    smelt_ctx_t scratch = {0};
    smelt_status st = SMELT_OK;
    if (!to_f64(args, n->n_in, k, f, made))
        st = sm_err_nomem(ctx);
    else if (sm_eval_node(&scratch, n, f, &want, 0) == SMELT_OK &&
             want->numel == outs[0]->numel) {
        for (int64_t j = 0; j < want->numel && st == SMELT_OK; j++) {
            double w = ((double *)want->data)[j];
            double got = sm_load_f64(outs[0]->dtype, outs[0]->data, j);
            if (fabs(w - got) <= 1e-9 * fabs(w) + 0.5)
                continue;
            char in[2][200] = {"", ""};
            for (int i = 0; i < 2 && i < n->n_in; i++)
                if (args[i])
                    show_values(args[i], in[i], sizeof in[i]);
            st = sm_err(ctx, SMELT_ERR_LIMIT,
                        "%s overflows %s: element %lld is %.17g, not "
                        "%.17g (inputs %s%s%s)",
                        sm_op_info_get(n->op)->name,
                        smelt_dtype_name(outs[0]->dtype), (long long)j, w, got,
                        in[0], in[1][0] ? " and " : "", in[1]);
        }
    }
    sm_tensor_free(want);
    for (int i = 0; i < n->n_in; i++)
        if (made[i])
            sm_tensor_free(f[i]);
    return st;
}
