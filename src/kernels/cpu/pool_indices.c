/*
 * pool_indices.c - 2-D MaxPool on f32 with its Indices output
 * (storage_order 0), the form the backward pass asks for: MaxPool's
 * gradient scatters dY to the indices of a second MaxPool of X
 * (autograd/rules_pool.c). pool.c computes the maxima alone, so this
 * node ran on the reference kernel, which loads every tap through a
 * dtype switch (the digits CNN's step at batch 256: 17 ms of 50).
 *
 * Each output scans the taps of its window that read the input in
 * row-major kernel order, keeping the first maximum, NaN winning as in
 * the reference (and PyTorch); Indices hold the flat index into X,
 * batch and channel included. The planes split over the pool. The
 * window arithmetic is the reference's, so both agree bit for bit.
 */
#include <math.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/window.h"

int sm_cpu_maxpool_indices_supports(const sm_kernel_desc *d)
{
    sm_window w;
    if (d->n_in != 1 || d->n_out != 2 || !d->out[1].present ||
        d->in[0].dtype != SMELT_DTYPE_F32 ||
        d->out[0].dtype != SMELT_DTYPE_F32 ||
        d->out[1].dtype != SMELT_DTYPE_I64 || d->in[0].ndim != 4 ||
        sm_attrs_int(&d->attrs, "storage_order", 0) != 0)
        return 0;
    if (sm_window_init(NULL, "MaxPool", &d->attrs, SM_WINDOW_POOL, 2,
                       d->in[0].dims + 2, NULL, &w) != SMELT_OK)
        return 0;
    for (int j = 0; j < 2; j++)
        if (d->out[j].ndim != 4 || d->out[j].dims[0] != d->in[0].dims[0] ||
            d->out[j].dims[1] != d->in[0].dims[1] ||
            d->out[j].dims[2] != w.out[0] || d->out[j].dims[3] != w.out[1])
            return 0;
    return 1;
}

/* Along dim d at output position o: the kernel taps [*lo, *hi) that read
 * the input (the reference's pool_taps_1d without the padded count). */
static void taps(const sm_window *w, int d, int64_t o, int64_t *lo, int64_t *hi)
{
    int64_t dl = w->dil[d], k = w->kernel[d];
    int64_t base = o * w->stride[d] - w->pad0[d];
    int64_t a = base >= 0 ? 0 : (-base + dl - 1) / dl;
    int64_t b = w->in[d] - base <= 0 ? 0 : (w->in[d] - base - 1) / dl + 1;
    *lo = a < k ? a : k;
    *hi = b < k ? b : k;
    if (*hi < *lo)
        *hi = *lo;
}

typedef struct mpi_job {
    sm_window w;
    const float *x;
    float *y;
    int64_t *ind;
} mpi_job;

/* Whether v replaces best as the window's maximum: larger, or a NaN over
 * a number (the reference's and PyTorch's rule; the first maximum stays). */
static inline int mpi_wins(float v, float best)
{
    return v > best || (v != v && best == best);
}

/* One output whose window taps [ylo, yhi) x [xlo, xhi) read the plane xp
 * at row by, column bx: the maximum into *y, its flat index (plus base)
 * into *ind, or -inf and -1 when no tap reads the input. */
static void mpi_one(const sm_window *w, const float *xp, int64_t W, int64_t by,
                    int64_t bx, int64_t ylo, int64_t yhi, int64_t xlo,
                    int64_t xhi, int64_t base, float *y, int64_t *ind)
{
    float best = 0;
    int64_t arg = -1;
    for (int64_t ky = ylo; ky < yhi; ky++) {
        int64_t row = (by + ky * w->dil[0]) * W;
        for (int64_t kx = xlo; kx < xhi; kx++) {
            int64_t at = row + bx + kx * w->dil[1];
            float v = xp[at];
            if (arg < 0 || mpi_wins(v, best)) {
                best = v;
                arg = at;
            }
        }
    }
    *y = arg < 0 ? -INFINITY : best;
    *ind = arg < 0 ? -1 : base + arg;
}

