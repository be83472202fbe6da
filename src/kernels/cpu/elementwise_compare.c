/*
 * elementwise_compare.c - Greater, Less, GreaterOrEqual and LessOrEqual
 * on f32 with broadcasting, into bool.
 *
 * The backward pass builds masks with them: Relu's gradient is
 * Where(Greater(x, 0), dy, 0), MaxPool's and Clip's compare too, so a
 * training step runs one per activation on whole feature maps. The
 * reference kernel converts every element through a generic accessor
 * (about 100 ns each); here the loops are collapsed as the binary
 * arithmetic kernels do (sm_cpu_loops) and each row is one loop the
 * compiler vectorizes, its operands read with stride 1 or 0.
 */
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"

enum { CMP_GT, CMP_LT, CMP_GE, CMP_LE };

int sm_cpu_compare_supports(const sm_kernel_desc *d)
{
    sm_cpu_loops g = {.n_ops = 2};
    if (d->n_in != 2 || d->n_out != 1 || d->in[0].dtype != SMELT_DTYPE_F32 ||
        d->in[1].dtype != SMELT_DTYPE_F32 ||
        d->out[0].dtype != SMELT_DTYPE_BOOL)
        return 0;
    return sm_cpu_bcast_strides(d->in[0].ndim, d->in[0].dims, d->out[0].ndim,
                                d->out[0].dims, g.s[0]) &&
           sm_cpu_bcast_strides(d->in[1].ndim, d->in[1].dims, d->out[0].ndim,
                                d->out[0].dims, g.s[1]);
}

/* y[i] = a[i * sa] OP b[i * sb] for i < n; sa and sb are 0 or 1, and
 * each pair gets its own loop so that the strides are constants. */
#define CMP_ROW(OP)                                                            \
    do {                                                                       \
        if (sa && sb)                                                          \
            for (int64_t i = 0; i < n; i++)                                    \
                y[i] = a[i] OP b[i];                                           \
        else if (sa)                                                           \
            for (int64_t i = 0; i < n; i++)                                    \
                y[i] = a[i] OP b[0];                                           \
        else if (sb)                                                           \
            for (int64_t i = 0; i < n; i++)                                    \
                y[i] = a[0] OP b[i];                                           \
        else                                                                   \
            for (int64_t i = 0; i < n; i++)                                    \
                y[i] = a[0] OP b[0];                                           \
    } while (0)

static void cmp_row(int op, const float *a, int64_t sa, const float *b,
                    int64_t sb, unsigned char *y, int64_t n)
{
    switch (op) {
    case CMP_GT: CMP_ROW(>); break;
    case CMP_LT: CMP_ROW(<); break;
    case CMP_GE: CMP_ROW(>=); break;
    default: CMP_ROW(<=); break;
    }
}

typedef struct cmp_job {
    int op;
    sm_cpu_loops g;
    const float *a, *b;
    unsigned char *y;
} cmp_job;

/* Rows [begin, end) of the collapsed loops. */
static void cmp_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const cmp_job *J = arg;
    const sm_cpu_loops *g = &J->g;
    int last = g->nd - 1;
    int64_t n = g->dims[last], off[2];
    for (int64_t r = begin; r < end; r++) {
        sm_cpu_loops_offsets(g, r, off);
        cmp_row(J->op, J->a + off[0], g->s[0][last], J->b + off[1],
                g->s[1][last], J->y + r * n, n);
    }
}

static smelt_status cmp_apply(const sm_kargs *a, sm_threadpool *tp, int op)
{
    const sm_tensor *x0 = a->in[0], *x1 = a->in[1];
    sm_tensor *y = a->out[0];
    cmp_job J = {.op = op, .a = x0->data, .b = x1->data, .y = y->data};
    J.g.n_ops = 2;
    if (!sm_cpu_bcast_strides(x0->ndim, x0->dims, y->ndim, y->dims, J.g.s[0]) ||
        !sm_cpu_bcast_strides(x1->ndim, x1->dims, y->ndim, y->dims, J.g.s[1]))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the inputs do not broadcast to the output",
                      a->op_name);
    if (y->numel == 0)
        return SMELT_OK;
    sm_cpu_loops_collapse(&J.g, y->ndim, y->dims);
    int64_t rows = y->numel / J.g.dims[J.g.nd - 1];
    if (sm_threadpool_size(tp) > 1 && rows > 1 && y->numel >= 65536)
        sm_parallel_for(tp, rows, sm_cpu_chunk(rows, tp), cmp_rows, &J);
    else
        cmp_rows(&J, 0, rows, 0);
    return SMELT_OK;
}

/* The run hook of each comparison (kernels.def names them). */
#define COMPARE_OP(name, op)                                                   \
    smelt_status sm_cpu_##name##_run(const sm_cpu_ops *ops, const sm_kargs *a, \
                                     const sm_cpu_config *c,                   \
                                     const void *packed, sm_threadpool *tp)    \
    {                                                                          \
        (void)ops;                                                             \
        (void)c;                                                               \
        (void)packed;                                                          \
        return cmp_apply(a, tp, op);                                           \
    }

COMPARE_OP(greater, CMP_GT)
COMPARE_OP(less, CMP_LT)
COMPARE_OP(greaterorequal, CMP_GE)
COMPARE_OP(lessorequal, CMP_LE)
