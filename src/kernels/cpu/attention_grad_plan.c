/*
 * attention_grad_plan.c - the registry hooks of the attention backward
 * kernel (kernels.def row `attention_grad`): which AttentionGrad nodes it
 * takes (f32, rank-4 operands, a float or bool mask, three outputs - a
 * mask's gradient runs the reference kernel), the per-thread workspace
 * (linear in the query length) and the run that maps the node's tensors
 * onto sm_attn_grad_args.
 */
#include "kernels/cpu/attention_grad.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"

/* Q, K, V and mask dims of an AttentionGrad (Q, K, V, O, dO, mask?) in
 * Attention's order, and whether O and dO are the forward output's
 * shape; 0 when the kernel does not take them. */
static int grad_dims(int n_in, const int64_t *const *in_dims,
                     const int *in_ndim, sm_attn_args *a)
{
    if (n_in < 5 || n_in > 6)
        return 0;
    const int64_t *dims[4] = {in_dims[0], in_dims[1], in_dims[2],
                              n_in > 5 ? in_dims[5] : NULL};
    int ndim[4] = {in_ndim[0], in_ndim[1], in_ndim[2],
                   n_in > 5 ? in_ndim[5] : 0};
    if (!sm_cpu_attn_dims(n_in > 5 ? 4 : 3, dims, ndim, a))
        return 0;
    const int64_t want[4] = {a->batch, a->q_heads, a->q_len, a->v_dim};
    for (int i = 3; i < 5; i++) {
        if (in_ndim[i] != 4 || !in_dims[i])
            return 0;
        for (int d = 0; d < 4; d++)
            if (in_dims[i][d] != want[d])
                return 0;
    }
    return 1;
}

int sm_cpu_attn_grad_supports(const sm_kernel_desc *d)
{
    if (d->n_in < 5 || d->n_in > 6 || d->n_out != 3)
        return 0;
    const int64_t *dims[6] = {NULL};
    int ndim[6] = {0};
    for (int i = 0; i < d->n_in; i++) {
        if (!d->in[i].present)
            return 0;
        dims[i] = d->in[i].dims;
        ndim[i] = d->in[i].ndim;
        if (d->in[i].dtype != SMELT_DTYPE_F32 &&
            !(i == 5 && d->in[i].dtype == SMELT_DTYPE_BOOL))
            return 0;
    }
    for (int o = 0; o < 3; o++)
        if (d->out[o].dtype != SMELT_DTYPE_F32)
            return 0;
    sm_attn_args a;
    if (!grad_dims(d->n_in, dims, ndim, &a))
        return 0;
    float x = 0;
    a.q = a.k = a.v = &x;
    a.out = &x;
    return sm_cpu_attention_check(&a) == NULL;
}

/* The plain algorithm, one task's scratch per plan thread. */
void sm_cpu_attn_grad_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                                sm_cpu_config *c)
{
    (void)ops;
    c->algo = SM_CPU_ALGO_PLAIN;
    c->ws_bytes = sm_cpu_attention_grad_ws(d->in[0].dims[3], d->in[2].dims[3],
                                           d->in[0].dims[2], d->n_threads);
}

smelt_status sm_cpu_attn_grad_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                  const sm_cpu_config *c, const void *packed,
                                  sm_threadpool *tp)
{
    (void)c;
    (void)packed;
    const sm_tensor *mask = a->n_in > 5 ? a->in[5] : NULL;
    const int64_t *dims[6] = {NULL};
    int ndim[6] = {0};
    for (int i = 0; i < a->n_in && i < 6; i++) {
        dims[i] = a->in[i]->dims;
        ndim[i] = a->in[i]->ndim;
    }
    sm_attn_grad_args x = {0};
    if (a->n_out != 3 || !grad_dims(a->n_in, dims, ndim, &x.f))
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: Q, K, V, O, dO and the mask do not have the "
                      "shapes the plan was made for",
                      a->op_name);
    x.f.scale = (float)sm_attrs_float(&a->attrs, "scale", 1);
    x.f.causal = sm_attrs_int(&a->attrs, "causal", 0) != 0;
    x.f.q = a->in[0]->data;
    x.f.k = a->in[1]->data;
    x.f.v = a->in[2]->data;
    x.f.out = (float *)a->in[3]->data;
    x.dout = a->in[4]->data;
    x.dq = a->out[0]->data;
    x.dk = a->out[1]->data;
    x.dv = a->out[2]->data;
    if (mask) {
        x.f.mask_kind = mask->dtype == SMELT_DTYPE_BOOL ? SM_ATTN_MASK_BOOL
                                                        : SM_ATTN_MASK_FLOAT;
        x.f.mask = mask->data;
    }
    const char *why = sm_cpu_attention_check(&x.f);
    if (why)
        return sm_err(a->ctx, SMELT_ERR_SHAPE, "%s: %s", a->op_name, why);
    if (sm_cpu_attention_grad(ops, &x, a->workspace, a->workspace_bytes, tp))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the workspace (%zu bytes) is smaller than the "
                      "%zu bytes the attention backward needs",
                      a->op_name, a->workspace_bytes,
                      sm_cpu_attention_grad_ws(x.f.head_dim, x.f.v_dim,
                                               x.f.q_len,
                                               sm_threadpool_size(tp)));
    return SMELT_OK;
}
