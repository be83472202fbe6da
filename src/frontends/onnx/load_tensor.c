/*
 * load_tensor.c - TensorProto to sm_tensor and TypeProto to sm_type.
 *
 * Everything is untrusted: the rank and every dimension are checked, the
 * element count is overflow-checked, and the size of the data the proto
 * carries (raw_data, a typed field, or an external file) must match the
 * shape exactly before anything is allocated.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

const char *sm_onnx_dtype_name(int64_t code)
{
    static const char *names[] = {
        "undefined",      "float",      "uint8",          "int8",
        "uint16",         "int16",      "int32",          "int64",
        "string",         "bool",       "float16",        "double",
        "uint32",         "uint64",     "complex64",      "complex128",
        "bfloat16",       "float8e4m3", "float8e4m3fnuz", "float8e5m2",
        "float8e5m2fnuz", "uint4",      "int4",           "float4e2m1"};
    return code >= 0 && code < (int64_t)(sizeof names / sizeof *names)
               ? names[code]
               : "unknown";
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

void sm_onnx_copy_le(void *dst, const void *src, size_t n, size_t esize)
{
    if (host_is_little_endian() || esize == 1) {
        if (n)
            memmove(dst, src, n * esize);
        return;
    }
    const unsigned char *s = src;
    unsigned char *d = dst, tmp[16];
    for (size_t i = 0; i < n; i++) { /* dst may be src */
        memcpy(tmp, s + i * esize, esize);
        for (size_t k = 0; k < esize; k++)
            d[i * esize + k] = tmp[esize - 1 - k];
    }
}

/* The dtype of a TensorProto data-type code, or an error naming it. */
static smelt_status dtype_of(smelt_ctx_t *ctx, int64_t code, const char *what,
                             smelt_dtype *dt)
{
    *dt = sm_dtype_from_onnx(code);
    if (*dt != SMELT_DTYPE_UNDEFINED)
        return SMELT_OK;
    if (code == 0)
        return sm_err(ctx, SMELT_ERR_PARSE, "onnx: %s: no data type", what);
    return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                  "onnx: %s: data type %lld (%s) is not supported", what,
                  (long long)code, sm_onnx_dtype_name(code));
}

/* Number of values the proto carries in its typed fields. */
static size_t typed_count(const Onnx__TensorProto *tp)
{
    return tp->n_float_data + tp->n_int32_data + tp->n_string_data +
           tp->n_int64_data + tp->n_double_data + tp->n_uint64_data;
}

/* The typed field dtype dt uses (float_data, double_data, int64_data,
 * uint64_data for uint32 and uint64 as the ONNX spec says, or int32_data
 * for the small types including uint16, float16 and bfloat16 as their 16
 * bits): its name and its value count. */
static const char *typed_field(const Onnx__TensorProto *tp, smelt_dtype dt,
                               size_t *have)
{
    switch (dt) {
    case SMELT_DTYPE_F32: *have = tp->n_float_data; return "float_data";
    case SMELT_DTYPE_F64: *have = tp->n_double_data; return "double_data";
    case SMELT_DTYPE_I64: *have = tp->n_int64_data; return "int64_data";
    case SMELT_DTYPE_U32:
    case SMELT_DTYPE_U64: *have = tp->n_uint64_data; return "uint64_data";
    default: *have = tp->n_int32_data; return "int32_data";
    }
}

/*
 * Checks that every int32_data value fits the dtype it is stored as: a
 * value out of range would wrap into another number. float16 and
 * bfloat16 travel as their 16-bit patterns, so 0..0xFFFF.
 */
static smelt_status check_int32_range(smelt_ctx_t *ctx,
                                      const Onnx__TensorProto *tp,
                                      smelt_dtype dt, const char *what)
{
    int64_t lo, hi;
    switch (dt) {
    case SMELT_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case SMELT_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case SMELT_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case SMELT_DTYPE_U16:
    case SMELT_DTYPE_F16:
    case SMELT_DTYPE_BF16: lo = 0, hi = UINT16_MAX; break;
    default: return SMELT_OK;
    }
    for (size_t i = 0; i < tp->n_int32_data; i++)
        if (tp->int32_data[i] < lo || tp->int32_data[i] > hi)
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "onnx: %s: int32_data[%zu] = %d is out of range for "
                          "%s (%lld..%lld%s)",
                          what, i, (int)tp->int32_data[i], smelt_dtype_name(dt),
                          (long long)lo, (long long)hi,
                          dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16
                              ? ", the value's 16-bit pattern"
                              : "");
    return SMELT_OK;
}

