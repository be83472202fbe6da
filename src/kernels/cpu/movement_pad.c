/*
 * movement_pad.c - Pad for every dtype and mode, a row at a time.
 *
 * The reference kernel maps every output element back to its source
 * through the whole index (sm_movement_copy), about 4 ms for a 0.5 MB
 * activation; here the map is applied once per output row (every dim but
 * the last): a row whose outer indices fall in the padding is the fill;
 * any other row is its left padding, one memcpy of the kept input run
 * and its right padding, the padding's elements mapped through the mode
 * one by one (a constant fill, or edge, reflect and wrap positions of
 * the same input row). Rows split over the pool when the output is large.
 * The checks are the reference's (sm_pad_check), so bad pads fail with
 * the same error.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ref/movement.h"

/* Outputs smaller than this stay on the calling thread. */
#define PAD_PAR_BYTES ((int64_t)1 << 17)

typedef struct pad_job {
    sm_pad_geom g;
    size_t es; /* bytes per element */
    const char *x;
    char *y;
    int ndim;
    int64_t ydims[SMELT_MAX_DIMS];
} pad_job;

/* Fills n elements of y with the constant. */
static void pad_fill(char *y, const char *fill, size_t es, int64_t n)
{
    int zero = 1;
    for (size_t b = 0; b < es; b++)
        zero &= fill[b] == 0;
    if (zero) {
        memset(y, 0, (size_t)n * es);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(y + (size_t)i * es, fill, es);
}

/* Output rows [begin, end) of a pad: row r's outer indices mapped to an
 * input row, then its last axis as padding, a run and padding. */
static void pad_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const pad_job *J = arg;
    const sm_pad_geom *g = &J->g;
    int last = J->ndim - 1;
    int64_t n = J->ydims[last], kept = g->kept[last], b = g->begin[last];
    size_t es = J->es, row = (size_t)n * es;
    /* the output positions [i0, i1) of the last axis read the kept run */
    int64_t i0 = b < 0 ? 0 : (b > n ? n : b);
    int64_t i1 = b + kept > n ? n : b + kept;
    if (i1 < i0)
        i1 = i0;
    for (int64_t r = begin; r < end; r++) {
        char *y = J->y + (size_t)r * row;
        int64_t rem = r, off = 0;
        int fill = 0;
        for (int d = last - 1; d >= 0; d--) {
            int64_t i = rem % J->ydims[d];
            rem /= J->ydims[d];
            int64_t k = sm_pad_source(g->mode, i - g->begin[d], g->kept[d]);
            if (k < 0) {
                fill = 1;
                break;
            }
            off += (g->lo[d] + k) * g->stride[d];
        }
        if (fill) {
            pad_fill(y, g->fill, es, n);
            continue;
        }
        const char *x = J->x + (size_t)(off + g->lo[last]) * es;
        for (int64_t i = 0; i < n; i++) {
            if (i == i0 && i1 > i0) {
                memcpy(y + (size_t)i * es, x + (size_t)(i - b) * es,
                       (size_t)(i1 - i0) * es);
                i = i1 - 1;
                continue;
            }
            int64_t k = sm_pad_source(g->mode, i - b, kept);
            if (k < 0)
                memcpy(y + (size_t)i * es, g->fill, es);
            else
                memcpy(y + (size_t)i * es, x + (size_t)k * es, es);
        }
    }
}

/* Pad(data, pads, constant_value?, axes?) in any mode, any dtype of up
 * to 16 bytes, rank >= 1. */
int sm_cpu_pad_supports(const sm_kernel_desc *d)
{
    return d->n_in >= 2 && d->n_out == 1 && d->in[1].present &&
           d->in[0].dtype == d->out[0].dtype && d->in[0].ndim >= 1 &&
           d->in[0].ndim == d->out[0].ndim &&
           smelt_dtype_size(d->in[0].dtype) <= 16;
}

smelt_status sm_cpu_pad_run(const sm_cpu_ops *ops, const sm_kargs *a,
                            const sm_cpu_config *c, const void *packed,
                            sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    pad_job J;
    SM_TRY(sm_pad_check(a, &J.g));
    if (y->numel == 0)
        return SMELT_OK;
    J.es = smelt_dtype_size(x->dtype);
    J.x = x->data;
    J.y = y->data;
    J.ndim = y->ndim;
    memcpy(J.ydims, y->dims, sizeof(int64_t) * (size_t)y->ndim);
    int64_t rows = sm_cpu_prod(y->ndim - 1, y->dims);
    if (sm_threadpool_size(tp) <= 1 || (int64_t)y->nbytes < PAD_PAR_BYTES)
        pad_rows(&J, 0, rows, 0);
    else
        sm_parallel_for(tp, rows, sm_cpu_chunk(rows, tp), pad_rows, &J);
    return SMELT_OK;
}
