/*
 * reduce.c - optimized ReduceSum, ReduceMean, ReduceMax and ReduceMin on
 * f32 when the reduced axes form one contiguous run of dims: the input is
 * [outer, R, inner], reduced over R either along a row (inner = 1: one
 * vectorized reduction per output) or row by row into the output's inner
 * lanes (vector accumulate). Other axis sets run the reference kernel.
 */
#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"

typedef struct red_geom {
    int64_t outer, r, inner;
    int identity; /* noop_with_empty_axes with no axes: a copy */
} red_geom;

/*
 * The reduced dims of X: from the axes attribute, or, when axes come as
 * an input (whose value supports() cannot see), from the output shape
 * with keepdims = 1 (a dim of X that became 1). Fails (0) when the axes
 * are not one run of dims.
 */
static int red_analyze(const sm_attrs *at, int has_axes_input, int xr,
                       const int64_t *xd, int yr, const int64_t *yd,
                       const int64_t *axes_in, int n_axes_in, red_geom *g)
{
    int red[SMELT_MAX_DIMS] = {0};
    memset(g, 0, sizeof *g);
    if (has_axes_input && !axes_in) {
        int any = 0;
        if (sm_attrs_int(at, "keepdims", 1) == 0 || yr != xr)
            return 0;
        for (int d = 0; d < xr; d++) {
            if (yd[d] == xd[d])
                continue;
            if (yd[d] != 1)
                return 0;
            red[d] = any = 1;
        }
        if (!any) /* nothing visibly reduced: the axes may be empty */
            return 0;
    } else {
        const int64_t *ax = axes_in;
        int na = n_axes_in;
        if (!has_axes_input)
            na = sm_attrs_ints(at, "axes", &ax);
        if (na <= 0 && sm_attrs_int(at, "noop_with_empty_axes", 0)) {
            g->identity = 1;
            g->outer = sm_cpu_prod(xr, xd);
            return sm_cpu_prod(yr, yd) == g->outer;
        }
        for (int d = 0; na <= 0 && d < xr; d++)
            red[d] = 1;
        for (int i = 0; i < na; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + xr : ax[i];
            if (a < 0 || a >= xr)
                return 0;
            red[a] = 1;
        }
    }
    /* the run of reduced dims, size-1 dims being either */
    int first = xr, last = xr - 1;
    for (int d = 0; d < xr; d++)
        if (red[d] && xd[d] != 1) {
            if (first == xr)
                first = d;
            last = d;
        }
    for (int d = first; d <= last; d++)
        if (!red[d] && xd[d] != 1)
            return 0;
    g->outer = sm_cpu_prod(first, xd);
    g->r = first <= last ? sm_cpu_prod(last + 1 - first, xd + first) : 1;
    g->inner = first <= last ? sm_cpu_prod(xr - last - 1, xd + last + 1) : 1;
    return sm_cpu_prod(yr, yd) == g->outer * g->inner;
}

int sm_cpu_reduce_supports(const sm_kernel_desc *d)
{
    red_geom g;
    int has_in = d->n_in > 1 && d->in[1].present;
    if (d->n_out != 1 || d->in[0].dtype != SMELT_DTYPE_F32 ||
        d->out[0].dtype != SMELT_DTYPE_F32)
        return 0;
    return red_analyze(&d->attrs, has_in, d->in[0].ndim, d->in[0].dims,
                       d->out[0].ndim, d->out[0].dims, NULL, 0, &g) &&
           (g.r > 0 || g.identity);
}

typedef struct red_job {
    const sm_cpu_ops *ops;
    int kind;
    float scale;
    red_geom g;
    const float *x;
    float *y;
} red_job;

static void red_outer(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const red_job *J = arg;
    const red_geom *g = &J->g;
    for (int64_t o = begin; o < end; o++) {
        const float *x = J->x + o * g->r * g->inner;
        float *y = J->y + o * g->inner;
        if (g->inner == 1) {
            *y = J->ops->reduce(J->kind, x, g->r) * J->scale;
            continue;
        }
        memcpy(y, x, (size_t)g->inner * sizeof *y);
        for (int64_t i = 1; i < g->r; i++)
            J->ops->reduce_acc(J->kind, y, x + i * g->inner, g->inner);
        if (J->scale != 1.0f)
            for (int64_t i = 0; i < g->inner; i++)
                y[i] *= J->scale;
    }
}

static smelt_status red_apply(const sm_cpu_ops *ops, const sm_kargs *a,
                              sm_threadpool *tp, int kind, int mean)
{
    const sm_tensor *x = a->in[0], *axes = a->n_in > 1 ? a->in[1] : NULL;
    sm_tensor *y = a->out[0];
    red_job J = {
        .ops = ops, .kind = kind, .scale = 1.0f, .x = x->data, .y = y->data};
    if (axes && axes->dtype != SMELT_DTYPE_I64)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME, "%s: axes must be int64",
                      a->op_name);
    if (!red_analyze(&a->attrs, axes != NULL, x->ndim, x->dims, y->ndim,
                     y->dims, axes ? axes->data : NULL,
                     axes ? (int)axes->numel : 0, &J.g))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: axes are not one run of dims or do not match the "
                      "output",
                      a->op_name);
    if (J.g.identity) {
        memcpy(y->data, x->data, (size_t)x->numel * sizeof(float));
        return SMELT_OK;
    }
    if (mean)
        J.scale = 1.0f / (float)J.g.r;
    if (sm_threadpool_size(tp) > 1 && J.g.outer > 1 && x->numel >= 32768)
        sm_parallel_for(tp, J.g.outer, sm_cpu_chunk(J.g.outer, tp), red_outer,
                        &J);
    else
        red_outer(&J, 0, J.g.outer, 0);
    return SMELT_OK;
}

/* The run hook of each reduction (kernels.def names them). */
#define REDUCE_OP(name, kind, mean)                                            \
    smelt_status sm_cpu_##name##_run(const sm_cpu_ops *ops, const sm_kargs *a, \
                                     const sm_cpu_config *c,                   \
                                     const void *packed, sm_threadpool *tp)    \
    {                                                                          \
        (void)c;                                                               \
        (void)packed;                                                          \
        return red_apply(ops, a, tp, kind, mean);                              \
    }

REDUCE_OP(reducesum, SM_RED_SUM, 0)
REDUCE_OP(reducemean, SM_RED_SUM, 1)
REDUCE_OP(reducemax, SM_RED_MAX, 0)
REDUCE_OP(reducemin, SM_RED_MIN, 0)