/* Checks that the typed field holds exactly numel values and no other
 * field holds any (before the tensor is allocated). */
static smelt_status check_typed(smelt_ctx_t *ctx, const Onnx__TensorProto *tp,
                                smelt_dtype dt, int64_t numel, const char *what)
{
    size_t have;
    const char *field = typed_field(tp, dt, &have);
    if (have != (size_t)numel) {
        char shape[96];
        sm_shape_str(dt, (int)tp->n_dims, tp->dims, shape, sizeof shape);
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: %s holds %zu values, but %s needs %lld", what,
                      field, have, shape, (long long)numel);
    }
    if (typed_count(tp) != have)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: carries data in fields other than %s", what,
                      field);
    return check_int32_range(ctx, tp, dt, what);
}

/* Fills t from its typed field (checked by check_typed). */
static void fill_typed(const Onnx__TensorProto *tp, sm_tensor *t)
{
    for (int64_t i = 0; i < t->numel; i++) {
        switch (t->dtype) {
        case SMELT_DTYPE_F32: ((float *)t->data)[i] = tp->float_data[i]; break;
        case SMELT_DTYPE_F64:
            ((double *)t->data)[i] = tp->double_data[i];
            break;
        case SMELT_DTYPE_I64:
            ((int64_t *)t->data)[i] = tp->int64_data[i];
            break;
        case SMELT_DTYPE_F16:
        case SMELT_DTYPE_BF16:
            ((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i];
            break;
        case SMELT_DTYPE_BOOL:
            ((uint8_t *)t->data)[i] = tp->int32_data[i] != 0;
            break;
        case SMELT_DTYPE_U32: /* u32 wraps, like numpy's cast */
        case SMELT_DTYPE_U64:
            sm_store_i64(t->dtype, t->data, i, (int64_t)tp->uint64_data[i]);
            break;
        default: sm_store_i64(t->dtype, t->data, i, tp->int32_data[i]);
        }
    }
}

/* Where tp's raw bytes are: its own raw_data, or a reference into the
 * loader's source (lean.c), checked to lie inside it. *raw stays NULL
 * when tp has neither. */
static smelt_status raw_bytes(sm_onnx_loader *L, const Onnx__TensorProto *tp,
                              const char *what, const uint8_t **raw,
                              size_t *len, int *ref)
{
    uint64_t off, n;
    *raw = NULL;
    *len = 0;
    *ref = 0;
    if (tp->has_raw_data) {
        *raw = tp->raw_data.data ? tp->raw_data.data : (const uint8_t *)"";
        *len = tp->raw_data.len;
    } else if (sm_onnx_raw_ref(tp, &off, &n)) {
        if (!L->src || off > L->src->len || n > L->src->len - off)
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: %s: raw_data reference outside the model's "
                          "bytes",
                          what);
        *raw = L->src->data + off;
        *len = (size_t)n;
        *ref = 1;
    }
    return SMELT_OK;
}

/* Copies t's bytes from raw, inside the loader's source, a slice at a
 * time, each slice's pages dropped from the source once copied: a large
 * weight is never resident twice. */
static void copy_from_src(const sm_onnx_src *src, const uint8_t *raw,
                          sm_tensor *t)
{
    const size_t slice = (size_t)4 << 20; /* a multiple of every esize */
    size_t esize = smelt_dtype_size(t->dtype);
    for (size_t at = 0; at < t->nbytes; at += slice) {
        size_t n = t->nbytes - at < slice ? t->nbytes - at : slice;
        sm_onnx_copy_le((uint8_t *)t->data + at, raw + at, n / esize, esize);
        sm_onnx_src_done(src, (size_t)(raw + at - src->data), n);
    }
}

