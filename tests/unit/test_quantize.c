/*
 * test_quantize.c - smelt_graph_quantize (src/passes/quantize.c): what
 * a MatMul, a Gemm with transB and bias, and a Conv become, that the
 * result computes what the f32 graph does within int8's error, the
 * options (per channel, exclude, only), refusals of bad arguments, and
 * every allocation failure walked without a leak.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/tensor.h"
#include "ir/ir.h"

static const char *model =
    "graph q(%x: f32[2,3]) {\n"
    "  %w: f32[3,4] = const [0.5, -1, 0.25, 2, 1.5, 0.75, -0.5, -2, 0.1, "
    "0.2, 0.3, -0.4]\n"
    "  %v: f32[2,4] = const [1, -1, 0.5, 0.25, -0.75, 2, 1, 0.5]\n"
    "  %c: f32[2] = const [0.1, -0.2]\n"
    "  %h = MatMul(%x, %w) @fc1\n"
    "  %y = Gemm(%h, %v, %c) {transB = 1} @fc2\n"
    "  return %y\n"
    "}\n";

/* How many nodes of g run op `name`. */
static int count_op(smelt_graph_t *g, sm_op op)
{
    int n = 0;
    for (int i = 0; i < g->top->n_nodes; i++)
        n += g->top->nodes[i]->op == op;
    return n;
}

/* The outputs of g on x. */
static smelt_tensor_t *run(smelt_graph_t *g, smelt_tensor_t *x)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *y = NULL;
    smelt_status st = smelt_graph_run_reference(ctx, g, &x, 1, &y, 1);
    if (st != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return y;
}

static void test_rewrite(void **state)
{
    (void)state;
    for (int pc = 0; pc < 2; pc++) {
        smelt_graph_t *f = tu_parse(NULL, model), *g = tu_parse(NULL, model);
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_quantize_options o;
        smelt_quantize_options_default(&o);
        o.per_channel = pc;
        char *layers = NULL;
        assert_int_equal(smelt_graph_quantize(ctx, g, &o, &layers), SMELT_OK);
        assert_string_equal(layers, "fc1,fc2");
        smelt_string_free(layers);
        assert_int_equal(count_op(g, SM_OP_MatMul), 0);
        assert_int_equal(count_op(g, SM_OP_Gemm), 0);
        assert_int_equal(count_op(g, SM_OP_MatMulInteger), 2);
        assert_int_equal(count_op(g, SM_OP_DynamicQuantizeLinear), 2);
        assert_int_equal(count_op(g, SM_OP_Cast), 2);
        assert_int_equal(count_op(g, SM_OP_Add), 1); /* the Gemm's bias */
        /* the f32 weights are gone: 2 s8 weights, 2 scales, 1 bias */
        assert_int_equal(g->top->n_consts, 5);
        assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
        int64_t d[2] = {2, 3};
        smelt_tensor_t *x = NULL;
        assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d, &x),
                         SMELT_OK);
        float *xp = smelt_tensor_data(x);
        for (int i = 0; i < 6; i++)
            xp[i] = (float)(i % 4) * 0.5f - 0.7f;
        smelt_tensor_t *a = run(f, x), *b = run(g, x);
        assert_int_equal(smelt_tensor_numel(a), 4);
        for (int64_t i = 0; i < 4; i++) {
            double u = smelt_tensor_get_f64(a, i),
                   v = smelt_tensor_get_f64(b, i);
            if (fabs(u - v) > 0.05 * (fabs(u) + 1))
                fail_msg("per_channel %d element %lld: int8 %g, f32 %g", pc,
                         (long long)i, v, u);
        }
        smelt_tensor_free(a);
        smelt_tensor_free(b);
        smelt_tensor_free(x);
        smelt_graph_free(f);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

static void test_exclude_only(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    smelt_graph_t *g = tu_parse(NULL, model);
    char *layers = NULL;
    o.exclude = "fc1";
    assert_int_equal(smelt_graph_quantize(ctx, g, &o, &layers), SMELT_OK);
    assert_string_equal(layers, "fc2");
    assert_int_equal(count_op(g, SM_OP_MatMul), 1);
    smelt_string_free(layers);
    smelt_graph_free(g);
    g = tu_parse(NULL, model);
    o.exclude = NULL;
    o.only = "fc1,nothing";
    assert_int_equal(smelt_graph_quantize(ctx, g, &o, &layers), SMELT_OK);
    assert_string_equal(layers, "fc1");
    assert_int_equal(count_op(g, SM_OP_Gemm), 1);
    smelt_string_free(layers);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A Conv with a bias, with and without conv. */
static void test_conv(void **state)
{
    (void)state;
    const char *text =
        "graph c(%x: f32[1,1,4,4]) {\n"
        "  %w: f32[2,1,3,3] = const [1, 0, -1, 0.5, 0.25, -0.5, 2, 1, 0, "
        "-1, 1, 0.5, 0.25, 0, -0.25, 1, 2, -2]\n"
        "  %b: f32[2] = const [0.5, -0.5]\n"
        "  %y = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} @conv\n"
        "  return %y\n"
        "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    smelt_graph_t *g = tu_parse(NULL, text);
    assert_int_equal(smelt_graph_quantize(ctx, g, &o, NULL), SMELT_OK);
    assert_int_equal(count_op(g, SM_OP_Conv), 1); /* conv not asked for */
    o.conv = 1;
    o.per_channel = 1;
    assert_int_equal(smelt_graph_quantize(ctx, g, &o, NULL), SMELT_OK);
    assert_int_equal(count_op(g, SM_OP_ConvInteger), 1);
    assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_bad_args(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    char *layers = (char *)1;
    assert_int_equal(smelt_graph_quantize(ctx, NULL, NULL, &layers),
                     SMELT_ERR_INVALID_ARG);
    assert_null(layers);
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    o.struct_size = 3;
    smelt_graph_t *g = tu_parse(NULL, model);
    assert_int_equal(smelt_graph_quantize(ctx, g, &o, NULL),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "smelt_quantize_options"));
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Every allocation of the rewrite fails once: an error, no leak (the
 * graph is then only freed), until it succeeds. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    o.per_channel = 1;
    int done = 0;
    for (long k = 0; k < 100000 && !done; k++) {
        smelt_graph_t *g = tu_parse(NULL, model);
        smelt_ctx_t *ctx = smelt_ctx_init();
        char *layers = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_graph_quantize(ctx, g, &o, &layers);
        sm_alloc_fail_after(-1);
        if (st == SMELT_OK)
            done = 1;
        else if (st != SMELT_ERR_NOMEM)
            fail_msg("k = %ld: status %d: %s", k, st, smelt_ctx_error(ctx));
        smelt_string_free(layers);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
    assert_true(done);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewrite),
        cmocka_unit_test(test_exclude_only),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
