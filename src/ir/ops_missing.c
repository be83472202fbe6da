/* TEMPORARY: weak placeholders so the tree links while op families are written. */
#include "ir/op.h"
#include "core/status.h"

__attribute__((weak)) smelt_status sm_shape_matmul(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_gemm(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_conv(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_convtranspose(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_pool(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_globalpool(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_batchnorm(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_layernorm(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_ref_matmul(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_gemm(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_conv(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_convtranspose(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_maxpool(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_averagepool(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_globalaveragepool(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_globalmaxpool(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_batchnorm(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_layernorm(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_softmax(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_logsoftmax(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) void sm_cost_matmul(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_gemm(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_conv(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_convtranspose(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_pool(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_norm(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
