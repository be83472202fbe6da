/*
 * shape_pool.c - shape and dtype inference, and cost, of the pooling ops:
 * MaxPool (with its optional Indices output), AveragePool, LpPool,
 * GlobalAveragePool, GlobalMaxPool and GlobalLpPool. The window arithmetic
 * lives in kernels/ref/window.h, shared with the reference kernels and Conv.
 */
#include <string.h>

#include "ir/shape_util.h"
#include "kernels/ref/window.h"

/*
 * MaxPool and AveragePool: Y is [N, C, spatial...] with the window's
 * spatial sizes; the rank follows from kernel_shape when X's is unknown.
 * MaxPool also takes i8/u8 and may have an i64 Indices output of Y's
 * shape.
 */
smelt_status sm_shape_pool(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    int is_max =
        sm_op_from_name(s->op->name, (int)strlen(s->op->name)) == SM_OP_MaxPool;
    sm_type *y = &s->out[0];
    SM_TRY(sm_shape_dtype(
        s, 0, 0, SM_SHAPE_FLOAT | (is_max ? SM_SHAPE_INT8 : 0), &y->dtype));
    const int64_t *ks;
    int nsp = sm_attrs_ints(&s->attrs, "kernel_shape", &ks);
    if (nsp < 1 || nsp > SMELT_MAX_DIMS - 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: kernel_shape must have 1 to %d values (one per "
                      "spatial dim), got %d",
                      s->op->name, SMELT_MAX_DIMS - 2, nsp < 0 ? 0 : nsp);
    if (x->ndim >= 0 && x->ndim != nsp + 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X has rank %d but kernel_shape has %d values; "
                      "expected rank - 2 (N and C come first)",
                      s->op->name, x->ndim, nsp);
    int64_t order = sm_attrs_int(&s->attrs, "storage_order", 0);
    if (order != 0 && order != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: storage_order = %lld must be 0 or 1", s->op->name,
                      (long long)order);
    int64_t in[SMELT_MAX_DIMS];
    sm_shape_spatial_sizes(x, nsp, in);
    sm_window win;
    SM_TRY(sm_window_init(s->ctx, s->op->name, &s->attrs, SM_WINDOW_POOL, nsp,
                          in, NULL, &win));
    y->ndim = nsp + 2;
    y->dims[0] = sm_type_dim(x, 0);
    y->dims[1] = sm_type_dim(x, 1);
    sm_shape_window_dims(y, &win, x);
    for (int j = 1; j < s->n_out; j++) {
        s->out[j] = *y;
        s->out[j].dtype = SMELT_DTYPE_I64;
    }
    return SMELT_OK;
}

/* GlobalAveragePool and GlobalMaxPool: X [N, C, D...] gives
 * [N, C, 1, ...]. */
smelt_status sm_shape_globalpool(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_shape_need(s, 0, &x));
    sm_type *y = &s->out[0];
    SM_TRY(sm_shape_dtype(s, 0, 0, SM_SHAPE_FLOAT, &y->dtype));
    y->ndim = x->ndim;
    if (x->ndim < 0)
        return SMELT_OK;
    if (x->ndim < 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X must have rank >= 2 (N, C, spatial dims...), got "
                      "%d",
                      s->op->name, x->ndim);
    for (int d = 0; d < x->ndim; d++)
        y->dims[d] = d < 2 ? x->dims[d] : (sm_dim){1, NULL};
    return SMELT_OK;
}

/* LpPool's and GlobalLpPool's p: at least 1. */
static smelt_status check_p(sm_shape_ctx *s)
{
    int64_t p = sm_attrs_int(&s->attrs, "p", 2);
    if (p < 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: p = %lld must be at least 1", s->op->name,
                      (long long)p);
    return SMELT_OK;
}

/* LpPool: MaxPool's and AveragePool's window shape, float only. */
smelt_status sm_shape_lppool(sm_shape_ctx *s)
{
    SM_TRY(check_p(s));
    return sm_shape_pool(s);
}

/* GlobalLpPool: [N, C, D...] gives [N, C, 1, ...]. */
smelt_status sm_shape_globallppool(sm_shape_ctx *s)
{
    SM_TRY(check_p(s));
    return sm_shape_globalpool(s);
}

/* ---- costs -------------------------------------------------------------- */

/* Pooling: one operation per window element of every output element; the
 * global pools' window is a whole plane. */
void sm_cost_pool(const sm_shape_ctx *s, sm_cost *c)
{
    const int64_t *ks;
    int n = sm_attrs_ints(&s->attrs, "kernel_shape", &ks);
    double out = sm_type_numel(&s->out[0]), window = 1;
    for (int i = 0; i < n; i++)
        window *= (double)ks[i];
    if (n < 0) {
        const sm_type *x = sm_shape_in(s, 0);
        window = x ? sm_type_tail_volume(x, 2) : 1;
    }
    sm_cost_io(s, c, out * window);
}
