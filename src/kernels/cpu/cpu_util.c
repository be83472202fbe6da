/*
 * cpu_util.c - helpers shared by the optimized CPU kernels (cpu_util.h).
 */
#include "kernels/cpu/cpu_util.h"

#include "core/alloc.h"
#include "core/act.h"

int sm_cpu_all_f32(const sm_kernel_desc *d)
{
    for (int i = 0; i < d->n_in; i++)
        if (d->in[i].present && d->in[i].dtype != SMELT_DTYPE_F32)
            return 0;
    for (int i = 0; i < d->n_out; i++)
        if (d->out[i].dtype != SMELT_DTYPE_F32)
            return 0;
    return 1;
}

int sm_cpu_bcast_strides(int tr, const int64_t *td, int yr, const int64_t *yd,
                         int64_t *out)
{
    if (tr > yr)
        return 0;
    int64_t s = 1;
    for (int d = yr - 1; d >= 0; d--) {
        int t = d - (yr - tr);
        out[d] = 0;
        if (t < 0)
            continue;
        if (td[t] != 1 && td[t] != yd[d])
            return 0;
        if (td[t] != 1)
            out[d] = s;
        s *= td[t];
    }
    return 1;
}

/* In place: dim d's strides move to slot n - 1 <= d, so s[k][d] is still
 * dim d's when it is read. */
void sm_cpu_loops_collapse(sm_cpu_loops *g, int nd, const int64_t *dims)
{
    int n_ops = g->n_ops;
    SM_ASSERT(n_ops >= 1 && n_ops <= SM_CPU_LOOP_OPS);
    g->nd = 0;
    for (int d = 0; d < nd; d++) {
        if (dims[d] == 1)
            continue;
        int n = g->nd, merge = n > 0;
        for (int k = 0; merge && k < n_ops; k++)
            merge = g->s[k][n - 1] == g->s[k][d] * dims[d];
        if (merge) {
            g->dims[n - 1] *= dims[d];
        } else {
            g->dims[n] = dims[d];
            g->nd++;
            n++;
        }
        for (int k = 0; k < n_ops; k++)
            g->s[k][n - 1] = g->s[k][d];
    }
    if (g->nd == 0) {
        g->nd = 1;
        g->dims[0] = 1;
        for (int k = 0; k < n_ops; k++)
            g->s[k][0] = 0;
    }
}

void sm_cpu_loops_offsets(const sm_cpu_loops *g, int64_t r, int64_t *off)
{
    for (int k = 0; k < g->n_ops; k++)
        off[k] = 0;
    for (int d = g->nd - 2; d >= 0; d--) {
        int64_t i = r % g->dims[d];
        r /= g->dims[d];
        for (int k = 0; k < g->n_ops; k++)
            off[k] += i * g->s[k][d];
    }
}

int sm_cpu_epi_act(const sm_attrs *at, sm_gemm_epi *e)
{
    sm_act act;
    if (sm_act_read(NULL, "", at, &act) != SMELT_OK)
        return 0;
    e->act = (int)act.kind;
    e->act_a = (float)act.alpha;
    e->act_b = (float)act.beta;
    return 1;
}

int64_t sm_cpu_chunk(int64_t n, sm_threadpool *tp)
{
    int64_t c = n / (8 * (int64_t)sm_threadpool_size(tp));
    return c > 0 ? c : 1;
}

char *sm_cpu_scratch(void *ws, size_t ws_bytes, size_t need, void **own)
{
    *own = NULL;
    if (!ws || ws_bytes < need) {
        *own = sm_malloc(need + 64);
        if (!*own)
            return NULL;
        ws = *own;
    }
    return (char *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
}

int64_t sm_cpu_prod(int n, const int64_t *d)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}
