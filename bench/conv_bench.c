/*
 * conv_bench.c - GFLOP/s of Smelt's optimized Conv kernel (kernels/cpu,
 * the registry entry for the widest ISA this CPU has) on the convolution
 * shapes of ResNet-18 and MobileNet-V2 (batch 1, 224 x 224), with the
 * weights prepacked as a plan does it, on one and two threads.
 *
 *   conv_bench [--isa avx512|avx2|scalar] [--time SECONDS] [--only TEXT]
 *
 * Each figure is the median of repeated runs filling --time seconds
 * (default 0.3). A benchmark prints; it never fails on speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/tensor.h"
#include "ir/op.h"
#include "kernels/cpu/cpuid.h"
#include "kernels/cpu/registry.h"
#include "core/threadpool.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct shape {
    const char *name;
    int64_t c, hw, m, k, stride, group;
    int64_t dil;   /* 0: 1 */
    int64_t batch; /* 0: 1 */
} shape;

static sm_tensor *tensor(int ndim, const int64_t *dims, unsigned seed)
{
    sm_tensor *t;
    if (sm_tensor_new(NULL, SMELT_DTYPE_F32, ndim, dims, &t) != SMELT_OK)
        return NULL;
    float *p = t->data;
    for (int64_t i = 0; i < t->numel; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
    }
    return t;
}

/* Median seconds of one Conv (+ bias, relu) of shape s; *best gets the
 * fastest run's, path the kernel's decision (sm_cpu_config_str). */
