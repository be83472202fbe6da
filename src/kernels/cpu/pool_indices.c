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
    return (v > best) | ((v != v) & (best == best));
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

static void mpi_row_2x2_exact(const float *xp, int64_t r0, int64_t W,
                              int64_t sx, int64_t px, int64_t ox0, int64_t ox1,
                              int64_t base, float *y, int64_t *ind);

/* Outputs per pass of mpi_row_2x2's vector loops. */
#define MPI_RUN 256

/* A row of interior outputs [ox0, ox1) of a 2x2 window, dilation 1, its
 * top input row r0: the four taps in row-major order, without branches
 * (on real data which tap wins is a coin toss a branch mispredicts). With
 * stride 2 the maxima and the winning tap (0 to 3) are found a vector at
 * a time, then the indices from the taps. */
static void mpi_row_2x2(const float *xp, int64_t r0, int64_t W, int64_t sx,
                        int64_t px, int64_t ox0, int64_t ox1, int64_t base,
                        float *y, int64_t *ind)
{
    if (sx == 2) {
        int32_t tap[MPI_RUN];
        for (int64_t o0 = ox0; o0 < ox1; o0 += MPI_RUN) {
            int64_t n = ox1 - o0 < MPI_RUN ? ox1 - o0 : MPI_RUN;
            int64_t at0 = r0 + o0 * 2 - px;
            const float *u = xp + at0, *v = u + W;
            float *yo = y + o0;
            /* plain > is the rule when no tap is NaN; a run with a NaN
             * is done again by the exact loop below */
            int nan = 0;
            for (int64_t i = 0; i < n; i++) {
                float a = u[2 * i], b = u[2 * i + 1];
                float c = v[2 * i], d = v[2 * i + 1];
                nan |= (a != a) | (b != b) | (c != c) | (d != d);
                float m1 = b > a ? b : a;
                int32_t t1 = b > a ? 1 : 0;
                float m2 = c > m1 ? c : m1;
                int32_t t2 = c > m1 ? 2 : t1;
                yo[i] = d > m2 ? d : m2;
                tap[i] = d > m2 ? 3 : t2;
            }
            if (nan) {
                mpi_row_2x2_exact(xp, r0, W, sx, px, o0, o0 + n, base, y, ind);
                continue;
            }
            int64_t *io = ind + o0, b0 = base + at0;
            for (int64_t i = 0; i < n; i++)
                io[i] = b0 + 2 * i + (tap[i] & 1) + (tap[i] >> 1) * W;
        }
        return;
    }
    mpi_row_2x2_exact(xp, r0, W, sx, px, ox0, ox1, base, y, ind);
}

/* mpi_row_2x2's outputs one at a time, NaNs winning (any stride). */
static void mpi_row_2x2_exact(const float *xp, int64_t r0, int64_t W,
                              int64_t sx, int64_t px, int64_t ox0, int64_t ox1,
                              int64_t base, float *y, int64_t *ind)
{
    for (int64_t ox = ox0; ox < ox1; ox++) {
        int64_t at = r0 + ox * sx - px;
        float a = xp[at], b = xp[at + 1], c = xp[at + W], d = xp[at + W + 1];
        int wb = mpi_wins(b, a);
        float m1 = wb ? b : a;
        int64_t i1 = wb ? at + 1 : at;
        int wc = mpi_wins(c, m1);
        float m2 = wc ? c : m1;
        int64_t i2 = wc ? at + W : i1;
        int wd = mpi_wins(d, m2);
        y[ox] = wd ? d : m2;
        ind[ox] = base + (wd ? at + W + 1 : i2);
    }
}

/* Taps of the windows mpi_row_k takes (larger ones go one by one). */
#define MPI_MAX_TAPS 64

/* A row of interior outputs [ox0, ox1) of any other window (resnet's 3x3
 * stride 2), its top input row by: each output's taps in row-major order
 * through a table of their offsets, the maximum and the winning tap kept
 * in registers by selects (maxss, cmov), not branches: mpi_one, with a
 * branch per tap, mispredicted about one tap in three (3.2 ms of
 * resnet18's step at batch 8). Plain > keeps the first maximum; an
 * output that read a NaN is done again by mpi_one, where NaN wins. */
