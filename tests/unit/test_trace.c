/*
 * test_trace.c - eager ops and tracing (docs/TRACE.md): eager results
 * against hand values, a traced MLP run on new inputs against eager, a
 * data-dependent branch baked in with its warning, tensors freed during a
 * trace, errors, and an allocation-failure walk over a small trace.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/ir.h"

/* An f32 tensor of the given shape and values (NULL: zeros); NULL when
 * out of memory. */
static smelt_tensor_t *mk(smelt_ctx_t *ctx, int ndim, const int64_t *dims,
                          const float *vals)
{
    smelt_tensor_t *t;
    if (smelt_tensor_init(ctx, SMELT_DTYPE_F32, ndim, dims, &t) != SMELT_OK)
        return NULL;
    if (vals)
        memcpy(t->data, vals, t->nbytes);
    return t;
}

/* t has shape dims and values want (within tol). Reads t->data directly:
 * the public accessors would count as the program reading traced data. */
static void expect_f32(const smelt_tensor_t *t, int ndim, const int64_t *dims,
                       const float *want, double tol)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, SMELT_DTYPE_F32);
    assert_int_equal(t->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(t->dims[i], dims[i]);
    const float *got = t->data;
    for (int64_t i = 0; i < t->numel; i++)
        if (fabs((double)got[i] - (double)want[i]) > tol)
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i,
                     (double)got[i], (double)want[i]);
}

static void expect_same(const smelt_tensor_t *a, const smelt_tensor_t *b,
                        double tol)
{
    expect_f32(a, b->ndim, b->dims, b->data, tol);
}

static const int64_t d23[] = {2, 3};
static const float v23[] = {1, 2, 3, 4, 5, 6};

