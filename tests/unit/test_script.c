/*
 * test_script.c - the script frontend: the examples of tests/script/
 * compiled, checked for their If/Loop structure and run with the reference
 * interpreter against values computed by hand; every malformed script's
 * diagnostic (its expected "line:col: error: ..." is the file's first-line
 * comment); the API's own errors; every prefix of every example (compiles
 * or fails cleanly); an allocation-failure walk over one compile.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ir/ir.h"

/* ---- helpers ------------------------------------------------------------ */

static smelt_graph_t *compile(smelt_ctx_t *ctx, const char *rel, const char *fn)
{
    smelt_graph_t *g = NULL;
    smelt_status st = smelt_script_load(ctx, tu_path(rel), fn, &g);
    if (st != SMELT_OK)
        fail_msg("%s: %s", rel, smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
    return g;
}

static smelt_graph_t *compile_text(smelt_ctx_t *ctx, const char *text,
                                   const char *fn)
{
    smelt_graph_t *g = NULL;
    smelt_status st =
        smelt_script_compile(ctx, text, strlen(text), "inline.py", fn, &g);
    if (st != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    return g;
}

static smelt_tensor_t *tensor(smelt_dtype dt, int ndim, const int64_t *dims,
                              const double *v)
{
    smelt_tensor_t *t;
    assert_int_equal(smelt_tensor_init(NULL, dt, ndim, dims, &t), SMELT_OK);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++)
        sm_store_f64(dt, t->data, i, v[i]);
    return t;
}

static smelt_tensor_t *scalar(smelt_dtype dt, double v)
{
    return tensor(dt, 0, NULL, &v);
}

/* Runs g on n_in inputs (freed here) into out[]. */
static void run(smelt_ctx_t *ctx, const smelt_graph_t *g, smelt_tensor_t **in,
                int n_in, smelt_tensor_t **out, int n_out)
{
    smelt_status st = smelt_graph_run_reference(ctx, g, in, n_in, out, n_out);
    if (st != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
}

static void expect(const smelt_tensor_t *t, int ndim, const int64_t *dims,
                   const double *want, double tol)
{
    assert_int_equal(smelt_tensor_ndim(t), ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(smelt_tensor_dim(t, i), dims[i]);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++) {
        double got = smelt_tensor_get_f64(t, i);
        if (!(fabs(got - want[i]) <= tol * (1 + fabs(want[i]))))
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, got,
                     want[i]);
    }
}

static void expect_scalar(const smelt_tensor_t *t, double want)
{
    expect(t, 0, NULL, &want, 1e-6);
}

static void free_all(smelt_tensor_t **t, int n)
{
    for (int i = 0; i < n; i++)
        smelt_tensor_free(t[i]);
}

/* Nodes of op `op` in block b and the blocks below it. */
static int count_op(const sm_block *b, sm_op op)
{
    int n = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        n += b->nodes[i]->op == op;
        for (int j = 0; j < b->nodes[i]->n_blocks; j++)
            n += count_op(b->nodes[i]->blocks[j], op);
    }
    return n;
}

/* ---- the seed's examples ------------------------------------------------ */