static void mpi_row_k(const sm_window *w, const float *xp, int64_t W,
                      int64_t by, int64_t ox0, int64_t ox1, int64_t base,
                      float *y, int64_t *ind)
{
    int64_t kh = w->kernel[0], kw = w->kernel[1], sx = w->stride[1];
    int64_t px = w->pad0[1], nt = kh * kw;
    int64_t off[MPI_MAX_TAPS];
    if (nt > MPI_MAX_TAPS) {
        for (int64_t o = ox0; o < ox1; o++)
            mpi_one(w, xp, W, by, o * sx - px, 0, kh, 0, kw, base, y + o,
                    ind + o);
        return;
    }
    for (int64_t t = 0; t < nt; t++)
        off[t] = t / kw * w->dil[0] * W + t % kw * w->dil[1];
    for (int64_t o = ox0; o < ox1; o++) {
        int64_t at = by * W + o * sx - px;
        const float *x0 = xp + at;
        float b = x0[0];
        int64_t k = 0;
        int nan = b != b;
        for (int64_t t = 1; t < nt; t++) {
            float v = x0[off[t]];
            nan |= v != v;
            k = v > b ? t : k;
            b = v > b ? v : b;
        }
        if (nan) {
            mpi_one(w, xp, W, by, o * sx - px, 0, kh, 0, kw, base, y + o,
                    ind + o);
            continue;
        }
        y[o] = b;
        ind[o] = base + at + off[k];
    }
}

/* Output rows per block of mpi_flat (its stack scratch). */
#define MPI_FLAT_OUT 512

/* Whether the window is 2x2, stride 2, unpadded and undilated, over
 * planes that it tiles exactly: every output row then reads two whole
 * input rows, and the planes are one run of rows (mpi_flat). */
static int mpi_flat_fits(const sm_window *w)
{
    for (int d = 0; d < 2; d++)
        if (w->kernel[d] != 2 || w->stride[d] != 2 || w->dil[d] != 1 ||
            w->pad0[d] != 0 || w->in[d] != 2 * w->out[d])
            return 0;
    return w->out[1] <= MPI_FLAT_OUT;
}

/* Planes [begin, end) of a window mpi_flat_fits, as one run of output
 * rows in blocks: first the larger of each horizontal pair of every
 * input row (and which one), then of each vertical pair of those; plain
 * > keeps the first maximum in row-major order. A block holding a NaN
 * is done again one output at a time by the exact rule (NaN wins). */
static void mpi_flat(const mpi_job *J, int64_t begin, int64_t end)
{
    const sm_window *w = &J->w;
    int64_t W = w->in[1], OW = w->out[1], OH = w->out[0];
    int64_t per = MPI_FLAT_OUT / OW; /* output rows per block */
    float hm[2 * MPI_FLAT_OUT];
    unsigned char ht[2 * MPI_FLAT_OUT];
    for (int64_t r0 = begin * OH; r0 < end * OH; r0 += per) {
        int64_t k = end * OH - r0 < per ? end * OH - r0 : per;
        const float *in = J->x + 2 * r0 * W;
        int64_t nh = 2 * k * OW;
        int nan = 0;
        for (int64_t j = 0; j < nh; j++) {
            float a = in[2 * j], b = in[2 * j + 1];
            nan |= (a != a) | (b != b);
            hm[j] = b > a ? b : a;
            ht[j] = b > a;
        }
        float *y = J->y + r0 * OW;
        int64_t *ind = J->ind + r0 * OW;
        if (nan) {
            for (int64_t r = 0; r < k; r++) {
                int64_t row = r0 + r, p = row / OH, oy = row % OH;
                for (int64_t ox = 0; ox < OW; ox++)
                    mpi_one(w, J->x + p * 2 * OH * W, W, 2 * oy, 2 * ox, 0, 2,
                            0, 2, p * 2 * OH * W, y + r * OW + ox,
                            ind + r * OW + ox);
            }
            continue;
        }
        for (int64_t r = 0; r < k; r++) {
            const float *top = hm + 2 * r * OW, *bot = top + OW;
            const unsigned char *tt = ht + 2 * r * OW, *bt = tt + OW;
            int64_t at = 2 * (r0 + r) * W;
            for (int64_t ox = 0; ox < OW; ox++) {
                int lower = bot[ox] > top[ox];
                y[r * OW + ox] = lower ? bot[ox] : top[ox];
                ind[r * OW + ox] = at + 2 * ox + (lower ? W + bt[ox] : tt[ox]);
            }
        }
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
    if (mpi_flat_fits(w)) {
        mpi_flat(J, begin, end);
        return;
    }
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
                        mpi_row_k(w, xp, W, by, ox0, ox1, base, y, ind);
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
