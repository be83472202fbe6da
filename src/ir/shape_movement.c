/*
 * shape_movement.c - shape functions of the data-movement ops
 * (Transpose, Concat, Split, Expand, Tile) and the helpers every layout
 * shape function shares (shape_movement.h).
 *
 * With symbolic or unknown input dims these propagate what is certain
 * (a symbolic dim copied unchanged stays symbolic) and fail only on what
 * is certainly wrong; with concrete inputs they give concrete outputs and
 * refuse outputs too large to allocate.
 */
#include "ir/shape_movement.h"

#include <stdio.h>
#include <string.h>

#include "core/dtype.h"

smelt_status sm_movement_input(sm_shape_ctx *s, int i, const sm_type **t)
{
    *t = sm_shape_in(s, i);
    if (!*t)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: input %d is required but absent", s->op->name, i);
    return SMELT_OK;
}

void sm_movement_unknown(sm_type *out, smelt_dtype dt, int ndim)
{
    memset(out, 0, sizeof *out);
    out->dtype = dt;
    out->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        out->dims[i] = (sm_dim){-1, NULL};
}

smelt_status sm_movement_check_size(sm_shape_ctx *s, const sm_type *out)
{
    int64_t dims[SMELT_MAX_DIMS], n;
    for (int i = 0; i < out->ndim; i++) {
        if (out->dims[i].size < 0)
            return SMELT_OK;
        dims[i] = out->dims[i].size;
    }
    if (out->ndim < 0)
        return SMELT_OK;
    smelt_status st = sm_shape_numel(s->ctx, out->ndim, dims,
                                     smelt_dtype_size(out->dtype), &n);
    if (st != SMELT_OK)
        sm_err_prefix(s->ctx, "%s: output: ", s->op->name);
    return st;
}

int sm_movement_mul(int64_t *acc, int64_t x)
{
    if (x != 0 && *acc > INT64_MAX / x)
        return 0;
    *acc *= x;
    return 1;
}

int sm_movement_add(int64_t *acc, int64_t x)
{
    if ((x > 0 && *acc > INT64_MAX - x) || (x < 0 && *acc < INT64_MIN - x))
        return 0;
    *acc += x;
    return 1;
}

int64_t sm_movement_len(const sm_type *t)
{
    if (t->ndim == 0)
        return 1;
    return t->ndim == 1 ? t->dims[0].size : -1;
}

smelt_status sm_movement_shape_rank(sm_shape_ctx *s, const sm_type *sh,
                                    int *rank)
{
    int64_t len = sm_movement_len(sh);
    if (len > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: a shape of %lld dims exceeds the maximum %d",
                      s->op->name, (long long)len, SMELT_MAX_DIMS);
    *rank = len < 0 ? SM_RANK_UNKNOWN : (int)len;
    return SMELT_OK;
}

void sm_movement_ints_str(const int64_t *v, int n, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "",
                              (long long)v[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

smelt_status sm_movement_read(sm_shape_ctx *s, const sm_tensor *t, int64_t *v,
                              int *n)
{
    *n = sm_shape_read_ints(s, t, v, SMELT_MAX_DIMS);
    if (*n >= 0)
        return SMELT_OK;
    smelt_status st = smelt_ctx_status(s->ctx);
    return st != SMELT_OK ? st : SMELT_ERR_SHAPE;
}

smelt_status sm_movement_ints(sm_shape_ctx *s, int idx, const char *name,
                              int64_t *v, int max, int *n, int64_t *len)
{
    *len = -1;
    const sm_type *t = sm_shape_in(s, idx);
    if (t) {
        if (!s->in[idx].data) {
            *n = SM_INTS_UNKNOWN;
            *len = sm_movement_len(t);
            return SMELT_OK;
        }
        SM_TRY(sm_movement_read(s, s->in[idx].data, v, n));
        *len = *n;
        return SMELT_OK;
    }
    const int64_t *p;
    *n = sm_attrs_ints(&s->attrs, name, &p);
    if (*n < 0) {
        *n = SM_INTS_ABSENT;
        return SMELT_OK;
    }
    if (*n > max)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s has %d values where at most %d are allowed",
                      s->op->name, name, *n, max);
    if (*n)
        memcpy(v, p, sizeof *v * (size_t)*n);
    *len = *n;
    return SMELT_OK;
}

smelt_status sm_movement_axes(sm_shape_ctx *s, const int64_t *v, int n,
                              int rank, int *ax)
{
    int seen[SMELT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        if (v[i] < -rank || v[i] >= rank)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: axis %lld is out of range for rank %d",
                          s->op->name, (long long)v[i], rank);
        ax[i] = (int)(v[i] < 0 ? v[i] + rank : v[i]);
        if (seen[ax[i]]++)
            return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: axis %lld is repeated",
                          s->op->name, (long long)v[i]);
    }
    return SMELT_OK;
}

