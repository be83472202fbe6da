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
__attribute__((weak)) smelt_status sm_shape_reshape(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_flatten(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_squeeze(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_unsqueeze(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_transpose(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_concat(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_split(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_slice(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_gather(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_expand(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_tile(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_pad(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_shape(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_constantofshape(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_range(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
__attribute__((weak)) smelt_status sm_shape_constant(sm_shape_ctx *s) { return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED, "%s: shape function not written", s->op->name); }
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
__attribute__((weak)) smelt_status sm_ref_reshape(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_transpose(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_concat(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_split(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_slice(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_gather(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_expand(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_tile(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_pad(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_shape(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_constantofshape(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_range(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) smelt_status sm_ref_constant(const sm_kargs *a) { return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written", a->op_name); }
__attribute__((weak)) void sm_cost_matmul(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_gemm(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_conv(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_convtranspose(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_pool(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
__attribute__((weak)) void sm_cost_norm(const sm_shape_ctx *s, sm_cost *c) { (void)s; c->flops = -1; }
