/*
 * fakequant.h - the fake-quantize pairs of a QAT model made trainable
 * (fakequant.c, docs/QUANTIZATION.md "Quantization-aware training").
 */
#ifndef SM_AUTOGRAD_FAKEQUANT_H
#define SM_AUTOGRAD_FAKEQUANT_H

#include "ir/ir.h"
#include "ir/rewrite.h"

/* Replaces every QuantizeLinear -> DequantizeLinear pair of g's top block
 * (a float x quantized and dequantized with the same scale, zero point
 * and axis) by one FakeQuantize, whose gradient rule is the
 * straight-through one. The forward values do not change. */
smelt_status sm_grad_fold_fakequant(smelt_ctx_t *ctx, sm_graph *g, sm_rw *rw);

#endif
