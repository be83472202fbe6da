/*
 * space.c - reference kernels of the rearranging and masking ops:
 * DepthToSpace, SpaceToDepth, ReverseSequence (source maps for
 * sm_movement_copy), Trilu, EyeLike, CumSum and Size.
 *
 * Each kernel re-checks the output shape it was given against its inputs
 * and the values it indexes with, failing with SMELT_ERR_RUNTIME rather
 * than touching memory out of bounds.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/movement.h"
#include "kernels/ref/ref_util.h"

static smelt_status bad_out(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                  "%s: output shape does not match the input", a->op_name);
}

/* DepthToSpace and SpaceToDepth move blocks of b x b pixels between the
 * channel axis and the two spatial axes of an NCHW tensor; the map reads
 * the input (n, c, h, w) for an output multi-index. */
typedef struct block_map {
    int64_t b, c, h, w; /* block size, input C, H, W */
    int crd;            /* DepthToSpace: CRD order, else DCR */
} block_map;

static int64_t d2s_src(const void *user, const int64_t *idx)
{
    const block_map *m = user;
    int64_t oc = m->c / (m->b * m->b);
    int64_t i = idx[2] % m->b, j = idx[3] % m->b;
    int64_t ch = m->crd ? idx[1] * m->b * m->b + i * m->b + j
                        : (i * m->b + j) * oc + idx[1];
    return ((idx[0] * m->c + ch) * m->h + idx[2] / m->b) * m->w + idx[3] / m->b;
}

static int64_t s2d_src(const void *user, const int64_t *idx)
{
    const block_map *m = user;
    int64_t c = idx[1] % m->c, t = idx[1] / m->c;
    int64_t i = t / m->b, j = t % m->b;
    return ((idx[0] * m->c + c) * m->h + idx[2] * m->b + i) * m->w +
           idx[3] * m->b + j;
}

/* Checks y against x with blocks of b pixels moved to the channels
 * (SpaceToDepth) or from them (DepthToSpace, to_space), and sets m. */
static smelt_status block_setup(const sm_kargs *a, int to_space, block_map *m)
{
    const sm_tensor *x = a->in[0], *y = a->out[0];
    int64_t b = sm_attrs_int(&a->attrs, "blocksize", 0);
    if (x->ndim != 4 || y->ndim != 4 || y->dtype != x->dtype || b <= 0 ||
        b > 65536)
        return bad_out(a);
    *m = (block_map){b, x->dims[1], x->dims[2], x->dims[3], 0};
    int64_t bb = b * b;
    int ok = y->dims[0] == x->dims[0];
    if (to_space)
        ok = ok && x->dims[1] % bb == 0 && y->dims[1] == x->dims[1] / bb &&
             y->dims[2] == x->dims[2] * b && y->dims[3] == x->dims[3] * b;
    else
        ok = ok && x->dims[2] % b == 0 && x->dims[3] % b == 0 &&
             y->dims[1] == x->dims[1] * bb && y->dims[2] == x->dims[2] / b &&
             y->dims[3] == x->dims[3] / b;
    return ok ? SMELT_OK : bad_out(a);
}

smelt_status sm_ref_depthtospace(const sm_kargs *a)
{
    block_map m;
    SM_TRY(block_setup(a, 1, &m));
    m.crd = strcmp(sm_attrs_string(&a->attrs, "mode", "DCR"), "CRD") == 0;
    sm_movement_copy(a->out[0], a->in[0], d2s_src, &m, NULL);
    return SMELT_OK;
}

smelt_status sm_ref_spacetodepth(const sm_kargs *a)
{
    block_map m;
    SM_TRY(block_setup(a, 0, &m));
    sm_movement_copy(a->out[0], a->in[0], s2d_src, &m, NULL);
    return SMELT_OK;
}

/* ReverseSequence: along the time axis, the first lens[b] elements of
 * batch b are reversed, the rest copied. */
typedef struct rev_map {
    const sm_tensor *lens;
    int ndim, batch_axis, time_axis;
    int64_t stride[SMELT_MAX_DIMS];
} rev_map;

static int64_t rev_src(const void *user, const int64_t *idx)
{
    const rev_map *m = user;
    int64_t len =
        sm_load_i64(m->lens->dtype, m->lens->data, idx[m->batch_axis]);
    int64_t off = 0;
    for (int d = 0; d < m->ndim; d++) {
        int64_t i = idx[d];
        if (d == m->time_axis && i < len)
            i = len - 1 - i;
        off += i * m->stride[d];
    }
    return off;
}

