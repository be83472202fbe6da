/*
 * trace_mlp.c - a small MLP written in C with Smelt's eager ops, traced
 * into a graph (as torch.jit.trace does), optimized, run on a new input,
 * and saved as ONNX. See docs/TRACE.md.
 *
 *   trace_mlp [OUT_DIR]
 *
 * writes, into OUT_DIR (default ., must exist): trace_mlp.onnx (the
 * traced graph), x.npy (a new input) and y.npy (what eager mode computes
 * on it), so that `smelt run` on the ONNX file with that input can be
 * checked against y.npy. Exits 1 when any result disagrees.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "smelt.h"

#define IN 4
#define HIDDEN 16
#define OUT 3
#define BATCH 2

typedef struct mlp {
    smelt_tensor_t *w1, *b1, *w2, *b2;
} mlp;

/* A tensor of f32 values from a small deterministic generator. */
static smelt_tensor_t *filled(smelt_ctx_t *ctx, int ndim, const int64_t *dims,
                              unsigned *seed, float scale)
{
    smelt_tensor_t *t;
    if (smelt_tensor_init(ctx, SMELT_DTYPE_F32, ndim, dims, &t) != SMELT_OK)
        return NULL;
    float *p = smelt_tensor_data(t);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++) {
        *seed = *seed * 1103515245u + 12345u;
        p[i] = scale * ((float)((*seed >> 8) & 0xffff) / 32768.0f - 1.0f);
    }
    return t;
}

/* softmax(relu(x W1 + b1) W2 + b2): plain C calling eager ops, freeing
 * each intermediate when done with it. */
static smelt_status forward(smelt_ctx_t *ctx, const mlp *m, smelt_tensor_t *x,
                            smelt_tensor_t **y)
{
    smelt_tensor_t *t[5] = {0};
    smelt_status st = smelt_matmul(ctx, x, m->w1, &t[0]);
    if (st == SMELT_OK)
        st = smelt_add(ctx, t[0], m->b1, &t[1]);
    if (st == SMELT_OK)
        st = smelt_relu(ctx, t[1], &t[2]);
    if (st == SMELT_OK)
        st = smelt_matmul(ctx, t[2], m->w2, &t[3]);
    if (st == SMELT_OK)
        st = smelt_add(ctx, t[3], m->b2, &t[4]);
    if (st == SMELT_OK)
        st = smelt_softmax(ctx, t[4], -1, y);
    for (int i = 0; i < 5; i++)
        smelt_tensor_free(t[i]);
    return st;
}

static double max_diff(smelt_tensor_t *a, smelt_tensor_t *b)
{
    double d = 0;
    for (int64_t i = 0; i < smelt_tensor_numel(a); i++)
        d = fmax(d,
                 fabs(smelt_tensor_get_f64(a, i) - smelt_tensor_get_f64(b, i)));
    return d;
}

static void print_rows(const char *what, smelt_tensor_t *y)
{
    printf("%s\n", what);
    for (int r = 0; r < BATCH; r++) {
        printf("   ");
        for (int c = 0; c < OUT; c++)
            printf(" %.6f", smelt_tensor_get_f64(y, r * OUT + c));
        printf("\n");
    }
}

/* The graph's text form without the weight literals. */
static void print_graph(smelt_ctx_t *ctx, const smelt_graph_t *g)
{
    char *text;
    if (smelt_graph_print(ctx, g, &text) != SMELT_OK)
        return;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (!strstr(line, " = const "))
            printf("   %s\n", line);
    smelt_string_free(text);
}

