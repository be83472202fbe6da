/*
 * movement.c - optimized data-movement kernels: Slice, Gather, Where, Concat,
 * Split and Expand, for every dtype (they move whole elements, so only
 * the element size matters).
 *
 * Slice, Expand and Where are strided copies over collapsed loops
 * (cpu_util.h): dims merged wherever every operand steps through them as
 * one, so the innermost run is as long as it can be, and that run is one
 * memcpy when both sides are contiguous there, a loop of fixed-size
 * element moves otherwise (negative steps, broadcast sources). Gather is
 * a row copy per index (an embedding lookup is one memcpy per token);
 * Concat and Split one memcpy per row of each part, sweeping the whole
 * in order. Copies of at least DM_PAR_BYTES split over the pool by rows,
 * or by pieces of rows when there are few.
 *
 * One portable registry entry per op: there is no vector code to choose
 * (memcpy is the vector code). Each run() checks its inputs with the
 * reference kernel's own checks (kernels/ref/movement.h), so bad indices or
 * shapes fail with the same error instead of reading out of bounds.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ref/movement.h"

/* Copies smaller than this stay on the calling thread: waking the pool
 * costs about what copying them does. */
#define DM_PAR_BYTES ((int64_t)1 << 17)

/* A strided copy (or select) over collapsed loops. Operand 0 of g is the
 * destination; 1 the source (Where: 1 the condition, 2 and 3 the two
 * sources). Strides count elements of each operand's own dtype. */
typedef struct dm_job {
    sm_cpu_loops g;
    size_t es; /* bytes per element of the destination */
    char *y;
    const char *x[3];
    int64_t rows;   /* product of every dim but the last */
    int64_t pieces; /* each row split into this many pieces */
} dm_job;

/* y[i * sy] = x[i * sx] for i < n, elements of ES bytes (a constant, so
 * each memcpy compiles to one move). */
#define DM_MOVE_LOOP(ES)                                                       \
    for (int64_t i = 0; i < n; i++)                                            \
        memcpy(y + i * sy * (ES), x + i * sx * (ES), ES);                      \
    break

/* Moves n elements of es bytes from x (stride sx elements) to y (stride
 * sy): one memcpy when both are contiguous. */
