/*
 * scatter.c - ScatterElements on f32 with reduction none or add, int32 or
 * int64 indices, any rank and axis.
 *
 * The gradients of MaxPool, GatherElements and TopK scatter dY into
 * zeros with reduction add (autograd/rules_pool.c, rules_index.c); the
 * reference loads and stores every element through the dtype switch and
 * walks a multi-index per update (resnet18's step: 9 ms for one
 * 8x64x16x16 scatter). Here the indices are checked by the reference's
 * own check (an out-of-range index is the same error), data is copied
 * once, and the updates are applied in the reference's order, adds in
 * double as it does, so the result is bit for bit the same; the 1-D form
 * with int64 indices reads them directly (scatter_flat_i64). One thread:
 * repeated indices would race.
 */
#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/select.h"

/* The node's axis in [0, r), or -1. */
static int scatter_axis(const sm_attrs *at, int r)
{
    int64_t a = sm_attrs_int(at, "axis", 0);
    if (a < -r || a >= r)
        return -1;
    return (int)(a < 0 ? a + r : a);
}

/* 1 for reduction none, 2 for add, 0 for the others. */
static int scatter_mode(const sm_attrs *at)
{
    const char *r = sm_attrs_string(at, "reduction", "none");
    return !strcmp(r, "none") ? 1 : !strcmp(r, "add") ? 2 : 0;
}

int sm_cpu_scatterelements_supports(const sm_kernel_desc *d)
{
    if (d->n_in != 3 || d->n_out != 1 || d->in[0].dtype != SMELT_DTYPE_F32 ||
        d->in[2].dtype != SMELT_DTYPE_F32 ||
        d->out[0].dtype != SMELT_DTYPE_F32 ||
        (d->in[1].dtype != SMELT_DTYPE_I64 &&
         d->in[1].dtype != SMELT_DTYPE_I32) ||
        !scatter_mode(&d->attrs))
        return 0;
    int r = d->in[0].ndim;
    if (r < 1 || d->in[1].ndim != r || d->in[2].ndim != r ||
        scatter_axis(&d->attrs, r) < 0)
        return 0;
    return 1;
}

/* The 1-D form with int64 indices (MaxPool's gradient over the flattened
 * input): the indices read straight, not through the dtype switch. First
 * a range check without branches; an index out of range leaves the error
 * to the reference's check before anything is written. Adds in double,
 * in the reference's order, as the general loop does. */
static smelt_status scatter_flat_i64(const sm_kargs *a, int add)
{
    const sm_tensor *x = a->in[0], *ind = a->in[1], *up = a->in[2];
    float *yp = a->out[0]->data;
    const float *u = up->data;
    const int64_t *ip = ind->data;
    int64_t n = x->dims[0], m = ind->numel;
    int bad = 0;
    for (int64_t i = 0; i < m; i++)
        bad |= (ip[i] < -n) | (ip[i] >= n);
    if (bad)
        return sm_index_check(a->ctx, SMELT_ERR_RUNTIME, a->op_name, ind, 1, 0,
                              &x->dims[0]);
    if (yp != (const float *)x->data)
        memcpy(yp, x->data, (size_t)x->numel * sizeof *yp);
    for (int64_t i = 0; i < m; i++) {
        int64_t k = ip[i] < 0 ? ip[i] + n : ip[i];
        yp[k] = add ? (float)((double)yp[k] + (double)u[i]) : u[i];
    }
    return SMELT_OK;
}

smelt_status sm_cpu_scatterelements_run(const sm_cpu_ops *ops,
                                        const sm_kargs *a,
                                        const sm_cpu_config *c,
                                        const void *packed, sm_threadpool *tp)
{
    (void)ops;
    (void)c;
    (void)packed;
    (void)tp;
    const sm_tensor *x = a->in[0], *ind = a->in[1], *up = a->in[2];
    sm_tensor *y = a->out[0];
    int r = x->ndim, axis = scatter_axis(&a->attrs, r);
    int add = scatter_mode(&a->attrs) == 2;
    if (axis < 0 || ind->ndim != r || up->ndim != r || y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: data, indices, updates and output do not match",
                      a->op_name);
    for (int d = 0; d < r; d++)
        if (up->dims[d] != ind->dims[d] ||
            (d != axis && ind->dims[d] > x->dims[d]))
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: indices and updates do not fit data",
                          a->op_name);
    if (r == 1 && ind->dtype == SMELT_DTYPE_I64)
        return scatter_flat_i64(a, add);
    SM_TRY(sm_index_check(a->ctx, SMELT_ERR_RUNTIME, a->op_name, ind, 1, axis,
                          &x->dims[axis]));
    float *yp = y->data;
    const float *u = up->data;
    if (yp != (const float *)x->data)
        memcpy(yp, x->data, (size_t)x->numel * sizeof *yp);
    if (up->numel == 0)
        return SMELT_OK;
    int64_t xstr[SMELT_MAX_DIMS], idx[SMELT_MAX_DIMS] = {0};
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        xstr[d] = s;
        s *= x->dims[d];
    }
    int64_t n_axis = x->dims[axis], inner = ind->dims[r - 1];
    int64_t rows = up->numel / inner;
    /* a row of the updates at a time: the last dim's offsets step by 1 */
    for (int64_t row = 0; row < rows; row++) {
        int64_t base = 0, q = row;
        for (int d = r - 2; d >= 0; d--) {
            idx[d] = q % ind->dims[d];
            q /= ind->dims[d];
        }
        for (int d = 0; d < r - 1; d++)
            if (d != axis)
                base += idx[d] * xstr[d];
        for (int64_t e = 0; e < inner; e++) {
            int64_t i = row * inner + e;
            int64_t k = sm_index_at(ind, i, n_axis);
            int64_t dst = base + k * xstr[axis] + (axis == r - 1 ? 0 : e);
            yp[dst] = add ? (float)((double)yp[dst] + (double)u[i]) : u[i];
        }
    }
    return SMELT_OK;
}
