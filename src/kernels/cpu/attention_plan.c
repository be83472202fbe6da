/*
 * attention_plan.c - the registry hooks of the flash attention kernel
 * (kernels.def row `attention`): which Attention nodes it takes (f32, rank
 * 4 operands, a float or bool mask broadcasting onto the scores), the
 * per-thread workspace it asks the plan for, and the run that maps the
 * node's tensors onto sm_attn_args. Everything else (f64, empty tensors,
 * shapes it does not take) runs the reference kernel.
 */
#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"

int sm_cpu_attn_dims(int n_in, const int64_t *const *dims, const int *ndim,
                     sm_attn_args *a)
{
    for (int i = 0; i < 3; i++)
        if (ndim[i] != 4)
            return 0;
    const int64_t *q = dims[0], *k = dims[1], *v = dims[2];
    *a = (sm_attn_args){.batch = q[0],
                        .q_heads = q[1],
                        .kv_heads = k[1],
                        .q_len = q[2],
                        .kv_len = k[2],
                        .head_dim = q[3],
                        .v_dim = v[3]};
    if (k[0] != q[0] || v[0] != q[0] || v[1] != k[1] || v[2] != k[2] ||
        k[3] != q[3] || a->kv_heads < 1 || a->q_heads % a->kv_heads)
        return 0;
    if (n_in > 3 && dims[3]) {
        const int64_t sc[4] = {a->batch, a->q_heads, a->q_len, a->kv_len};
        if (ndim[3] > 4 ||
            !sm_cpu_bcast_strides(ndim[3], dims[3], 4, sc, a->mask_strides))
            return 0;
    }
    return 1;
}

int sm_cpu_attn_supports(const sm_kernel_desc *d)
{
    if (d->n_in < 3 || d->n_out != 1)
        return 0;
    const int64_t *dims[4] = {NULL, NULL, NULL, NULL};
    int ndim[4] = {0, 0, 0, 0};
    for (int i = 0; i < d->n_in && i < 4; i++) {
        if (!d->in[i].present)
            continue;
        dims[i] = d->in[i].dims;
        ndim[i] = d->in[i].ndim;
        if (d->in[i].dtype != SMELT_DTYPE_F32 &&
            !(i == 3 && d->in[i].dtype == SMELT_DTYPE_BOOL))
            return 0;
    }
    sm_attn_args a;
    if (d->out[0].dtype != SMELT_DTYPE_F32 || !dims[0] || !dims[1] ||
        !dims[2] || d->n_in > 4 || !sm_cpu_attn_dims(d->n_in, dims, ndim, &a))
        return 0;
    /* sizes the kernel's check accepts (positive, lengths within 2^24);
     * pointers are not known yet */
    float x = 0;
    a.q = a.k = a.v = &x;
    a.out = &x;
    return sm_cpu_attention_check(&a) == NULL;
}

/* The plain algorithm, with one block's tiles per plan thread. */
void sm_cpu_attn_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                           sm_cpu_config *c)
{
    c->algo = SM_CPU_ALGO_PLAIN;
    c->ws_bytes = sm_cpu_attention_ws(ops, d->in[0].dims[3], d->in[2].dims[3],
                                      d->n_threads);
}

smelt_status sm_cpu_attn_run(const sm_cpu_ops *ops, const sm_kargs *a,
                             const sm_cpu_config *c, const void *packed,
                             sm_threadpool *tp)
{
    (void)c;
    (void)packed;
    const sm_tensor *mask = a->n_in > 3 ? a->in[3] : NULL;
    const int64_t *dims[4] = {a->in[0]->dims, a->in[1]->dims, a->in[2]->dims,
                              mask ? mask->dims : NULL};
    int ndim[4] = {a->in[0]->ndim, a->in[1]->ndim, a->in[2]->ndim,
                   mask ? mask->ndim : 0};
    sm_attn_args x;
    if (!sm_cpu_attn_dims(a->n_in, dims, ndim, &x))
        return sm_err(a->ctx, SMELT_ERR_SHAPE,
                      "%s: Q, K, V and the mask do not have the shapes the "
                      "plan was made for",
                      a->op_name);
    x.scale = (float)sm_attrs_float(&a->attrs, "scale", 1);
    x.causal = sm_attrs_int(&a->attrs, "causal", 0) != 0;
    x.q = a->in[0]->data;
    x.k = a->in[1]->data;
    x.v = a->in[2]->data;
    x.out = a->out[0]->data;
    if (mask) {
        x.mask_kind = mask->dtype == SMELT_DTYPE_BOOL ? SM_ATTN_MASK_BOOL
                                                      : SM_ATTN_MASK_FLOAT;
        x.mask = mask->data;
    }
    const char *why = sm_cpu_attention_check(&x);
    if (why)
        return sm_err(a->ctx, SMELT_ERR_SHAPE, "%s: %s", a->op_name, why);
    if (sm_cpu_attention(ops, &x, a->workspace, a->workspace_bytes, tp))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the workspace (%zu bytes) is smaller than the "
                      "%zu bytes the attention kernel needs",
                      a->op_name, a->workspace_bytes,
                      sm_cpu_attention_ws(ops, x.head_dim, x.v_dim,
                                          sm_threadpool_size(tp)));
    return SMELT_OK;
}
