/*
 * movement_transpose.c - optimized Transpose for 4-byte elements (f32,
 * i32): dims that stay adjacent and in order are merged first; then
 * either the last dim keeps its place (contiguous row copies) or the copy
 * runs in 16 x 16 tiles over the output's last dim and the dim that is
 * last in the input, so both the reads and the writes stay within a few
 * cache lines.
 */
#include <string.h>
#ifdef __SSE2__
#include <xmmintrin.h>
#endif

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/keep_loops.h"
#include "kernels/cpu/registry.h"

#define TILE 16

typedef struct tr_geom {
    int nd;
    int64_t dims[SMELT_MAX_DIMS]; /* output dims after merging */
    int64_t is[SMELT_MAX_DIMS];   /* input stride of each output dim */
} tr_geom;

/* The permutation (attribute perm, default reversed) checked, and the
 * merged output dims with their input strides. */
static int tr_analyze(const sm_attrs *at, int r, const int64_t *xd, tr_geom *g)
{
    const int64_t *perm;
    int np = sm_attrs_ints(at, "perm", &perm);
    int64_t p[SMELT_MAX_DIMS], st[SMELT_MAX_DIMS];
    int seen[SMELT_MAX_DIMS] = {0};
    if (np >= 0 && np != r)
        return 0;
    for (int d = 0; d < r; d++) {
        p[d] = np >= 0 ? perm[d] : r - 1 - d;
        if (p[d] < 0 || p[d] >= r || seen[p[d]]++)
            return 0;
    }
    sm_strides(r, xd, st);
    g->nd = 0;
    for (int d = 0; d < r; d++) {
        int64_t size = xd[p[d]], s = st[p[d]];
        if (size == 1)
            continue;
        int n = g->nd;
        if (n > 0 && g->is[n - 1] == s * size) {
            g->dims[n - 1] *= size;
            g->is[n - 1] = s;
            continue;
        }
        g->dims[n] = size;
        g->is[n] = s;
        g->nd++;
    }
    if (g->nd == 0) {
        g->nd = 1;
        g->dims[0] = 1;
        g->is[0] = 1;
    }
    return 1;
}

int sm_cpu_transpose_supports(const sm_kernel_desc *d)
{
    tr_geom g;
    smelt_dtype t = d->in[0].dtype;
    return d->n_out == 1 && d->out[0].dtype == t &&
           (t == SMELT_DTYPE_F32 || t == SMELT_DTYPE_I32) &&
           tr_analyze(&d->attrs, d->in[0].ndim, d->in[0].dims, &g);
}

typedef struct tr_job {
    tr_geom g;
    int inner; /* the output dim whose input stride is 1 (tiled case) */
    const float *x;
    float *y;
    int64_t outer; /* iterations of the loops around the inner copy */
} tr_job;

/* Input and output offsets of outer iteration o over every output dim but
 * the last and (tiled case) `skip`. */
static void outer_offsets(const tr_job *J, int64_t o, int skip, int64_t *xo,
                          int64_t *yo)
{
    const tr_geom *g = &J->g;
    int64_t ystride = g->dims[g->nd - 1];
    *xo = *yo = 0;
    for (int d = g->nd - 2; d >= 0; d--) {
        if (d != skip) {
            int64_t i = o % g->dims[d];
            o /= g->dims[d];
            *xo += i * g->is[d];
            *yo += i * ystride;
        }
        ystride *= g->dims[d];
    }
}

/* Rows [begin, end) of a transpose that keeps the last dim: the offsets
 * worked out once per run along the innermost outer dim (the rows then
 * step by its input stride), and short rows (attention's 64 floats)
 * copied inline, where a libc call a row costs more than the row. */
SM_KEEP_LOOPS_BEGIN
static void tr_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const tr_job *J = arg;
    const tr_geom *g = &J->g;
    int last = g->nd - 1;
    int64_t n = g->dims[last];
    for (int64_t o = begin; o < end;) {
        int64_t xo, yo, run = end - o, step = 0;
        outer_offsets(J, o, -1, &xo, &yo);
        if (last > 0) {
            int64_t left = g->dims[last - 1] - o % g->dims[last - 1];
            run = run < left ? run : left;
            step = g->is[last - 1];
        }
        for (int64_t r = 0; r < run; r++) {
            const float *x = J->x + xo + r * step;
            float *y = J->y + yo + r * n;
            if (n >= 256) {
                memcpy(y, x, (size_t)n * sizeof(float));
            } else {
                for (int64_t j = 0; j < n; j++)
                    y[j] = x[j];
            }
        }
        o += run;
    }
}
SM_KEEP_LOOPS_END