static void test_eager_values(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *a = mk(ctx, 2, d23, v23), *y, *y2;
    int64_t d3[] = {3};
    smelt_tensor_t *b = mk(ctx, 1, d3, (const float[]){10, 20, 30});

    assert_int_equal(smelt_add(ctx, a, b, &y), SMELT_OK);
    expect_f32(y, 2, d23, (const float[]){11, 22, 33, 14, 25, 36}, 0);
    smelt_tensor_free(y);
    assert_int_equal(smelt_mul(ctx, a, a, &y), SMELT_OK);
    expect_f32(y, 2, d23, (const float[]){1, 4, 9, 16, 25, 36}, 0);
    smelt_tensor_free(y);
    assert_int_equal(smelt_sub(ctx, b, a, &y), SMELT_OK);
    expect_f32(y, 2, d23, (const float[]){9, 18, 27, 6, 15, 24}, 0);
    smelt_tensor_free(y);
    assert_int_equal(smelt_div(ctx, b, a, &y), SMELT_OK);
    expect_f32(y, 2, d23, (const float[]){10, 10, 10, 2.5f, 4, 5}, 1e-6);
    smelt_tensor_free(y);

    int64_t d32[] = {3, 2};
    smelt_tensor_t *m = mk(ctx, 2, d32, v23);
    assert_int_equal(smelt_matmul(ctx, a, m, &y), SMELT_OK);
    expect_f32(y, 2, (const int64_t[]){2, 2}, (const float[]){22, 28, 49, 64},
               0);
    smelt_tensor_free(y);

    smelt_tensor_t *s = mk(ctx, 1, d3, (const float[]){-1, 0, 2});
    assert_int_equal(smelt_relu(ctx, s, &y), SMELT_OK);
    expect_f32(y, 1, d3, (const float[]){0, 0, 2}, 0);
    smelt_tensor_free(y);
    assert_int_equal(smelt_sigmoid(ctx, s, &y), SMELT_OK);
    expect_f32(y, 1, d3, (const float[]){0.268941421f, 0.5f, 0.880797078f},
               1e-6);
    smelt_tensor_free(y);
    assert_int_equal(smelt_gelu(ctx, s, &y), SMELT_OK);
    /* x * Phi(x): Phi(-1) = 0.158655254, Phi(2) = 0.977249868 */
    expect_f32(y, 1, d3, (const float[]){-0.158655254f, 0, 1.954499736f}, 1e-6);
    smelt_tensor_free(y);

    int64_t d12[] = {1, 2};
    smelt_tensor_t *l = mk(ctx, 2, d12, (const float[]){0, logf(3)});
    assert_int_equal(smelt_softmax(ctx, l, 1, &y), SMELT_OK);
    expect_f32(y, 2, d12, (const float[]){0.25f, 0.75f}, 1e-6);
    smelt_tensor_free(y);
    assert_int_equal(smelt_log_softmax(ctx, l, -1, &y), SMELT_OK);
    expect_f32(y, 2, d12, (const float[]){logf(0.25f), logf(0.75f)}, 1e-6);
    smelt_tensor_free(y);

    assert_int_equal(smelt_transpose(ctx, a, NULL, 0, &y), SMELT_OK);
    expect_f32(y, 2, d32, (const float[]){1, 4, 2, 5, 3, 6}, 0);
    assert_int_equal(smelt_transpose(ctx, a, (const int64_t[]){1, 0}, 2, &y2),
                     SMELT_OK);
    expect_same(y2, y, 0);
    smelt_tensor_free(y);
    smelt_tensor_free(y2);
    assert_int_equal(smelt_reshape(ctx, a, (const int64_t[]){3, -1}, 2, &y),
                     SMELT_OK);
    expect_f32(y, 2, d32, v23, 0);
    smelt_tensor_free(y);
    assert_int_equal(smelt_flatten(ctx, a, 0, &y), SMELT_OK);
    expect_f32(y, 2, (const int64_t[]){1, 6}, v23, 0);
    smelt_tensor_free(y);

    /* the generic entry, with attributes of each kind the ops take */
    smelt_attr alpha = {.name = "alpha", .kind = SMELT_ATTR_FLOAT, .f = 0.5};
    assert_int_equal(smelt_op(ctx, "LeakyRelu", &s, 1, &alpha, 1, &y, 1),
                     SMELT_OK);
    expect_f32(y, 1, d3, (const float[]){-0.5f, 0, 2}, 0);
    smelt_tensor_free(y);
    smelt_attr alpha_int = {.name = "alpha", .kind = SMELT_ATTR_INT, .i = 2};
    assert_int_equal(smelt_op(ctx, "LeakyRelu", &s, 1, &alpha_int, 1, &y, 1),
                     SMELT_OK);
    expect_f32(y, 1, d3, (const float[]){-2, 0, 2}, 0);
    smelt_tensor_free(y);
    smelt_tensor_t *two[2] = {a, a};
    smelt_attr axis0 = {.name = "axis", .kind = SMELT_ATTR_INT, .i = 0};
    assert_int_equal(smelt_op(ctx, "Concat", two, 2, &axis0, 1, &y, 1),
                     SMELT_OK);
    expect_f32(y, 2, (const int64_t[]){4, 3},
               (const float[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 0);
    smelt_tensor_free(y);
    smelt_tensor_t *parts[2];
    smelt_attr split[2] = {{.name = "axis", .kind = SMELT_ATTR_INT, .i = 1},
                           {.name = "split",
                            .kind = SMELT_ATTR_INTS,
                            .ints = (const int64_t[]){1, 2},
                            .n = 2}};
    assert_int_equal(smelt_op(ctx, "Split", &a, 1, split, 2, parts, 2),
                     SMELT_OK);
    expect_f32(parts[0], 2, (const int64_t[]){2, 1}, (const float[]){1, 4}, 0);
    expect_f32(parts[1], 2, (const int64_t[]){2, 2},
               (const float[]){2, 3, 5, 6}, 0);
    smelt_tensor_free(parts[0]);
    smelt_tensor_free(parts[1]);
    /* Clip with its optional min absent, max given */
    int64_t d0[] = {0};
    smelt_tensor_t *hi = mk(ctx, 0, d0, (const float[]){1.5f});
    smelt_tensor_t *clip_in[3] = {s, NULL, hi};
    assert_int_equal(smelt_op(ctx, "Clip", clip_in, 3, NULL, 0, &y, 1),
                     SMELT_OK);
    expect_f32(y, 1, d3, (const float[]){-1, 0, 1.5f}, 0);
    smelt_tensor_free(y);
    /* a tensor attribute is copied */
    smelt_tensor_t *fill = mk(ctx, 1, (const int64_t[]){1}, (const float[]){7});
    smelt_tensor_t *shape;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1,
                                       (const int64_t[]){2}, &shape),
                     SMELT_OK);
    ((int64_t *)shape->data)[0] = 2;
    ((int64_t *)shape->data)[1] = 2;
    smelt_attr value = {.name = "value", .kind = SMELT_ATTR_TENSOR, .t = fill};
    assert_int_equal(
        smelt_op(ctx, "ConstantOfShape", &shape, 1, &value, 1, &y, 1),
        SMELT_OK);
    expect_f32(y, 2, (const int64_t[]){2, 2}, (const float[]){7, 7, 7, 7}, 0);
    smelt_tensor_free(y);

    /* outputs may be the inputs' array */
    smelt_tensor_t *io = s;
    assert_int_equal(smelt_op(ctx, "Neg", &io, 1, NULL, 0, &io, 1), SMELT_OK);
    assert_true(io != s);
    expect_f32(io, 1, d3, (const float[]){1, 0, -2}, 0);
    smelt_tensor_free(io);

    smelt_tensor_t *all[] = {a, b, m, s, l, hi, fill, shape};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        smelt_tensor_free(all[i]);
    smelt_ctx_free(ctx);
}

