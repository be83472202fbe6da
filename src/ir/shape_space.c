/*
 * shape_space.c - shape functions of the rearranging and masking ops:
 * DepthToSpace, SpaceToDepth, ReverseSequence, Trilu, EyeLike, CumSum and
 * Size. All but the block moves keep the input's shape.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_check.h"

/* DepthToSpace and SpaceToDepth: an NCHW input and blocksize b > 0. */
static smelt_status block_input(sm_shape_ctx *s, const sm_type **x, int64_t *b)
{
    SM_TRY(sm_movement_input(s, 0, x));
    SM_TRY(sm_check_rank(s, *x, "input", 4, 4));
    if (!sm_attrs_find(&s->attrs, "blocksize"))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute blocksize is required", s->op->name);
    *b = sm_attrs_int(&s->attrs, "blocksize", 0);
    if (*b <= 0 || *b > 65536)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: blocksize %lld must be 1 to 65536", s->op->name,
                      (long long)*b);
    *s->out = **x;
    return SMELT_OK;
}

/* Dim d of the output: x's divided by `div` (which must divide it), then
 * multiplied by `mul`. */
static smelt_status block_dim(sm_shape_ctx *s, const sm_type *x, int d,
                              int64_t div, int64_t mul)
{
    sm_dim in = x->dims[d], *o = &s->out->dims[d];
    *o = (sm_dim){-1, NULL};
    if (in.size < 0)
        return SMELT_OK;
    if (in.size % div != 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: dim %d of size %lld is not a multiple of %lld",
                      s->op->name, d, (long long)in.size, (long long)div);
    o->size = in.size / div;
    if (!sm_movement_mul(&o->size, mul))
        return sm_err(s->ctx, SMELT_ERR_LIMIT, "%s: dim %d overflows",
                      s->op->name, d);
    return SMELT_OK;
}

/* DepthToSpace(input) {blocksize b, mode DCR|CRD}: [N, C, H, W] to
 * [N, C / b^2, H * b, W * b]. */
smelt_status sm_shape_depthtospace(sm_shape_ctx *s)
{
    const sm_type *x;
    int64_t b;
    SM_TRY(block_input(s, &x, &b));
    const char *mode = sm_attrs_string(&s->attrs, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "DepthToSpace: unknown mode '%s' (DCR, CRD)", mode);
    if (x->ndim < 0)
        return SMELT_OK;
    SM_TRY(block_dim(s, x, 1, b * b, 1));
    SM_TRY(block_dim(s, x, 2, 1, b));
    SM_TRY(block_dim(s, x, 3, 1, b));
    return sm_movement_check_size(s, s->out);
}

/* SpaceToDepth(input) {blocksize b}: [N, C, H, W] to
 * [N, C * b^2, H / b, W / b]. */
smelt_status sm_shape_spacetodepth(sm_shape_ctx *s)
{
    const sm_type *x;
    int64_t b;
    SM_TRY(block_input(s, &x, &b));
    if (x->ndim < 0)
        return SMELT_OK;
    SM_TRY(block_dim(s, x, 1, 1, b * b));
    SM_TRY(block_dim(s, x, 2, b, 1));
    SM_TRY(block_dim(s, x, 3, b, 1));
    return sm_movement_check_size(s, s->out);
}

/* ReverseSequence(input, sequence_lens) {batch_axis, time_axis}: the
 * input's type; axes 0 and 1 (one each), lens an integer [batch] with
 * values in [0, time]. */
smelt_status sm_shape_reversesequence(sm_shape_ctx *s)
{
    const sm_type *x, *lt;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &lt));
    SM_TRY(sm_check_index_type(s, lt, "sequence_lens"));
    SM_TRY(sm_check_rank(s, x, "input", 2, -1));
    SM_TRY(sm_check_rank(s, lt, "sequence_lens", 1, 1));
    int64_t ba = sm_attrs_int(&s->attrs, "batch_axis", 1);
    int64_t ta = sm_attrs_int(&s->attrs, "time_axis", 0);
    if (ba < 0 || ba > 1 || ta < 0 || ta > 1 || ba == ta)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "ReverseSequence: batch_axis %lld and time_axis %lld "
                      "must be 0 and 1",
                      (long long)ba, (long long)ta);
    *s->out = *x;
    if (x->ndim < 0 || lt->ndim < 0)
        return SMELT_OK;
    SM_TRY(sm_check_same_dim(s, lt->dims[0], "the length of sequence_lens",
                             x->dims[ba], "the batch dim"));
    const sm_tensor *lens = s->in[1].data;
    int64_t t = x->dims[ta].size;
    for (int64_t b = 0; lens && t >= 0 && b < lens->numel; b++) {
        int64_t len = sm_load_i64(lens->dtype, lens->data, b);
        if (len < 0 || len > t)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "ReverseSequence: sequence length %lld of batch "
                          "%lld is outside [0, %lld]",
                          (long long)len, (long long)b, (long long)t);
    }
    return SMELT_OK;
}

/* Trilu(input, k?) {upper}: the input's type; rank 2 or more, k one
 * integer. */
smelt_status sm_shape_trilu(sm_shape_ctx *s)
{
    const sm_type *x, *kt = sm_shape_in(s, 1);
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_check_rank(s, x, "input", 2, -1));
    if (kt) {
        int64_t k;
        int known;
        SM_TRY(sm_check_index_type(s, kt, "k"));
        SM_TRY(sm_check_scalar_int(s, 1, "k", &k, &known));
    }
    *s->out = *x;
    return SMELT_OK;
}

/* EyeLike(input) {dtype?, k}: a 2-D tensor of the input's shape, of the
 * dtype attribute (an ONNX type code) or else the input's. */
smelt_status sm_shape_eyelike(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_check_rank(s, x, "input", 2, 2));
    smelt_dtype dt = x->dtype;
    const sm_attr *da = sm_attrs_find(&s->attrs, "dtype");
    if (da) {
        dt = sm_dtype_from_onnx(da->v.i);
        if (dt == SMELT_DTYPE_UNDEFINED)
            return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                          "EyeLike: dtype %lld is not a type Smelt supports",
                          (long long)da->v.i);
    }
    *s->out = *x;
    s->out->dtype = dt;
    if (x->ndim < 0)
        sm_movement_unknown(s->out, dt, 2);
    return SMELT_OK;
}

/* CumSum(x, axis): x's type; axis one integer in range when known. */
smelt_status sm_shape_cumsum(sm_shape_ctx *s)
{
    const sm_type *x, *at;
    SM_TRY(sm_movement_input(s, 0, &x));
    SM_TRY(sm_movement_input(s, 1, &at));
    SM_TRY(sm_check_index_type(s, at, "axis"));
    if (x->dtype == SMELT_DTYPE_BOOL)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "CumSum: x must be numeric, not bool");
    int64_t axis;
    int known, ax;
    SM_TRY(sm_check_scalar_int(s, 1, "axis", &axis, &known));
    *s->out = *x;
    if (known && x->ndim >= 0) {
        SM_TRY(sm_check_rank(s, x, "x", 1, -1));
        SM_TRY(sm_shape_axis(s, axis, x->ndim, &ax));
    }
    return SMELT_OK;
}

/* Size(data): an i64 scalar. */
smelt_status sm_shape_size(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    sm_type_set(s->out, SMELT_DTYPE_I64, 0, NULL);
    return SMELT_OK;
}
