/*
 * dtype.c - element type table and conversions.
 */
#include "core/dtype.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtype_info[SMELT_DTYPE_COUNT] = {
    [SMELT_DTYPE_UNDEFINED] = {"undef", 0}, [SMELT_DTYPE_F32] = {"f32", 4},
    [SMELT_DTYPE_F64] = {"f64", 8},         [SMELT_DTYPE_F16] = {"f16", 2},
    [SMELT_DTYPE_BF16] = {"bf16", 2},       [SMELT_DTYPE_I8] = {"i8", 1},
    [SMELT_DTYPE_U8] = {"u8", 1},           [SMELT_DTYPE_I16] = {"i16", 2},
    [SMELT_DTYPE_I32] = {"i32", 4},         [SMELT_DTYPE_I64] = {"i64", 8},
    [SMELT_DTYPE_BOOL] = {"bool", 1},       [SMELT_DTYPE_U16] = {"u16", 2},
    [SMELT_DTYPE_U32] = {"u32", 4},         [SMELT_DTYPE_U64] = {"u64", 8},
};

const char *smelt_dtype_name(smelt_dtype dt)
{
    return (unsigned)dt < SMELT_DTYPE_COUNT ? dtype_info[dt].name : "?";
}

size_t smelt_dtype_size(smelt_dtype dt)
{
    return (unsigned)dt < SMELT_DTYPE_COUNT ? dtype_info[dt].size : 0;
}

smelt_dtype sm_dtype_from_name(const char *name, int len)
{
    for (int i = 1; i < SMELT_DTYPE_COUNT; i++)
        if ((int)strlen(dtype_info[i].name) == len &&
            memcmp(dtype_info[i].name, name, (size_t)len) == 0)
            return (smelt_dtype)i;
    return SMELT_DTYPE_UNDEFINED;
}

/* ONNX TensorProto.DataType codes of the dtypes Smelt supports; other
 * codes (string, complex, float8, 4-bit) have no Smelt dtype. */
static const int64_t onnx_code[SMELT_DTYPE_COUNT] = {
    [SMELT_DTYPE_F32] = 1,   [SMELT_DTYPE_U8] = 2,   [SMELT_DTYPE_I8] = 3,
    [SMELT_DTYPE_I16] = 5,   [SMELT_DTYPE_I32] = 6,  [SMELT_DTYPE_I64] = 7,
    [SMELT_DTYPE_BOOL] = 9,  [SMELT_DTYPE_F16] = 10, [SMELT_DTYPE_F64] = 11,
    [SMELT_DTYPE_BF16] = 16, [SMELT_DTYPE_U16] = 4,  [SMELT_DTYPE_U32] = 12,
    [SMELT_DTYPE_U64] = 13,
};

smelt_dtype sm_dtype_from_onnx(int64_t code)
{
    for (int i = 1; i < SMELT_DTYPE_COUNT; i++)
        if (code != 0 && onnx_code[i] == code)
            return (smelt_dtype)i;
    return SMELT_DTYPE_UNDEFINED;
}

int64_t sm_dtype_to_onnx(smelt_dtype dt)
{
    return (unsigned)dt < SMELT_DTYPE_COUNT ? onnx_code[dt] : 0;
}

int sm_dtype_is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

int sm_dtype_is_int(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_I8 || dt == SMELT_DTYPE_U8 ||
           dt == SMELT_DTYPE_I16 || dt == SMELT_DTYPE_I32 ||
           dt == SMELT_DTYPE_I64 || sm_dtype_is_unsigned(dt);
}

