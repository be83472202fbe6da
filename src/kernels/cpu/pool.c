/*
 * pool.c - optimized 2-D MaxPool, AveragePool, GlobalAveragePool and
 * GlobalMaxPool on NCHW f32. Per plane the input rows are padded and
 * phase-split once (rowsplit.h; the padding reads as -inf for max, 0 for
 * average), so each kernel tap of an output row is one contiguous vector
 * max or add (cpu_ops.h) whatever the stride; averages are then scaled by
 * their per-position divisor (taps inside the input, or inside the padded
 * extent with count_include_pad; taps that ceil_mode lets run past the
 * padding never count). Planes split over the pool, each thread with its
 * own row buffer in the workspace. NaN inputs follow the vector max's
 * rules rather than the reference's (NaN does not always win).
 *
 * An output row with at most POOL_MAX_TAPS taps is one pass over the
 * row with every tap's sum or maximum kept in registers (max_taps; for
 * averages the depthwise row with unit weights, dw_row, which adds the
 * taps in the same order as one add per tap would). The averages'
 * divisor is the same for every column whose taps all lie inside the
 * input (found once per call), so only the border columns work it out
 * tap by tap. On a 16 x 8 x 8 plane this took an AveragePool from about
 * 10 us a call to 2 us (each tap had been a call over 8 floats, each
 * column's divisor three integer divisions).
 */
#include <math.h>
#include <string.h>

#include "core/act.h"
#include "core/alloc.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"
#include "kernels/cpu/rowsplit.h"
#include "kernels/ref/window.h"

/* Max pooling windows of at most this many taps (per output row) take
 * the one-pass path (cpu_ops.h max_taps). */
#define POOL_MAX_TAPS 64

typedef struct pool_job {
    const sm_cpu_ops *ops;
    sm_window w;
    sm_rowsplit rs;
    const float *x;
    float *y;
    int is_max, include_pad, global;
    int64_t H, W, OH, OW;
    char *ws;
    size_t per_thread;
    int64_t kx_off[POOL_MAX_TAPS]; /* split-row offset of each kx */
    /* columns [ox_in0, ox_in1) have all their taps inside the input */
    int64_t ox_in0, ox_in1;
} pool_job;

/* Unit weights: average pooling's sum of taps as a depthwise row. */
static const float pool_ones[POOL_MAX_TAPS] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* Kernel taps of one dim at output o that land in [0, in) (*lo..*hi as
 * kernel indices), and how many land before in + pad1 (the padded
 * extent), for the divisor. */
static void taps_1d(const sm_window *w, int d, int64_t o, int64_t *lo,
                    int64_t *hi, int64_t *n_pad)
{
    int64_t s = w->stride[d], dl = w->dil[d], k = w->kernel[d];
    int64_t base = o * s - w->pad0[d];
    int64_t a = base >= 0 ? 0 : (-base + dl - 1) / dl;
    int64_t b = w->in[d] - base <= 0 ? 0 : (w->in[d] - base - 1) / dl + 1;
    int64_t c = w->in[d] + w->pad1[d] - base <= 0
                    ? 0
                    : (w->in[d] + w->pad1[d] - base - 1) / dl + 1;
    *lo = a < k ? a : k;
    *hi = b < k ? b : k;
    if (*hi < *lo)
        *hi = *lo;
    *n_pad = c < k ? c : k;
}

/* The columns whose taps all lie inside the input, [*a, *b) (empty when
 * none): their divisor is the kernel width whether or not padding
 * counts. */
static void full_columns(const sm_window *w, int64_t ow, int64_t *a, int64_t *b)
{
    int64_t lo, hi, np, k = w->kernel[1];
    *a = 0;
    while (*a < ow) {
        taps_1d(w, 1, *a, &lo, &hi, &np);
        if (lo == 0 && hi == k && np == k)
            break;
        ++*a;
    }
    *b = ow;
    while (*b > *a) {
        taps_1d(w, 1, *b - 1, &lo, &hi, &np);
        if (lo == 0 && hi == k && np == k)
            break;
        --*b;
    }
}

/* Workspace floats per thread: the split rows of one plane. */
static size_t pool_per_thread(const sm_rowsplit *rs, int64_t H)
{
    return ((size_t)(H * sm_rowsplit_len(rs)) * sizeof(float) + 63) &
           ~(size_t)63;
}