smelt_status sm_ref_reversesequence(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *lens = a->in[1];
    sm_tensor *y = a->out[0];
    int64_t ba = sm_attrs_int(&a->attrs, "batch_axis", 1);
    int64_t ta = sm_attrs_int(&a->attrs, "time_axis", 0);
    if (x->ndim < 2 || ba < 0 || ba > 1 || ta < 0 || ta > 1 || ba == ta ||
        y->numel != x->numel || y->dtype != x->dtype || lens->ndim != 1 ||
        !sm_dtype_is_int(lens->dtype) || lens->dims[0] != x->dims[ba])
        return bad_out(a);
    rev_map m = {lens, x->ndim, (int)ba, (int)ta, {0}};
    for (int64_t b = 0; b < lens->numel; b++) {
        int64_t len = sm_load_i64(lens->dtype, lens->data, b);
        if (len < 0 || len > x->dims[ta])
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "ReverseSequence: sequence length %lld of batch "
                          "%lld is outside [0, %lld]",
                          (long long)len, (long long)b, (long long)x->dims[ta]);
    }
    sm_strides(x->ndim, x->dims, m.stride);
    sm_movement_copy(y, x, rev_src, &m, NULL);
    return SMELT_OK;
}

/* Trilu(input, k?) {upper}: keeps the elements of each matrix (the last
 * two axes) on and above diagonal k (upper) or on and below it; the rest
 * are zero. */
smelt_status sm_ref_trilu(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *kt = a->n_in > 1 ? a->in[1] : NULL;
    sm_tensor *y = a->out[0];
    if (x->ndim < 2 || y->dtype != x->dtype || y->numel != x->numel)
        return bad_out(a);
    int64_t k = kt && kt->numel ? sm_load_i64(kt->dtype, kt->data, 0) : 0;
    int upper = sm_attrs_int(&a->attrs, "upper", 1) != 0;
    int64_t h = x->dims[x->ndim - 2], w = x->dims[x->ndim - 1];
    size_t es = smelt_dtype_size(x->dtype);
    memset(y->data, 0, y->nbytes);
    for (int64_t e = 0; e < x->numel; e++) {
        int64_t i = (e / w) % h, j = e % w;
        int keep = upper ? j - i >= k : j - i <= k;
        if (keep)
            memcpy((char *)y->data + (size_t)e * es,
                   (const char *)x->data + (size_t)e * es, es);
    }
    return SMELT_OK;
}

/* EyeLike(input) {dtype?, k}: zeros of the input's 2-D shape with ones on
 * diagonal k. */
smelt_status sm_ref_eyelike(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->ndim != 2 || y->ndim != 2 || y->dims[0] != x->dims[0] ||
        y->dims[1] != x->dims[1])
        return bad_out(a);
    int64_t k = sm_attrs_int(&a->attrs, "k", 0);
    memset(y->data, 0, y->nbytes);
    for (int64_t i = 0; i < y->dims[0]; i++)
        if (k >= -i && k < y->dims[1] - i)
            sm_store_f64(y->dtype, y->data, i * y->dims[1] + i + k, 1.0);
    return SMELT_OK;
}

/* CumSum(x, axis) {exclusive, reverse}: running sums along axis, from the
 * end when reverse, each excluding its own element when exclusive.
 * Floats add in double, integers in int64 (wrapping like the type). */
smelt_status sm_ref_cumsum(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *at = a->in[1];
    sm_tensor *y = a->out[0];
    if (at->numel != 1 || !sm_dtype_is_int(at->dtype))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "CumSum: axis must be one integer");
    int64_t axis = sm_load_i64(at->dtype, at->data, 0);
    if (axis < -x->ndim || axis >= x->ndim)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "CumSum: axis %lld is out of range for rank %d",
                      (long long)axis, x->ndim);
    if (axis < 0)
        axis += x->ndim;
    if (y->dtype != x->dtype || y->numel != x->numel)
        return bad_out(a);
    int excl = sm_attrs_int(&a->attrs, "exclusive", 0) != 0;
    int rev = sm_attrs_int(&a->attrs, "reverse", 0) != 0;
    int64_t outer = 1, dim = x->dims[axis], inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= x->dims[d];
    for (int d = (int)axis + 1; d < x->ndim; d++)
        inner *= x->dims[d];
    int fl = sm_dtype_is_float(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double f = 0;
            uint64_t n = 0;
            for (int64_t t = 0; t < dim; t++) {
                int64_t e = (o * dim + (rev ? dim - 1 - t : t)) * inner + in;
                double fx = fl ? sm_load_f64(x->dtype, x->data, e) : 0;
                uint64_t nx =
                    fl ? 0 : (uint64_t)sm_load_i64(x->dtype, x->data, e);
                if (!excl) {
                    f += fx;
                    n += nx;
                }
                if (fl)
                    sm_store_f64(y->dtype, y->data, e, f);
                else
                    sm_store_i64(y->dtype, y->data, e, (int64_t)n);
                if (excl) {
                    f += fx;
                    n += nx;
                }
            }
        }
    return SMELT_OK;
}

/* Size(data): the element count as an i64 scalar. */
smelt_status sm_ref_size(const sm_kargs *a)
{
    sm_tensor *y = a->out[0];
    if (y->dtype != SMELT_DTYPE_I64 || y->numel != 1)
        return bad_out(a);
    ((int64_t *)y->data)[0] = a->in[0]->numel;
    return SMELT_OK;
}
