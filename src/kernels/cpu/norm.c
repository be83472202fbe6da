/*
 * norm.c - optimized Softmax, LogSoftmax and LayerNormalization on f32:
 * one vectorized row primitive per normalized slice (cpu_ops.h), slices
 * split over the pool. Softmax along an inner axis runs the column form,
 * vectorized across the inner lanes instead of gathering.
 */
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"

/* The axis attribute resolved against rank r (rank 0 counts as 1); -1
 * when out of range. */
static int norm_axis(const sm_attrs *at, int r)
{
    int64_t ax = sm_attrs_int(at, "axis", -1);
    int rr = r ? r : 1;
    if (ax < -rr || ax >= rr)
        return -1;
    return (int)(ax < 0 ? ax + rr : ax);
}

/* ---- softmax ------------------------------------------------------------- */

typedef struct sm_job {
    const sm_cpu_ops *ops;
    const float *x;
    float *y;
    int64_t n, inner;
    int log_;
} sm_job;

static void softmax_slices(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const sm_job *J = arg;
    for (int64_t o = begin; o < end; o++) {
        const float *x = J->x + o * J->n * J->inner;
        float *y = J->y + o * J->n * J->inner;
        if (J->inner == 1)
            J->ops->softmax_row(x, y, J->n, J->log_);
        else
            J->ops->softmax_cols(x, y, J->n, J->inner, J->log_);
    }
}

int sm_cpu_softmax_supports(const sm_kernel_desc *d)
{
    return d->n_out == 1 && sm_cpu_all_f32(d) &&
           norm_axis(&d->attrs, d->in[0].ndim) >= 0;
}

/* X viewed as [outer, n, inner] around the axis: one row (inner = 1) or
 * column-form normalization per outer index, split over the pool. */
static smelt_status softmax_apply(const sm_cpu_ops *ops, const sm_kargs *a,
                                  sm_threadpool *tp, int log_)
{
    const sm_tensor *x = a->in[0];
    int ax = norm_axis(&a->attrs, x->ndim);
    if (ax < 0 || a->out[0]->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: bad axis or output size for X of rank %d",
                      a->op_name, x->ndim);
    sm_job J = {ops, x->data, a->out[0]->data, x->ndim ? x->dims[ax] : 1,
                1,   log_};
    int64_t outer = sm_cpu_prod(ax, x->dims);
    J.inner = x->ndim ? sm_cpu_prod(x->ndim - ax - 1, x->dims + ax + 1) : 1;
    if (J.n == 0 || J.inner == 0)
        return SMELT_OK;
    if (sm_threadpool_size(tp) > 1 && outer > 1 && x->numel >= 8192)
        sm_parallel_for(tp, outer, sm_cpu_chunk(outer, tp), softmax_slices, &J);
    else
        softmax_slices(&J, 0, outer, 0);
    return SMELT_OK;
}

smelt_status sm_cpu_softmax_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                const sm_cpu_config *c, const void *packed,
                                sm_threadpool *tp)
{
    (void)c;
    (void)packed;
    return softmax_apply(ops, a, tp, 0);
}

smelt_status sm_cpu_logsoftmax_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                   const sm_cpu_config *c, const void *packed,
                                   sm_threadpool *tp)
{
    (void)c;
    (void)packed;
    return softmax_apply(ops, a, tp, 1);
}

/* ---- layer normalization ------------------------------------------------- */

/* Whether t (rank tr, dims td) broadcast onto X is exactly the normalized
 * dims [ax, r): constant over the leading dims, full over the others. */
static int per_slice(int tr, const int64_t *td, int r, const int64_t *xd,
                     int ax)
{
    int64_t s[SMELT_MAX_DIMS];
    if (!sm_cpu_bcast_strides(tr, td, r, xd, s))
        return 0;
    int64_t want = 1;
    for (int d = r - 1; d >= 0; d--) {
        if (d < ax && s[d] != 0)
            return 0;
        if (d >= ax) {
            if (xd[d] != 1 && s[d] != want)
                return 0;
            want *= xd[d];
        }
    }
    return 1;
}

int sm_cpu_layernorm_supports(const sm_kernel_desc *d)
{
    int r = d->in[0].ndim, ax = norm_axis(&d->attrs, r);
    if (!sm_cpu_all_f32(d) || r < 1 || ax < 0 ||
        sm_cpu_prod(r - ax, d->in[0].dims + ax) == 0)
        return 0;
    for (int i = 1; i < d->n_in && i < 3; i++)
        if (d->in[i].present &&
            !per_slice(d->in[i].ndim, d->in[i].dims, r, d->in[0].dims, ax))
            return 0;
    return 1;
}

typedef struct ln_job {
    const sm_cpu_ops *ops;
    const float *x, *g, *b;
    float *y, *mean, *rstd;
    int64_t n;
    float eps;
} ln_job;

static void ln_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const ln_job *J = arg;
    for (int64_t o = begin; o < end; o++)
        J->ops->layernorm_row(J->x + o * J->n, J->y + o * J->n, J->n, J->g,
                              J->b, J->eps, J->mean ? J->mean + o : NULL,
                              J->rstd ? J->rstd + o : NULL);
}

smelt_status sm_cpu_layernorm_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                  const sm_cpu_config *c, const void *packed,
                                  sm_threadpool *tp)
{
    (void)c;
    (void)packed;
    const sm_tensor *x = a->in[0];
    const sm_tensor *g = a->in[1], *b = a->n_in > 2 ? a->in[2] : NULL;
    int r = x->ndim, ax = norm_axis(&a->attrs, r);
    if (r < 1 || ax < 0 || !per_slice(g->ndim, g->dims, r, x->dims, ax) ||
        (b && !per_slice(b->ndim, b->dims, r, x->dims, ax)))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: Scale or B does not fit the normalized dims",
                      a->op_name);
    int64_t outer = sm_cpu_prod(ax, x->dims);
    ln_job J = {ops,
                x->data,
                g->data,
                b ? b->data : NULL,
                a->out[0]->data,
                a->n_out > 1 && a->out[1] ? a->out[1]->data : NULL,
                a->n_out > 2 && a->out[2] ? a->out[2]->data : NULL,
                outer ? x->numel / outer : 0,
                (float)sm_attrs_float(&a->attrs, "epsilon", 1e-5)};
    if (J.n == 0)
        return SMELT_OK;
    if (sm_threadpool_size(tp) > 1 && outer > 1 && x->numel >= 8192)
        sm_parallel_for(tp, outer, sm_cpu_chunk(outer, tp), ln_rows, &J);
    else
        ln_rows(&J, 0, outer, 0);
    return SMELT_OK;
}
