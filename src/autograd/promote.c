/*
 * promote.c - a graph rewritten to compute in float64 (promote.h).
 *
 * gradcheck compares analytic gradients with central differences of
 * step 1e-6: in f32 the differences would be rounding noise (f32 has 7
 * digits), so the check runs on a copy of the model widened to f64.
 * Every place a floating dtype is decided is widened together: the
 * types of parameters and constants, constant data, tensor attributes
 * and the dtype attributes of Cast and EyeLike; the types of node
 * outputs are then inferred afresh, so the widened graph is consistent
 * and verifies.
 */
#include "autograd/promote.h"

#include <string.h>

#include "core/dtype.h"
#include "ir/infer.h"

int sm_promote_dtype(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F16 ||
           dt == SMELT_DTYPE_BF16;
}

smelt_status sm_tensor_promote_f64(smelt_ctx_t *ctx, const sm_tensor *t,
                                   sm_tensor **out)
{
    *out = NULL;
    if (!sm_promote_dtype(t->dtype))
        return sm_tensor_clone(ctx, t, out);
    sm_tensor *d = NULL;
    SM_TRY(sm_tensor_new(ctx, SMELT_DTYPE_F64, t->ndim, t->dims, &d));
    double *p = d->data;
    for (int64_t i = 0; i < t->numel; i++)
        p[i] = sm_load_f64(t->dtype, t->data, i);
    *out = d;
    return SMELT_OK;
}

/* Replaces *slot (a tensor the graph owns) by its f64 copy. */
static smelt_status promote_owned(smelt_ctx_t *ctx, sm_tensor **slot)
{
    if (!*slot || !sm_promote_dtype((*slot)->dtype))
        return SMELT_OK;
    sm_tensor *d = NULL;
    SM_TRY(sm_tensor_promote_f64(ctx, *slot, &d));
    sm_tensor_free(*slot);
    *slot = d;
    return SMELT_OK;
}

/* A list of doubles as an f64 tensor (Constant's value_float(s)). */
static smelt_status floats_tensor(smelt_ctx_t *ctx, const double *v, int n,
                                  int scalar, sm_tensor **out)
{
    int64_t dims[1] = {n};
    SM_TRY(sm_tensor_new(ctx, SMELT_DTYPE_F64, scalar ? 0 : 1, dims, out));
    memcpy((*out)->data, v, (size_t)n * sizeof *v);
    return SMELT_OK;
}

/* Widens the attributes of node n that decide a floating dtype. */
static smelt_status promote_attrs(smelt_ctx_t *ctx, sm_node *n)
{
    for (int i = 0; i < n->n_attr; i++) {
        sm_attr *a = &n->attrs[i];
        if (a->kind == SM_ATTR_TENSOR) {
            SM_TRY(promote_owned(ctx, &a->v.t));
        } else if (a->kind == SM_ATTR_INT &&
                   ((n->op == SM_OP_Cast && !strcmp(a->name, "to")) ||
                    (n->op == SM_OP_EyeLike && !strcmp(a->name, "dtype")))) {
            if (sm_promote_dtype(sm_dtype_from_onnx(a->v.i)))
                a->v.i = sm_dtype_to_onnx(SMELT_DTYPE_F64);
        } else if (n->op == SM_OP_Constant &&
                   (!strcmp(a->name, "value_float") ||
                    !strcmp(a->name, "value_floats"))) {
            /* These make f32 by definition: the same numbers become an
             * f64 `value` tensor. */
            sm_tensor *t = NULL;
            int scalar = a->kind == SM_ATTR_FLOAT;
            SM_TRY(floats_tensor(ctx, scalar ? &a->v.f : a->v.floats,
                                 scalar ? 1 : a->n, scalar, &t));
            a->name = "value";
            a->kind = SM_ATTR_TENSOR;
            a->n = 0;
            a->v.t = t;
        }
    }
    return SMELT_OK;
}

smelt_status sm_graph_promote_f64(smelt_ctx_t *ctx, sm_graph *g)
{
    /* Parameters and constants are widened; what nodes compute is
     * inferred again from them, so an op whose output dtype is fixed
     * (DynamicQuantizeLinear's f32 scale) keeps it. */
    for (int i = 0; i < g->n_values; i++) {
        sm_value *v = g->values[i];
        if (v->def) {
            sm_type_unknown(&v->type);
            continue;
        }
        if (sm_promote_dtype(v->type.dtype))
            v->type.dtype = SMELT_DTYPE_F64;
        SM_TRY(promote_owned(ctx, &v->data));
    }
    for (int i = 0; i < g->n_nodes_all; i++)
        if (g->nodes_all[i])
            SM_TRY(promote_attrs(ctx, g->nodes_all[i]));
    SM_TRY(sm_graph_infer(ctx, g));
    return sm_graph_verify(ctx, g);
}