/* The outputs [*a, *b) along dim d whose whole window reads the input. */
static void mpi_inner(const sm_window *w, int d, int64_t *a, int64_t *b)
{
    int64_t s = w->stride[d], p = w->pad0[d];
    int64_t span = (w->kernel[d] - 1) * w->dil[d];
    int64_t lo = (p + s - 1) / s;
    int64_t last = w->in[d] - 1 - span + p; /* o * s <= last */
    int64_t hi = last < 0 ? 0 : last / s + 1;
    if (hi > w->out[d])
        hi = w->out[d];
    if (lo > hi)
        lo = hi;
    *a = lo;
    *b = hi;
}

/* A row of interior outputs [ox0, ox1) of a 2x2 window, dilation 1, its
 * top input row r0: the four taps in row-major order. */
static void mpi_row_2x2(const float *xp, int64_t r0, int64_t W, int64_t sx,
                        int64_t px, int64_t ox0, int64_t ox1, int64_t base,
                        float *y, int64_t *ind)
{
    for (int64_t ox = ox0; ox < ox1; ox++) {
        int64_t at = r0 + ox * sx - px;
        float best = xp[at];
        int64_t arg = at;
        const int64_t off[3] = {1, W, W + 1};
        for (int t = 0; t < 3; t++) {
            float v = xp[at + off[t]];
            if (mpi_wins(v, best)) {
                best = v;
                arg = at + off[t];
            }
        }
        y[ox] = best;
        ind[ox] = base + arg;
    }
}

/* Planes [begin, end) (a plane is one image's channel). Outputs whose
 * window lies wholly in the input (all but a padded border) take every
 * tap without clipping, 2x2 windows unrolled; the border clips as the
 * reference does. */
static void mpi_planes(void *job, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const mpi_job *J = job;
    const sm_window *w = &J->w;
    int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1];
    int64_t kh = w->kernel[0], kw = w->kernel[1];
    int64_t oy0, oy1, ox0, ox1;
    mpi_inner(w, 0, &oy0, &oy1);
    mpi_inner(w, 1, &ox0, &ox1);
    int two = kh == 2 && kw == 2 && w->dil[0] == 1 && w->dil[1] == 1;
    for (int64_t p = begin; p < end; p++) {
        const float *xp = J->x + p * H * W;
        int64_t base = p * H * W;
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t ylo, yhi;
            taps(w, 0, oy, &ylo, &yhi);
            int64_t by = oy * w->stride[0] - w->pad0[0];
            float *y = J->y + (p * OH + oy) * OW;
            int64_t *ind = J->ind + (p * OH + oy) * OW;
            int inner = oy >= oy0 && oy < oy1;
            for (int64_t ox = 0; ox < OW; ox++) {
                if (inner && ox == ox0 && ox1 > ox0) {
                    if (two) {
                        mpi_row_2x2(xp, by * W, W, w->stride[1], w->pad0[1],
                                    ox0, ox1, base, y, ind);
                    } else {
                        for (int64_t o = ox0; o < ox1; o++)
                            mpi_one(w, xp, W, by, o * w->stride[1] - w->pad0[1],
                                    0, kh, 0, kw, base, y + o, ind + o);
                    }
                    ox = ox1 - 1;
                    continue;
                }
                int64_t xlo, xhi;
                taps(w, 1, ox, &xlo, &xhi);
                mpi_one(w, xp, W, by, ox * w->stride[1] - w->pad0[1], ylo, yhi,
                        xlo, xhi, base, y + ox, ind + ox);
            }
        }
    }
}

smelt_status sm_cpu_maxpool_indices_run(const sm_cpu_ops *ops,
                                        const sm_kargs *a,
                                        const sm_cpu_config *c,
                                        const void *packed, sm_threadpool *tp)
{
    (void)ops;
    (void)c;
    (void)packed;
    const sm_tensor *x = a->in[0];
    mpi_job J = {.x = x->data, .y = a->out[0]->data, .ind = a->out[1]->data};
    SM_TRY(sm_window_init(a->ctx, a->op_name, &a->attrs, SM_WINDOW_POOL, 2,
                          x->dims + 2, NULL, &J.w));
    int64_t planes = x->dims[0] * x->dims[1];
    if (sm_threadpool_size(tp) > 1 && planes > 1 && x->numel >= 16384)
        sm_parallel_for(tp, planes, sm_cpu_chunk(planes, tp), mpi_planes, &J);
    else
        mpi_planes(&J, 0, planes, 0);
    return SMELT_OK;
}
