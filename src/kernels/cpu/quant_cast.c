/*
 * quant_cast.c - Cast from i32 to f32, the step that follows every
 * integer product of a quantized model (MatMulInteger, ConvInteger:
 * docs/QUANTIZATION.md). The reference Cast converts element by element
 * through double; this is one plain loop the compiler vectorizes, the
 * same values (an i32 rounds to the nearest f32, ties to even, either
 * way).
 */
#include "kernels/cpu/registry.h"

int sm_cpu_cast_i32_supports(const sm_kernel_desc *d)
{
    return d->n_in >= 1 && d->n_out >= 1 && d->in[0].present &&
           d->in[0].dtype == SMELT_DTYPE_I32 &&
           d->out[0].dtype == SMELT_DTYPE_F32;
}

/* Runs of 64 Ki elements per task. */
typedef struct cast_job {
    const int32_t *x;
    float *y;
    int64_t n;
} cast_job;

static void cast_range(void *arg, int64_t b, int64_t e, int tid)
{
    (void)tid;
    const cast_job *j = arg;
    int64_t i1 = e << 16 < j->n ? e << 16 : j->n;
    for (int64_t i = b << 16; i < i1; i++)
        j->y[i] = (float)j->x[i];
}

smelt_status sm_cpu_cast_i32_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                 const sm_cpu_config *c, const void *packed,
                                 sm_threadpool *tp)
{
    (void)ops, (void)c, (void)packed;
    if (a->out[0]->numel != a->in[0]->numel)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the input's shape",
                      a->op_name);
    cast_job j = {a->in[0]->data, a->out[0]->data, a->in[0]->numel};
    int64_t chunks = (j.n + 65535) >> 16;
    sm_parallel_for(chunks > 1 ? tp : NULL, chunks, 0, cast_range, &j);
    return SMELT_OK;
}
