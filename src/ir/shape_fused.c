/*
 * shape_fused.c - shape and dtype inference, and costs, of the ops the
 * fusion passes make: Gelu, FusedConv, FusedGemm, FusedElementwise.
 *
 * The fused contractions delegate to the shape functions of the ops they
 * absorbed (Conv, MatMul) and then check what the epilogue adds: a bias
 * and a residual that must broadcast onto the result without changing its
 * shape, and the activation's attributes.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"
#include "core/act.h"

/* Fails unless input i (when present with a known dtype) is a float. */
static smelt_status need_float(sm_shape_ctx *s, int i)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->dtype == SMELT_DTYPE_UNDEFINED || sm_dtype_is_float(t->dtype))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: input %d has dtype %s; expected a float dtype",
                  s->op->name, i, smelt_dtype_name(t->dtype));
}

smelt_status sm_shape_gelu(sm_shape_ctx *s)
{
    const sm_type *x = sm_shape_in(s, 0);
    if (!x)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input 0 is missing",
                      s->op->name);
    SM_TRY(need_float(s, 0));
    const char *ap = sm_attrs_string(&s->attrs, "approximate", "none");
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: approximate is '%s'; expected none or tanh",
                      s->op->name, ap);
    s->out[0] = *x;
    return SMELT_OK;
}

/* erf or tanh, a cube, a few multiply-adds: about 8 operations. */
void sm_cost_gelu(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    c->flops = 8 * sm_type_numel(&s->out[0]);
    c->bytes_read = x ? sm_type_bytes(x) : 0;
    c->bytes_write = sm_type_bytes(&s->out[0]);
}

/*
 * Fails when input i (present, rank known) cannot broadcast onto y
 * without changing y's shape, or its dtype differs from y's. `what` names
 * the input in the message.
 */
static smelt_status check_onto(sm_shape_ctx *s, int i, const sm_type *y,
                               const char *what)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t)
        return SMELT_OK;
    if (t->dtype != SMELT_DTYPE_UNDEFINED &&
        y->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != y->dtype)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: %s has dtype %s but the result is %s", s->op->name,
                      what, smelt_dtype_name(t->dtype),
                      smelt_dtype_name(y->dtype));
    if (t->ndim < 0 || y->ndim < 0)
        return SMELT_OK;
    char ts[160], ys[160];
    sm_type_str(t, ts, sizeof ts);
    sm_type_str(y, ys, sizeof ys);
    if (t->ndim > y->ndim)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s %s has a higher rank than the result %s",
                      s->op->name, what, ts, ys);
    for (int d = 0; d < t->ndim; d++) {
        int64_t a = t->dims[d].size, b = y->dims[d + y->ndim - t->ndim].size;
        if (a >= 0 && a != 1 && b >= 0 && a != b)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: %s %s does not broadcast onto the result %s",
                          s->op->name, what, ts, ys);
    }
    return SMELT_OK;
}

/* The activation attributes: a known name, ordered clip bounds. */
static smelt_status check_act(sm_shape_ctx *s)
{
    sm_act act;
    return sm_act_read(s->ctx, s->op->name, &s->attrs, &act);
}

/* FusedConv(X, W, B?, R?): Conv's output type; R must broadcast onto it. */
smelt_status sm_shape_fusedconv(sm_shape_ctx *s)
{
    SM_TRY(check_act(s));
    sm_shape_ctx conv = *s;
    conv.n_in = s->n_in < 3 ? s->n_in : 3;
    SM_TRY(sm_shape_conv(&conv));
    return check_onto(s, 3, &s->out[0], "the residual R");
}

/* A copy of t with its last two dims swapped (t must be 2-D or unknown). */
static sm_type swapped(const sm_type *t)
{
    sm_type r = *t;
    if (r.ndim == 2) {
        r.dims[0] = t->dims[1];
        r.dims[1] = t->dims[0];
    }
    return r;
}

/*
 * FusedGemm(A, B, C?, R?): with transA or transB, A and B must be 2-D
 * (Gemm); otherwise they multiply as MatMul does. C and R broadcast onto
 * the result; float dtypes only.
 */
