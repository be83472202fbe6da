/*
 * control.c - reference kernels of If and Loop. They see no graph: the
 * executor hands them a callback that runs one of the node's sub-blocks.
 */
#include <string.h>

#include "core/alloc.h"
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