static int run(smelt_ctx_t *ctx, const char *dir)
{
    unsigned seed = 7;
    mlp m = {
        filled(ctx, 2, (const int64_t[]){IN, HIDDEN}, &seed, 0.5f),
        filled(ctx, 1, (const int64_t[]){HIDDEN}, &seed, 0.1f),
        filled(ctx, 2, (const int64_t[]){HIDDEN, OUT}, &seed, 0.5f),
        filled(ctx, 1, (const int64_t[]){OUT}, &seed, 0.1f),
    };
    const int64_t xdims[] = {BATCH, IN};
    smelt_tensor_t *x = filled(ctx, 2, xdims, &seed, 1.0f);
    smelt_tensor_t *x2 = filled(ctx, 2, xdims, &seed, 1.0f);
    smelt_tensor_t *y = NULL, *y_eager = NULL, *y_opt = NULL, *y_onnx = NULL;
    smelt_tensor_t *y_plan = NULL;
    smelt_graph_t *g = NULL, *opt = NULL, *back = NULL;
    smelt_plan_t *plan = NULL;
    smelt_opt_report_t *report = NULL;
    char *table = NULL, path[1024];
    int rc = 1;
    if (!m.w1 || !m.b1 || !m.w2 || !m.b2 || !x || !x2)
        goto done;

    /* 1. trace: run the C function once on an example input */
    if (smelt_trace_begin(ctx, "mlp") != SMELT_OK ||
        smelt_trace_input(ctx, x, "x") != SMELT_OK ||
        forward(ctx, &m, x, &y) != SMELT_OK ||
        smelt_trace_end(ctx, &y, 1, &g) != SMELT_OK)
        goto done;
    printf("== traced '%s': %d nodes, weights captured as constants\n",
           smelt_graph_name(g), smelt_graph_num_nodes(g));
    print_graph(ctx, g);
    const char *warnings = smelt_trace_warnings(ctx);
    printf("   trace warnings: %s", *warnings ? warnings : "none\n");

    /* 2. save the traced graph as ONNX (standard ops only) */
    snprintf(path, sizeof path, "%s/trace_mlp.onnx", dir);
    if (smelt_onnx_save(ctx, g, path) != SMELT_OK)
        goto done;
    printf("== saved %s\n", path);

    /* 3. optimize a copy at -O2, as any loaded model */
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 2;
    if (smelt_graph_clone(ctx, g, &opt) != SMELT_OK ||
        smelt_graph_optimize(ctx, opt, &o, &report) != SMELT_OK ||
        smelt_opt_report_print(ctx, report, 0, &table) != SMELT_OK)
        goto done;
    printf("== optimized at -O2: %d -> %d nodes\n%s", smelt_graph_num_nodes(g),
           smelt_graph_num_nodes(opt), table);
    print_graph(ctx, opt);

    /* 4. run on a new input: eager, the optimized graph (reference
     * interpreter), a compiled plan (optimized kernels), the ONNX file */
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    if (forward(ctx, &m, x2, &y_eager) != SMELT_OK ||
        smelt_graph_run_reference(ctx, opt, &x2, 1, &y_opt, 1) != SMELT_OK ||
        smelt_plan_compile(ctx, g, &po, &plan) != SMELT_OK ||
        smelt_plan_run(ctx, plan, &x2, 1, &y_plan, 1) != SMELT_OK ||
        smelt_onnx_load(ctx, path, &back) != SMELT_OK ||
        smelt_graph_run_reference(ctx, back, &x2, 1, &y_onnx, 1) != SMELT_OK)
        goto done;
    print_rows("== eager on a new input:", y_eager);
    double d_opt = max_diff(y_opt, y_eager), d_onnx = max_diff(y_onnx, y_eager);
    double d_plan = max_diff(y_plan, y_eager);
    printf("== optimized graph vs eager: max |diff| = %.3g\n", d_opt);
    printf("== compiled plan vs eager:   max |diff| = %.3g\n", d_plan);
    printf("== ONNX file vs eager:       max |diff| = %.3g\n", d_onnx);

    /* 5. the new input and its eager result, for `smelt run` */
    snprintf(path, sizeof path, "%s/x.npy", dir);
    if (smelt_npy_save(ctx, path, x2) != SMELT_OK)
        goto done;
    snprintf(path, sizeof path, "%s/y.npy", dir);
    if (smelt_npy_save(ctx, path, y_eager) != SMELT_OK)
        goto done;
    rc = d_opt <= 1e-5 && d_plan <= 1e-5 && d_onnx <= 1e-5 ? 0 : 1;
    if (rc)
        fprintf(stderr, "trace_mlp: results disagree\n");

done:
    if (smelt_ctx_status(ctx) != SMELT_OK && rc)
        fprintf(stderr, "trace_mlp: %s\n", smelt_ctx_error(ctx));
    smelt_string_free(table);
    smelt_opt_report_free(report);
    smelt_graph_free(g);
    smelt_graph_free(opt);
    smelt_graph_free(back);
    smelt_plan_free(plan);
    smelt_tensor_t *all[] = {m.w1, m.b1,    m.w2,  m.b2,   x,     x2,
                             y,    y_eager, y_opt, y_onnx, y_plan};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        smelt_tensor_free(all[i]);
    return rc;
}

int main(int argc, char **argv)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx)
        return 1;
    int rc = run(ctx, argc > 1 ? argv[1] : ".");
    smelt_ctx_free(ctx);
    return rc;
}
