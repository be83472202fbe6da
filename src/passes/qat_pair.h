/*
 * qat_pair.h - what a fake-quantize pair is (qat_pair.c), for the QAT
 * conversion (qat_convert.c) and autograd (autograd/fakequant.c).
 */
#ifndef SM_PASSES_QAT_PAIR_H
#define SM_PASSES_QAT_PAIR_H

#include "ir/ir.h"

/* The QuantizeLinear feeding DequantizeLinear dq as a fake-quantize
 * pair (a float x, the same scale, zero point and axis on both, the
 * result in x's dtype), else NULL. */
sm_node *sm_fakequant_pair(const sm_node *dq);

#endif