/* Transpose: output dim i is input dim perm[i]; perm defaults to the
 * reversed axes and must be a permutation. */
smelt_status sm_shape_transpose(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    const int64_t *p = NULL;
    int n = sm_attrs_ints(&s->attrs, "perm", &p);
    int rank = x->ndim >= 0 ? x->ndim : n;
    if (n > SMELT_MAX_DIMS || (n >= 0 && x->ndim >= 0 && n != x->ndim))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Transpose: perm has %d entries for an input of rank %d",
                      n, x->ndim);
    int seen[SMELT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++)
        if (p[i] < 0 || p[i] >= n || seen[p[i]]++) {
            char buf[160];
            sm_movement_ints_str(p, n, buf, sizeof buf);
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "Transpose: perm %s is not a permutation of 0..%d",
                          buf, n - 1);
        }
    sm_movement_unknown(s->out, x->dtype, rank);
    if (x->ndim < 0)
        return SMELT_OK;
    for (int i = 0; i < rank; i++)
        s->out->dims[i] = x->dims[n >= 0 ? p[i] : rank - 1 - i];
    return SMELT_OK;
}

/* The dtype the inputs [from, to) share (UNDEFINED ones aside); fails
 * when two known dtypes differ. */
static smelt_status common_dtype(sm_shape_ctx *s, int from, int to,
                                 smelt_dtype *dt)
{
    *dt = SMELT_DTYPE_UNDEFINED;
    int first = -1;
    for (int i = from; i < to; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t || t->dtype == SMELT_DTYPE_UNDEFINED)
            continue;
        if (first >= 0 && t->dtype != *dt)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: input %d is %s but input %d is %s", s->op->name,
                          i, smelt_dtype_name(t->dtype), first,
                          smelt_dtype_name(*dt));
        if (first < 0)
            first = i;
        *dt = t->dtype;
    }
    return SMELT_OK;
}

/* Concat: dim `d` (not the axis) of the output from the inputs', which
 * must agree: a known size wins, else the first symbolic name. */
static smelt_status concat_dim(sm_shape_ctx *s, int d, sm_dim *out)
{
    *out = (sm_dim){-1, NULL};
    int from = -1;
    for (int i = 0; i < s->n_in; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t || t->ndim < 0)
            continue;
        sm_dim x = t->dims[d];
        if (x.size >= 0 && out->size >= 0 && x.size != out->size)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Concat: dimension %d is %lld in input %d but "
                          "%lld in input %d",
                          d, (long long)x.size, i, (long long)out->size, from);
        if (x.size >= 0 && out->size < 0) {
            *out = x;
            from = i;
        } else if (x.sym && out->size < 0 && !out->sym) {
            *out = x;
        }
    }
    return SMELT_OK;
}

/* Concat: any number of inputs of one dtype and rank, joined along axis;
 * every other dim must agree. Zero-size inputs take part like others. */
