/*
 * control.c - reference kernels of If and Loop. They see no graph: the
 * executor hands them a callback that runs one of the node's sub-blocks.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/deadline.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

static smelt_status scalar_bool(const sm_kargs *a, int i, const char *what,
                                int *out)
{
    const sm_tensor *t = a->in[i];
    if (t->numel != 1)
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: %s must hold one element, holds %lld", a->op_name,
                      what, (long long)t->numel);
    *out = sm_load_i64(t->dtype, t->data, 0) != 0;
    return SMELT_OK;
}

smelt_status sm_ref_if(const sm_kargs *a)
{
    int cond = 0;
    SM_TRY(scalar_bool(a, 0, "the condition", &cond));
    return a->run_block(a->run_block_user, cond ? 0 : 1, 0, NULL, a->n_out,
                        a->out);
}

/* Per scan output, the values of every iteration, stacked at the end. */
typedef struct scan_list {
    sm_tensor **items;
    int64_t n, cap;
} scan_list;

static smelt_status scan_push(smelt_ctx_t *ctx, scan_list *l, sm_tensor *t)
{
    if (l->n > 0 &&
        (l->items[0]->dtype != t->dtype || l->items[0]->ndim != t->ndim ||
         memcmp(l->items[0]->dims, t->dims,
                sizeof(int64_t) * (size_t)t->ndim))) {
        sm_tensor_free(t);
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "Loop: a scan output changed shape between iterations");
    }
    if (l->n == l->cap) {
        int64_t nc = l->cap ? l->cap * 2 : 16;
        sm_tensor **p = sm_realloc(l->items, sizeof(sm_tensor *) * (size_t)nc);
        if (!p) {
            sm_tensor_free(t);
            return sm_err_nomem(ctx);
        }
        l->items = p;
        l->cap = nc;
    }
    l->items[l->n++] = t;
    return SMELT_OK;
}

/* Stacks the iterations' values on a new first axis. When no iteration
 * ran, the graph's declared type (if any) gives dtype and trailing dims. */
static smelt_status scan_stack(smelt_ctx_t *ctx, const scan_list *l,
                               const sm_out_hint *hint, sm_tensor **out)
{
    int64_t dims[SMELT_MAX_DIMS] = {l->n};
    if (l->n == 0) {
        if (!hint || hint->dtype == SMELT_DTYPE_UNDEFINED || hint->ndim < 1)
            return sm_tensor_new(ctx, SMELT_DTYPE_F32, 1, dims, out);
        for (int d = 1; d < hint->ndim; d++)
            dims[d] = hint->dims[d] < 0 ? 0 : hint->dims[d];
        return sm_tensor_new(ctx, hint->dtype, hint->ndim, dims, out);
    }
    const sm_tensor *f = l->items[0];
    if (f->ndim + 1 > SMELT_MAX_DIMS)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "Loop: stacked scan output exceeds %d dims",
                      SMELT_MAX_DIMS);
    memcpy(dims + 1, f->dims, sizeof(int64_t) * (size_t)f->ndim);
    SM_TRY(sm_tensor_new(ctx, f->dtype, f->ndim + 1, dims, out));
    for (int64_t i = 0; i < l->n; i++)
        if (f->nbytes)
            memcpy((char *)(*out)->data + (size_t)i * f->nbytes,
                   l->items[i]->data, f->nbytes);
    return SMELT_OK;
}

/*
 * The bytes scan output `i` will hold when the loop's size is known
 * before it starts: its declared leading dim, or the trip count M when no
 * condition can end the loop early, times the declared trailing dims.
 * -1 when some size is unknown; SIZE_MAX past what size_t holds.
 */
static size_t scan_bytes_known(const sm_out_hint *h, int64_t trips,
                               int has_cond)
{
    if (!h || h->dtype == SMELT_DTYPE_UNDEFINED || h->ndim < 1)
        return (size_t)-1;
    int64_t rows = h->dims[0] >= 0 ? h->dims[0] : -1;
    if (rows < 0 && !has_cond && trips < INT64_MAX)
        rows = trips < 0 ? 0 : trips;
    if (rows < 0)
        return (size_t)-1;
    size_t bytes = smelt_dtype_size(h->dtype);
    for (int d = 0; d < h->ndim; d++) {
        int64_t n = d == 0 ? rows : h->dims[d];
        if (n < 0)
            return (size_t)-1;
        if (n && bytes > SIZE_MAX / (uint64_t)n)
            return SIZE_MAX;
        bytes *= (size_t)n;
    }
    return bytes;
}

/*
 * A loop must not grow past the allocation limit one iteration at a time
 * before failing: the scan outputs whose size is known up front are
 * checked before the first iteration, and after every iteration the
 * bytes the loop holds (carried values and scan values so far, which the
 * stacked outputs will hold again) are charged against the limit. A loop
 * may hold half the limit, so that the iteration that would pass it
 * stops here with the loop named rather than in an allocation. Each
 * iteration also checks the run's time limit: a loop with no bound
 * stops when the run's timeout is up.
 */
static smelt_status loop_check_before(const sm_kargs *a, int carried, int scans,
                                      int64_t trips)
{
    for (int i = 0; i < scans && a->out_hint; i++) {
        size_t b = scan_bytes_known(&a->out_hint[carried + i], trips,
                                    a->in[1] != NULL);
        if (b != (size_t)-1 && b > sm_alloc_limit())
            return sm_err(a->ctx, SMELT_ERR_LIMIT,
                          "Loop: scan output %d would hold %s%zu bytes, "
                          "above the limit of %zu bytes per tensor",
                          i, b == SIZE_MAX ? "more than " : "", b,
                          sm_alloc_limit());
    }
    return SMELT_OK;
}

