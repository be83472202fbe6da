/*
 * test_qat.c - smelt_graph_quantize_qat and smelt_graph_quantize_convert
 * (src/passes/qat.c, qat_convert.c): the pairs inserted on an MLP
 * (MatMul, Gemm with transB and bias, two layers reading one activation)
 * and a CNN, per tensor and per channel, the observers' ranges, the
 * exclusions; the QAT graph differentiated (its log-scales get
 * gradients); the conversion exact and folding every weight; refusals of
 * bad arguments and scales; every allocation failure walked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/tensor.h"
#include "ir/ir.h"

static const char *mlp =
    "graph q(%x: f32[batch,3]) {\n"
    "  %w: f32[3,4] = const [0.5, -1, 0.25, 2, 1.5, 0.75, -0.5, -2, 0.1, "
    "0.2, 0.3, -0.4]\n"
    "  %v: f32[2,4] = const [1, -1, 0.5, 0.25, -0.75, 2, 1, 0.5]\n"
    "  %c: f32[2] = const [0.1, -0.2]\n"
    "  %u: f32[3,2] = const [0.3, -0.6, 0.9, 0.05, -0.2, 0.7]\n"
    "  %h = MatMul(%x, %w) @fc1\n"
    "  %r = Relu(%h) @relu\n"
    "  %y = Gemm(%r, %v, %c) {transB = 1} @fc2\n"
    "  %z = MatMul(%x, %u) @fc3\n"
    "  return %y, %z\n"
    "}\n";

static const char *cnn =
    "graph c(%x: f32[2,2,5,5]) {\n"
    "  %w: f32[3,2,3,3] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, "
    "-0.8, 0.9, 1, -1.1, 1.2, 0.13, 0.14, -0.15, 0.16, 0.17, -0.18, 0.19, "
    "0.2, -0.21, 0.22, 0.23, -0.24, 0.25, 0.26, -0.27, 0.28, -0.29, 0.3, "
    "0.31, -0.32, 0.33, 0.34, -0.35, 0.36, 0.37, -0.38, 0.39, 0.4, -0.41, "
    "0.42, 0.43, -0.44, 0.45, 0.46, -0.47, 0.48, 0.49, -0.5, 0.51, 0.52, "
    "-0.53, 0.54]\n"
    "  %b: f32[3] = const [0.1, 0, -0.1]\n"
    "  %y = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} @conv\n"
    "  return %y\n"
    "}\n";

static int count_op(smelt_graph_t *g, sm_op op)
{
    int n = 0;
    for (int i = 0; i < g->top->n_nodes; i++)
        n += g->top->nodes[i]->op == op;
    return n;
}

/* The constant of g named name (NULL when none). */
static sm_value *konst(smelt_graph_t *g, const char *name)
{
    for (int i = 0; i < g->top->n_consts; i++)
        if (!strcmp(g->top->consts[i]->name, name))
            return g->top->consts[i];
    return NULL;
}

/* An f32 tensor of dims with values v(i) = amp sin(0.7 i + 0.2) + off. */
static smelt_tensor_t *data(int nd, const int64_t *dims, double amp, double off)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, nd, dims, &t),
                     SMELT_OK);
    float *p = smelt_tensor_data(t);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++)
        p[i] = (float)(amp * sin(0.7 * (double)i + 0.2) + off);
    smelt_ctx_free(ctx);
    return t;
}

/* The n outputs of g on x (the caller frees them). */
static void run(smelt_graph_t *g, smelt_tensor_t *x, smelt_tensor_t **y, int n)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (smelt_graph_run_reference(ctx, g, &x, 1, y, n) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
}