smelt_status sm_shape_concat(sm_shape_ctx *s)
{
    sm_type *out = s->out;
    smelt_dtype dt;
    SM_TRY(common_dtype(s, 0, s->n_in, &dt));
    int rank = SM_RANK_UNKNOWN, from = 0;
    for (int i = 0; i < s->n_in; i++) {
        const sm_type *t;
        SM_TRY(sm_movement_input(s, i, &t));
        if (t->ndim >= 0 && rank >= 0 && t->ndim != rank)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Concat: input %d has rank %d but input %d has "
                          "rank %d",
                          i, t->ndim, from, rank);
        if (t->ndim >= 0 && rank < 0) {
            rank = t->ndim;
            from = i;
        }
    }
    if (!sm_attrs_find(&s->attrs, "axis"))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Concat: attribute axis is required");
    sm_movement_unknown(out, dt, rank);
    if (rank < 0)
        return SMELT_OK;
    if (rank == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Concat: cannot concatenate scalars");
    int axis;
    SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), rank, &axis));
    int64_t sum = 0;
    int n_open = 0; /* inputs whose size along axis is not known */
    sm_dim open = {-1, NULL};
    for (int d = 0; d < rank; d++)
        if (d != axis)
            SM_TRY(concat_dim(s, d, &out->dims[d]));
    for (int i = 0; i < s->n_in; i++) {
        const sm_type *t = sm_shape_in(s, i);
        sm_dim x = t->ndim >= 0 ? t->dims[axis] : (sm_dim){-1, NULL};
        if (x.size < 0) {
            n_open++;
            open = x;
        } else if (!sm_movement_add(&sum, x.size)) {
            return sm_err(s->ctx, SMELT_ERR_LIMIT,
                          "Concat: the size along axis %d overflows", axis);
        }
    }
    if (n_open == 0)
        out->dims[axis] = (sm_dim){sum, NULL};
    else if (n_open == 1 && sum == 0)
        out->dims[axis] = open;
    return sm_movement_check_size(s, out);
}

/* Output j of Split gets size `size` along axis (when its rank is known). */
static void split_set(sm_shape_ctx *s, int axis, int j, int64_t size)
{
    if (s->out[j].ndim >= 0)
        s->out[j].dims[axis] = (sm_dim){size, NULL};
}

/* Split: the sizes along axis from input 1 (newer opsets), the `split`
 * attribute (older), `num_outputs` (opset 18: chunks of ceil(dim / n), the
 * last one smaller) or, failing all, equal parts, one per output. Outputs
 * whose size is not known keep what they have. */
static smelt_status split_sizes(sm_shape_ctx *s, sm_dim dim, int axis)
{
    int n = s->n_out;
    const int64_t *p = NULL;
    const sm_tensor *t = NULL;
    int cnt = -1;
    if (sm_shape_in(s, 1)) {
        if (!(t = s->in[1].data))
            return SMELT_OK;
        if (!sm_dtype_is_int(t->dtype) || t->ndim > 1)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "Split: split must be a 1-D integer tensor");
        cnt = (int)(t->numel <= n ? t->numel : n + 1);
    } else {
        cnt = sm_attrs_ints(&s->attrs, "split", &p);
    }
    if (cnt >= 0) {
        if (cnt != n)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Split: %lld split sizes for %d outputs",
                          (long long)(t ? t->numel : cnt), n);
        int64_t sum = 0;
        for (int j = 0; j < n; j++) {
            int64_t size = t ? sm_load_i64(t->dtype, t->data, j) : p[j];
            if (size < 0 || !sm_movement_add(&sum, size))
                return sm_err(s->ctx, SMELT_ERR_SHAPE,
                              "Split: split size %lld of output %d is invalid",
                              (long long)size, j);
            split_set(s, axis, j, size);
        }
        if (dim.size >= 0 && sum != dim.size)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Split: split sizes sum to %lld but axis %d has "
                          "size %lld",
                          (long long)sum, axis, (long long)dim.size);
        return SMELT_OK;
    }
    const sm_attr *no = sm_attrs_find(&s->attrs, "num_outputs");
    if (no && no->v.i != n)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "Split: num_outputs is %lld but the node has %d outputs",
                      (long long)no->v.i, n);
    if (dim.size < 0)
        return SMELT_OK;
    int64_t chunk = dim.size / n + (dim.size % n != 0);
    if (!no && dim.size % n != 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Split: axis %d of size %lld does not split evenly into "
                      "%d outputs",
                      axis, (long long)dim.size, n);
    if (n > 1 && chunk > dim.size / (n - 1))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Split: axis %d of size %lld cannot make %d chunks of "
                      "%lld",
                      axis, (long long)dim.size, n, (long long)chunk);
    for (int j = 0; j < n; j++)
        split_set(s, axis, j, j < n - 1 ? chunk : dim.size - chunk * (n - 1));
    return SMELT_OK;
}

