/*
 * quant.h - what the quantized ops' kernels share with the reference
 * ones (kernels/ref/quant.c): the run-time check of a scale's values.
 */
#ifndef SM_REF_QUANT_H
#define SM_REF_QUANT_H

#include "kernels/kernel.h"

/* Fails (SMELT_ERR_INVALID_ARG, naming the op and the value) when input
 * i, a scale, holds a negative, NaN or infinite value, or a zero where
 * the op divides by it (divides); absent inputs pass. */
smelt_status sm_quant_check_scale(const sm_kargs *a, int i, int divides);

#endif
