/*
 * grad_conv_bench.c - what a training step of one convolution layer
 * costs next to its inference: the plan of the forward graph (f32 Conv,
 * Relu, 2x2 MaxPool) and the plan of its joint graph (smelt_graph_grad
 * with respect to the input and the kernel), both at -O2 on one thread,
 * on a few layer shapes.
 *
 *   grad_conv_bench [--runs N]
 *
 * Each figure is the minimum over N runs (default 9) of the process CPU
 * time of one smelt_plan_run, so other processes on a loaded machine
 * change it little. A benchmark prints; it never fails on speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smelt.h"

typedef struct layer {
    const char *name;
    int n, c, hw, group, stride;
} layer;

static const layer layers[] = {
    {"3x3 c32 28x28 n8", 8, 32, 28, 1, 1},
    {"3x3 c32 28x28 n8 stride 2", 8, 32, 28, 1, 2},
    {"3x3 c32 28x28 n8 depthwise", 8, 32, 28, 32, 1},
    {"3x3 c64 56x56 n4", 4, 64, 56, 1, 1},
    {"3x3 c128 14x14 n4", 4, 128, 14, 1, 1},
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The layer's forward graph as text IR (malloc'd). */
static char *layer_text(const layer *l)
{
    int64_t wn = (int64_t)l->c * (l->c / l->group) * 9;
    size_t cap = (size_t)wn * 12 + 1024, n = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    n += (size_t)snprintf(t + n, cap - n,
                          "graph layer(%%x: f32[%d,%d,%d,%d]) {\n"
                          "  %%w: f32[%d,%d,3,3] = const [",
                          l->n, l->c, l->hw, l->hw, l->c, l->c / l->group);
    for (int64_t i = 0; i < wn; i++)
        n += (size_t)snprintf(t + n, cap - n, "%s%.4f", i ? ", " : "",
                              (double)((i * 37) % 101) / 500.0 - 0.1);
    snprintf(t + n, cap - n,
             "]\n  %%c = Conv(%%x, %%w) {pads = [1, 1, 1, 1], "
             "strides = [%d, %d], group = %d}\n"
             "  %%r = Relu(%%c)\n"
             "  %%p = MaxPool(%%r) {kernel_shape = [2, 2], strides = [2, 2]}\n"
             "  return %%p\n}\n",
             l->stride, l->stride, l->group);
    return t;
}

/* Minimum CPU time in ms of one run of g's -O2 plan on x; -1 on error. */
static double time_plan(smelt_ctx_t *ctx, smelt_graph_t *g, smelt_tensor_t *x,
                        int runs)
{
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 2;
    o.threads = 1;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
        return -1;
    int n_out = smelt_graph_num_outputs(g);
    smelt_tensor_t *out[8] = {0};
    double best = -1;
    for (int r = 0; r < runs && n_out <= 8; r++) {
        double t0 = cpu_now();
        if (smelt_plan_run(ctx, p, &x, 1, out, n_out) != SMELT_OK) {
            best = -1;
            break;
        }
        double t = (cpu_now() - t0) * 1e3;
        if (best < 0 || t < best)
            best = t;
        for (int i = 0; i < n_out; i++)
            smelt_tensor_free(out[i]);
    }
    smelt_plan_free(p);
    return best;
}

int main(int argc, char **argv)
{
    int runs = 9;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: grad_conv_bench [--runs N]\n");
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    printf("%-30s %12s %16s %7s\n", "layer (+relu, maxpool)", "forward ms",
           "fwd+backward ms", "ratio");
    for (size_t k = 0; k < sizeof layers / sizeof *layers; k++) {
        const layer *l = &layers[k];
        smelt_ctx_t *ctx = smelt_ctx_init();
        char *text = layer_text(l);
        smelt_graph_t *g = NULL, *j = NULL;
        smelt_tensor_t *x = NULL;
        int64_t dims[4] = {l->n, l->c, l->hw, l->hw};
        const char *wrt[2] = {"x", "w"};
        smelt_grad_options go;
        smelt_grad_options_default(&go);
        go.wrt = wrt;
        go.n_wrt = 2;
        if (!text ||
            smelt_graph_parse(ctx, text, strlen(text), "layer.ir", &g) ||
            smelt_graph_grad(ctx, g, &go, &j) ||
            smelt_tensor_init(ctx, SMELT_DTYPE_F32, 4, dims, &x)) {
            fprintf(stderr, "%s: %s\n", l->name, smelt_ctx_error(ctx));
            return 1;
        }
        float *xv = smelt_tensor_data(x);
        for (int64_t i = 0; i < smelt_tensor_numel(x); i++)
            xv[i] = (float)((i * 53) % 97) / 48.0f - 1.0f;
        double tf = time_plan(ctx, g, x, runs);
        double tj = time_plan(ctx, j, x, runs);
        if (tf < 0 || tj < 0) {
            fprintf(stderr, "%s: %s\n", l->name, smelt_ctx_error(ctx));
            return 1;
        }
        printf("%-30s %12.2f %16.2f %7.1f\n", l->name, tf, tj, tj / tf);
        smelt_tensor_free(x);
        smelt_graph_free(j);
        smelt_graph_free(g);
        free(text);
        smelt_ctx_free(ctx);
    }
    return 0;
}