/* A failing eager call returns code, names the problem, leaves *y NULL. */
static void expect_op_error(smelt_ctx_t *ctx, smelt_status got,
                            smelt_status code, smelt_tensor_t *y,
                            const char *frag)
{
    if (got != code || !strstr(smelt_ctx_error(ctx), frag))
        fail_msg("status %s, message '%s'; wanted %s with '%s'",
                 smelt_status_name(got), smelt_ctx_error(ctx),
                 smelt_status_name(code), frag);
    assert_null(y);
}

static void test_eager_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *a = mk(ctx, 2, d23, v23), *y = NULL;
    smelt_tensor_t *two[2] = {a, a};

    expect_op_error(ctx, smelt_op(ctx, "Frobnicate", &a, 1, NULL, 0, &y, 1),
                    SMELT_ERR_NOT_FOUND, y, "no op named 'Frobnicate'");
    expect_op_error(ctx, smelt_op(ctx, "Relu", two, 2, NULL, 0, &y, 1),
                    SMELT_ERR_INVALID_ARG, y,
                    "Relu: takes 1..1 inputs, was given 2");
    expect_op_error(ctx, smelt_op(ctx, "Relu", &a, 1, NULL, 0, &y, 0),
                    SMELT_ERR_INVALID_ARG, y, "Relu: gives 1..1 outputs");
    smelt_attr bad = {.name = "axs", .kind = SMELT_ATTR_INT, .i = 1};
    expect_op_error(ctx, smelt_op(ctx, "Softmax", &a, 1, &bad, 1, &y, 1),
                    SMELT_ERR_INVALID_ARG, y,
                    "Softmax: unknown attribute 'axs'");
    smelt_attr str = {.name = "axis", .kind = SMELT_ATTR_STRING, .s = "1"};
    expect_op_error(ctx, smelt_op(ctx, "Softmax", &a, 1, &str, 1, &y, 1),
                    SMELT_ERR_INVALID_ARG, y,
                    "Softmax: attribute 'axis' must be int, not string");
    smelt_attr twice[2] = {{.name = "axis", .kind = SMELT_ATTR_INT, .i = 1},
                           {.name = "axis", .kind = SMELT_ATTR_INT, .i = 0}};
    expect_op_error(ctx, smelt_op(ctx, "Softmax", &a, 1, twice, 2, &y, 1),
                    SMELT_ERR_INVALID_ARG, y, "'axis' is given twice");
    smelt_attr nolist = {.name = "perm", .kind = SMELT_ATTR_INTS, .n = 2};
    expect_op_error(ctx, smelt_op(ctx, "Transpose", &a, 1, &nolist, 1, &y, 1),
                    SMELT_ERR_INVALID_ARG, y, "NULL or negative count");
    expect_op_error(ctx, smelt_op(ctx, "Concat", two, 2, NULL, 0, &y, 1),
                    SMELT_ERR_INVALID_ARG, y,
                    "Concat: required attribute 'axis' is missing");
    expect_op_error(ctx, smelt_matmul(ctx, a, a, &y), SMELT_ERR_SHAPE, y,
                    "MatMul");
    expect_op_error(ctx, smelt_softmax(ctx, a, 5, &y), SMELT_ERR_SHAPE, y,
                    "Softmax: axis 5 is out of range for rank 2");
    expect_op_error(ctx, smelt_add(ctx, a, NULL, &y), SMELT_ERR_INVALID_ARG, y,
                    "Add: required input 1 is NULL");
    expect_op_error(ctx, smelt_op(ctx, "If", &a, 1, NULL, 0, &y, 1),
                    SMELT_ERR_UNSUPPORTED, y, "If: control ops");
    expect_op_error(ctx, smelt_reshape(ctx, a, NULL, 9, &y),
                    SMELT_ERR_INVALID_ARG, y, "Reshape: target rank 9");
    expect_op_error(ctx, smelt_reshape(ctx, a, (const int64_t[]){4, -1}, 2, &y),
                    SMELT_ERR_SHAPE, y, "Reshape");
    assert_int_equal(smelt_op(ctx, "Relu", &a, 1, NULL, 0, NULL, 1),
                     SMELT_ERR_INVALID_ARG);
    expect_op_error(ctx, smelt_op(ctx, "Sum", two, 65, NULL, 0, &y, 1),
                    SMELT_ERR_INVALID_ARG, y, "smelt_op: Sum: 65 inputs");
    smelt_tensor_free(a);
    smelt_ctx_free(ctx);
}