static void dm_move(size_t es, char *y, int64_t sy, const char *x, int64_t sx,
                    int64_t n)
{
    if (sy == 1 && sx == 1) {
        memcpy(y, x, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: DM_MOVE_LOOP(1);
    case 2: DM_MOVE_LOOP(2);
    case 4: DM_MOVE_LOOP(4);
    case 8: DM_MOVE_LOOP(8);
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(y + i * sy * (int64_t)es, x + i * sx * (int64_t)es, es);
    }
}

/* Item `it` of a job as (row, element range within the row), and every
 * operand's element offset at the range's start. */
static void dm_item(const dm_job *J, int64_t it, int64_t *off, int64_t *len)
{
    const sm_cpu_loops *g = &J->g;
    int last = g->nd - 1;
    int64_t n = g->dims[last], p = it % J->pieces;
    int64_t i0 = n * p / J->pieces, i1 = n * (p + 1) / J->pieces;
    sm_cpu_loops_offsets(g, it / J->pieces, off);
    for (int k = 0; k < g->n_ops; k++)
        off[k] += i0 * g->s[k][last];
    *len = i1 - i0;
}

/* Items [begin, end) of a strided copy. */
static void dm_copy_items(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const dm_job *J = arg;
    int last = J->g.nd - 1;
    int64_t off[SM_CPU_LOOP_OPS], len;
    for (int64_t it = begin; it < end; it++) {
        dm_item(J, it, off, &len);
        dm_move(J->es, J->y + (size_t)off[0] * J->es, J->g.s[0][last],
                J->x[0] + off[1] * (int64_t)J->es, J->g.s[1][last], len);
    }
}

/* Runs fn over every item of J (collapsed already), split over the pool
 * when the job moves at least DM_PAR_BYTES: by rows, each row cut into
 * pieces when there are fewer than four rows per thread. */
static void dm_launch(dm_job *J, sm_parallel_fn fn, sm_threadpool *tp,
                      int64_t bytes)
{
    int nt = sm_threadpool_size(tp);
    int64_t n = J->g.dims[J->g.nd - 1];
    J->rows = sm_cpu_prod(J->g.nd - 1, J->g.dims);
    J->pieces = 1;
    if (nt <= 1 || bytes < DM_PAR_BYTES) {
        fn(J, 0, J->rows, 0);
        return;
    }
    if (J->rows < 4 * (int64_t)nt) {
        J->pieces = (4 * nt + J->rows - 1) / J->rows;
        if (J->pieces > n)
            J->pieces = n;
    }
    int64_t items = J->rows * J->pieces;
    sm_parallel_for(tp, items, sm_cpu_chunk(items, tp), fn, J);
}

/* Copies x into y through the strides already in J->g.s[0] (y) and
 * J->g.s[1] (x) over y's dims. */
static void dm_copy(dm_job *J, sm_tensor *y, const char *x, sm_threadpool *tp)
{
    J->g.n_ops = 2;
    J->es = smelt_dtype_size(y->dtype);
    J->y = y->data;
    J->x[0] = x;
    sm_cpu_loops_collapse(&J->g, y->ndim, y->dims);
    dm_launch(J, dm_copy_items, tp, (int64_t)y->nbytes);
}

/* ---- Slice --------------------------------------------------------------- */

int sm_cpu_slice_supports(const sm_kernel_desc *d)
{
    return d->n_in >= 3 && d->n_out == 1 && d->in[1].present &&
           d->in[2].present && d->in[0].dtype == d->out[0].dtype &&
           d->in[0].ndim == d->out[0].ndim;
}

/* Output axis d reads input index first[d] + i * step[d]: a copy from
 * the first element read with strides step[d] x the input's strides
 * (negative steps walk backwards). */
smelt_status sm_cpu_slice_run(const sm_cpu_ops *ops, const sm_kargs *a,
                              const sm_cpu_config *c, const void *packed,
                              sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    int64_t first[SMELT_MAX_DIMS], step[SMELT_MAX_DIMS], xs[SMELT_MAX_DIMS];
    SM_TRY(sm_slice_geom(a, first, step));
    if (y->numel == 0)
        return SMELT_OK;
    dm_job J;
    int64_t base = 0;
    sm_strides(x->ndim, x->dims, xs);
    sm_strides(y->ndim, y->dims, J.g.s[0]);
    for (int d = 0; d < x->ndim; d++) {
        J.g.s[1][d] = step[d] * xs[d];
        base += first[d] * xs[d];
    }
    dm_copy(&J, y,
            (const char *)x->data + base * (int64_t)smelt_dtype_size(x->dtype),
            tp);
    return SMELT_OK;
}

/* ---- Expand -------------------------------------------------------------- */

int sm_cpu_expand_supports(const sm_kernel_desc *d)
{
    int64_t s[SMELT_MAX_DIMS];
    return d->n_in == 2 && d->n_out == 1 && d->in[0].dtype == d->out[0].dtype &&
           sm_cpu_bcast_strides(d->in[0].ndim, d->in[0].dims, d->out[0].ndim,
                                d->out[0].dims, s);
}

/* A copy whose source strides are 0 along the broadcast dims. */
smelt_status sm_cpu_expand_run(const sm_cpu_ops *ops, const sm_kargs *a,
                               const sm_cpu_config *c, const void *packed,
                               sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    dm_job J;
    if (x->dtype != y->dtype ||
        !sm_cpu_bcast_strides(x->ndim, x->dims, y->ndim, y->dims, J.g.s[1]))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Expand: output shape does not match the broadcast "
                      "input");
    if (y->numel == 0)
        return SMELT_OK;
    sm_strides(y->ndim, y->dims, J.g.s[0]);
    dm_copy(&J, y, x->data, tp);
    return SMELT_OK;
}

/* ---- Concat and Split ------------------------------------------------------
 */

static int parts_supports(const sm_kernel_operand *whole,
                          const sm_kernel_operand *parts, int n)
{
    for (int i = 0; i < n; i++)
        if (!parts[i].present || parts[i].dtype != whole->dtype ||
            parts[i].ndim != whole->ndim)
            return 0;
    return n >= 1;
}

