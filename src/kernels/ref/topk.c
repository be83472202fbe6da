/*
 * topk.c - reference kernels of the sorting ops, TopK and Unique, with
 * the stable index sort and the unique-slice search their shape
 * functions share (select.h).
 *
 * Values compare as doubles for float dtypes (NaN above every number and
 * equal to NaN, so sorting is total) and as int64 otherwise, so int64
 * stays exact. Ties keep the lower index first.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/select.h"

void sm_sort_index(int64_t *idx, int64_t *tmp, int64_t n, sm_sort_cmp cmp,
                   const void *user)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n;
            int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp(user, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, sizeof *idx * (size_t)n);
    }
}

/* -1, 0 or 1 as element i of x is below, equal to or above element j. */
static int cmp_elem(const sm_tensor *x, int64_t i, int64_t j)
{
    if (sm_dtype_is_float(x->dtype)) {
        double a = sm_load_f64(x->dtype, x->data, i);
        double b = sm_load_f64(x->dtype, x->data, j);
        if (isnan(a) || isnan(b))
            return (isnan(a) != 0) - (isnan(b) != 0);
        return (a > b) - (a < b);
    }
    int64_t a = sm_load_i64(x->dtype, x->data, i);
    int64_t b = sm_load_i64(x->dtype, x->data, j);
    return (a > b) - (a < b);
}

/* One line of x along an axis: element i is at base + i * stride. */
typedef struct line {
    const sm_tensor *x;
    int64_t base, stride;
    int largest;
} line;

static int line_cmp(const void *user, int64_t a, int64_t b)
{
    const line *l = user;
    int c = cmp_elem(l->x, l->base + a * l->stride, l->base + b * l->stride);
    return l->largest ? -c : c;
}

/* TopK(X, K) {axis, largest, sorted}: along axis, the k largest (or
 * smallest) elements in order, and their indices. Always sorted, which
 * sorted = 0 allows. */
smelt_status sm_ref_topk(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0], *yi = a->out[1];
    int axis = sm_kernel_axis(a, "axis", -1, x->ndim);
    if (axis < 0)
        return SMELT_ERR_RUNTIME;
    int ok = y->ndim == x->ndim && yi->ndim == x->ndim &&
             y->dtype == x->dtype && yi->dtype == SMELT_DTYPE_I64;
    for (int d = 0; ok && d < x->ndim; d++)
        ok = y->dims[d] == yi->dims[d] &&
             (d == axis ? y->dims[d] <= x->dims[d] : y->dims[d] == x->dims[d]);
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "TopK: outputs do not match the input and k");
    int64_t dim = x->dims[axis], k = y->dims[axis], outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= x->dims[d];
    for (int d = axis + 1; d < x->ndim; d++)
        inner *= x->dims[d];
    if (k == 0 || outer * inner == 0)
        return SMELT_OK;
    int64_t *idx = sm_malloc(sizeof *idx * (size_t)dim * 2);
    if (!idx)
        return sm_err_nomem(a->ctx);
    size_t es = smelt_dtype_size(x->dtype);
    line l = {x, 0, inner, sm_attrs_int(&a->attrs, "largest", 1) != 0};
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            l.base = o * dim * inner + in;
            for (int64_t i = 0; i < dim; i++)
                idx[i] = i;
            sm_sort_index(idx, idx + dim, dim, line_cmp, &l);
            for (int64_t j = 0; j < k; j++) {
                int64_t to = (o * k + j) * inner + in;
                memcpy((char *)y->data + (size_t)to * es,
                       (const char *)x->data +
                           (size_t)(l.base + idx[j] * inner) * es,
                       es);
                ((int64_t *)yi->data)[to] = idx[j];
            }
        }
    sm_free(idx);
    return SMELT_OK;
}

/* The slices of Unique: slice i is x[.., i, ..] along the axis, seen as
 * [outer, dim, inner]. */
typedef struct slices {
    const sm_tensor *x;
    int64_t outer, dim, inner;
} slices;

static int slice_cmp(const void *user, int64_t a, int64_t b)
{
    const slices *s = user;
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t e = 0; e < s->inner; e++) {
            int64_t base = o * s->dim * s->inner + e;
            int c = cmp_elem(s->x, base + a * s->inner, base + b * s->inner);
            if (c)
                return c;
        }
    return 0;
}

static int first_cmp(const void *user, int64_t a, int64_t b)
{
    const int64_t *first = user;
    return (first[a] > first[b]) - (first[a] < first[b]);
}

void sm_unique_free(sm_unique *u)
{
    sm_free(u->first);
    sm_free(u->counts);
    sm_free(u->inverse);
    memset(u, 0, sizeof *u);
}

/* Reorders the u groups of out by first appearance, with perm and tmp
 * (room for u indices each) as scratch. */