/* ---- a two-layer MLP --------------------------------------------------- */

typedef struct mlp {
    smelt_tensor_t *w1, *b1, *w2, *b2;
} mlp;

static void mlp_init(smelt_ctx_t *ctx, mlp *p)
{
    float w1[4 * 8], b1[8], w2[8 * 3], b2[3];
    for (int i = 0; i < 32; i++)
        w1[i] = sinf((float)i * 0.7f) * 0.5f;
    for (int i = 0; i < 8; i++)
        b1[i] = 0.1f * (float)(i - 4);
    for (int i = 0; i < 24; i++)
        w2[i] = cosf((float)i * 0.3f) * 0.4f;
    for (int i = 0; i < 3; i++)
        b2[i] = 0.05f * (float)i;
    p->w1 = mk(ctx, 2, (const int64_t[]){4, 8}, w1);
    p->b1 = mk(ctx, 1, (const int64_t[]){8}, b1);
    p->w2 = mk(ctx, 2, (const int64_t[]){8, 3}, w2);
    p->b2 = mk(ctx, 1, (const int64_t[]){3}, b2);
}

static void mlp_free(mlp *p)
{
    smelt_tensor_free(p->w1);
    smelt_tensor_free(p->b1);
    smelt_tensor_free(p->w2);
    smelt_tensor_free(p->b2);
}

/* softmax(relu(x W1 + b1) W2 + b2), freeing intermediates as it goes. */
static smelt_status mlp_forward(smelt_ctx_t *ctx, const mlp *p,
                                smelt_tensor_t *x, smelt_tensor_t **y)
{
    smelt_tensor_t *t[5] = {0};
    smelt_status st = smelt_matmul(ctx, x, p->w1, &t[0]);
    if (st == SMELT_OK)
        st = smelt_add(ctx, t[0], p->b1, &t[1]);
    if (st == SMELT_OK)
        st = smelt_relu(ctx, t[1], &t[2]);
    if (st == SMELT_OK)
        st = smelt_matmul(ctx, t[2], p->w2, &t[3]);
    if (st == SMELT_OK)
        st = smelt_add(ctx, t[3], p->b2, &t[4]);
    if (st == SMELT_OK)
        st = smelt_softmax(ctx, t[4], -1, y);
    for (int i = 0; i < 5; i++)
        smelt_tensor_free(t[i]);
    return st;
}

static const int64_t d24[] = {2, 4};