smelt_status sm_shape_split(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    if (x->ndim == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "Split: cannot split a scalar");
    int axis = 0;
    if (x->ndim > 0)
        SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", 0), x->ndim,
                             &axis));
    sm_dim dim = x->ndim > 0 ? x->dims[axis] : (sm_dim){-1, NULL};
    /* one output is the whole axis; several are unknown until sized */
    for (int j = 0; j < s->n_out; j++) {
        s->out[j] = *x;
        if (s->n_out > 1)
            split_set(s, axis, j, -1);
    }
    return split_sizes(s, dim, axis);
}

/* Expand: the input broadcast (both ways, as numpy does) with the shape
 * given by input 1. */
smelt_status sm_shape_expand(sm_shape_ctx *s)
{
    const sm_type *x, *sh;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &sh));
    if (!s->in[1].data) {
        int rank;
        SM_TRY(sm_movement_shape_rank(s, sh, &rank));
        if (rank >= 0 && x->ndim > rank)
            rank = x->ndim;
        sm_movement_unknown(s->out, x->dtype,
                            x->ndim < 0 ? SM_RANK_UNKNOWN : rank);
        return SMELT_OK;
    }
    int64_t v[SMELT_MAX_DIMS];
    int n;
    SM_TRY(sm_movement_read(s, s->in[1].data, v, &n));
    for (int i = 0; i < n; i++)
        if (v[i] < 0)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Expand: shape has negative dimension %lld",
                          (long long)v[i]);
    sm_type want;
    sm_type_set(&want, x->dtype, n, v);
    const sm_type *both[2] = {x, &want};
    SM_TRY(sm_shape_bcast(s, 2, both, s->out));
    s->out->dtype = x->dtype;
    return sm_movement_check_size(s, s->out);
}

/* Tile: dim i times repeats[i]; a symbolic dim survives a repeat of 1. */
smelt_status sm_shape_tile(sm_shape_ctx *s)
{
    const sm_type *x, *rt;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &rt));
    const sm_tensor *rep = s->in[1].data;
    int64_t v[SMELT_MAX_DIMS], len = sm_movement_len(rt);
    int n = -1;
    if (rep) {
        SM_TRY(sm_movement_read(s, rep, v, &n));
        len = n;
    }
    if ((len >= 0 && x->ndim >= 0 && len != x->ndim) || len > SMELT_MAX_DIMS)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "Tile: %lld repeats for an input of rank %d",
                      (long long)len, x->ndim);
    sm_movement_unknown(s->out, x->dtype, x->ndim >= 0 ? x->ndim : (int)len);
    if (!rep || x->ndim < 0)
        return SMELT_OK;
    for (int i = 0; i < n; i++) {
        sm_dim d = x->dims[i];
        sm_dim *o = &s->out->dims[i];
        if (v[i] < 0)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Tile: repeat %lld of axis %d is negative",
                          (long long)v[i], i);
        if (v[i] == 0 || v[i] == 1)
            *o = v[i] == 0 ? (sm_dim){0, NULL} : d;
        else if (d.size >= 0) {
            o->size = d.size;
            if (!sm_movement_mul(&o->size, v[i]))
                return sm_err(s->ctx, SMELT_ERR_LIMIT,
                              "Tile: axis %d of size %lld repeated %lld "
                              "times overflows",
                              i, (long long)d.size, (long long)v[i]);
        }
    }
    return sm_movement_check_size(s, s->out);
}