/* y[i * ys + j] = x[j * xs + i] over [i0, i1) x [j0, j1): 4 x 4 blocks
 * transposed in SSE registers (baseline x86-64), the edges one by one. */
static void tile(const float *x, int64_t xs, float *y, int64_t ys, int64_t i0,
                 int64_t i1, int64_t j0, int64_t j1)
{
    int64_t i = i0;
#ifdef __SSE2__
    for (; i + 4 <= i1; i += 4) {
        int64_t j = j0;
        for (; j + 4 <= j1; j += 4) {
            const float *s = x + j * xs + i;
            __m128 a = _mm_loadu_ps(s), b = _mm_loadu_ps(s + xs);
            __m128 c = _mm_loadu_ps(s + 2 * xs), e = _mm_loadu_ps(s + 3 * xs);
            _MM_TRANSPOSE4_PS(a, b, c, e);
            float *d = y + i * ys + j;
            _mm_storeu_ps(d, a);
            _mm_storeu_ps(d + ys, b);
            _mm_storeu_ps(d + 2 * ys, c);
            _mm_storeu_ps(d + 3 * ys, e);
        }
        for (int64_t ii = i; ii < i + 4; ii++)
            for (int64_t jj = j; jj < j1; jj++)
                y[ii * ys + jj] = x[jj * xs + ii];
    }
#endif
    for (; i < i1; i++)
        for (int64_t j = j0; j < j1; j++)
            y[i * ys + j] = x[j * xs + i];
}

/* Tiles over (inner, last): reads run along `inner` (input stride 1),
 * writes along the output's last dim. */
static void tr_tiles(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const tr_job *J = arg;
    const tr_geom *g = &J->g;
    int last = g->nd - 1, in = J->inner;
    int64_t n = g->dims[last], m = g->dims[in], xs = g->is[last];
    int64_t ys = 1; /* output stride of dim `inner` */
    for (int d = last; d > in; d--)
        ys *= g->dims[d];
    for (int64_t o = begin; o < end; o++) {
        int64_t xo, yo;
        outer_offsets(J, o, in, &xo, &yo);
        const float *x = J->x + xo;
        float *y = J->y + yo;
        for (int64_t i0 = 0; i0 < m; i0 += TILE) {
            int64_t i1 = i0 + TILE < m ? i0 + TILE : m;
            for (int64_t j0 = 0; j0 < n; j0 += TILE) {
                int64_t j1 = j0 + TILE < n ? j0 + TILE : n;
                tile(x, xs, y, ys, i0, i1, j0, j1);
            }
        }
    }
}

smelt_status sm_cpu_transpose_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                  const sm_cpu_config *c, const void *packed,
                                  sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    const sm_tensor *x = a->in[0];
    tr_job J = {.x = x->data, .y = a->out[0]->data};
    if (!tr_analyze(&a->attrs, x->ndim, x->dims, &J.g) ||
        a->out[0]->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: perm does not fit X of rank %d", a->op_name,
                      x->ndim);
    if (x->numel == 0)
        return SMELT_OK;
    tr_geom *g = &J.g;
    int last = g->nd - 1;
    sm_parallel_fn fn = tr_rows;
    J.outer = x->numel / g->dims[last];
    if (g->is[last] != 1) {
        J.inner = 0;
        for (int d = 0; d < last; d++)
            if (g->is[d] == 1)
                J.inner = d;
        J.outer /= g->dims[J.inner];
        fn = tr_tiles;
    }
    if (sm_threadpool_size(tp) > 1 && J.outer > 1 && x->numel >= 32768)
        sm_parallel_for(tp, J.outer, sm_cpu_chunk(J.outer, tp), fn, &J);
    else
        fn(&J, 0, J.outer, 0);
    return SMELT_OK;
}