static void test_trace_mlp(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    mlp p;
    mlp_init(ctx, &p);
    smelt_tensor_t *x =
        mk(ctx, 2, d24, (const float[]){1, 2, 3, 4, -1, 0, 1, 2});
    smelt_tensor_t *y, *y_eager, *y_graph;
    smelt_graph_t *g;

    assert_int_equal(smelt_trace_begin(ctx, "mlp"), SMELT_OK);
    assert_int_equal(smelt_trace_input(ctx, x, "x"), SMELT_OK);
    assert_int_equal(mlp_forward(ctx, &p, x, &y), SMELT_OK);
    assert_int_equal(smelt_trace_end(ctx, &y, 1, &g), SMELT_OK);
    assert_string_equal(smelt_trace_warnings(ctx), "");

    assert_string_equal(smelt_graph_name(g), "mlp");
    assert_int_equal(smelt_graph_num_inputs(g), 1);
    assert_string_equal(smelt_graph_input_name(g, 0), "x");
    assert_int_equal(smelt_graph_input_ndim(g, 0), 2);
    assert_int_equal(smelt_graph_input_dim(g, 0, 0), 2); /* batch concrete */
    assert_int_equal(smelt_graph_num_outputs(g), 1);
    assert_string_equal(smelt_graph_output_name(g, 0), "out0");
    assert_int_equal(smelt_graph_num_nodes(g), 6);
    assert_int_equal(g->top->n_consts, 4);
    assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
    char *text;
    assert_int_equal(smelt_graph_print(ctx, g, &text), SMELT_OK);
    assert_non_null(strstr(text, "graph mlp(%x: f32[2,4])"));
    assert_non_null(strstr(text, "%matmul_1: f32[2,8] = MatMul(%x, %const_0)"));
    assert_non_null(strstr(text, "%out0: f32[2,3] = Softmax(%add_8)"));
    smelt_string_free(text);

    /* the graph on a new input computes what eager mode computes */
    smelt_tensor_t *x2 =
        mk(ctx, 2, d24, (const float[]){0.5f, -3, 2, 1, 4, 4, -2, 0.25f});
    assert_int_equal(mlp_forward(ctx, &p, x2, &y_eager), SMELT_OK);
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x2, 1, &y_graph, 1),
                     SMELT_OK);
    expect_same(y_graph, y_eager, 0);
    smelt_tensor_free(y_graph);

    /* the same optimizer as any model, and ONNX out and back */
    smelt_graph_t *opt;
    assert_int_equal(smelt_graph_clone(ctx, g, &opt), SMELT_OK);
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 2;
    assert_int_equal(smelt_graph_optimize(ctx, opt, &o, NULL), SMELT_OK);
    assert_true(smelt_graph_num_nodes(opt) < 6);
    assert_int_equal(smelt_graph_run_reference(ctx, opt, &x2, 1, &y_graph, 1),
                     SMELT_OK);
    expect_same(y_graph, y_eager, 1e-6);
    smelt_tensor_free(y_graph);
    smelt_graph_free(opt);
    void *buf;
    size_t len;
    smelt_graph_t *back;
    assert_int_equal(smelt_onnx_save_buffer(ctx, g, &buf, &len), SMELT_OK);
    assert_int_equal(smelt_onnx_load_buffer(ctx, buf, len, NULL, &back),
                     SMELT_OK);
    smelt_onnx_buffer_free(buf);
    assert_int_equal(smelt_graph_run_reference(ctx, back, &x2, 1, &y_graph, 1),
                     SMELT_OK);
    expect_same(y_graph, y_eager, 0);
    smelt_tensor_free(y_graph);
    smelt_graph_free(back);

    smelt_tensor_free(y_eager);
    smelt_tensor_free(y);
    smelt_tensor_free(x);
    smelt_tensor_free(x2);
    smelt_graph_free(g);
    mlp_free(&p);
    smelt_ctx_free(ctx);
}

/* ---- the caveat: data-dependent branches -------------------------------- */

