/*
 * rowsplit.c - padded, phase-split rows for window kernels (rowsplit.h).
 */
#include "kernels/cpu/rowsplit.h"

#include <string.h>

#include "kernels/cpu/keep_loops.h"

/* The elements [*lo, *hi) of phase p that come from the input row (the
 * rest is fill). */
static void phase_span(const sm_rowsplit *r, int64_t p, int64_t *lo,
                       int64_t *hi)
{
    int64_t off = p - r->pad; /* ix = j * s + off */
    int64_t a = off >= 0 ? 0 : (-off + r->s - 1) / r->s;
    int64_t b = r->W - off <= 0 ? 0 : (r->W - off - 1) / r->s + 1;
    a = a < r->L ? a : r->L;
    b = b < r->L ? b : r->L;
    *lo = a;
    *hi = b < a ? a : b;
}

void sm_rowsplit_init(sm_rowsplit *r, int64_t out, int64_t k, int64_t stride,
                      int64_t dil, int64_t pad0, int64_t W,
                      sm_rowsplit_gather2 gather2)
{
    r->gather2 = gather2;
    /* the padded extent the last output's last tap reads */
    int64_t wp = (out - 1) * stride + (k - 1) * dil + 1;
    r->s = stride;
    r->d = dil;
    r->pad = pad0;
    r->W = W;
    r->L = (wp + stride - 1) / stride;
    for (int64_t p = 0; p < stride && p < SM_ROWSPLIT_MAX_S; p++)
        phase_span(r, p, &r->lo[p], &r->hi[p]);
}

int64_t sm_rowsplit_len(const sm_rowsplit *r)
{
    return r->s * r->L;
}

int64_t sm_rowsplit_tap(const sm_rowsplit *r, int64_t kx)
{
    int64_t o = kx * r->d;
    return (o % r->s) * r->L + o / r->s;
}

void sm_rowsplit_fill(const sm_rowsplit *r, float fill, float *dst)
{
    for (int64_t i = 0; i < r->s * r->L; i++)
        dst[i] = fill;
}

void sm_rowsplit_row(const sm_rowsplit *r, const float *x, float fill,
                     float *dst)
{
    sm_rowsplit_row_pitch(r, x, fill, dst, r->L);
}

/* Phase p holds x[j * s + p - pad]: inside the row one copy (stride 1)
 * or one strided gather per phase, the fill only at the two ends. Rows
 * are short (MobileNet's 7 to 112) and split once per row of every
 * plane: plain loops, which GCC must not turn into libc calls. */
SM_KEEP_LOOPS_BEGIN
void sm_rowsplit_row_pitch(const sm_rowsplit *r, const float *x, float fill,
                           float *dst, int64_t pitch)
{
    for (int64_t p = 0; p < r->s; p++) {
        float *ph = dst + p * pitch;
        int64_t off = p - r->pad; /* ix = j * s + off */
        int64_t lo, hi;
        if (p < SM_ROWSPLIT_MAX_S) {
            lo = r->lo[p];
            hi = r->hi[p];
        } else {
            phase_span(r, p, &lo, &hi);
        }
        for (int64_t j = 0; j < lo; j++)
            ph[j] = fill;
        if (r->s == 1) {
            for (int64_t j = lo; j < hi; j++)
                ph[j] = x[j + off];
        } else if (r->s == 2 && r->gather2) {
            r->gather2(x + 2 * lo + off, ph + lo, hi - lo);
        } else {
            const float *s = x + off;
            for (int64_t j = lo; j < hi; j++)
                ph[j] = s[j * r->s];
        }
        for (int64_t j = hi; j < r->L; j++)
            ph[j] = fill;
    }
}
SM_KEEP_LOOPS_END
