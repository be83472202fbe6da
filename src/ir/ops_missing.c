/* TEMPORARY: weak placeholders so the tree links while op families are written.
 */
#include "ir/op.h"
#include "core/status.h"

__attribute__((weak)) smelt_status sm_shape_unary(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_cast(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_dropout(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_broadcast(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_compare(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_where(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_matmul(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_gemm(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_conv(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_convtranspose(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_pool(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_globalpool(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_batchnorm(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_layernorm(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_reduce(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_argmax(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_reshape(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_flatten(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_squeeze(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_unsqueeze(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_transpose(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_concat(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_split(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_slice(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_gather(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_expand(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_tile(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_pad(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_shape(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_constantofshape(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_range(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_shape_constant(sm_shape_ctx *s)
{
    return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                  "%s: shape function not written", s->op->name);
}
__attribute__((weak)) smelt_status sm_ref_identity(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_neg(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_abs(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_sqrt(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_exp(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_log(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_tanh(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_sigmoid(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_relu(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_leakyrelu(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_erf(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_reciprocal(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_floor(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_ceil(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_sin(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_cos(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_softplus(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_not(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_clip(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_cast(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_dropout(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_add(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_sub(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_mul(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_div(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_pow(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_min(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_max(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_sum(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_equal(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_less(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_greater(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_and(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_or(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_where(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_matmul(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_gemm(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_conv(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_convtranspose(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_maxpool(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_averagepool(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_globalaveragepool(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_globalmaxpool(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_batchnorm(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_layernorm(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_softmax(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_logsoftmax(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_reducesum(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_reducemean(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_reducemax(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_reducemin(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_argmax(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_reshape(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_transpose(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_concat(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_split(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_slice(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_gather(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_expand(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_tile(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_pad(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_shape(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_constantofshape(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_range(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) smelt_status sm_ref_constant(const sm_kargs *a)
{
    return sm_err(a->ctx, SMELT_ERR_UNSUPPORTED, "%s: kernel not written",
                  a->op_name);
}
__attribute__((weak)) void sm_cost_copy(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_unary(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_binary(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_matmul(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_gemm(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_conv(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_convtranspose(const sm_shape_ctx *s,
                                                 sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_pool(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_norm(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
__attribute__((weak)) void sm_cost_reduce(const sm_shape_ctx *s, sm_cost *c)
{
    (void)s;
    c->flops = -1;
}