/* z = relu(x) * 2 when relu(x)[0] > 0, else -relu(x): a C branch on data. */
static smelt_status branchy(smelt_ctx_t *ctx, smelt_tensor_t *x,
                            smelt_tensor_t *two, smelt_tensor_t **z)
{
    smelt_tensor_t *y;
    SM_TRY(smelt_relu(ctx, x, &y));
    double first = smelt_tensor_get_f64(y, 0);
    smelt_tensor_get_f64(y, 1); /* one warning per value */
    smelt_status st =
        first > 0 ? smelt_mul(ctx, y, two, z) : smelt_neg(ctx, y, z);
    smelt_tensor_free(y);
    return st;
}

static void *read_on_thread(void *t)
{
    smelt_tensor_get_f64(t, 0);
    return NULL;
}

static void test_branch_baked_in(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int64_t d3[] = {3};
    smelt_tensor_t *x = mk(ctx, 1, d3, (const float[]){1, -2, 3});
    smelt_tensor_t *two = mk(ctx, 0, d3, (const float[]){2});
    smelt_tensor_t *z, *out;
    smelt_graph_t *g;

    assert_int_equal(smelt_trace_begin(ctx, "branchy"), SMELT_OK);
    assert_int_equal(smelt_trace_input(ctx, x, "x"), SMELT_OK);
    assert_int_equal(branchy(ctx, x, two, &z), SMELT_OK);
    smelt_tensor_get_f64(two, 0); /* a constant: no warning */
    assert_string_equal(smelt_trace_warnings(ctx),
                        "trace 'branchy': the program read the data of "
                        "%relu_0 after op 1 (Relu); a branch on it is baked "
                        "into the graph\n");
    smelt_tensor_data(x); /* the input is traced too */
    assert_non_null(strstr(smelt_trace_warnings(ctx),
                           "read the data of %x after op 2 (Mul)"));
    /* a read on another thread finds the trace too */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_on_thread, z), 0);
    pthread_join(th, NULL);
    assert_non_null(strstr(smelt_trace_warnings(ctx), "data of %mul_2"));
    assert_int_equal(smelt_trace_end(ctx, &z, 1, &g), SMELT_OK);

    /* on an input whose relu starts at 0, eager takes the other branch;
     * the graph keeps the one taken while tracing */
    smelt_tensor_t *x2 = mk(ctx, 1, d3, (const float[]){-1, 2, 3});
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x2, 1, &out, 1),
                     SMELT_OK);
    expect_f32(out, 1, d3, (const float[]){0, 4, 6}, 0);
    smelt_tensor_t *eager;
    assert_int_equal(branchy(ctx, x2, two, &eager), SMELT_OK);
    expect_f32(eager, 1, d3, (const float[]){0, -2, -3}, 0);

    /* after the end reads warn no more; the warnings stay until the next
     * begin */
    const char *w = smelt_trace_warnings(ctx);
    size_t before = strlen(w);
    smelt_tensor_get_f64(z, 0);
    assert_int_equal(strlen(smelt_trace_warnings(ctx)), before);
    assert_int_equal(smelt_trace_begin(ctx, "again"), SMELT_OK);
    assert_string_equal(smelt_trace_warnings(ctx), "");
    smelt_tensor_get_f64(z, 0); /* tagged by the old trace: nothing */
    assert_string_equal(smelt_trace_warnings(ctx), "");
    smelt_tensor_t *r;
    assert_int_equal(smelt_relu(ctx, x, &r), SMELT_OK);
    smelt_graph_t *g2;
    assert_int_equal(smelt_trace_end(ctx, &r, 1, &g2), SMELT_OK);
    assert_non_null(strstr(smelt_trace_warnings(ctx),
                           "no tensor was marked with smelt_trace_input"));
    assert_int_equal(smelt_graph_num_inputs(g2), 0);

    smelt_tensor_t *all[] = {x, two, z, out, x2, eager, r};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        smelt_tensor_free(all[i]);
    smelt_graph_free(g);
    smelt_graph_free(g2);
    smelt_ctx_free(ctx);
}

/* Tensors freed during a trace leave no stale entries: new tensors, even
 * at a freed one's address, are new constants. */