int sm_cpu_concat_supports(const sm_kernel_desc *d)
{
    return d->n_out == 1 && parts_supports(&d->out[0], d->in, d->n_in);
}

int sm_cpu_split_supports(const sm_kernel_desc *d)
{
    return d->in[0].present && parts_supports(&d->in[0], d->out, d->n_out);
}

typedef struct parts_job {
    char *whole;
    sm_tensor *const *parts;
    int n, to_whole;
    size_t wrow;                         /* bytes of one row of the whole */
    size_t run[SM_KERNEL_MAX_OPERANDS];  /* bytes of one row of each part */
    size_t woff[SM_KERNEL_MAX_OPERANDS]; /* where it starts in the whole's */
} parts_job;

/* Items [begin, end): item o * n + i is row o of part i, so the whole is
 * swept in order (as the prefetcher likes), one memcpy an item. */
static void parts_items(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const parts_job *J = arg;
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / J->n;
        int i = (int)(it % J->n);
        if (!J->run[i])
            continue; /* an empty part may have no data */
        char *w = J->whole + (size_t)o * J->wrow + J->woff[i];
        char *p = (char *)J->parts[i]->data + (size_t)o * J->run[i];
        memcpy(J->to_whole ? w : p, J->to_whole ? p : w, J->run[i]);
    }
}

/* `whole` is the parts side by side along the axis: row o of the whole
 * (everything after the axis's outer dims) is row o of each part in turn.
 * Copies them into the whole (to_whole) or out of it. */
static smelt_status parts_move(const sm_kargs *a, sm_tensor *whole,
                               sm_tensor *const *parts, int n, int to_whole,
                               sm_threadpool *tp)
{
    int axis;
    int64_t outer, inner;
    SM_TRY(sm_parts_check(a, whole, parts, n, &axis, &outer, &inner));
    if (n > SM_KERNEL_MAX_OPERANDS)
        return sm_err(a->ctx, SMELT_ERR_LIMIT, "%s: %d parts, at most %d",
                      a->op_name, n, SM_KERNEL_MAX_OPERANDS);
    size_t es = smelt_dtype_size(whole->dtype), at = 0;
    parts_job J = {
        .whole = whole->data, .parts = parts, .n = n, .to_whole = to_whole};
    for (int i = 0; i < n; i++) {
        J.run[i] = (size_t)(parts[i]->dims[axis] * inner) * es;
        J.woff[i] = at;
        at += J.run[i];
    }
    J.wrow = at;
    int64_t items = outer * n;
    if (whole->numel == 0)
        return SMELT_OK;
    if (sm_threadpool_size(tp) > 1 && items > 1 &&
        (int64_t)whole->nbytes >= DM_PAR_BYTES)
        sm_parallel_for(tp, items, sm_cpu_chunk(items, tp), parts_items, &J);
    else
        parts_items(&J, 0, items, 0);
    return SMELT_OK;
}

smelt_status sm_cpu_concat_run(const sm_cpu_ops *ops, const sm_kargs *a,
                               const sm_cpu_config *c, const void *packed,
                               sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    return parts_move(a, a->out[0], a->in, a->n_in, 1, tp);
}

smelt_status sm_cpu_split_run(const sm_cpu_ops *ops, const sm_kargs *a,
                              const sm_cpu_config *c, const void *packed,
                              sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    return parts_move(a, a->in[0], a->out, a->n_out, 0, tp);
}

/* ---- Gather -------------------------------------------------------------- */

int sm_cpu_gather_supports(const sm_kernel_desc *d)
{
    smelt_dtype it = d->in[1].dtype;
    return d->n_in == 2 && d->n_out == 1 && d->in[0].dtype == d->out[0].dtype &&
           (it == SMELT_DTYPE_I32 || it == SMELT_DTYPE_I64);
}

typedef struct gather_job {
    sm_gather_geom g;
    const char *x;
    char *y;
    const void *ind;
    int ind64; /* indices are i64 (else i32) */
    int64_t n_ind;
    size_t row; /* bytes per gathered row (inner elements) */
} gather_job;

