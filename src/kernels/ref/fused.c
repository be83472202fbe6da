/*
 * fused.c - reference kernels of the ops the fusion passes make: Gelu,
 * FusedConv, FusedGemm and FusedElementwise.
 *
 * None of them repeats the math of the ops it replaces: FusedConv runs the
 * Conv reference kernel (with the bias) into its output and FusedGemm the
 * MatMul or Gemm one, then both apply the epilogue (scale, bias, residual,
 * activation) in place, in double; FusedElementwise runs its body through
 * the executor's sub-block callback, so it is exact by construction.
 */
#include "core/act.h"

#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

/* ONNX Gelu (opset 20): approximate = "none" (erf) or "tanh". */
smelt_status sm_ref_gelu(const sm_kargs *a)
{
    const char *ap = sm_attrs_string(&a->attrs, "approximate", "none");
    int tanh_form = strcmp(ap, "tanh") == 0;
    if (!tanh_form && strcmp(ap, "none") != 0)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: approximate is '%s'; expected none or tanh",
                      a->op_name, ap);
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (!sm_dtype_is_float(x->dtype) || y->numel != x->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X must be a float tensor of Y's size", a->op_name);
    for (int64_t i = 0; i < x->numel; i++) {
        double v = sm_load_f64(x->dtype, x->data, i);
        sm_store_f64(y->dtype, y->data, i,
                     tanh_form ? sm_gelu_tanh(v) : sm_gelu_erf(v));
    }
    return SMELT_OK;
}

/* Whether t broadcasts onto y without changing y's shape. */
static int fits_onto(const sm_tensor *t, const sm_tensor *y)
{
    if (t->ndim > y->ndim)
        return 0;
    for (int d = 0; d < t->ndim; d++) {
        int64_t want = y->dims[d + y->ndim - t->ndim];
        if (t->dims[d] != 1 && t->dims[d] != want)
            return 0;
    }
    return 1;
}

/* What the epilogue adds to the contraction's result, in this order. */
typedef struct epilogue {
    double scale;       /* Y *= scale first (FusedGemm's alpha) */
    const sm_tensor *c; /* + cscale * C, broadcast; may be NULL */
    double cscale;
    const sm_tensor *r; /* + R, broadcast; may be NULL */
    sm_act act;
} epilogue;

/* y[i] = act(scale * y[i] + cscale * C[i] + R[i]), in double, in place. */
static smelt_status run_epilogue(const sm_kargs *a, sm_tensor *y,
                                 const epilogue *e)
{
    const sm_tensor *ops[2] = {e->c, e->r};
    for (int k = 0; k < 2; k++)
        if (ops[k] && (!fits_onto(ops[k], y) || ops[k]->dtype != y->dtype))
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: %s must have Y's dtype and broadcast onto Y "
                          "without changing its shape",
                          a->op_name, k ? "the residual" : "the bias");
    if (!sm_dtype_is_float(y->dtype))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the epilogue needs a float output, got %s",
                      a->op_name, smelt_dtype_name(y->dtype));
    int64_t idx[SMELT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < y->numel;
         i++, sm_index_next(y->ndim, y->dims, idx)) {
        double v = e->scale * sm_load_f64(y->dtype, y->data, i);
        if (e->c)
            v += e->cscale * sm_load_f64(e->c->dtype, e->c->data,
                                         sm_bcast_offset(e->c, y->ndim, idx));
        if (e->r)
            v += sm_load_f64(e->r->dtype, e->r->data,
                             sm_bcast_offset(e->r, y->ndim, idx));
        sm_store_f64(y->dtype, y->data, i, sm_act_apply(&e->act, v));
    }
    return SMELT_OK;
}

/*
 * FusedConv(X, W, B?, R?): act(Conv(X, W, B) + R). The `layout` attribute
 * is advice for the optimized CPU kernels; tensors stay NCHW, so the
 * reference ignores it.
 */
smelt_status sm_ref_fusedconv(const sm_kargs *a)
{
    epilogue e = {1, NULL, 0, a->n_in > 3 ? a->in[3] : NULL, {0}};
    SM_TRY(sm_act_read(a->ctx, a->op_name, &a->attrs, &e.act));
    sm_kargs conv = *a;
    conv.n_in = a->n_in < 3 ? a->n_in : 3;
    SM_TRY(sm_ref_conv(&conv));
    return run_epilogue(a, a->out[0], &e);
}

/*
 * FusedGemm(A, B, C?, R?): act(alpha * op(A) op(B) + beta * C + R), where
 * op transposes the (2-D) operand under transA / transB, and otherwise A
 * and B multiply as MatMul does (batched, broadcast). C and R broadcast
 * onto Y.
 */
smelt_status sm_ref_fusedgemm(const sm_kargs *a)
{
    epilogue e = {sm_attrs_float(&a->attrs, "alpha", 1),
                  a->n_in > 2 ? a->in[2] : NULL,
                  sm_attrs_float(&a->attrs, "beta", 1),
                  a->n_in > 3 ? a->in[3] : NULL,
                  {0}};
    SM_TRY(sm_act_read(a->ctx, a->op_name, &a->attrs, &e.act));
    sm_kargs mm = *a;
    mm.n_in = 2;
    if (sm_attrs_int(&a->attrs, "transA", 0) ||
        sm_attrs_int(&a->attrs, "transB", 0)) {
        SM_TRY(sm_ref_gemm(&mm)); /* applies alpha itself */
        e.scale = 1;
    } else {
        SM_TRY(sm_ref_matmul(&mm));
    }
    return run_epilogue(a, a->out[0], &e);
}

/* FusedElementwise: the body, run by the executor on the whole inputs. */
smelt_status sm_ref_fusedelementwise(const sm_kargs *a)
{
    if (!a->run_block)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: needs the executor's sub-block runner", a->op_name);
    for (int i = 0; i < a->n_in; i++)
        if (!a->in[i])
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: input %d is absent; every input feeds a body "
                          "parameter",
                          a->op_name, i);
    return a->run_block(a->run_block_user, 0, a->n_in, a->in, a->n_out, a->out);
}