smelt_status sm_shape_fusedgemm(sm_shape_ctx *s)
{
    SM_TRY(check_act(s));
    for (int i = 0; i < s->n_in; i++)
        SM_TRY(need_float(s, i));
    int ta = sm_attrs_int(&s->attrs, "transA", 0) != 0;
    int tb = sm_attrs_int(&s->attrs, "transB", 0) != 0;
    const sm_type *a = sm_shape_in(s, 0), *b = sm_shape_in(s, 1);
    if (!a || !b)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: inputs A and B are required", s->op->name);
    if ((ta || tb) &&
        ((a->ndim >= 0 && a->ndim != 2) || (b->ndim >= 0 && b->ndim != 2)))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: transA / transB need 2-D A and B, got ranks %d "
                      "and %d",
                      s->op->name, a->ndim, b->ndim);
    sm_type ta_t = ta ? swapped(a) : *a, tb_t = tb ? swapped(b) : *b;
    sm_operand ops[2] = {{1, &ta_t, NULL}, {1, &tb_t, NULL}};
    sm_shape_ctx mm = *s;
    mm.n_in = 2;
    mm.in = ops;
    SM_TRY(sm_shape_matmul(&mm));
    SM_TRY(check_onto(s, 2, &s->out[0], "the bias C"));
    return check_onto(s, 3, &s->out[0], "the residual R");
}

/* Per output element: the bias and residual adds and the activation. */
static double epilogue_flops(const sm_shape_ctx *s, int first_extra)
{
    double per = 0;
    for (int i = first_extra; i < s->n_in; i++)
        per += s->in[i].present;
    const char *act = sm_attrs_string(&s->attrs, "activation", "none");
    per += strcmp(act, "none") != 0 ? 4 : 0;
    return per * sm_type_numel(&s->out[0]);
}

void sm_cost_fusedconv(const sm_shape_ctx *s, sm_cost *c)
{
    sm_shape_ctx conv = *s;
    conv.n_in = s->n_in < 3 ? s->n_in : 3;
    sm_cost_conv(&conv, c);
    c->flops += epilogue_flops(s, 3);
    if (sm_shape_in(s, 3))
        c->bytes_read += sm_type_bytes(s->in[3].type);
}

void sm_cost_fusedgemm(const sm_shape_ctx *s, sm_cost *c)
{
    sm_shape_ctx mm = *s;
    mm.n_in = 2;
    sm_cost_matmul(&mm, c);
    c->flops += epilogue_flops(s, 2);
    for (int i = 2; i < s->n_in; i++)
        if (sm_shape_in(s, i))
            c->bytes_read += sm_type_bytes(s->in[i].type);
}

/*
 * FusedElementwise: outputs are the body's returns. Each input's dtype
 * must match its body parameter's. At run time (no node) the kernel sizes
 * its own outputs, as control ops do. Signature mismatches (counts) are
 * the verifier's to name.
 */
smelt_status sm_shape_fusedelementwise(sm_shape_ctx *s)
{
    if (!s->node || s->node->n_blocks < 1)
        return SMELT_OK;
    const sm_block *body = s->node->blocks[0];
    for (int i = 0; i < s->n_in && i < body->n_params; i++) {
        const sm_type *t = sm_shape_in(s, i), *p = &body->params[i]->type;
        if (t && t->dtype != SMELT_DTYPE_UNDEFINED &&
            p->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != p->dtype)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: input %d is %s but body parameter %%%s is %s",
                          s->op->name, i, smelt_dtype_name(t->dtype),
                          body->params[i]->name, smelt_dtype_name(p->dtype));
    }
    for (int j = 0; j < s->n_out && j < body->n_ret; j++)
        s->out[j] = body->ret[j]->type;
    return SMELT_OK;
}

/*
 * Reads the inputs and writes the outputs once: the intermediates stay in
 * registers, which is the point of fusing. One operation per body node
 * and output element.
 */
void sm_cost_fusedelementwise(const sm_shape_ctx *s, sm_cost *c)
{
    memset(c, 0, sizeof *c);
    double per = s->node && s->node->n_blocks ? s->node->blocks[0]->n_nodes : 1;
    for (int i = 0; i < s->n_in; i++)
        if (sm_shape_in(s, i))
            c->bytes_read += sm_type_bytes(s->in[i].type);
    for (int j = 0; j < s->n_out; j++)
        c->bytes_write += sm_type_bytes(&s->out[j]);
    c->flops = per * (s->n_out ? sm_type_numel(&s->out[0]) : 0);
}
