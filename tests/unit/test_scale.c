/*
 * test_scale.c - graph size must not make loading, inference, verifying,
 * optimizing, planning or printing quadratic. One chain of 200,000 nodes
 * goes through every stage, as text IR and as ONNX; the test's ctest
 * TIMEOUT (tests/CMakeLists.txt) is the guard, the test itself checks
 * only what each stage computes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define CHAIN 200000

/* "graph chain(%x: f32[4]) { %v0 = Add(%x, %x) ... }": node i adds x to
 * the previous value, so the result is x * (CHAIN + 1). */
static char *chain_text(int n, size_t *len)
{
    size_t cap = (size_t)n * 48 + 128, k = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    k += (size_t)snprintf(s + k, cap - k, "graph chain(%%x: f32[4]) {\n");
    for (int i = 0; i < n; i++) {
        char prev[16] = "x";
        if (i)
            snprintf(prev, sizeof prev, "v%d", i - 1);
        k += (size_t)snprintf(s + k, cap - k,
                              "  %%v%d: f32[4] = Add(%%%s, %%x)\n", i, prev);
    }
    k += (size_t)snprintf(s + k, cap - k, "  return %%v%d\n}\n", n - 1);
    *len = k;
    return s;
}

/* Compiles g at `level`, runs it on x = [1, 2, 3, 4] and checks the
 * chain's sum. */
static void plan_and_run(smelt_ctx_t *ctx, const smelt_graph_t *g, int level)
{
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = level;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
        fail_msg("compile -O%d: %s", level, smelt_ctx_error(ctx));
    int64_t dims[1] = {4};
    smelt_tensor_t *x = NULL, *y = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 1, dims, &x),
                     SMELT_OK);
    float *xd = smelt_tensor_data(x);
    for (int i = 0; i < 4; i++)
        xd[i] = (float)(i + 1);
    if (smelt_plan_run(ctx, p, &x, 1, &y, 1) != SMELT_OK)
        fail_msg("run -O%d: %s", level, smelt_ctx_error(ctx));
    for (int i = 0; i < 4; i++)
        assert_true(smelt_tensor_get_f64(y, i) ==
                    (double)(i + 1) * (CHAIN + 1));
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_plan_free(p);
}

/* Text IR: parse, infer, verify, list the ops (smelt info), print and
 * parse back, plan at -O3 and run. */
static void test_chain_text(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    size_t len;
    char *text = chain_text(CHAIN, &len);
    smelt_graph_t *g = NULL;
    if (smelt_graph_parse(ctx, text, len, "chain.ir", &g) != SMELT_OK)
        fail_msg("parse: %s", smelt_ctx_error(ctx));
    free(text);
    assert_int_equal(smelt_graph_infer(ctx, g), SMELT_OK);
    assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
    assert_int_equal(smelt_graph_num_nodes(g), CHAIN);
    const char **ops = calloc(CHAIN, sizeof *ops);
    assert_non_null(ops);
    assert_int_equal(smelt_graph_node_ops(g, ops, CHAIN), CHAIN);
    assert_string_equal(ops[0], "Add");
    assert_string_equal(ops[CHAIN - 1], "Add");
    assert_string_equal(smelt_graph_node_op(g, CHAIN - 1), "Add");
    free(ops);
    char *printed = NULL;
    assert_int_equal(smelt_graph_print(ctx, g, &printed), SMELT_OK);
    smelt_graph_t *back = NULL;
    if (smelt_graph_parse(ctx, printed, strlen(printed), "printed.ir", &back) !=
        SMELT_OK)
        fail_msg("parse back: %s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_nodes(back), CHAIN);
    smelt_string_free(printed);
    smelt_graph_free(back);
    plan_and_run(ctx, g, 3);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ONNX: the chain saved and loaded back, then planned without the
 * optimizer. */
static void test_chain_onnx(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    size_t len;
    char *text = chain_text(CHAIN, &len);
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, text, len, "chain.ir", &g),
                     SMELT_OK);
    free(text);
    void *buf = NULL;
    size_t n = 0;
    if (smelt_onnx_save_buffer(ctx, g, &buf, &n) != SMELT_OK)
        fail_msg("save: %s", smelt_ctx_error(ctx));
    smelt_graph_free(g);
    g = NULL;
    if (smelt_onnx_load_buffer(ctx, buf, n, NULL, &g) != SMELT_OK)
        fail_msg("load: %s", smelt_ctx_error(ctx));
    smelt_onnx_buffer_free(buf);
    assert_int_equal(smelt_graph_num_nodes(g), CHAIN);
    plan_and_run(ctx, g, 0);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_text),
        cmocka_unit_test(test_chain_onnx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