static void test_freed_tensors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int64_t d3[] = {3};
    smelt_tensor_t *x = mk(ctx, 1, d3, (const float[]){1, 2, 3});
    smelt_tensor_t *y = x, *out;
    smelt_graph_t *g;
    assert_int_equal(smelt_trace_begin(ctx, "freed"), SMELT_OK);
    assert_int_equal(smelt_trace_input(ctx, x, "x"), SMELT_OK);
    for (int k = 1; k <= 3; k++) {
        float v = (float)k;
        smelt_tensor_t *c = mk(ctx, 1, d3, (const float[]){v, v, v}), *s;
        assert_int_equal(smelt_add(ctx, y, c, &s), SMELT_OK);
        smelt_tensor_free(c);
        if (y != x)
            smelt_tensor_free(y);
        y = s;
    }
    smelt_tensor_t *col, *back;
    assert_int_equal(smelt_reshape(ctx, y, (const int64_t[]){3, 1}, 2, &col),
                     SMELT_OK);
    assert_int_equal(smelt_reshape(ctx, col, (const int64_t[]){3}, 1, &back),
                     SMELT_OK);
    assert_int_equal(smelt_trace_end(ctx, &back, 1, &g), SMELT_OK);
    assert_int_equal(g->top->n_consts, 5); /* 3 addends, 2 shapes */
    assert_int_equal(smelt_graph_num_nodes(g), 5);
    smelt_tensor_t *x2 = mk(ctx, 1, d3, (const float[]){10, 20, 30});
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x2, 1, &out, 1),
                     SMELT_OK);
    expect_f32(out, 1, d3, (const float[]){16, 26, 36}, 0);
    smelt_tensor_t *all[] = {x, y, col, back, x2, out};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        smelt_tensor_free(all[i]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void expect_ctx_error(smelt_ctx_t *ctx, smelt_status got,
                             smelt_status code, const char *frag)
{
    if (got != code || !strstr(smelt_ctx_error(ctx), frag))
        fail_msg("status %s, message '%s'; wanted %s with '%s'",
                 smelt_status_name(got), smelt_ctx_error(ctx),
                 smelt_status_name(code), frag);
}

static void test_trace_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int64_t d3[] = {3};
    smelt_tensor_t *x = mk(ctx, 1, d3, (const float[]){1, 2, 3});
    smelt_tensor_t *w = mk(ctx, 2, d23, v23);
    smelt_tensor_t *y = NULL, *r = NULL;
    smelt_graph_t *g = (smelt_graph_t *)1;

    expect_ctx_error(ctx, smelt_trace_end(ctx, &x, 1, &g),
                     SMELT_ERR_INVALID_ARG, "this ctx is not tracing");
    assert_null(g);
    expect_ctx_error(ctx, smelt_trace_input(ctx, x, "x"), SMELT_ERR_INVALID_ARG,
                     "this ctx is not tracing");

    /* nested begin fails and leaves the running trace alone; returning
     * an input as it is is fine */
    assert_int_equal(smelt_trace_begin(ctx, "a"), SMELT_OK);
    expect_ctx_error(ctx, smelt_trace_begin(ctx, "b"), SMELT_ERR_INVALID_ARG,
                     "already tracing 'a'");
    assert_int_equal(smelt_trace_input(ctx, x, "x"), SMELT_OK);
    assert_int_equal(smelt_trace_end(ctx, &x, 1, &g), SMELT_OK);
    assert_string_equal(smelt_graph_output_name(g, 0), "x");
    smelt_graph_free(g);

    /* a failing op fails the trace; later ops still compute */
    assert_int_equal(smelt_trace_begin(ctx, "t"), SMELT_OK);
    assert_int_equal(smelt_trace_input(ctx, x, "x"), SMELT_OK);
    expect_ctx_error(ctx, smelt_matmul(ctx, x, w, &y), SMELT_ERR_SHAPE,
                     "MatMul");
    assert_null(y);
    assert_int_equal(smelt_relu(ctx, x, &r), SMELT_OK);
    expect_f32(r, 1, d3, (const float[]){1, 2, 3}, 0);
    expect_ctx_error(ctx, smelt_trace_end(ctx, &r, 1, &g), SMELT_ERR_SHAPE,
                     "trace 't' failed: MatMul");
    assert_null(g);
    smelt_tensor_free(r);

    /* misuse of smelt_trace_input fails the trace */
    const char *msgs[] = {"is already %relu_1", "is already %const_0",
                          "the name 'x' is taken", "NULL tensor"};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(smelt_trace_begin(ctx, "m"), SMELT_OK);
        smelt_tensor_t *c = mk(ctx, 1, d3, NULL);
        assert_int_equal(smelt_relu(ctx, c, &r), SMELT_OK);
        smelt_status st = k == 0   ? smelt_trace_input(ctx, r, "r")
                          : k == 1 ? smelt_trace_input(ctx, c, "c")
                          : k == 2 ? (smelt_trace_input(ctx, x, "x"),
                                      smelt_trace_input(ctx, w, "x"))
                                   : smelt_trace_input(ctx, NULL, "n");
        expect_ctx_error(ctx, st, SMELT_ERR_INVALID_ARG, msgs[k]);
        expect_ctx_error(ctx, smelt_trace_end(ctx, &r, 1, &g),
                         SMELT_ERR_INVALID_ARG, msgs[k]);
        assert_null(g);
        smelt_tensor_free(c);
        smelt_tensor_free(r);
    }

    /* smelt_trace_end always ends the trace */
    assert_int_equal(smelt_trace_begin(ctx, "e"), SMELT_OK);
    expect_ctx_error(ctx, smelt_trace_end(ctx, NULL, 0, &g),
                     SMELT_ERR_INVALID_ARG, "needs at least one output");
    expect_ctx_error(ctx, smelt_trace_end(ctx, &x, 1, &g),
                     SMELT_ERR_INVALID_ARG, "not tracing");

    /* a ctx freed while tracing frees its trace (ASan watches) */
    assert_int_equal(smelt_trace_begin(ctx, "left"), SMELT_OK);
    assert_int_equal(smelt_trace_input(ctx, x, "x"), SMELT_OK);
    assert_int_equal(smelt_relu(ctx, x, &r), SMELT_OK);
    smelt_tensor_free(r);
    smelt_ctx_free(ctx);
    smelt_tensor_free(x);
    smelt_tensor_free(w);
}

