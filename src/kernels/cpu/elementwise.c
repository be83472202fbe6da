/*
 * elementwise.c - optimized elementwise kernels on f32: the unary activations
 * and math functions (one vectorized sweep, split over the pool when
 * large) and the binary arithmetic ops with numpy broadcasting (dims
 * collapsed until the innermost run has unit or zero strides, which the
 * vector loop takes as a row or a broadcast scalar).
 */
#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "core/act.h"
#include "kernels/cpu/registry.h"

/* ops->unary takes an activation or an SM_UNARY_* function in one int. */
_Static_assert((int)SM_ACT_COUNT <= (int)SM_UNARY_EXP,
               "SM_UNARY_* must start past the activations of core/act.def");

/* Elements per task: big enough that splitting pays for the wake-up. */
#define ELT_GRAIN 16384

/* ---- unary --------------------------------------------------------------- */

typedef struct un_job {
    const sm_cpu_ops *ops;
    int f;
    float a, b;
    const float *x;
    float *y;
} un_job;

static void un_chunk(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const un_job *J = arg;
    begin *= ELT_GRAIN;
    end *= ELT_GRAIN;
    J->ops->unary(J->f, J->a, J->b, J->x + begin, J->y + begin, end - begin);
}

/* y = f(x) over n elements, in ELT_GRAIN chunks over the pool (the last
 * chunk is cut at n by giving the tail its own call). */
static void run_unary(const sm_cpu_ops *ops, int f, float a, float b,
                      const float *x, float *y, int64_t n, sm_threadpool *tp)
{
    int64_t chunks = n / ELT_GRAIN;
    un_job J = {ops, f, a, b, x, y};
    if (chunks > 1 && sm_threadpool_size(tp) > 1)
        sm_parallel_for(tp, chunks, 1, un_chunk, &J);
    else if (chunks > 0)
        un_chunk(&J, 0, chunks, 0);
    int64_t done = chunks * ELT_GRAIN;
    if (done < n)
        ops->unary(f, a, b, x + done, y + done, n - done);
}

int sm_cpu_unary_supports(const sm_kernel_desc *d)
{
    return d->n_out == 1 && d->n_in >= 1 && sm_cpu_all_f32(d) &&
           d->in[0].ndim == d->out[0].ndim &&
           sm_cpu_prod(d->in[0].ndim, d->in[0].dims) ==
               sm_cpu_prod(d->out[0].ndim, d->out[0].dims);
}

/* Clip's bounds come as optional scalar inputs; supports() cannot see
 * their values but needs them to be one element. */
int sm_cpu_clip_supports(const sm_kernel_desc *d)
{
    for (int i = 1; i < d->n_in; i++)
        if (d->in[i].present && sm_cpu_prod(d->in[i].ndim, d->in[i].dims) != 1)
            return 0;
    return sm_cpu_unary_supports(d);
}

/* The unary function of a node and its parameters. */
static smelt_status unary_apply(const sm_cpu_ops *ops, const sm_kargs *a,
                                sm_threadpool *tp, int f)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->numel != y->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME, "%s: Y must have X's size",
                      a->op_name);
    float pa = 0, pb = 0;
    if (f == SM_ACT_LEAKYRELU)
        pa = (float)sm_attrs_float(&a->attrs, "alpha", 0.01);
    if (f == SM_ACT_GELU) {
        const char *ap = sm_attrs_string(&a->attrs, "approximate", "none");
        if (strcmp(ap, "none") && strcmp(ap, "tanh"))
            return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: approximate is '%s'; expected none or tanh",
                          a->op_name, ap);
        if (!strcmp(ap, "tanh"))
            f = SM_ACT_GELU_TANH;
    }
    if (f == SM_ACT_CLIP) {
        const sm_tensor *lo = a->n_in > 1 ? a->in[1] : NULL;
        const sm_tensor *hi = a->n_in > 2 ? a->in[2] : NULL;
        pa = lo ? *(const float *)lo->data : -__builtin_inff();
        pb = hi ? *(const float *)hi->data : __builtin_inff();
    }
    run_unary(ops, f, pa, pb, x->data, y->data, x->numel, tp);
    return SMELT_OK;
}

/* The run hook of each unary op (kernels.def names them). */
#define UNARY_OP(name, f)                                                      \
    smelt_status sm_cpu_##name##_run(const sm_cpu_ops *ops, const sm_kargs *a, \
                                     const sm_cpu_config *c,                   \
                                     const void *packed, sm_threadpool *tp)    \
    {                                                                          \
        (void)c;                                                               \
        (void)packed;                                                          \
        return unary_apply(ops, a, tp, f);                                     \
    }

