/*
 * attention_grad.c - the ISA-independent driver of the attention
 * backward kernel (attention_grad.h): checks the arguments and runs one
 * task per (batch, kv head) over the pool, each thread with its own slice
 * of the workspace, on the ISA's task body (attention_grad.inc.h).
 */
#include "kernels/cpu/attention_grad.h"

/* Head and value dims padded to whole vectors of every ISA. */
static int64_t pad16(int64_t n)
{
    return (n + 15) / 16 * 16;
}

int64_t sm_cpu_attention_grad_ws_floats(int64_t head_dim, int64_t v_dim,
                                        int64_t q_len)
{
    const int64_t BK = SM_ATTN_BK, BQ = SM_ATTN_GRAD_BQ;
    int64_t dp = pad16(head_dim), dvp = pad16(v_dim);
    /* K rows, K^T, V^T, dK and dV of a key block; Q and dO of a query
     * block; the S / P and dP tiles; per query row the log-sum-exp,
     * dO.O and the dQ accumulator; 16 floats of lanes */
    return 3 * BK * dp + 2 * BK * dvp + BQ * (dp + dvp) + 2 * BQ * BK +
           q_len * (2 + dp) + 16;
}

/* A slice rounded up to whole cache lines. */
static size_t slice_bytes(int64_t head_dim, int64_t v_dim, int64_t q_len)
{
    return ((size_t)sm_cpu_attention_grad_ws_floats(head_dim, v_dim, q_len) *
                sizeof(float) +
            63) &
           ~(size_t)63;
}

size_t sm_cpu_attention_grad_ws(int64_t head_dim, int64_t v_dim, int64_t q_len,
                                int n_threads)
{
    if (head_dim < 1 || v_dim < 1 || q_len < 1)
        return 0;
    return slice_bytes(head_dim, v_dim, q_len) *
           (size_t)(n_threads < 1 ? 1 : n_threads);
}

typedef struct grad_job {
    const sm_cpu_ops *ops;
    const sm_attn_grad_args *a;
    char *ws;
    size_t slice;
} grad_job;

/* Tasks [begin, end): task t is batch t / Hkv, kv head t % Hkv. */
static void grad_tasks(void *arg, int64_t begin, int64_t end, int tid)
{
    const grad_job *J = arg;
    float *ws = (float *)(J->ws + (size_t)tid * J->slice);
    for (int64_t t = begin; t < end; t++)
        J->ops->attn_grad_task(J->a, t / J->a->f.kv_heads, t % J->a->f.kv_heads,
                               ws);
}

int sm_cpu_attention_grad(const sm_cpu_ops *ops, const sm_attn_grad_args *a,
                          void *ws, size_t ws_bytes, sm_threadpool *tp)
{
    const sm_attn_args *f = &a->f;
    if (sm_cpu_attention_check(f) || !a->dout || !a->dq || !a->dk || !a->dv ||
        !ops->attn_grad_task ||
        ws_bytes < sm_cpu_attention_grad_ws(f->head_dim, f->v_dim, f->q_len,
                                            sm_threadpool_size(tp)))
        return -1;
    grad_job J = {ops, a, ws, slice_bytes(f->head_dim, f->v_dim, f->q_len)};
    sm_parallel_for(tp, f->batch * f->kv_heads, 1, grad_tasks, &J);
    return 0;
}
