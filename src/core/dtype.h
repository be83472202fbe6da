/*
 * dtype.h - element types: sizes, names, half-precision conversions, and
 * generic element loads and stores used by the reference kernels.
 */
#ifndef SM_DTYPE_H
#define SM_DTYPE_H

#include <stdint.h>

#include "smelt.h"

int sm_dtype_is_float(smelt_dtype dt);
int sm_dtype_is_int(smelt_dtype dt); /* signed or unsigned integer, not bool */
/* u8, u16, u32, u64: compare, divide, shift and convert as unsigned. */
int sm_dtype_is_unsigned(smelt_dtype dt);
/* Parse a short name ("f32", "i64", "bool"); UNDEFINED when unknown. */
smelt_dtype sm_dtype_from_name(const char *name, int len);
/* ONNX TensorProto data-type codes (1 float, 7 int64, 9 bool, ...):
 * UNDEFINED for a code Smelt does not support, 0 for UNDEFINED. */
smelt_dtype sm_dtype_from_onnx(int64_t code);
int64_t sm_dtype_to_onnx(smelt_dtype dt);

float sm_f16_to_f32(uint16_t h);
uint16_t sm_f32_to_f16(float f);
float sm_bf16_to_f32(uint16_t h);
uint16_t sm_f32_to_bf16(float f);

/* Element i of a buffer of dtype dt, as double or int64, and stores back
 * (with C conversion rules; floats to ints truncate toward zero, values
 * stored to bool become 0/1).
 * u64: sm_load_i64 returns the value's two's-complement bit pattern, so a
 * value above INT64_MAX comes back negative ((uint64_t) of the result is
 * exact); sm_store_i64 stores the bit pattern back, so loads and stores
 * round-trip and +, -, *, bitwise ops and equality stay exact. Kernels
 * whose result depends on the sign (<, /, %, max/min, >>, to float) must
 * check sm_dtype_is_unsigned and work on (uint64_t). sm_load_f64 and
 * sm_store_f64 treat u64 as unsigned (stores saturate to [0, UINT64_MAX]). */
double sm_load_f64(smelt_dtype dt, const void *p, int64_t i);
int64_t sm_load_i64(smelt_dtype dt, const void *p, int64_t i);
void sm_store_f64(smelt_dtype dt, void *p, int64_t i, double v);
void sm_store_i64(smelt_dtype dt, void *p, int64_t i, int64_t v);
/* v truncated to int64, saturated to its range, NaN -> 0: every double
 * from untrusted data or attributes goes through this (or an explicit
 * range check) before it becomes an integer, since a C cast of NaN or
 * of a value out of range is undefined. */
int64_t sm_f64_to_i64(double v);

#endif