UNARY_OP(relu, SM_ACT_RELU)
UNARY_OP(sigmoid, SM_ACT_SIGMOID)
UNARY_OP(tanh, SM_ACT_TANH)
UNARY_OP(leakyrelu, SM_ACT_LEAKYRELU)
UNARY_OP(gelu, SM_ACT_GELU)
UNARY_OP(clip, SM_ACT_CLIP)
UNARY_OP(exp, SM_UNARY_EXP)
UNARY_OP(neg, SM_UNARY_NEG)
UNARY_OP(abs, SM_UNARY_ABS)
UNARY_OP(sqrt, SM_UNARY_SQRT)
UNARY_OP(erf, SM_UNARY_ERF)
UNARY_OP(reciprocal, SM_UNARY_RECIP)

/* ---- binary with broadcasting -------------------------------------------- */

/* Broadcast strides of both inputs onto Y (operands 0 and 1 of g), as
 * collapsed loops whose last dim's strides are 0 or 1. */
static int bin_analyze(int ra, const int64_t *da, int rb, const int64_t *db,
                       int ry, const int64_t *dy, sm_cpu_loops *g)
{
    g->n_ops = 2;
    if (!sm_cpu_bcast_strides(ra, da, ry, dy, g->s[0]) ||
        !sm_cpu_bcast_strides(rb, db, ry, dy, g->s[1]))
        return 0;
    sm_cpu_loops_collapse(g, ry, dy);
    return 1;
}

int sm_cpu_binary_supports(const sm_kernel_desc *d)
{
    sm_cpu_loops g;
    return d->n_in == 2 && d->n_out == 1 && sm_cpu_all_f32(d) &&
           bin_analyze(d->in[0].ndim, d->in[0].dims, d->in[1].ndim,
                       d->in[1].dims, d->out[0].ndim, d->out[0].dims, &g);
}

typedef struct bin_job {
    const sm_cpu_ops *ops;
    int op;
    sm_cpu_loops g;
    const float *a, *b;
    float *y;
    int64_t rows; /* product of all dims but the last */
} bin_job;

/* Rows [begin, end) of the collapsed loops: each row one vector sweep. */
static void bin_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const bin_job *J = arg;
    const sm_cpu_loops *g = &J->g;
    int last = g->nd - 1;
    int64_t n = g->dims[last], off[2];
    for (int64_t r = begin; r < end; r++) {
        sm_cpu_loops_offsets(g, r, off);
        J->ops->binary(J->op, J->a + off[0], g->s[0][last], J->b + off[1],
                       g->s[1][last], J->y + r * n, n);
    }
}

/* Y = A op B with broadcasting: collapsed loops, split over the pool by
 * rows when the output is large. */
static smelt_status binary_apply(const sm_cpu_ops *ops, const sm_kargs *a,
                                 sm_threadpool *tp, int op)
{
    const sm_tensor *x0 = a->in[0], *x1 = a->in[1];
    sm_tensor *y = a->out[0];
    bin_job J = {
        .ops = ops, .op = op, .a = x0->data, .b = x1->data, .y = y->data};
    if (!bin_analyze(x0->ndim, x0->dims, x1->ndim, x1->dims, y->ndim, y->dims,
                     &J.g))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: inputs do not broadcast onto the output",
                      a->op_name);
    int64_t n = J.g.dims[J.g.nd - 1];
    J.rows = n ? y->numel / n : 0;
    if (sm_threadpool_size(tp) > 1 && J.rows > 1 && y->numel >= 2 * ELT_GRAIN)
        sm_parallel_for(tp, J.rows, sm_cpu_chunk(J.rows, tp), bin_rows, &J);
    else
        bin_rows(&J, 0, J.rows, 0);
    return SMELT_OK;
}

/* The run hook of each binary op (kernels.def names them). */
#define BINARY_OP(name, op)                                                    \
    smelt_status sm_cpu_##name##_run(const sm_cpu_ops *ops, const sm_kargs *a, \
                                     const sm_cpu_config *c,                   \
                                     const void *packed, sm_threadpool *tp)    \
    {                                                                          \
        (void)c;                                                               \
        (void)packed;                                                          \
        return binary_apply(ops, a, tp, op);                                   \
    }

BINARY_OP(add, SM_BIN_ADD)
BINARY_OP(sub, SM_BIN_SUB)
BINARY_OP(mul, SM_BIN_MUL)
BINARY_OP(div, SM_BIN_DIV)
BINARY_OP(max, SM_BIN_MAX)
BINARY_OP(min, SM_BIN_MIN)