/* One output row oy from the plane's split rows. */
static void pool_row(const pool_job *J, const float *buf, float *yr, int64_t oy)
{
    const sm_window *w = &J->w;
    int64_t ylo, yhi, ypad, row = sm_rowsplit_len(&J->rs);
    taps_1d(w, 0, oy, &ylo, &yhi, &ypad);
    int64_t ntaps = (yhi - ylo) * w->kernel[1];
    if (ntaps > 0 && ntaps <= POOL_MAX_TAPS) {
        /* all taps at once, the maximum or sum in registers */
        const float *taps[POOL_MAX_TAPS];
        for (int64_t ky = ylo; ky < yhi; ky++) {
            const float *r =
                buf + (oy * w->stride[0] - w->pad0[0] + ky * w->dil[0]) * row;
            for (int64_t kx = 0; kx < w->kernel[1]; kx++)
                taps[(ky - ylo) * w->kernel[1] + kx] = r + J->kx_off[kx];
        }
        if (J->is_max) {
            J->ops->max_taps(taps, (int)ntaps, yr, J->OW);
            return;
        }
        J->ops->dw_row(taps, pool_ones, (int)ntaps, yr, J->OW, 0.0f,
                       SM_ACT_NONE, 0.0f, 0.0f);
    } else {
        float init = J->is_max ? -INFINITY : 0.0f;
        for (int64_t ox = 0; ox < J->OW; ox++)
            yr[ox] = init;
        for (int64_t ky = ylo; ky < yhi; ky++) {
            const float *r =
                buf + (oy * w->stride[0] - w->pad0[0] + ky * w->dil[0]) * row;
            for (int64_t kx = 0; kx < w->kernel[1]; kx++) {
                const float *t = r + sm_rowsplit_tap(&J->rs, kx);
                if (J->is_max)
                    J->ops->max_strided(t, 1, yr, J->OW);
                else
                    J->ops->axpy_strided(1.0f, t, 1, yr, J->OW);
            }
        }
        if (J->is_max)
            return;
    }
    /* the divisor: taps inside the input (or the padded extent) */
    int64_t ycnt = J->include_pad ? ypad : yhi - ylo;
    if (ycnt > 0) {
        float div = (float)(ycnt * w->kernel[1]);
        for (int64_t ox = J->ox_in0; ox < J->ox_in1; ox++)
            yr[ox] = yr[ox] / div;
    }
    for (int64_t ox = 0; ox < J->OW; ox++) {
        if (ox == J->ox_in0 && ycnt > 0) {
            ox = J->ox_in1 - 1;
            continue;
        }
        int64_t xlo, xhi, xpad;
        taps_1d(w, 1, ox, &xlo, &xhi, &xpad);
        int64_t div = J->include_pad ? ypad * xpad : (yhi - ylo) * (xhi - xlo);
        yr[ox] = div ? yr[ox] / (float)div : NAN;
    }
}

/* Planes [begin, end): a global reduction, or the split rows then every
 * output row. */
static void pool_planes(void *arg, int64_t begin, int64_t end, int tid)
{
    const pool_job *J = arg;
    int64_t isz = J->H * J->W;
    float *buf = J->ws ? (float *)(J->ws + (size_t)tid * J->per_thread) : NULL;
    int64_t row = J->global ? 0 : sm_rowsplit_len(&J->rs);
    for (int64_t p = begin; p < end; p++) {
        const float *xp = J->x + p * isz;
        if (J->global) {
            float r =
                J->ops->reduce(J->is_max ? SM_RED_MAX : SM_RED_SUM, xp, isz);
            J->y[p] = J->is_max ? r : isz ? r / (float)isz : NAN;
            continue;
        }
        for (int64_t iy = 0; iy < J->H; iy++)
            sm_rowsplit_row(&J->rs, xp + iy * J->W,
                            J->is_max ? -INFINITY : 0.0f, buf + iy * row);
        for (int64_t oy = 0; oy < J->OH; oy++)
            pool_row(J, buf, J->y + (p * J->OH + oy) * J->OW, oy);
    }
}

/* The window of a pooling node over X's spatial dims; 0 if bad. */
static int pool_window(const sm_attrs *at, const int64_t *xd, sm_window *w)
{
    return sm_window_init(NULL, "pool", at, SM_WINDOW_POOL, 2, xd + 2, NULL,
                          w) == SMELT_OK;
}

/* The one way, with the windowed ops' row scratch per thread. */
void sm_cpu_pool_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                           sm_cpu_config *c)
{
    (void)ops;
    sm_window w;
    sm_rowsplit rs;
    c->algo = SM_CPU_ALGO_PLAIN;
    if (d->op == SM_OP_GlobalAveragePool || d->op == SM_OP_GlobalMaxPool ||
        !pool_window(&d->attrs, d->in[0].dims, &w))
        return;
    sm_rowsplit_init(&rs, w.out[1], w.kernel[1], w.stride[1], w.dil[1],
                     w.pad0[1], w.in[1], NULL);
    int n_threads = d->n_threads;
    c->ws_bytes = (size_t)(n_threads < 1 ? 1 : n_threads) *
                      pool_per_thread(&rs, w.in[0]) +
                  64;
}