static void order_by_first(sm_unique *out, int64_t *perm, int64_t *tmp)
{
    int64_t u = out->u;
    for (int64_t g = 0; g < u; g++)
        perm[g] = g;
    sm_sort_index(perm, tmp, u, first_cmp, out->first);
    for (int64_t j = 0; j < u; j++)
        tmp[j] = out->first[perm[j]];
    memcpy(out->first, tmp, sizeof *tmp * (size_t)u);
    for (int64_t j = 0; j < u; j++)
        tmp[j] = out->counts[perm[j]];
    memcpy(out->counts, tmp, sizeof *tmp * (size_t)u);
    for (int64_t j = 0; j < u; j++)
        tmp[perm[j]] = j; /* old group -> new */
    for (int64_t i = 0; i < out->n; i++)
        out->inverse[i] = tmp[out->inverse[i]];
}

smelt_status sm_unique_find(smelt_ctx_t *ctx, const sm_tensor *x, int axis,
                            int sorted, sm_unique *out)
{
    slices sl = {x, 1, x->numel, 1};
    memset(out, 0, sizeof *out);
    if (axis >= 0) {
        sl.dim = x->dims[axis];
        for (int d = 0; d < axis; d++)
            sl.outer *= x->dims[d];
        for (int d = axis + 1; d < x->ndim; d++)
            sl.inner *= x->dims[d];
    }
    int64_t n = sl.dim;
    size_t bytes = sizeof(int64_t) * (size_t)(n ? n : 1);
    int64_t *idx = sm_malloc(bytes), *tmp = sm_malloc(bytes);
    out->first = sm_malloc(bytes);
    out->counts = sm_malloc(bytes);
    out->inverse = sm_malloc(bytes);
    if (!idx || !tmp || !out->first || !out->counts || !out->inverse) {
        sm_free(idx);
        sm_free(tmp);
        sm_unique_free(out);
        return sm_err_nomem(ctx);
    }
    out->n = n;
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    /* stable: within a group the first appearance comes first */
    sm_sort_index(idx, tmp, n, slice_cmp, &sl);
    int64_t g = -1;
    for (int64_t p = 0; p < n; p++) {
        if (p == 0 || slice_cmp(&sl, idx[p - 1], idx[p]) != 0) {
            out->first[++g] = idx[p];
            out->counts[g] = 0;
        }
        out->counts[g]++;
        out->inverse[idx[p]] = g;
    }
    out->u = g + 1;
    if (!sorted)
        order_by_first(out, idx, tmp);
    sm_free(idx);
    sm_free(tmp);
    return SMELT_OK;
}

/* Unique(X) {axis?, sorted}: Y holds the distinct slices (elements of
 * the flattened X without axis); indices, inverse_indices and counts are
 * the optional outputs 1..3. */
smelt_status sm_ref_unique(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    int axis = -1;
    if (sm_attrs_find(&a->attrs, "axis") &&
        (axis = sm_kernel_axis(a, "axis", 0, x->ndim)) < 0)
        return SMELT_ERR_RUNTIME;
    sm_unique u;
    SM_TRY(sm_unique_find(a->ctx, x, axis,
                          (int)sm_attrs_int(&a->attrs, "sorted", 1), &u));
    sm_tensor *y = a->out[0];
    int64_t lens[4] = {u.u, u.u, u.n, u.u}, outer = 1, inner = 1;
    int ok = y->dtype == x->dtype && y->ndim == (axis < 0 ? 1 : x->ndim);
    for (int d = 0; ok && d < y->ndim; d++)
        ok = y->dims[d] == (axis < 0 || d == axis ? u.u : x->dims[d]);
    for (int j = 1; ok && j < a->n_out; j++)
        ok = !a->out[j] || (a->out[j]->dtype == SMELT_DTYPE_I64 &&
                            a->out[j]->numel == lens[j]);
    if (!ok) {
        sm_unique_free(&u);
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "Unique: outputs do not match the distinct count %lld",
                      (long long)lens[0]);
    }
    for (int d = 0; d < axis; d++)
        outer *= x->dims[d];
    for (int d = axis + 1; axis >= 0 && d < x->ndim; d++)
        inner *= x->dims[d];
    size_t row = (size_t)inner * smelt_dtype_size(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < u.u; k++)
            memcpy((char *)y->data + (size_t)(o * u.u + k) * row,
                   (const char *)x->data + (size_t)(o * u.n + u.first[k]) * row,
                   row);
    const int64_t *src[4] = {NULL, u.first, u.inverse, u.counts};
    for (int j = 1; j < a->n_out && j < 4; j++)
        if (a->out[j] && lens[j])
            memcpy(a->out[j]->data, src[j], sizeof(int64_t) * (size_t)lens[j]);
    sm_unique_free(&u);
    return SMELT_OK;
}