static smelt_status loop_charge(const sm_kargs *a, int64_t iterations,
                                sm_tensor *const *carried_vals, int carried,
                                const scan_list *lists, int scans)
{
    size_t held = 0;
    for (int i = 0; i < carried; i++)
        held += carried_vals[i] ? carried_vals[i]->nbytes : 0;
    for (int i = 0; i < scans; i++) {
        size_t one = lists[i].n ? lists[i].items[0]->nbytes : 0;
        if (one && (size_t)lists[i].n > (SIZE_MAX - held) / one)
            held = SIZE_MAX;
        else
            held += one * (size_t)lists[i].n;
    }
    if (held > sm_alloc_limit() / 2)
        return sm_err(a->ctx, SMELT_ERR_LIMIT,
                      "Loop: after %lld iterations its carried and scan "
                      "values hold %zu bytes, above half the memory limit "
                      "of %zu bytes (the next iteration needs room too)",
                      (long long)iterations, held, sm_alloc_limit());
    char what[64];
    snprintf(what, sizeof what, "Loop: after %lld iterations",
             (long long)iterations);
    return sm_run_check_time(a->ctx, what);
}

/*
 * ONNX Loop: inputs (M?, cond?, carried...), body (iteration, cond,
 * carried...) -> (cond, carried..., scans...), outputs (carried...,
 * scans...). The kernel owns the carried values between iterations.
 */
smelt_status sm_ref_loop(const sm_kargs *a)
{
    smelt_ctx_t *ctx = a->ctx;
    int carried = a->n_in - 2, scans = a->n_out - carried;
    int body_in = carried + 2, body_out = 1 + carried + scans;
    int64_t trips = INT64_MAX;
    int cond = 1;
    if (a->in[0]) {
        if (a->in[0]->numel != 1)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "Loop: trip count M must hold one element");
        trips = sm_load_i64(a->in[0]->dtype, a->in[0]->data, 0);
    }
    if (a->in[1])
        SM_TRY(scalar_bool(a, 1, "the condition", &cond));
    SM_TRY(loop_check_before(a, carried, scans, trips));
    smelt_status st = SMELT_OK;
    size_t slots = (size_t)(body_in + body_out + scans);
    sm_tensor **buf = sm_calloc(slots, sizeof(sm_tensor *));
    scan_list *lists = sm_calloc((size_t)scans + 1, sizeof(scan_list));
    if (!buf || !lists) {
        sm_free(buf);
        sm_free(lists);
        return sm_err_nomem(ctx);
    }
    sm_tensor **bin = buf, **bout = buf + body_in;
    st = sm_tensor_new(ctx, SMELT_DTYPE_I64, 0, NULL, &bin[0]);
    if (!st)
        st = sm_tensor_new(ctx, SMELT_DTYPE_BOOL, 0, NULL, &bin[1]);
    for (int i = 0; i < carried && !st; i++) {
        if (!a->in[2 + i])
            st = sm_err(ctx, SMELT_ERR_INVALID_ARG,
                        "Loop: carried input %d is absent", i);
        else
            st = sm_tensor_clone(ctx, a->in[2 + i], &bin[2 + i]);
    }
    for (int64_t it = 0; !st && it < trips && cond; it++) {
        ((int64_t *)bin[0]->data)[0] = it;
        ((unsigned char *)bin[1]->data)[0] = 1;
        memset(bout, 0, sizeof(sm_tensor *) * (size_t)body_out);
        st = a->run_block(a->run_block_user, 0, body_in, bin, body_out, bout);
        if (st)
            break;
        int c = 1;
        if (bout[0]->numel != 1)
            st = sm_err(ctx, SMELT_ERR_SHAPE,
                        "Loop: the body's condition must hold one element");
        else
            c = sm_load_i64(bout[0]->dtype, bout[0]->data, 0) != 0;
        cond = c;
        for (int i = 0; i < carried; i++) { /* next iteration's values */
            sm_tensor_free(bin[2 + i]);
            bin[2 + i] = bout[1 + i];
            bout[1 + i] = NULL;
        }
        for (int i = 0; i < scans; i++) {
            if (!st)
                st = scan_push(ctx, &lists[i], bout[1 + carried + i]);
            else
                sm_tensor_free(bout[1 + carried + i]);
            bout[1 + carried + i] = NULL;
        }
        sm_tensor_free(bout[0]);
        bout[0] = NULL;
        if (!st)
            st = loop_charge(a, it + 1, bin + 2, carried, lists, scans);
    }
    for (int i = 0; i < carried && !st; i++) {
        a->out[i] = bin[2 + i];
        bin[2 + i] = NULL;
    }
    for (int i = 0; i < scans && !st; i++)
        st = scan_stack(ctx, &lists[i],
                        a->out_hint ? &a->out_hint[carried + i] : NULL,
                        &a->out[carried + i]);
    for (int i = 0; i < body_in; i++)
        sm_tensor_free(bin[i]);
    for (int i = 0; i < scans; i++) {
        for (int64_t j = 0; j < lists[i].n; j++)
            sm_tensor_free(lists[i].items[j]);
        sm_free(lists[i].items);
    }
    sm_free(lists);
    sm_free(buf);
    return st;
}
