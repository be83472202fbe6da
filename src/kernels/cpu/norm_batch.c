/*
 * norm_batch.c - BatchNormalization on f32, inference and training mode
 * (the batch's own statistics, and the running statistics' outputs).
 *
 * A training step runs BatchNorm in training mode, which had no CPU
 * kernel: the reference loads and stores every element through the
 * dtype switch, three times (resnet18's step at batch 8: 99 ms of its
 * 20 BatchNorms). Here each channel is one task: its mean and
 * population variance summed in double over the batch's rows of that
 * channel (as the reference), then y = x a + b with a = scale /
 * sqrt(var + eps) and b = B - mean a, a loop the compiler vectorizes.
 * Channels split over the pool.
 */
#include <math.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"

int sm_cpu_batchnorm_supports(const sm_kernel_desc *d)
{
    if (d->n_in != 5 || d->in[0].ndim < 2 || d->n_out < 1 || d->n_out > 3)
        return 0;
    int64_t c = d->in[0].dims[1];
    for (int i = 0; i < 5; i++)
        if (!d->in[i].present || d->in[i].dtype != SMELT_DTYPE_F32 ||
            (i > 0 && sm_cpu_prod(d->in[i].ndim, d->in[i].dims) != c))
            return 0;
    for (int j = 0; j < d->n_out; j++)
        if (d->out[j].present && d->out[j].dtype != SMELT_DTYPE_F32)
            return 0;
    return sm_cpu_prod(d->out[0].ndim, d->out[0].dims) ==
           sm_cpu_prod(d->in[0].ndim, d->in[0].dims);
}

typedef struct bn_job {
    int64_t n, c, inner;
    int training;
    double eps, mom;
    const float *x, *scale, *bias, *mean, *var;
    float *y, *run_mean, *run_var;
} bn_job;

/* Channels [begin, end). */
static void bn_channels(void *job, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const bn_job *J = job;
    int64_t per_c = J->n * J->inner;
    for (int64_t c = begin; c < end; c++) {
        double m = J->mean[c], v = J->var[c];
        if (J->training && per_c > 0) {
            double s = 0, q = 0;
            for (int64_t b = 0; b < J->n; b++) {
                const float *x = J->x + (b * J->c + c) * J->inner;
                for (int64_t i = 0; i < J->inner; i++)
                    s += x[i];
            }
            m = s / (double)per_c;
            for (int64_t b = 0; b < J->n; b++) {
                const float *x = J->x + (b * J->c + c) * J->inner;
                for (int64_t i = 0; i < J->inner; i++) {
                    double dv = x[i] - m;
                    q += dv * dv;
                }
            }
            v = q / (double)per_c;
        }
        if (J->training) {
            if (J->run_mean)
                J->run_mean[c] =
                    (float)(J->mean[c] * J->mom + m * (1 - J->mom));
            if (J->run_var)
                J->run_var[c] = (float)(J->var[c] * J->mom + v * (1 - J->mom));
        }
        double inv = 1 / sqrt(v + J->eps);
        float a = (float)(J->scale[c] * inv);
        float b0 = (float)(J->bias[c] - m * J->scale[c] * inv);
        for (int64_t b = 0; b < J->n; b++) {
            int64_t at = (b * J->c + c) * J->inner;
            const float *x = J->x + at;
            float *y = J->y + at;
            for (int64_t i = 0; i < J->inner; i++)
                y[i] = x[i] * a + b0;
        }
    }
}

smelt_status sm_cpu_batchnorm_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                  const sm_cpu_config *cfg, const void *packed,
                                  sm_threadpool *tp)
{
    (void)ops;
    (void)cfg;
    (void)packed;
    const sm_tensor *x = a->in[0];
    int64_t c = x->dims[1], inner = 1;
    for (int d = 2; d < x->ndim; d++)
        inner *= x->dims[d];
    for (int i = 1; i < 5; i++)
        if (a->in[i]->numel != c)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: input %d must hold C = %lld values", a->op_name,
                          i, (long long)c);
    bn_job J = {.n = x->dims[0],
                .c = c,
                .inner = inner,
                .training = sm_attrs_int(&a->attrs, "training_mode", 0) != 0,
                .eps = sm_attrs_float(&a->attrs, "epsilon", 1e-5),
                .mom = sm_attrs_float(&a->attrs, "momentum", 0.9),
                .x = x->data,
                .scale = a->in[1]->data,
                .bias = a->in[2]->data,
                .mean = a->in[3]->data,
                .var = a->in[4]->data,
                .y = a->out[0]->data,
                .run_mean = a->n_out > 1 && a->out[1] ? a->out[1]->data : NULL,
                .run_var = a->n_out > 2 && a->out[2] ? a->out[2]->data : NULL};
    if (sm_threadpool_size(tp) > 1 && c > 1 && x->numel >= 16384)
        sm_parallel_for(tp, c, sm_cpu_chunk(c, tp), bn_channels, &J);
    else
        bn_channels(&J, 0, c, 0);
    return SMELT_OK;
}
