/*
 * attention.c - the ISA-independent driver of the flash attention kernel
 * (attention.h): checks the arguments, cuts the work into (batch, head,
 * query block) tasks and hands them to the ISA's block kernel
 * (attention.inc.h) over the pool, each thread with its own slice of the
 * workspace.
 */
#include "kernels/cpu/attention.h"

/* Floats of one thread's slice: per query block of a group, Q^T, O^T
 * and the running maximum, sum and rescale factors; then the S^T tile
 * and the mask lanes the group's blocks take in turn. */
static int64_t attn_ws_floats(const sm_cpu_ops *ops, int64_t D, int64_t Dv)
{
    return (SM_ATTN_GROUP * (D + Dv + 3) + SM_ATTN_BK + 1) * ops->attn_bq;
}

/* A slice rounded up to whole cache lines, so each thread's is aligned. */
static size_t attn_slice_bytes(const sm_cpu_ops *ops, int64_t D, int64_t Dv)
{
    return ((size_t)attn_ws_floats(ops, D, Dv) * sizeof(float) + 63) &
           ~(size_t)63;
}

size_t sm_cpu_attention_ws(const sm_cpu_ops *ops, int64_t head_dim,
                           int64_t v_dim, int n_threads)
{
    if (head_dim < 1 || v_dim < 1)
        return 0;
    return attn_slice_bytes(ops, head_dim, v_dim) *
           (size_t)(n_threads < 1 ? 1 : n_threads);
}

const char *sm_cpu_attention_check(const sm_attn_args *a)
{
    if (a->batch < 1 || a->q_heads < 1 || a->kv_heads < 1 || a->q_len < 1 ||
        a->kv_len < 1 || a->head_dim < 1 || a->v_dim < 1)
        return "every size must be positive";
    if (a->q_heads % a->kv_heads)
        return "the query heads are not a multiple of the key/value heads";
    /* positions are compared as floats in the causal test */
    if (a->q_len > (1 << 24) || a->kv_len > (1 << 24))
        return "a sequence is longer than 2^24";
    if (!a->q || !a->k || !a->v || !a->out)
        return "an operand is missing";
    if (a->mask_kind != SM_ATTN_MASK_NONE &&
        a->mask_kind != SM_ATTN_MASK_FLOAT && a->mask_kind != SM_ATTN_MASK_BOOL)
        return "unknown mask kind";
    if (a->q_group < 0 || a->q_group > SM_ATTN_GROUP)
        return "query blocks per key sweep out of range";
    if (a->mask_kind != SM_ATTN_MASK_NONE && !a->mask)
        return "a mask kind without a mask";
    for (int i = 0; i < 4; i++)
        if (a->mask_kind != SM_ATTN_MASK_NONE && a->mask_strides[i] < 0)
            return "a negative mask stride";
    return NULL;
}

typedef struct attn_job {
    const sm_cpu_ops *ops;
    const sm_attn_args *a;
    char *ws;
    size_t slice;
    int64_t nqb, bh, group, ngroups;
} attn_job;

/* Tasks [begin, end): task t is the group of query blocks ngroups - 1 -
 * t / bh of (batch, head) t % bh, so under the causal rule the groups
 * that see the most keys are handed out first and the short ones fill
 * in. */
static void attn_tasks(void *arg, int64_t begin, int64_t end, int tid)
{
    const attn_job *J = arg;
    float *ws = (float *)(J->ws + (size_t)tid * J->slice);
    for (int64_t t = begin; t < end; t++) {
        int64_t gi = J->ngroups - 1 - t / J->bh, bh = t % J->bh;
        int64_t qb = gi * J->group;
        int nb = (int)(J->nqb - qb < J->group ? J->nqb - qb : J->group);
        J->ops->attn_block(J->a, bh / J->a->q_heads, bh % J->a->q_heads,
                           qb * J->ops->attn_bq, nb, ws);
    }
}

/* Query blocks per key sweep: a's own choice, else the largest up to
 * SM_ATTN_GROUP that still leaves 4 tasks per thread (heaviest first,
 * so the causal rule's short tasks fill in at the end). Grouping pays at
 * every length on one thread (the Q^T copies and the K, V reads from L2
 * or L3 are shared) and most at long ones, where a head's K and V do not
 * fit in L2. */
static int64_t attn_group(const sm_cpu_ops *ops, const sm_attn_args *a,
                          int n_threads)
{
    if (a->q_group > 0)
        return a->q_group;
    int64_t nqb = (a->q_len + ops->attn_bq - 1) / ops->attn_bq,
            bh = a->batch * a->q_heads, g = SM_ATTN_GROUP;
    while (g > 1 && (nqb + g - 1) / g * bh < 4 * (int64_t)n_threads)
        g /= 2;
    return g;
}

int sm_cpu_attention(const sm_cpu_ops *ops, const sm_attn_args *a, void *ws,
                     size_t ws_bytes, sm_threadpool *tp)
{
    if (sm_cpu_attention_check(a) || !ops->attn_block ||
        ws_bytes < sm_cpu_attention_ws(ops, a->head_dim, a->v_dim,
                                       sm_threadpool_size(tp)))
        return -1;
    attn_job J = {ops,
                  a,
                  ws,
                  attn_slice_bytes(ops, a->head_dim, a->v_dim),
                  (a->q_len + ops->attn_bq - 1) / ops->attn_bq,
                  a->batch * a->q_heads,
                  attn_group(ops, a, sm_threadpool_size(tp)),
                  0};
    J.ngroups = (J.nqb + J.group - 1) / J.group;
    sm_parallel_for(tp, J.ngroups * J.bh, 1, attn_tasks, &J);
    return 0;
}