int sm_dtype_is_unsigned(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_U8 || dt == SMELT_DTYPE_U16 ||
           dt == SMELT_DTYPE_U32 || dt == SMELT_DTYPE_U64;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float sm_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) { /* zero or subnormal: man * 2^-24 */
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    if (exp == 31) /* inf or nan */
        return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

/* Round to nearest even, with overflow to inf and gradual underflow. */
uint16_t sm_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) /* inf or nan */
        return sign | 0x7c00 | (absu > 0x7f800000u ? 0x200 : 0);
    if (absu >= 0x477ff000u) /* rounds to >= 65520: inf */
        return sign | 0x7c00;
    if (absu < 0x38800000u) { /* below the smallest normal: subnormal */
        float a = bits_f32(absu);
        float scaled = a * 16777216.0f; /* 2^24: units of the subnormal */
        return sign | (uint16_t)lrintf(scaled);
    }
    uint32_t mant = absu & 0x7fffff, exp = (absu >> 23) - 112;
    uint32_t half = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
        half++;
    return sign | (uint16_t)half;
}

float sm_bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

uint16_t sm_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* nan stays a quiet nan */
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

double sm_load_f64(smelt_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case SMELT_DTYPE_F32: return ((const float *)p)[i];
    case SMELT_DTYPE_F64: return ((const double *)p)[i];
    case SMELT_DTYPE_F16: return sm_f16_to_f32(((const uint16_t *)p)[i]);
    case SMELT_DTYPE_BF16: return sm_bf16_to_f32(((const uint16_t *)p)[i]);
    case SMELT_DTYPE_I8: return ((const int8_t *)p)[i];
    case SMELT_DTYPE_U8: return ((const uint8_t *)p)[i];
    case SMELT_DTYPE_I16: return ((const int16_t *)p)[i];
    case SMELT_DTYPE_I32: return ((const int32_t *)p)[i];
    case SMELT_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case SMELT_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case SMELT_DTYPE_U16: return ((const uint16_t *)p)[i];
    case SMELT_DTYPE_U32: return ((const uint32_t *)p)[i];
    case SMELT_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

/* Saturating double -> int64 so that nan and huge values are defined. */
int64_t sm_f64_to_i64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9.2233720368547758e18)
        return INT64_MAX;
    if (v <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)v;
}

/* Saturating double -> uint64 (nan and negatives give 0), for stores to
 * u64 whose range exceeds int64's. */
static uint64_t f64_to_u64(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= 1.8446744073709552e19)
        return UINT64_MAX;
    return (uint64_t)v;
}

int64_t sm_load_i64(smelt_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case SMELT_DTYPE_I8: return ((const int8_t *)p)[i];
    case SMELT_DTYPE_U8: return ((const uint8_t *)p)[i];
    case SMELT_DTYPE_I16: return ((const int16_t *)p)[i];
    case SMELT_DTYPE_I32: return ((const int32_t *)p)[i];
    case SMELT_DTYPE_I64: return ((const int64_t *)p)[i];
    case SMELT_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case SMELT_DTYPE_U16: return ((const uint16_t *)p)[i];
    case SMELT_DTYPE_U32: return ((const uint32_t *)p)[i];
    case SMELT_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
    default: return sm_f64_to_i64(sm_load_f64(dt, p, i));
    }
}

void sm_store_f64(smelt_dtype dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case SMELT_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case SMELT_DTYPE_F64: ((double *)p)[i] = v; break;
    case SMELT_DTYPE_F16: ((uint16_t *)p)[i] = sm_f32_to_f16((float)v); break;
    case SMELT_DTYPE_BF16: ((uint16_t *)p)[i] = sm_f32_to_bf16((float)v); break;
    case SMELT_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case SMELT_DTYPE_U64: ((uint64_t *)p)[i] = f64_to_u64(v); break;
    default: sm_store_i64(dt, p, i, sm_f64_to_i64(v)); break;
    }
}

void sm_store_i64(smelt_dtype dt, void *p, int64_t i, int64_t v)
{
    switch (dt) {
    case SMELT_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case SMELT_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case SMELT_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case SMELT_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case SMELT_DTYPE_I64: ((int64_t *)p)[i] = v; break;
    case SMELT_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case SMELT_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case SMELT_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case SMELT_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: sm_store_f64(dt, p, i, (double)v); break;
    }
}