/* One small trace with allocation failure injected at every point: each
 * run either succeeds with the right graph or fails cleanly. */
static void test_alloc_failures(void **state)
{
    (void)state;
    int64_t d3[] = {3};
    int succeeded = 0, failed = 0;
    for (long k = 0; k < 10000 && !succeeded; k++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_tensor_t *x = mk(ctx, 1, d3, (const float[]){-1, 2, 3});
        smelt_tensor_t *b = mk(ctx, 1, d3, (const float[]){1, 1, 1});
        smelt_tensor_t *t[3] = {0};
        smelt_graph_t *g = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_trace_begin(ctx, "small");
        smelt_trace_input(ctx, x, "x");
        smelt_add(ctx, x, b, &t[0]);
        smelt_relu(ctx, t[0], &t[1]);
        smelt_reshape(ctx, t[1], (const int64_t[]){1, 3}, 2, &t[2]);
        smelt_status end = smelt_trace_end(ctx, &t[2], 1, &g);
        long made = sm_alloc_fail_after(-1);
        if (end == SMELT_OK) {
            assert_int_equal(st, SMELT_OK);
            smelt_tensor_t *out;
            assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, &out, 1),
                             SMELT_OK);
            expect_f32(out, 2, (const int64_t[]){1, 3},
                       (const float[]){0, 3, 4}, 0);
            smelt_tensor_free(out);
            succeeded = made <= k; /* no failure was injected */
        } else {
            assert_null(g);
            assert_true(smelt_ctx_error(ctx)[0] != 0);
            failed++;
        }
        for (int i = 0; i < 3; i++)
            smelt_tensor_free(t[i]);
        smelt_graph_free(g);
        smelt_tensor_free(x);
        smelt_tensor_free(b);
        smelt_ctx_free(ctx);
    }
    assert_true(succeeded);
    assert_true(failed > 20); /* every allocation of the trace was hit */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eager_values),
        cmocka_unit_test(test_eager_errors),
        cmocka_unit_test(test_trace_mlp),
        cmocka_unit_test(test_branch_baked_in),
        cmocka_unit_test(test_freed_tensors),
        cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
