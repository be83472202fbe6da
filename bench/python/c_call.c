/*
 * c_call.c - the C side of bench/python/bench_python.py: the time of one
 * call through the C API on a model (a session run that makes its output
 * tensors, then frees them, as the Python call does), so the Python
 * figure can be printed beside it.
 *
 *   c_call MODEL DIMS RUNS   (DIMS as smelt_plan_options.dims, "" for none)
 *
 * Inputs are zeros of the plan's input shapes. Prints one JSON line:
 * median and min microseconds per call over RUNS calls (after RUNS/10
 * untimed ones), each call timed alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smelt.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int load(smelt_ctx_t *ctx, const char *path, smelt_graph_t **g)
{
    size_t n = strlen(path);
    if (n > 5 && strcmp(path + n - 5, ".onnx") == 0)
        return smelt_onnx_load(ctx, path, g);
    return smelt_graph_load(ctx, path, g);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: c_call MODEL DIMS RUNS\n");
        return 2;
    }
    int runs = atoi(argv[3]);
    if (runs < 1)
        runs = 1;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = NULL;
    smelt_session_t *s = NULL;
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.dims = argv[2][0] ? argv[2] : NULL;
    if (!ctx || load(ctx, argv[1], &g) != SMELT_OK ||
        smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK ||
        smelt_session_init(ctx, p, &s) != SMELT_OK) {
        fprintf(stderr, "c_call: %s\n", smelt_ctx_error(ctx));
        return 1;
    }
    int n_in = smelt_plan_num_inputs(p), n_out = smelt_plan_num_outputs(p);
    smelt_tensor_t *in[16] = {0}, *out[16] = {0};
    if (n_in > 16 || n_out > 16) {
        fprintf(stderr, "c_call: more than 16 inputs or outputs\n");
        return 1;
    }
    for (int i = 0; i < n_in; i++) {
        int64_t dims[SMELT_MAX_DIMS];
        int nd = smelt_plan_input_ndim(p, i);
        for (int k = 0; k < nd; k++)
            dims[k] = smelt_plan_input_dim(p, i, k);
        if (smelt_tensor_init(ctx, smelt_plan_input_dtype(p, i), nd, dims,
                              &in[i]) != SMELT_OK) {
            fprintf(stderr, "c_call: %s\n", smelt_ctx_error(ctx));
            return 1;
        }
    }
    double *t = malloc(sizeof(double) * (size_t)runs);
    if (!t)
        return 1;
    for (int r = -runs / 10; r < runs; r++) {
        double t0 = now_us();
        if (smelt_session_run(ctx, s, in, n_in, out, n_out) != SMELT_OK) {
            fprintf(stderr, "c_call: %s\n", smelt_ctx_error(ctx));
            return 1;
        }
        for (int i = 0; i < n_out; i++) {
            smelt_tensor_free(out[i]);
            out[i] = NULL;
        }
        if (r >= 0)
            t[r] = now_us() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("{\"median_us\": %.3f, \"min_us\": %.3f, \"runs\": %d}\n",
           t[runs / 2], t[0], runs);
    free(t);
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    smelt_session_free(s);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return 0;
}