/* The QAT form of text (o may be NULL) calibrated on x. */
static smelt_graph_t *qat_of(const char *text, const smelt_qat_options *o,
                             smelt_tensor_t *x, char **layers)
{
    smelt_graph_t *g = tu_parse(NULL, text);
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (smelt_graph_quantize_qat(ctx, g, o, &x, 1, layers) != SMELT_OK)
        fail_msg("qat: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return g;
}

/* max |a - b| over two tensors of one shape, relative to max |b|. */
static double rel_diff(smelt_tensor_t *a, smelt_tensor_t *b)
{
    assert_int_equal(smelt_tensor_numel(a), smelt_tensor_numel(b));
    double d = 0, m = 0;
    for (int64_t i = 0; i < smelt_tensor_numel(a); i++) {
        double u = smelt_tensor_get_f64(a, i), v = smelt_tensor_get_f64(b, i);
        d = fmax(d, fabs(u - v));
        m = fmax(m, fabs(v));
    }
    return m > 0 ? d / m : d;
}

static void test_mlp(void **state)
{
    (void)state;
    int64_t dims[2] = {7, 3};
    smelt_tensor_t *x = data(2, dims, 1.5, 0.2);
    for (int per = 0; per < 2; per++) {
        smelt_qat_options o;
        smelt_qat_options_default(&o);
        o.per_channel = per;
        char *layers = NULL;
        smelt_graph_t *f = tu_parse(NULL, mlp),
                      *g = qat_of(mlp, &o, x, &layers);
        assert_string_equal(layers, "fc1,fc2,fc3");
        /* activations x (shared by fc1 and fc3) and r; weights w, v, u */
        assert_int_equal(count_op(g, SM_OP_QuantizeLinear), 5);
        assert_int_equal(count_op(g, SM_OP_DequantizeLinear), 5);
        assert_int_equal(count_op(g, SM_OP_Exp), 5);
        sm_value *ls = konst(g, "w_qat_log_scale");
        assert_non_null(ls);
        assert_int_equal(ls->data->numel, per ? 4 : 1);
        ls = konst(g, "v_qat_log_scale"); /* transB: rows are channels */
        assert_int_equal(ls->data->numel, per ? 2 : 1);
        /* the x scale: (max - min) / 255 of the calibration data */
        float mn = 0, mx = 0;
        const float *xv = smelt_tensor_data(x);
        for (int64_t i = 0; i < smelt_tensor_numel(x); i++) {
            mn = fminf(mn, xv[i]);
            mx = fmaxf(mx, xv[i]);
        }
        double sx = exp(((float *)konst(g, "x_qat_log_scale")->data->data)[0]);
        assert_true(fabs(sx - (mx - mn) / 255.0) < 1e-6 * sx);
        /* within int8's error of the f32 graph */
        smelt_tensor_t *yf[2] = {0}, *yq[2] = {0};
        run(f, x, yf, 2);
        run(g, x, yq, 2);
        for (int i = 0; i < 2; i++) {
            double d = rel_diff(yq[i], yf[i]);
            if (!(d < 0.03))
                fail_msg("output %d: relative difference %g", i, d);
        }
        /* converted: weights s8 constants, outputs exactly the QAT ones */
        smelt_ctx_t *ctx = smelt_ctx_init();
        int nw = -1, na = -1;
        assert_int_equal(smelt_graph_quantize_convert(ctx, g, &nw, &na),
                         SMELT_OK);
        assert_int_equal(nw, 3);
        assert_int_equal(na, 2);
        assert_int_equal(count_op(g, SM_OP_QuantizeLinear), 2);
        assert_int_equal(count_op(g, SM_OP_DequantizeLinear), 5);
        assert_int_equal(count_op(g, SM_OP_Exp), 0);
        assert_null(konst(g, "w"));
        assert_null(konst(g, "w_qat_log_scale"));
        sm_value *wq = konst(g, "w_qweight");
        assert_non_null(wq);
        assert_int_equal(wq->data->dtype, SMELT_DTYPE_I8);
        /* fc2's transB weight [2, 4] is read transposed, per column */
        sm_value *vq = konst(g, "v_qweight_t");
        assert_non_null(vq);
        assert_int_equal(vq->data->dims[0], 4);
        assert_int_equal(vq->data->dims[1], 2);
        for (int i = 0; i < g->top->n_nodes; i++)
            if (g->top->nodes[i]->op == SM_OP_Gemm) {
                sm_attrs at = sm_node_attrs(g->top->nodes[i]);
                assert_int_equal(sm_attrs_int(&at, "transB", 0), 0);
            }
        smelt_tensor_t *y8[2] = {0};
        run(g, x, y8, 2);
        for (int i = 0; i < 2; i++) {
            if (!(rel_diff(y8[i], yq[i]) <= 1e-6))
                fail_msg("converted output %d: relative difference %g", i,
                         rel_diff(y8[i], yq[i]));
            smelt_tensor_free(yf[i]);
            smelt_tensor_free(yq[i]);
            smelt_tensor_free(y8[i]);
        }
        /* converting again finds the folded weights, nothing to do */
        assert_int_equal(smelt_graph_quantize_convert(ctx, g, &nw, &na),
                         SMELT_OK);
        assert_int_equal(nw, 3);
        smelt_ctx_free(ctx);
        smelt_string_free(layers);
        smelt_graph_free(f);
        smelt_graph_free(g);
    }
    smelt_tensor_free(x);
}

static void test_cnn_exclude_percentile(void **state)
{
    (void)state;
    int64_t dims[4] = {2, 2, 5, 5};
    smelt_tensor_t *x = data(4, dims, 2.0, 0.5);
    smelt_qat_options o;
    smelt_qat_options_default(&o);
    /* without conv: nothing to do */
    smelt_graph_t *g = qat_of(cnn, &o, x, NULL);
    assert_int_equal(count_op(g, SM_OP_QuantizeLinear), 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(smelt_graph_quantize_convert(ctx, g, NULL, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "no fake-quantize pair"));
    smelt_graph_free(g);
    o.conv = 1;
    o.per_channel = 1;
    g = qat_of(cnn, &o, x, NULL);
    assert_int_equal(count_op(g, SM_OP_QuantizeLinear), 2);
    assert_int_equal(konst(g, "w_qat_log_scale")->data->numel, 3);
    float lmin = ((float *)konst(g, "x_qat_log_scale")->data->data)[0];
    smelt_graph_free(g);
    o.observer = SMELT_QAT_PERCENTILE;
    o.percentile = 90;
    g = qat_of(cnn, &o, x, NULL);
    float lpct = ((float *)konst(g, "x_qat_log_scale")->data->data)[0];
    assert_true(lpct < lmin - 0.01f);
    smelt_graph_free(g);
    o.observer = SMELT_QAT_MINMAX;
    o.exclude = "conv";
    g = qat_of(cnn, &o, x, NULL);
    assert_int_equal(count_op(g, SM_OP_QuantizeLinear), 0);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    smelt_tensor_free(x);
}

/* The QAT graph differentiates: every log-scale gets a gradient through
 * FakeQuantize, nonzero where it reaches the loss (the first output). */
static void test_grad(void **state)
{
    (void)state;
    int64_t dims[2] = {6, 3};
    smelt_tensor_t *x = data(2, dims, 1.0, 0.1);
    smelt_graph_t *g = qat_of(mlp, NULL, x, NULL);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_grad_options go;
    smelt_grad_options_default(&go);
    smelt_graph_t *j = NULL;
    if (smelt_graph_grad(ctx, g, &go, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    int fq = 0;
    for (int i = 0; i < j->top->n_nodes; i++)
        fq += j->top->nodes[i]->op == SM_OP_FakeQuantize;
    assert_int_equal(fq, 5);
    int n_out = smelt_graph_num_outputs(j);
    smelt_tensor_t **out = calloc((size_t)n_out, sizeof *out);
    assert_int_equal(smelt_graph_run_reference(ctx, j, &x, 1, out, n_out),
                     SMELT_OK);
    int logs = 0;
    for (int k = 0; k < smelt_graph_num_grads(j); k++) {
        const char *nm = smelt_graph_grad_wrt(j, k);
        if (!strstr(nm, "_qat_log_scale"))
            continue;
        logs++;
        smelt_tensor_t *d = out[smelt_graph_grad_output(j, k)];
        double m = 0;
        for (int64_t i = 0; i < smelt_tensor_numel(d); i++)
            m = fmax(m, fabs(smelt_tensor_get_f64(d, i)));
        /* the loss is the first output: fc3's weight u does not reach it */
        int reaches = strncmp(nm, "u_", 2) != 0;
        if (reaches ? !(m > 0) : m != 0)
            fail_msg("d/d%s: max |.| %g", nm, m);
    }
    assert_int_equal(logs, 5);
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    free(out);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    smelt_tensor_free(x);
}

static void test_bad_args(void **state)
{
    (void)state;
    int64_t dims[2] = {4, 3};
    smelt_tensor_t *x = data(2, dims, 1.0, 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_qat_options o;
    smelt_qat_options_default(&o);
    smelt_graph_t *g = tu_parse(NULL, mlp);
    assert_int_equal(smelt_graph_quantize_qat(ctx, NULL, &o, &x, 1, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_graph_quantize_qat(ctx, g, &o, &x, 0, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "calibration inputs"));
    smelt_graph_free(g);
    g = tu_parse(NULL, mlp);
    o.observer = 7;
    assert_int_equal(smelt_graph_quantize_qat(ctx, g, &o, &x, 1, NULL),
                     SMELT_ERR_INVALID_ARG);
    o.observer = SMELT_QAT_PERCENTILE;
    o.percentile = 40;
    assert_int_equal(smelt_graph_quantize_qat(ctx, g, &o, &x, 1, NULL),
                     SMELT_ERR_INVALID_ARG);
    o.percentile = NAN;
    assert_int_equal(smelt_graph_quantize_qat(ctx, g, &o, &x, 1, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_graph_quantize_convert(ctx, NULL, NULL, NULL),
                     SMELT_ERR_INVALID_ARG);
    smelt_graph_free(g);
    /* a NaN or negative log-scale makes a scale --convert refuses */
    const float bad[2] = {NAN, INFINITY};
    for (int b = 0; b < 2; b++) {
        g = qat_of(mlp, NULL, x, NULL);
        ((float *)konst(g, "v_qat_log_scale")->data->data)[0] = bad[b];
        assert_int_equal(smelt_graph_quantize_convert(ctx, g, NULL, NULL),
                         SMELT_ERR_INVALID_ARG);
        const char *e = smelt_ctx_error(ctx);
        assert_non_null(strstr(e, "v_"));
        assert_non_null(strstr(e, "positive and finite"));
        assert_null(strchr(e, '\n'));
        smelt_graph_free(g);
    }
    smelt_ctx_free(ctx);
    smelt_tensor_free(x);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    int64_t dims[2] = {4, 3};
    smelt_tensor_t *x = data(2, dims, 1.0, 0);
    smelt_qat_options o;
    smelt_qat_options_default(&o);
    o.per_channel = 1;
    o.observer = SMELT_QAT_PERCENTILE;
    for (int step = 0; step < 2; step++) {
        int done = 0;
        for (long k = 0; k < 100000 && !done; k++) {
            smelt_graph_t *g =
                step ? qat_of(mlp, &o, x, NULL) : tu_parse(NULL, mlp);
            smelt_ctx_t *ctx = smelt_ctx_init();
            char *layers = NULL;
            sm_alloc_fail_after(k);
            smelt_status st =
                step ? smelt_graph_quantize_convert(ctx, g, NULL, NULL)
                     : smelt_graph_quantize_qat(ctx, g, &o, &x, 1, &layers);
            sm_alloc_fail_after(-1);
            if (st == SMELT_OK)
                done = 1;
            else if (st != SMELT_ERR_NOMEM)
                fail_msg("step %d, k = %ld: status %d: %s", step, k, st,
                         smelt_ctx_error(ctx));
            smelt_string_free(layers);
            smelt_graph_free(g);
            smelt_ctx_free(ctx);
        }
        assert_true(done);
    }
    smelt_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_cnn_exclude_percentile),
        cmocka_unit_test(test_grad),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