/* Output rows [begin, end): row o * n_ind + j is input row
 * o * dim + ind[j] (indices checked beforehand). */
static void gather_rows(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gather_job *J = arg;
    for (int64_t r = begin; r < end; r++) {
        int64_t o = r / J->n_ind, j = r % J->n_ind;
        int64_t k = J->ind64 ? ((const int64_t *)J->ind)[j]
                             : ((const int32_t *)J->ind)[j];
        if (k < 0)
            k += J->g.dim;
        memcpy(J->y + (size_t)r * J->row,
               J->x + (size_t)(o * J->g.dim + k) * J->row, J->row);
    }
}

/* Gather along any axis: every index is range-checked first (the
 * reference's check), then each output row is one memcpy. */
smelt_status sm_cpu_gather_run(const sm_cpu_ops *ops, const sm_kargs *a,
                               const sm_cpu_config *c, const void *packed,
                               sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    const sm_tensor *x = a->in[0], *ind = a->in[1];
    sm_tensor *y = a->out[0];
    gather_job J = {.x = x->data,
                    .y = y->data,
                    .ind = ind->data,
                    .ind64 = ind->dtype == SMELT_DTYPE_I64,
                    .n_ind = ind->numel};
    SM_TRY(sm_gather_check(a->ctx, x, ind, y, &a->attrs, &J.g));
    J.row = (size_t)J.g.inner * smelt_dtype_size(x->dtype);
    int64_t rows = J.g.outer * J.n_ind;
    if (y->numel == 0)
        return SMELT_OK;
    if (sm_threadpool_size(tp) > 1 && rows > 1 &&
        (int64_t)y->nbytes >= DM_PAR_BYTES)
        sm_parallel_for(tp, rows, sm_cpu_chunk(rows, tp), gather_rows, &J);
    else
        gather_rows(&J, 0, rows, 0);
    return SMELT_OK;
}

/* ---- Where --------------------------------------------------------------- */

/* Broadcast strides of cond, x and y (ranks r[k], dims d[k]) onto the
 * output (operands 1..3 of g, operand 0 the output), as collapsed loops;
 * 0 when they do not broadcast. */
static int where_analyze(const int *r, const int64_t *const *d, int ry,
                         const int64_t *dy, sm_cpu_loops *g)
{
    g->n_ops = 4;
    sm_strides(ry, dy, g->s[0]);
    for (int k = 0; k < 3; k++)
        if (!sm_cpu_bcast_strides(r[k], d[k], ry, dy, g->s[k + 1]))
            return 0;
    sm_cpu_loops_collapse(g, ry, dy);
    return 1;
}

int sm_cpu_where_supports(const sm_kernel_desc *d)
{
    sm_cpu_loops g;
    smelt_dtype t = d->out[0].dtype;
    if (d->n_in != 3 || d->n_out != 1)
        return 0;
    int r[3] = {d->in[0].ndim, d->in[1].ndim, d->in[2].ndim};
    const int64_t *dims[3] = {d->in[0].dims, d->in[1].dims, d->in[2].dims};
    return d->in[0].dtype == SMELT_DTYPE_BOOL && d->in[1].dtype == t &&
           d->in[2].dtype == t &&
           where_analyze(r, dims, d->out[0].ndim, d->out[0].dims, &g);
}

/* out[i] = c[i * sc] ? a[i * sa] : b[i * sb], elements of ES bytes
 * (memmove: in place, the source may be the destination itself). */
#define WHERE_LOOP(ES)                                                         \
    for (int64_t i = 0; i < n; i++)                                            \
        memmove(y + i * (ES),                                                  \
                c[i * sc] ? a + i * sa * (ES) : b + i * sb * (ES), ES);        \
    break

/* out[i] = c[i] ? a[i * sa] : b[i * sb] for 4-byte elements: a mask
 * blend, which the compiler vectorizes where sa and sb are constants. */