smelt_status sm_onnx_tensor_load(sm_onnx_loader *L, Onnx__TensorProto *tp,
                                 const char *what, sm_tensor **out)
{
    smelt_ctx_t *ctx = L->ctx;
    *out = NULL;
    smelt_dtype dt;
    if (tp->has_data_type && tp->data_type == 8)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: string tensors are not supported", what);
    SM_TRY(dtype_of(ctx, tp->has_data_type ? tp->data_type : 0, what, &dt));
    if (tp->segment)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: segmented tensors are not supported", what);
    if (tp->n_dims > SMELT_MAX_DIMS)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: %s: rank %zu exceeds the maximum %d", what,
                      tp->n_dims, SMELT_MAX_DIMS);
    int ndim = (int)tp->n_dims;
    int64_t numel;
    smelt_status s =
        sm_shape_numel(ctx, ndim, tp->dims, smelt_dtype_size(dt), &numel);
    if (s != SMELT_OK) {
        sm_err_prefix(ctx, "onnx: %s: ", what);
        return s;
    }
    size_t nbytes = (size_t)numel * smelt_dtype_size(dt);
    const uint8_t *raw;
    size_t raw_len;
    int ref;
    SM_TRY(raw_bytes(L, tp, what, &raw, &raw_len, &ref));
    int external =
        tp->has_data_location &&
        tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if ((external || raw) && typed_count(tp))
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: carries both %s and typed data", what,
                      external ? "external data" : "raw_data");
    if (external) {
        if (raw)
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "onnx: %s: carries both external data and "
                          "raw_data",
                          what);
        return sm_onnx_external_load(L, tp, dt, ndim, tp->dims, what, out);
    }
    if (raw && raw_len != nbytes) {
        char shape[96];
        sm_shape_str(dt, ndim, tp->dims, shape, sizeof shape);
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: raw_data holds %zu bytes, but %s needs %zu",
                      what, raw_len, shape, nbytes);
    }
    if (!raw)
        SM_TRY(check_typed(ctx, tp, dt, numel, what));
    sm_tensor *t;
    SM_TRY(sm_tensor_new(ctx, dt, ndim, tp->dims, &t));
    if (!raw) {
        fill_typed(tp, t);
        *out = t;
        return SMELT_OK;
    }
    if (ref)
        copy_from_src(L->src, raw, t);
    else
        sm_onnx_copy_le(t->data, raw, (size_t)numel, smelt_dtype_size(dt));
    if (dt == SMELT_DTYPE_BOOL)
        for (int64_t i = 0; i < numel; i++)
            ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    if (!ref) { /* the bytes are copied: drop the proto's */
        sm_onnx_proto_free(tp->raw_data.data);
        tp->raw_data.data = NULL;
        tp->raw_data.len = 0;
        tp->has_raw_data = 0;
    }
    *out = t;
    return SMELT_OK;
}

smelt_status sm_onnx_type_load(sm_onnx_loader *L, const Onnx__TypeProto *tp,
                               const char *what, sm_type *t)
{
    smelt_ctx_t *ctx = L->ctx;
    sm_type_unknown(t);
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        return SMELT_OK;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return sm_err(
            ctx, SMELT_ERR_UNSUPPORTED,
            "onnx: %s: only tensor types are supported (found a "
            "%s type)",
            what,
            tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "sequence"
            : tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE    ? "map"
            : tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE
                ? "optional"
                : "sparse tensor");
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (!tt)
        return SMELT_OK;
    if (tt->has_elem_type && tt->elem_type != 0)
        SM_TRY(dtype_of(ctx, tt->elem_type, what, &t->dtype));
    const Onnx__TensorShapeProto *sh = tt->shape;
    if (!sh)
        return SMELT_OK;
    if (sh->n_dim > SMELT_MAX_DIMS)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: %s: rank %zu exceeds the maximum %d", what,
                      sh->n_dim, SMELT_MAX_DIMS);
    t->ndim = (int)sh->n_dim;
    for (int i = 0; i < t->ndim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
        sm_dim *o = &t->dims[i];
        o->size = -1;
        o->sym = NULL;
        if (d->value_case ==
            ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value < 0)
                return sm_err(ctx, SMELT_ERR_SHAPE,
                              "onnx: %s: dimension %d is negative (%lld)", what,
                              i, (long long)d->dim_value);
            o->size = d->dim_value;
        } else if (d->value_case ==
                       ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param && d->dim_param[0]) {
            o->sym = sm_arena_strdup(&L->g->arena, d->dim_param);
            if (!o->sym)
                return sm_err_nomem(ctx);
        }
    }
    return SMELT_OK;
}