/* Windows whose dilated extent or padding exceeds this (per dim) are
 * left to the reference: this kernel walks every column tap and keeps
 * padded rows in its workspace, so a kernel_shape or pads of 2^30 would
 * take gigabytes and hours, where the reference walks only the taps that
 * read the input. */
#define POOL_MAX_SPAN 4096

int sm_cpu_pool_supports(const sm_kernel_desc *d)
{
    if (d->n_out != 1 || !sm_cpu_all_f32(d) || d->in[0].ndim != 4)
        return 0;
    if (d->op == SM_OP_GlobalAveragePool || d->op == SM_OP_GlobalMaxPool)
        return 1;
    sm_window w;
    if (!pool_window(&d->attrs, d->in[0].dims, &w))
        return 0;
    for (int k = 0; k < 2; k++)
        if (w.kernel[k] * w.dil[k] > POOL_MAX_SPAN ||
            w.pad0[k] > POOL_MAX_SPAN || w.pad1[k] > POOL_MAX_SPAN)
            return 0;
    return d->out[0].dims[2] == w.out[0] && d->out[0].dims[3] == w.out[1];
}

/* The run of all four pooling ops: is_max / global pick the op. */
static smelt_status pool_run(const sm_cpu_ops *ops, const sm_kargs *a,
                             sm_threadpool *tp, int is_max, int global)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    pool_job J;
    memset(&J, 0, sizeof J);
    J.ops = ops;
    J.x = x->data;
    J.y = y->data;
    J.global = global;
    J.is_max = is_max;
    J.include_pad = sm_attrs_int(&a->attrs, "count_include_pad", 0) != 0;
    if (x->ndim != 4 || y->ndim != 4 || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1])
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X and Y must be 4-D with the same N and C",
                      a->op_name);
    J.H = x->dims[2];
    J.W = x->dims[3];
    J.OH = y->dims[2];
    J.OW = y->dims[3];
    if (!J.global) {
        SM_TRY(sm_window_init(a->ctx, a->op_name, &a->attrs, SM_WINDOW_POOL, 2,
                              x->dims + 2, NULL, &J.w));
        if (J.w.out[0] != J.OH || J.w.out[1] != J.OW)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: output shape does not match the window",
                          a->op_name);
    } else if (J.OH != 1 || J.OW != 1) {
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output must be [N, C, 1, 1]", a->op_name);
    }
    int64_t planes = x->dims[0] * x->dims[1];
    int threads = planes > 1 ? sm_threadpool_size(tp) : 1;
    void *own = NULL;
    if (!J.global) {
        sm_rowsplit_init(&J.rs, J.OW, J.w.kernel[1], J.w.stride[1], J.w.dil[1],
                         J.w.pad0[1], J.W, ops->gather2);
        J.per_thread = pool_per_thread(&J.rs, J.H);
        for (int64_t kx = 0; kx < J.w.kernel[1] && kx < POOL_MAX_TAPS; kx++)
            J.kx_off[kx] = sm_rowsplit_tap(&J.rs, kx);
        full_columns(&J.w, J.OW, &J.ox_in0, &J.ox_in1);
        J.ws = sm_cpu_scratch(a->workspace, a->workspace_bytes,
                              (size_t)threads * J.per_thread + 64, &own);
        if (!J.ws)
            return sm_err_nomem(a->ctx);
    }
    /* one plane: the calling thread alone (the scratch is for one) */
    sm_parallel_for(tp, planes, sm_cpu_chunk(planes, tp), pool_planes, &J);
    sm_free(own);
    return SMELT_OK;
}

/* The run hook of each pooling op (kernels.def names them). */
#define POOL_OP(name, is_max, global)                                          \
    smelt_status sm_cpu_##name##_run(const sm_cpu_ops *ops, const sm_kargs *a, \
                                     const sm_cpu_config *c,                   \
                                     const void *packed, sm_threadpool *tp)    \
    {                                                                          \
        (void)c;                                                               \
        (void)packed;                                                          \
        return pool_run(ops, a, tp, is_max, global);                           \
    }
POOL_OP(maxpool, 1, 0)
POOL_OP(avgpool, 0, 0)
POOL_OP(gmaxpool, 1, 1)
POOL_OP(gavgpool, 0, 1)