static void test_foo(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/foo.py", "foo");
    assert_int_equal(smelt_graph_num_inputs(g), 2);
    assert_string_equal(smelt_graph_input_name(g, 0), "x");
    assert_string_equal(smelt_graph_output_name(g, 0), "out");
    int64_t d = 3;
    double x[] = {1, 2, 3}, y[] = {4, 5, -6}, want[] = {6, 12, -16};
    smelt_tensor_t *in[2] = {tensor(SMELT_DTYPE_F32, 1, &d, x),
                             tensor(SMELT_DTYPE_F32, 1, &d, y)};
    smelt_tensor_t *out[1];
    run(ctx, g, in, 2, out, 1);
    expect(out[0], 1, &d, want, 0);
    free_all(out, 1);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_constant_model(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/constant_model.py", NULL);
    /* as captured: ones()/zeros() are constants, * 0.5 and + 1.0 nodes */
    assert_int_equal(count_op(g->top, SM_OP_Mul), 1);
    assert_int_equal(count_op(g->top, SM_OP_MatMul), 1);
    assert_int_equal(g->top->ret[0]->type.ndim, 2);
    assert_string_equal(g->top->ret[0]->type.dims[0].sym, "batch");
    assert_int_equal(g->top->ret[0]->type.dims[1].size, 256);
    int64_t dims[2] = {2, 256};
    double *x = calloc(512, sizeof *x), *want = calloc(512, sizeof *want);
    for (int i = 0; i < 512; i++)
        x[i] = (i % 7) - 3 + (i >= 256 ? 0.5 : 0);
    for (int r = 0; r < 2; r++) {
        double s = 0;
        for (int k = 0; k < 256; k++)
            s += x[r * 256 + k];
        for (int j = 0; j < 256; j++)
            want[r * 256 + j] = 0.5 * s + 1.0;
    }
    smelt_tensor_t *in[1] = {tensor(SMELT_DTYPE_F32, 2, dims, x)};
    smelt_tensor_t *out[1];
    run(ctx, g, in, 1, out, 1);
    expect(out[0], 2, dims, want, 1e-5);
    free_all(out, 1);
    /* at -O1 weight and bias fold to constants */
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 1;
    assert_int_equal(smelt_graph_optimize(ctx, g, &o, NULL), SMELT_OK);
    assert_int_equal(count_op(g->top, SM_OP_Mul), 0);
    assert_int_equal(g->top->n_nodes, 2); /* MatMul, Add */
    for (int i = 0; i < g->top->n_nodes; i++)
        assert_non_null(g->top->nodes[i]->in[1]->data);
    in[0] = tensor(SMELT_DTYPE_F32, 2, dims, x);
    run(ctx, g, in, 1, out, 1);
    expect(out[0], 2, dims, want, 1e-5);
    free_all(out, 1);
    free(x);
    free(want);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_loop(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/loop.py", "scale");
    assert_int_equal(count_op(g->top, SM_OP_Loop), 1); /* n at run time */
    int64_t d = 2;
    double x[] = {1, -2};
    for (int n = 0; n < 4; n++) {
        double f = pow(1.01f, n), want[] = {f, -2 * f};
        smelt_tensor_t *in[2] = {tensor(SMELT_DTYPE_F32, 1, &d, x),
                                 scalar(SMELT_DTYPE_I64, n)};
        smelt_tensor_t *out[1];
        run(ctx, g, in, 2, out, 1);
        expect(out[0], 1, &d, want, 1e-6);
        free_all(out, 1);
    }
    smelt_graph_free(g);
    g = compile(ctx, "script/loop.py", "scale3");
    assert_int_equal(count_op(g->top, SM_OP_Loop), 0); /* unrolled */
    assert_int_equal(count_op(g->top, SM_OP_Mul), 3);
    double f = pow(1.01f, 3), want[] = {f, -2 * f};
    smelt_tensor_t *in[1] = {tensor(SMELT_DTYPE_F32, 1, &d, x)}, *out[1];
    run(ctx, g, in, 1, out, 1);
    expect(out[0], 1, &d, want, 1e-6);
    free_all(out, 1);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* range(n) unrolls up to the threshold and stays a Loop above it. */
static void test_unroll_threshold(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    char text[256];
    for (int n = 15; n <= 18; n++) {
        snprintf(text, sizeof text,
                 "def f(x: Tensor[f32, ()]):\n"
                 "    for i in range(1, %d, 1):\n"
                 "        x = x + i\n"
                 "    return x\n",
                 n + 1);
        smelt_graph_t *g = compile_text(ctx, text, "f");
        assert_int_equal(count_op(g->top, SM_OP_Loop), n > 16);
        smelt_tensor_t *in[1] = {scalar(SMELT_DTYPE_F32, 0.5)}, *out[1];
        run(ctx, g, in, 1, out, 1);
        expect_scalar(out[0], 0.5 + n * (n + 1) / 2);
        free_all(out, 1);
        smelt_graph_free(g);
    }
    smelt_ctx_free(ctx);
}

/* ---- control flow ---------------------------------------------------------
 */

static void test_branches(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/branches.py", "sign");
    assert_int_equal(count_op(g->top, SM_OP_If), 2); /* if + elif */
    double xs[] = {3, -0.5, 0}, want[] = {1, -1, 0};
    for (int i = 0; i < 3; i++) {
        smelt_tensor_t *in[1] = {scalar(SMELT_DTYPE_F32, xs[i])}, *out[1];
        run(ctx, g, in, 1, out, 1);
        expect_scalar(out[0], want[i]);
        free_all(out, 1);
    }
    smelt_graph_free(g);

    /* MODE == 2 is a constant: only one If, for the run-time `big` */
    g = compile(ctx, "script/branches.py", "clip_or_scale");
    assert_int_equal(count_op(g->top, SM_OP_If), 1);
    int64_t d = 3;
    double x[] = {-1, 0.5, 4};
    double w_big[] = {0, 1, 2}, w_small[] = {-2, 1, 8};
    for (int big = 0; big < 2; big++) {
        smelt_tensor_t *in[2] = {tensor(SMELT_DTYPE_F32, 1, &d, x),
                                 scalar(SMELT_DTYPE_BOOL, big)},
                       *out[1];
        run(ctx, g, in, 2, out, 1);
        expect(out[0], 1, &d, big ? w_big : w_small, 0);
        free_all(out, 1);
    }
    smelt_graph_free(g);

    g = compile(ctx, "script/branches.py", "count");
    assert_int_equal(g->top->ret[0]->type.dtype, SMELT_DTYPE_I64);
    int64_t ns[] = {3, 11};
    double cw[] = {4, 13};
    for (int i = 0; i < 2; i++) {
        smelt_tensor_t *in[1] = {scalar(SMELT_DTYPE_I64, (double)ns[i])};
        smelt_tensor_t *out[1];
        run(ctx, g, in, 1, out, 1);
        expect_scalar(out[0], cw[i]);
        free_all(out, 1);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_while(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/while_loop.py", "halve_until");
    assert_int_equal(count_op(g->top, SM_OP_Loop), 1);
    const sm_node *loop = g->top->nodes[g->top->n_nodes - 1];
    assert_int_equal(loop->op, SM_OP_Loop);
    assert_null(loop->in[0]); /* no trip count */
    assert_non_null(loop->in[1]);
    smelt_tensor_t *in[2] = {scalar(SMELT_DTYPE_F32, 20),
                             scalar(SMELT_DTYPE_F32, 3)},
                   *out[2];
    run(ctx, g, in, 2, out, 2);
    expect_scalar(out[0], 2.5); /* 20 -> 10 -> 5 -> 2.5 */
    expect_scalar(out[1], 3);
    free_all(out, 2);
    smelt_graph_free(g);

    g = compile(ctx, "script/while_loop.py", "countdown");
    smelt_tensor_t *in1[1] = {scalar(SMELT_DTYPE_I64, 5)};
    run(ctx, g, in1, 1, out, 1);
    expect_scalar(out[0], 15);
    free_all(out, 1);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_helpers(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/helpers.py", NULL);
    assert_string_equal(smelt_graph_name(g), "model");
    assert_int_equal(smelt_graph_num_outputs(g), 3);
    assert_int_equal(count_op(g->top, SM_OP_If), 1); /* safe_div's return */
    assert_int_equal(g->top->params[1]->type.dims[1].size, 4); /* HIDDEN */
    int64_t dx[2] = {2, 3}, dw[2] = {3, 4}, db = 4, dq[2] = {2, 4};
    double x[] = {1, 0, -1, 2, 1, 0};
    double w[] = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, -1};
    double b[] = {0, 0, 0, -1};
    /* h = (x @ w + b) * 2 */
    double h[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            double s = b[j];
            for (int k = 0; k < 3; k++)
                s += x[i * 3 + k] * w[k * 4 + j];
            h[i * 4 + j] = 2 * s;
        }
    for (int zero = 0; zero < 2; zero++) {
        double dv = zero ? 0 : 2, q[8], r[8], pos = 0;
        for (int i = 0; i < 8; i++) {
            q[i] = zero ? 0 : h[i] / dv; /* relu(h) - relu(-h) == h */
            pos += h[i] > 0 ? h[i] : 0;
        }
        for (int i = 0; i < 2; i++) {
            double m = 0, v = 0;
            for (int j = 0; j < 4; j++)
                m += q[i * 4 + j] / 4;
            for (int j = 0; j < 4; j++)
                v += (q[i * 4 + j] - m) * (q[i * 4 + j] - m) / 4;
            for (int j = 0; j < 4; j++)
                r[i * 4 + j] = (q[i * 4 + j] - m) / sqrt(v + 1e-5);
        }
        smelt_tensor_t *in[4] = {tensor(SMELT_DTYPE_F32, 2, dx, x),
                                 tensor(SMELT_DTYPE_F32, 2, dw, w),
                                 tensor(SMELT_DTYPE_F32, 1, &db, b),
                                 scalar(SMELT_DTYPE_F32, dv)},
                       *out[3];
        run(ctx, g, in, 4, out, 3);
        expect(out[0], 2, dq, q, 1e-6);
        expect(out[1], 2, dq, r, 1e-4);
        expect_scalar(out[2], pos);
        free_all(out, 3);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_ops(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/ops.py", "ops");
    int64_t dx[2] = {2, 3};
    double x[] = {1, 2, 3, 4, 5, 6};
    smelt_tensor_t *in[1] = {tensor(SMELT_DTYPE_F32, 2, dx, x)}, *out[6];
    run(ctx, g, in, 1, out, 6);
    double a[6];
    for (int r = 0; r < 2; r++) {
        double s = 0;
        for (int j = 0; j < 3; j++)
            s += exp(x[r * 3 + j]);
        for (int j = 0; j < 3; j++)
            a[r * 3 + j] = exp(x[r * 3 + j]) / s;
    }
    int64_t d32[2] = {3, 2}, d3 = 3, d22[2] = {2, 2};
    double b[] = {1, 4, 2, 5, 3, 6}; /* x.T reshaped to (3, 2) */
    double c[] = {15, 21, 27};       /* 3 * column sums */
    double d[] = {1, 4, 2, 5, 3, 6}; /* stack rows on dim 1 */
    double e[] = {0, 0, 3, 4, 5, 6}; /* where(x > 2, x, 0) */
    double f[] = {12, 23, 15, 26};   /* x[:, 1:3] + [10, 20] */
    expect(out[0], 2, dx, a, 1e-6);
    expect(out[1], 2, d32, b, 0);
    expect(out[2], 1, &d3, c, 0);
    expect(out[3], 2, d32, d, 0);
    expect(out[4], 2, dx, e, 0);
    expect(out[5], 2, d22, f, 1e-6);
    free_all(out, 6);
    smelt_graph_free(g);

    g = compile(ctx, "script/ops.py", "shapes");
    int64_t d34[2] = {3, 4}, d32b[2] = {3, 2};
    double y[12], want[6];
    for (int i = 0; i < 12; i++)
        y[i] = i;
    for (int i = 0; i < 6; i++)
        want[i] = y[2 * i] + y[2 * i + 1] + 4;
    in[0] = tensor(SMELT_DTYPE_F32, 2, d34, y);
    run(ctx, g, in, 1, out, 2);
    expect(out[0], 2, d32b, want, 0);
    expect_scalar(out[1], 3); /* x.shape[0] at run time */
    free_all(out, 2);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Slices with negative steps and bounds, negative indices. */
static void test_slicing(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile_text(ctx,
                                    "def f(x: Tensor[f32, 5]):\n"
                                    "    return x[::-1], x[-1], x[1:-1:2], "
                                    "x[-2:], x[:2]\n",
                                    "f");
    int64_t d5 = 5, d2 = 2;
    double x[] = {1, 2, 3, 4, 5}, rev[] = {5, 4, 3, 2, 1}, odd[] = {2, 4};
    double tail[] = {4, 5}, head[] = {1, 2};
    smelt_tensor_t *in[1] = {tensor(SMELT_DTYPE_F32, 1, &d5, x)}, *out[5];
    run(ctx, g, in, 1, out, 5);
    expect(out[0], 1, &d5, rev, 0);
    expect_scalar(out[1], 5);
    expect(out[2], 1, &d2, odd, 0);
    expect(out[3], 1, &d2, tail, 0);
    expect(out[4], 1, &d2, head, 0);
    free_all(out, 5);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Lists and scalars as op inputs take the tensor operands' dtype. */
static void test_op_inputs(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile_text(
        ctx,
        "def f(x: Tensor[f32, 2, 2]):\n"
        "    return add(x, [1, 2]), matmul(x, [[0, 1], [1, 0]]), "
        "where(x > 2.0, 1.0, 0.0), gather(x, 1, axis=1), pow(x, 2)\n",
        "f");
    int64_t d[2] = {2, 2}, d2 = 2;
    double x[] = {1, 2, 3, 4}, a[] = {2, 4, 4, 6}, m[] = {2, 1, 4, 3};
    double w[] = {0, 0, 1, 1}, gt[] = {2, 4}, p[] = {1, 4, 9, 16};
    smelt_tensor_t *in[1] = {tensor(SMELT_DTYPE_F32, 2, d, x)}, *out[5];
    run(ctx, g, in, 1, out, 5);
    expect(out[0], 2, d, a, 0);
    expect(out[1], 2, d, m, 0);
    expect(out[2], 2, d, w, 0);
    assert_int_equal(smelt_tensor_dtype(out[2]), SMELT_DTYPE_F32);
    expect(out[3], 1, &d2, gt, 0);
    expect(out[4], 2, d, p, 0);
    free_all(out, 5);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_grow_and_mlp(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/grow.py", NULL);
    int64_t one = 1, four = 4;
    double x = 2, want[] = {2, 2, 4, 6};
    smelt_tensor_t *in[2] = {tensor(SMELT_DTYPE_F32, 1, &one, &x),
                             scalar(SMELT_DTYPE_I64, 3)},
                   *out[1];
    run(ctx, g, in, 2, out, 1);
    expect(out[0], 1, &four, want, 0);
    free_all(out, 1);
    smelt_graph_free(g);

    g = compile(ctx, "script/mlp.py", NULL);
    assert_int_equal(count_op(g->top, SM_OP_Loop), 1);
    int64_t dx[2] = {1, 4}, dwi[2] = {4, 8}, dw[2] = {8, 8}, dout[2] = {1, 8};
    double xv[4] = {0.5, -1, 0.25, 2}, wi[32], w[64], hv[8], o[8];
    for (int i = 0; i < 32; i++)
        wi[i] = ((i * 7) % 5 - 2) * 0.1;
    for (int i = 0; i < 64; i++)
        w[i] = ((i * 3) % 7 - 3) * 0.05;
    for (int j = 0; j < 8; j++) {
        double s = 0;
        for (int k = 0; k < 4; k++)
            s += xv[k] * wi[k * 8 + j];
        hv[j] = tanh(s);
    }
    for (int it = 0; it < 2; it++) {
        double nh[8];
        for (int j = 0; j < 8; j++) {
            double s = 0;
            for (int k = 0; k < 8; k++)
                s += hv[k] * w[k * 8 + j];
            nh[j] = hv[j] + (s > 0 ? s : 0) * 0.5;
        }
        memcpy(hv, nh, sizeof hv);
    }
    double sum = 0;
    for (int j = 0; j < 8; j++)
        sum += exp(hv[j]);
    for (int j = 0; j < 8; j++)
        o[j] = exp(hv[j]) / sum;
    smelt_tensor_t *in4[4] = {
        tensor(SMELT_DTYPE_F32, 2, dx, xv), tensor(SMELT_DTYPE_F32, 2, dwi, wi),
        tensor(SMELT_DTYPE_F32, 2, dw, w), scalar(SMELT_DTYPE_I64, 2)};
    run(ctx, g, in4, 4, out, 1);
    expect(out[0], 2, dout, o, 1e-5);
    free_all(out, 1);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_statements(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/statements.py", NULL);
    assert_int_equal(count_op(g->top, SM_OP_Loop), 1);
    assert_int_equal(count_op(g->top, SM_OP_If), 1);
    assert_int_equal(count_op(g->top, SM_OP_Split), 1);
    int64_t d = 4;
    double x[] = {1, 2, 3, 4};
    static const struct {
        int n;
        double y[4];
        double b;
    } cases[] = {{7, {-0.5, 1, 3, 5}, 8},
                 {4, {7, 9, 3.5, 5}, 50},
                 {0, {3, 5, -0.5, 1}, 10},
                 {-3, {3, 5, -0.5, 1}, -20}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        smelt_tensor_t *in[2] = {tensor(SMELT_DTYPE_F32, 1, &d, x),
                                 scalar(SMELT_DTYPE_I64, cases[i].n)},
                       *out[2];
        run(ctx, g, in, 2, out, 2);
        expect(out[0], 1, &d, cases[i].y, 0);
        expect_scalar(out[1], cases[i].b);
        free_all(out, 2);
    }
    smelt_graph_free(g);

    /* a negative step with a run-time start */
    g = compile_text(ctx,
                     "def f(n: int):\n"
                     "    s = 0\n"
                     "    for i in range(n, 0, -2):\n"
                     "        s = s + i\n"
                     "    return s\n",
                     "f");
    int ns[] = {5, 6, 0, -4};
    double sums[] = {9, 12, 0, 0};
    for (int i = 0; i < 4; i++) {
        smelt_tensor_t *in[1] = {scalar(SMELT_DTYPE_I64, ns[i])}, *out[1];
        run(ctx, g, in, 1, out, 1);
        expect_scalar(out[0], sums[i]);
        free_all(out, 1);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_builtins(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile(ctx, "script/builtins.py", NULL);
    int64_t dx[2] = {2, 3}, d3 = 3, d2 = 2, d32[2] = {3, 2};
    double x[] = {1, 2, 3, 4, 5, 6}, y[] = {1, 2, 3};
    smelt_tensor_t *in[2] = {tensor(SMELT_DTYPE_F32, 2, dx, x),
                             tensor(SMELT_DTYPE_I64, 1, &d3, y)},
                   *out[9];
    run(ctx, g, in, 2, out, 9);
    double t[] = {1, 4, 2, 5, 3, 6}, m[] = {3, 6};
    double e[] = {1, 2, 2.5, 2.5, 2.5, 2.5}, am[] = {2, 2};
    double c[] = {2, 2, 3, 4, 5, 6}, f[] = {0.5, 1, 1.5}, s[] = {1, 1, 1};
    expect(out[0], 2, d32, t, 0);
    expect(out[1], 1, &d2, m, 0);
    expect(out[2], 2, dx, e, 0);
    expect(out[3], 1, &d2, am, 0);
    assert_int_equal(smelt_tensor_dtype(out[3]), SMELT_DTYPE_I64);
    expect(out[4], 2, dx, c, 0);
    expect(out[5], 2, d32, t, 0);
    expect(out[6], 1, &d3, f, 0);
    expect_scalar(out[7], 6 + 2 + 3);
    expect(out[8], 1, &d3, s, 1e-6);
    free_all(out, 9);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Python constants fold; ternaries on constants pick a side. */
static void test_constant_folding(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g =
        compile_text(ctx,
                     "K = 2 ** 10 // 3 % 7\n"
                     "def f(x: Tensor):\n"
                     "    n = (K if K > 3 else -1) + len([1, 2, 3])\n"
                     "    y = x * n\n"
                     "    return y, 7 // -2, -7 % 3, 2.0 ** -1\n",
                     "f");
    /* K = 341 % 7 = 5, n = 8; folded outputs need no node */
    assert_int_equal(g->top->n_nodes, 1);
    int64_t d = 1;
    double x = 1.5;
    smelt_tensor_t *in[1] = {tensor(SMELT_DTYPE_F32, 1, &d, &x)}, *out[4];
    run(ctx, g, in, 1, out, 4);
    double want = 12;
    expect(out[0], 1, &d, &want, 0);
    expect_scalar(out[1], -4);
    expect_scalar(out[2], 2);
    expect_scalar(out[3], 0.5);
    assert_int_equal(smelt_tensor_dtype(out[1]), SMELT_DTYPE_I64);
    assert_int_equal(smelt_tensor_dtype(out[3]), SMELT_DTYPE_F32);
    free_all(out, 4);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Run-time ints: a // b floors like Python; int tensors keep i64. */
static void test_runtime_scalars(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = compile_text(ctx,
                                    "def f(a: int, b: int, s: float):\n"
                                    "    return a // b, a % b, a / b, a * s, "
                                    "a < b and s > 0.0\n",
                                    "f");
    smelt_tensor_t *in[3] = {scalar(SMELT_DTYPE_I64, -7),
                             scalar(SMELT_DTYPE_I64, 2),
                             scalar(SMELT_DTYPE_F32, 0.5)},
                   *out[5];
    run(ctx, g, in, 3, out, 5);
    expect_scalar(out[0], -4);
    expect_scalar(out[1], 1);
    expect_scalar(out[2], -3.5);
    expect_scalar(out[3], -3.5);
    expect_scalar(out[4], 1);
    assert_int_equal(smelt_tensor_dtype(out[0]), SMELT_DTYPE_I64);
    assert_int_equal(smelt_tensor_dtype(out[2]), SMELT_DTYPE_F32);
    assert_int_equal(smelt_tensor_dtype(out[4]), SMELT_DTYPE_BOOL);
    free_all(out, 5);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- diagnostics ----------------------------------------------------------
 */

/* Compiles tests/script/<name> and checks its diagnostic against the
 * first-line comment "# expect: LINE:COL: error: text". */
static void check_bad(smelt_ctx_t *ctx, const char *name)
{
    char rel[300];
    snprintf(rel, sizeof rel, "script/%s", name);
    const char *path = tu_path(rel);
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    const char *tag = "# expect: ";
    if (strncmp(text, tag, strlen(tag)))
        fail_msg("%s: no '# expect:' first line", name);
    char want[512];
    size_t k = 0;
    for (const char *p = text + strlen(tag); *p && *p != '\n' && k < 511; p++)
        want[k++] = *p;
    want[k] = 0;
    smelt_graph_t *g = NULL;
    smelt_status st = smelt_script_compile(ctx, text, len, name, NULL, &g);
    const char *msg = smelt_ctx_error(ctx);
    if (st == SMELT_OK || g)
        fail_msg("%s compiled but should fail with %s", name, want);
    assert_int_equal(smelt_ctx_status(ctx), st);
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s:%s", name, want);
    if (strncmp(msg, prefix, strlen(prefix)))
        fail_msg("%s:\nwant: %s\ngot:  %s", name, prefix, msg);
    /* the source line, a caret line, and (for unsupported constructs) a
     * hint naming the alternative */
    const char *nl1 = strchr(msg, '\n');
    assert_non_null(nl1);
    const char *nl2 = strchr(nl1 + 1, '\n');
    assert_non_null(nl2);
    const char *caret = nl2 + 1;
    while (*caret == ' ' || *caret == '\t')
        caret++;
    assert_int_equal(*caret, '^');
    int col = atoi(strchr(want, ':') + 1);
    assert_int_equal(caret - (nl2 + 1), col - 1);
    if (st == SMELT_ERR_UNSUPPORTED || st == SMELT_ERR_TYPE ||
        st == SMELT_ERR_NOT_FOUND)
        assert_non_null(strstr(msg, "\nhint: "));
    free(text);
}

static void test_diagnostics(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    DIR *dir = opendir(tu_path("script"));
    assert_non_null(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (!strncmp(e->d_name, "bad_", 4)) {
            check_bad(ctx, e->d_name);
            n++;
        }
    closedir(dir);
    assert_true(n >= 30);
    smelt_ctx_free(ctx);
}

/* The constructs the issue names, each with its status and hint. */
static void test_unsupported_constructs(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        smelt_status st;
        const char *hint;
    } cases[] = {
        {"bad_lambda.py", SMELT_ERR_UNSUPPORTED, "define a helper function"},
        {"bad_try.py", SMELT_ERR_UNSUPPORTED, "test conditions with if"},
        {"bad_comprehension.py", SMELT_ERR_UNSUPPORTED, "for loop over range"},
        {"bad_generator.py", SMELT_ERR_UNSUPPORTED, "for loop over range"},
        {"bad_class.py", SMELT_ERR_UNSUPPORTED, "write the model as functions"},
        {"bad_attr.py", SMELT_ERR_UNSUPPORTED, "call methods"},
        {"bad_types.py", SMELT_ERR_TYPE, "annotated type"},
        {"bad_operands.py", SMELT_ERR_TYPE, "operators take"},
        {"bad_undefined.py", SMELT_ERR_NOT_FOUND, "make it a parameter"},
        {"bad_branch_type.py", SMELT_ERR_TYPE, "same type on both"},
    };
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char rel[128];
        smelt_graph_t *g = NULL;
        snprintf(rel, sizeof rel, "script/%s", cases[i].file);
        assert_int_equal(smelt_script_load(ctx, tu_path(rel), NULL, &g),
                         cases[i].st);
        assert_null(g);
        const char *hint = strstr(smelt_ctx_error(ctx), "\nhint: ");
        if (!hint || !strstr(hint, cases[i].hint))
            fail_msg("%s: no hint '%s' in:\n%s", cases[i].file, cases[i].hint,
                     smelt_ctx_error(ctx));
    }
    smelt_ctx_free(ctx);
}

static void test_api_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_script_compile(ctx, NULL, 4, "x.py", NULL, &g),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_script_compile(ctx, "", 0, "x.py", NULL, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_script_compile(ctx, "", 0, "x.py", NULL, &g),
                     SMELT_ERR_NOT_FOUND);
    assert_non_null(strstr(smelt_ctx_error(ctx), "defines no function"));
    assert_int_equal(
        smelt_script_load(ctx, tu_path("script/foo.py"), "bar", &g),
        SMELT_ERR_NOT_FOUND);
    assert_non_null(strstr(smelt_ctx_error(ctx), "no function 'bar'"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "defines: foo"));
    assert_int_equal(smelt_script_load(ctx, "/nonexistent/x.py", NULL, &g),
                     SMELT_ERR_IO);
    assert_null(g);
    /* a NULL context still gives statuses */
    const char *ok = "def f(x):\n    return x + 1\n";
    assert_int_equal(smelt_script_compile(NULL, ok, strlen(ok), NULL, NULL, &g),
                     SMELT_OK);
    smelt_graph_free(g);
    g = NULL;
    assert_int_equal(
        smelt_script_compile(NULL, "def f(x:\n", 9, NULL, NULL, &g),
        SMELT_ERR_PARSE);
    assert_int_equal(smelt_script_compile(NULL, "def f(x):\n    return y\n", 23,
                                          NULL, NULL, &g),
                     SMELT_ERR_NOT_FOUND);
    assert_null(g);
    /* NUL bytes and invalid UTF-8 are errors, not crashes */
    const char nul[] = "def f(x):\n    return x\0\n";
    assert_int_equal(
        smelt_script_compile(ctx, nul, sizeof nul - 1, "n.py", NULL, &g),
        SMELT_ERR_PARSE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "n.py:2:13: error: NUL"));
    const char bad[] = "def f(x):\n    # \xff\n    return x\n";
    assert_int_equal(
        smelt_script_compile(ctx, bad, sizeof bad - 1, "u.py", NULL, &g),
        SMELT_ERR_PARSE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "u.py:2:7: error: invalid"));
    smelt_ctx_free(ctx);
}

/* ---- robustness -----------------------------------------------------------
 */

static const char *const examples[] = {
    "script/foo.py",        "script/constant_model.py", "script/loop.py",
    "script/branches.py",   "script/while_loop.py",     "script/helpers.py",
    "script/ops.py",        "script/grow.py",           "script/mlp.py",
    "script/statements.py", "script/builtins.py"};

/* Every prefix of every example compiles or fails with a message. */
static void test_truncation(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t e = 0; e < sizeof examples / sizeof *examples; e++) {
        size_t len;
        char *text = tu_read_file(tu_path(examples[e]), &len);
        assert_non_null(text);
        for (size_t n = 0; n <= len; n++) {
            char *copy = malloc(n + 1); /* exactly n bytes for ASan */
            memcpy(copy, text, n);
            smelt_graph_t *g = NULL;
            smelt_status st =
                smelt_script_compile(ctx, copy, n, "t.py", NULL, &g);
            if (st == SMELT_OK) {
                assert_non_null(g);
                assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
            } else {
                assert_null(g);
                assert_true(smelt_ctx_error(ctx)[0] != 0);
            }
            smelt_graph_free(g);
            free(copy);
        }
        free(text);
    }
    smelt_ctx_free(ctx);
}

/* Each allocation of a compile fails in turn: NOMEM, nothing leaked. */
static void alloc_walk(smelt_ctx_t *ctx, const char *rel)
{
    size_t len;
    char *text = tu_read_file(tu_path(rel), &len);
    assert_non_null(text);
    int ok = 0;
    long k;
    for (k = 0; k < 100000 && !ok; k++) {
        smelt_graph_t *g = NULL;
        sm_alloc_fail_after(k);
        smelt_status st =
            smelt_script_compile(ctx, text, len, "h.py", NULL, &g);
        sm_alloc_fail_after(-1);
        if (st == SMELT_OK) {
            ok = 1;
            assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
        } else {
            if (st != SMELT_ERR_NOMEM)
                fail_msg("%s: allocation %ld failed with %s: %s", rel, k,
                         smelt_status_name(st), smelt_ctx_error(ctx));
            assert_null(g);
        }
        smelt_graph_free(g);
    }
    assert_true(ok);
    assert_true(k > 20); /* the walk went through many allocations */
    free(text);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    alloc_walk(ctx, "script/helpers.py");    /* inlining, an If from returns */
    alloc_walk(ctx, "script/statements.py"); /* Loop, If, Split, imports */
    smelt_ctx_free(ctx);
}

/* Hostile inputs hit limits, not the stack. */
static void test_limits(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    size_t n = 200000;
    char *text = malloc(n + 64);
    smelt_graph_t *g = NULL;
    /* a very long chain of + */
    int k = sprintf(text, "def f(x):\n    return x");
    while ((size_t)k < n)
        k += sprintf(text + k, " + x");
    k += sprintf(text + k, "\n");
    assert_int_equal(
        smelt_script_compile(ctx, text, (size_t)k, "l.py", NULL, &g),
        SMELT_ERR_PARSE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "nested too deeply"));
    /* unary minus repeated */
    k = sprintf(text, "def f(x):\n    return ");
    while ((size_t)k < n)
        text[k++] = '-';
    k += sprintf(text + k, "x\n");
    assert_int_equal(
        smelt_script_compile(ctx, text, (size_t)k, "l.py", NULL, &g),
        SMELT_ERR_PARSE);
    /* nested brackets */
    k = sprintf(text, "def f(x):\n    return ");
    for (int i = 0; i < 10000; i++)
        text[k++] = '(';
    assert_int_equal(
        smelt_script_compile(ctx, text, (size_t)k, "l.py", NULL, &g),
        SMELT_ERR_PARSE);
    /* exponential inlining */
    k = sprintf(text, "def h0(x):\n    return x\n");
    for (int i = 1; i < 40; i++)
        k += sprintf(text + k, "def h%d(x):\n    return h%d(h%d(x))\n", i,
                     i - 1, i - 1);
    k += sprintf(text + k, "def f(x):\n    return h39(x)\n");
    assert_int_equal(
        smelt_script_compile(ctx, text, (size_t)k, "l.py", "f", &g),
        SMELT_ERR_LIMIT);
    /* nested unrolled loops */
    k = sprintf(text, "def f(x):\n");
    for (int i = 0; i < 8; i++)
        k +=
            sprintf(text + k, "%*sfor i%d in range(16):\n", 4 * (i + 1), "", i);
    k += sprintf(text + k, "%*sx = x + 1\n    return x\n", 36, "");
    assert_int_equal(
        smelt_script_compile(ctx, text, (size_t)k, "l.py", "f", &g),
        SMELT_ERR_LIMIT);
    assert_null(g);
    free(text);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foo),
        cmocka_unit_test(test_constant_model),
        cmocka_unit_test(test_loop),
        cmocka_unit_test(test_unroll_threshold),
        cmocka_unit_test(test_branches),
        cmocka_unit_test(test_while),
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_slicing),
        cmocka_unit_test(test_op_inputs),
        cmocka_unit_test(test_grow_and_mlp),
        cmocka_unit_test(test_statements),
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_constant_folding),
        cmocka_unit_test(test_runtime_scalars),
        cmocka_unit_test(test_diagnostics),
        cmocka_unit_test(test_unsupported_constructs),
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