static inline void where4(char *y, const unsigned char *c, const char *a,
                          int64_t sa, const char *b, int64_t sb, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t m = 0u - (uint32_t)(c[i] != 0), va, vb;
        memcpy(&va, a + i * sa * 4, 4);
        memcpy(&vb, b + i * sb * 4, 4);
        va = (va & m) | (vb & ~m);
        memcpy(y + i * 4, &va, 4);
    }
}

/* where4 for a contiguous condition and sources whose strides are 0 or 1
 * (f32 under a mask, like gpt's causal one): one copy per stride pair,
 * so each loop vectorizes. Returns 0 for other strides. */
static int where4_fast(char *y, const unsigned char *c, int64_t sc,
                       const char *a, int64_t sa, const char *b, int64_t sb,
                       int64_t n)
{
    if (sc != 1 || (sa | sb) & ~(int64_t)1)
        return 0;
    switch (sa * 2 + sb) {
    case 0: where4(y, c, a, 0, b, 0, n); break;
    case 1: where4(y, c, a, 0, b, 1, n); break;
    case 2: where4(y, c, a, 1, b, 0, n); break;
    default: where4(y, c, a, 1, b, 1, n); break;
    }
    return 1;
}

/* Items [begin, end) of a Where: a select of whole elements per row. */
static void where_items(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const dm_job *J = arg;
    int last = J->g.nd - 1;
    int64_t sc = J->g.s[1][last], sa = J->g.s[2][last], sb = J->g.s[3][last];
    int64_t off[SM_CPU_LOOP_OPS], n;
    size_t es = J->es;
    for (int64_t it = begin; it < end; it++) {
        dm_item(J, it, off, &n);
        char *y = J->y + (size_t)off[0] * es;
        const unsigned char *c = (const unsigned char *)J->x[0] + off[1];
        const char *a = J->x[1] + off[2] * (int64_t)es;
        const char *b = J->x[2] + off[3] * (int64_t)es;
        switch (es) {
        case 1: WHERE_LOOP(1);
        case 2: WHERE_LOOP(2);
        case 4:
            if (where4_fast(y, c, sc, a, sa, b, sb, n))
                break;
            WHERE_LOOP(4);
        case 8: WHERE_LOOP(8);
        default:
            for (int64_t i = 0; i < n; i++)
                memmove(y + (size_t)i * es,
                        c[i * sc] ? a + i * sa * (int64_t)es
                                  : b + i * sb * (int64_t)es,
                        es);
        }
    }
}

/* Where(cond, x, y) with broadcasting, for a bool condition and any
 * dtype of x and y (copied as bytes, so exact).
 *
 * In place: the plan aliases the output only with an input of the
 * output's shape, which then steps through memory exactly as the output
 * does, and every element is read (where4 loads both sources and the
 * condition first) before the same element is written; threads take
 * disjoint pieces of the output, hence of that input (kernels.def marks
 * the row SM_CPU_KERNEL_INPLACE). */
smelt_status sm_cpu_where_run(const sm_cpu_ops *ops, const sm_kargs *a,
                              const sm_cpu_config *c, const void *packed,
                              sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    sm_tensor *y = a->out[0];
    int r[3];
    const int64_t *dims[3];
    if (a->n_in != 3)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "Where: expected 3 inputs, got %d", a->n_in);
    for (int k = 0; k < 3; k++) {
        r[k] = a->in[k]->ndim;
        dims[k] = a->in[k]->dims;
    }
    dm_job J = {.es = smelt_dtype_size(y->dtype), .y = y->data};
    if (a->in[0]->dtype != SMELT_DTYPE_BOOL || a->in[1]->dtype != y->dtype ||
        a->in[2]->dtype != y->dtype)
        return sm_err(a->ctx, SMELT_ERR_TYPE,
                      "Where: needs a bool condition and x, y of the "
                      "output's dtype %s",
                      smelt_dtype_name(y->dtype));
    if (!where_analyze(r, dims, y->ndim, y->dims, &J.g))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Where: inputs do not broadcast onto the output");
    if (y->numel == 0)
        return SMELT_OK;
    for (int k = 0; k < 3; k++)
        J.x[k] = a->in[k]->data;
    dm_launch(&J, where_items, tp, (int64_t)y->nbytes);
    return SMELT_OK;
}