static double bench_conv(const sm_cpu_kernel *k, const shape *s,
                         sm_threadpool *tp, double budget, double *flops,
                         double *best, char *path, size_t path_size)
{
    int64_t dil = s->dil ? s->dil : 1, nb = s->batch ? s->batch : 1;
    int64_t ke = (s->k - 1) * dil + 1, pad = ke / 2;
    int64_t oh = (s->hw + 2 * pad - ke) / s->stride + 1;
    sm_tensor *in[3] = {
        tensor(4, (int64_t[]){nb, s->c, s->hw, s->hw}, 1),
        tensor(4, (int64_t[]){s->m, s->c / s->group, s->k, s->k}, 2),
        tensor(1, (int64_t[]){s->m}, 3)};
    sm_tensor *out[1] = {tensor(4, (int64_t[]){nb, s->m, oh, oh}, 4)};
    *flops = 2.0 * (double)(nb * s->m * oh * oh) * (double)(s->c / s->group) *
             (double)(s->k * s->k);
    const sm_op_info *info = sm_op_info_get(SM_OP_FusedConv);
    sm_attr al[5] = {
        {.name = "pads",
         .kind = SM_ATTR_INTS,
         .n = 4,
         .v.ints = (int64_t[]){pad, pad, pad, pad}},
        {.name = "strides",
         .kind = SM_ATTR_INTS,
         .n = 2,
         .v.ints = (int64_t[]){s->stride, s->stride}},
        {.name = "group", .kind = SM_ATTR_INT, .v.i = s->group},
        {.name = "activation", .kind = SM_ATTR_STRING, .v.s = "relu"},
        {.name = "dilations",
         .kind = SM_ATTR_INTS,
         .n = 2,
         .v.ints = (int64_t[]){dil, dil}}};
    sm_attrs at = {al, 5, info->spec, info->n_spec};
    sm_kernel_operand ko[4];
    memset(ko, 0, sizeof ko);
    for (int i = 0; i < 4; i++) {
        const sm_tensor *t = i < 3 ? in[i] : out[0];
        ko[i] = (sm_kernel_operand){1, t->dtype, t->ndim, {0}, i == 1};
        memcpy(ko[i].dims, t->dims, sizeof t->dims);
    }
    int threads = sm_threadpool_size(tp);
    sm_kernel_desc d = {SM_OP_FusedConv, at, 3, 1, ko, ko + 3, threads};
    sm_cpu_config cfg;
    sm_cpu_kernel_configure(k, &d, &cfg);
    sm_cpu_config_str(&cfg, path, path_size);
    void *packed = NULL;
    const sm_tensor *ci[3] = {NULL, in[1], NULL};
    if (cfg.packs)
        sm_cpu_kernel_prepack(k, NULL, &d, &cfg, ci, &packed);
    size_t wsb = cfg.ws_bytes;
    void *ws = wsb ? aligned_alloc(64, (wsb + 63) & ~(size_t)63) : NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_kargs a = {.op_name = "FusedConv",
                  .attrs = at,
                  .n_in = 3,
                  .in = in,
                  .n_out = 1,
                  .out = out,
                  .ctx = ctx,
                  .workspace = ws,
                  .workspace_bytes = wsb};
    sm_cpu_kernel_run(k, &a, &cfg, packed, tp);
    double t[100];
    int n = 0;
    double start = now();
    while (n < 100 && (n < 3 || now() - start < budget)) {
        double t0 = now();
        sm_cpu_kernel_run(k, &a, &cfg, packed, tp);
        t[n++] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *best = t[0];
    sm_free(packed);
    free(ws);
    smelt_ctx_free(ctx);
    for (int i = 0; i < 3; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
    return t[n / 2];
}

int main(int argc, char **argv)
{
    const char *isa = NULL, *only = NULL;
    double budget = 0.3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--isa"))
            isa = argv[i + 1];
        else if (!strcmp(argv[i], "--time"))
            budget = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    int ok;
    unsigned feat = sm_cpu_detect() & sm_cpu_level_mask(isa, &ok);
    if (!ok) {
        fprintf(stderr, "conv_bench: unknown --isa %s\n", isa);
        return 2;
    }
    const sm_cpu_kernel *const ks[3] = {sm_cpu_kernel_find("conv_f32_avx512"),
                                        sm_cpu_kernel_find("conv_f32_avx2"),
                                        sm_cpu_kernel_find("conv_f32_scalar")};
    const sm_cpu_kernel *k = ks[2];
    for (int i = 0; i < 3; i++)
        if ((ks[i]->isa & feat) == ks[i]->isa) {
            k = ks[i];
            break;
        }
    static const shape shapes[] = {
        {"r18 conv1 7x7/2", 3, 224, 64, 7, 2, 1},
        {"r18 3x3 64@56", 64, 56, 64, 3, 1, 1},
        {"r18 3x3/2 64->128", 64, 56, 128, 3, 2, 1},
        {"r18 3x3 128@28", 128, 28, 128, 3, 1, 1},
        {"r18 1x1/2 64->128", 64, 56, 128, 1, 2, 1},
        {"r18 3x3 256@14", 256, 14, 256, 3, 1, 1},
        {"r18 3x3 512@7", 512, 7, 512, 3, 1, 1},
        {"mbv2 1x1 32->192@56", 32, 56, 192, 1, 1, 1},
        {"mbv2 dw3x3 144@56", 144, 56, 144, 3, 1, 144},
        {"mbv2 dw3x3/2 144@56", 144, 56, 144, 3, 2, 144},
        {"mbv2 1x1 960->160@7", 960, 7, 160, 1, 1, 1},
        {"mbv2 1x1 160->960@7", 160, 7, 960, 1, 1, 1},
        {"mbv2 1x1 96->576@14", 96, 14, 576, 1, 1, 1},
        {"mbv2 1x1 576->96@14", 576, 14, 96, 1, 1, 1},
        {"mbv2 1x1 16->96@112", 16, 112, 96, 1, 1, 1},
        {"mbv2 dw3x3 96@112/2", 96, 112, 96, 3, 2, 96},
        {"mbv2 dw3x3 576@14", 576, 14, 576, 3, 1, 576},
        {"mbv2 conv 3x3/2 3->32", 3, 224, 32, 3, 2, 1},
        /* layers of the sweep's worst convolution models (bench/sweep) */
        {"rb16 3x3 16@32 b16", 16, 32, 16, 3, 1, 1, 1, 16},
        {"rb16 3x3 32@16 b16", 32, 16, 32, 3, 1, 1, 1, 16},
        {"rb16 3x3/2 16->32@32 b16", 16, 32, 32, 3, 2, 1, 1, 16},
        {"rb16 3x3/2 32->64@16 b16", 32, 16, 64, 3, 2, 1, 1, 16},
        {"rb16 3x3 64@8 b16", 64, 8, 64, 3, 1, 1, 1, 16},
        {"eff dw3x3/2 144@32 b4", 144, 32, 144, 3, 2, 144, 1, 4},
        {"eff dw5x5 360@8 b4", 360, 8, 360, 5, 1, 360, 1, 4},
        {"k5 5x5 32@64 b2", 32, 64, 32, 5, 1, 1, 1, 2},
        {"dil2 3x3 64@64", 64, 64, 64, 3, 1, 1, 2, 1},
        {"rx g8 3x3 128@28 b2", 128, 28, 128, 3, 1, 8, 1, 2},
        {"rx g8 3x3/2 256@28 b2", 256, 28, 256, 3, 2, 8, 1, 2},
        {"r18@96 3x3 128@12 b2", 128, 12, 128, 3, 1, 1, 1, 2},
        {"vgg 3x3 128->256@8", 128, 8, 256, 3, 1, 1},
        {"vgg 3x3 256@8", 256, 8, 256, 3, 1, 1},
    };
    sm_threadpool *tp2;
    if (sm_threadpool_new(NULL, 2, &tp2) != SMELT_OK)
        return 1;
    printf("Smelt FusedConv (+bias, relu), kernel %s, batch 1\n", k->name);
    printf("median (best) of the runs; GFLOP/s of the direct convolution's "
           "2*M*C*k*k*OH*OW\n");
    printf("%-22s %17s %15s %17s %15s\n", "layer", "1 thread ms", "GFLOP/s",
           "2 threads ms", "GFLOP/s");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (only && !strstr(shapes[i].name, only))
            continue;
        double f, b1, b2;
        char path[160];
        double t1 =
            bench_conv(k, &shapes[i], NULL, budget, &f, &b1, path, sizeof path);
        double t2 =
            bench_conv(k, &shapes[i], tp2, budget, &f, &b2, path, sizeof path);
        printf("%-22s %7.3f (%7.3f) %6.1f (%6.1f) %7.3f (%7.3f) %6.1f "
               "(%6.1f)  %s\n",
               shapes[i].name, t1 * 1e3, b1 * 1e3, f / t1 * 1e-9, f / b1 * 1e-9,
               t2 * 1e3, b2 * 1e3, f / t2 * 1e-9, f / b2 * 1e-9, path);
    }
    sm_threadpool_free(tp2);
    return 0;
}
