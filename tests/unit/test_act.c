/*
 * test_act.c - the activation table (core/act.def), row by row: every
 * row's name parses back to it; its vector function on every ISA this
 * machine has (the unary kernel and the depthwise row, which specializes
 * the cheap rows) agrees with its scalar reference over a sweep of
 * inputs (large, tiny, negative, zero); and its ONNX form (the row's
 * example) is absorbed by the fusion pass after a Conv, a Gemm and a
 * MatMul, giving a fused node that names the row and computes what the
 * unfused graph does. A new row is checked end to end without touching
 * this file.
 */
#include "fusion_util.h"

#include "core/act.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpuid.h"

/* The pass that fuses epilogues into contractions. */
#define FUSE_PASSES "fuse_epilogue"

static const sm_cpu_ops *const all_ops[] = {
    &sm_cpu_ops_avx512, &sm_cpu_ops_avx2, &sm_cpu_ops_scalar};

/* Every row's name parses back to the row; unknown names do not. */
static void test_act_names(void **state)
{
    (void)state;
    assert_int_equal(SM_ACT_NONE, 0);
    for (int k = 0; k < SM_ACT_COUNT; k++) {
        const sm_act_info *in = sm_act_info_get((sm_act_kind)k);
        assert_non_null(in);
        assert_non_null(in->scalar);
        assert_non_null(in->example);
        assert_int_equal(sm_act_from_name(sm_act_name((sm_act_kind)k)), k);
        assert_string_equal(sm_act_name((sm_act_kind)k), in->name);
    }
    assert_int_equal(sm_act_from_name("swish"), SM_ACT_COUNT);
    assert_int_equal(sm_act_from_name(""), SM_ACT_COUNT);
    assert_null(sm_act_info_get(SM_ACT_COUNT));
    assert_string_equal(sm_act_name(SM_ACT_COUNT), "?");
}

/* The parameters a row is tested with: a slope, bounds, or none. */
static void act_params(sm_act_kind k, float *a, float *b)
{
    switch (sm_act_info_get(k)->params) {
    case SM_ACT_PARAMS_SLOPE: *a = 0.1f, *b = INFINITY; break;
    case SM_ACT_PARAMS_BOUNDS: *a = -0.5f, *b = 0.75f; break;
    default: *a = -INFINITY, *b = INFINITY; break;
    }
}

#define N_SWEEP 1024

/* A sweep over [-30, 30] and the extremes: +-1e4, +-100, +-88, tiny
 * values of both signs and zeros. */
static int sweep(float *x)
{
    static const float edge[] = {1e4f,   -1e4f, 100.0f, -100.0f, 88.5f,
                                 -88.5f, 1e-6f, -1e-6f, 1e-30f,  -1e-30f,
                                 0.0f,   -0.0f, 6.0f,   -0.5f,   0.75f};
    int n = 0;
    for (int i = 0; i < 1000; i++)
        x[n++] = -30.0f + 60.0f * (float)i / 999.0f;
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        x[n++] = edge[i];
    return n;
}

/* Fails unless got is within 3e-5 relative of the double reference of
 * row k at x, or within what the reference itself may be off by: about
 * 1e-16 |x| where it cancels (gelu's left tail, 0.5 x (1 + erf) with erf
 * near -1, where the vector form keeps digits the reference loses). */
static void expect_close(const char *isa, const char *path, sm_act_kind k,
                         float x, float got, float a, float b)
{
    double want = sm_act_info_get(k)->scalar((double)x, a, b);
    double err = fabs((double)got - want);
    if (!(err <= 3e-5 * fabs(want) + 1e-15 * fmax(1.0, fabs((double)x))))
        fail_msg("%s %s %s(%g) = %.9g, reference %.9g", isa, path,
                 sm_act_name(k), (double)x, (double)got, want);
}

/* Every row's vector function, through ops->unary and ops->dw_row (nine
 * taps, weight 1 on the first), against its scalar function. */
static void test_act_vector(void **state)
{
    (void)state;
    float x[N_SWEEP], y[N_SWEEP], w[9] = {1.0f};
    int n = sweep(x);
    const float *taps[9];
    for (int t = 0; t < 9; t++)
        taps[t] = x;
    int tested = 0;
    for (size_t o = 0; o < sizeof all_ops / sizeof *all_ops; o++) {
        const sm_cpu_ops *ops = all_ops[o];
        if ((ops->isa & sm_cpu_detect()) != ops->isa)
            continue;
        tested++;
        for (int k = 0; k < SM_ACT_COUNT; k++) {
            float a, b;
            act_params((sm_act_kind)k, &a, &b);
            ops->unary(k, a, b, x, y, n);
            for (int i = 0; i < n; i++)
                expect_close(ops->name, "unary", (sm_act_kind)k, x[i], y[i], a,
                             b);
            ops->dw_row(taps, w, 9, y, n, 0.0f, k, a, b);
            for (int i = 0; i < n; i++)
                expect_close(ops->name, "dw_row", (sm_act_kind)k, x[i], y[i], a,
                             b);
        }
    }
    assert_true(tested > 0);
}

/* The one node of g's top block applying op, or NULL. */
static const sm_node *only_node(const sm_graph *g, sm_op op)
{
    const sm_node *found = NULL;
    for (int i = 0; i < g->top->n_nodes; i++)
        if (g->top->nodes[i]->op == op) {
            assert_null(found);
            found = g->top->nodes[i];
        }
    return found;
}

/*
 * Row k's example after the contraction `head` (which defines %a):
 * after the fusion passes the graph is one node of op `fused` naming the
 * row (none: the contraction stays, nothing to absorb), computing what
 * the unfused graph computes.
 */
static void expect_fused(const char *params, const char *head, sm_op fused,
                         sm_act_kind k)
{
    char text[2048];
    snprintf(text, sizeof text, "graph g(%s) {\n%s%s  return %%out\n}\n",
             params, head, sm_act_info_get(k)->example);
    sm_graph *ref = fu_parse(text), *g = fu_parse(text);
    fu_passes(g, FUSE_PASSES, 0, NULL);
    if (k == SM_ACT_NONE) {
        assert_null(only_node(g, fused));
    } else {
        const sm_node *f = only_node(g, fused);
        if (!f || g->top->n_nodes != 1)
            fail_msg("%s not fused into one %s:\n%s", sm_act_name(k),
                     sm_op_info_get(fused)->name, text);
        sm_attrs at = sm_node_attrs(f);
        assert_string_equal(sm_attrs_string(&at, "activation", "none"),
                            sm_act_name(k));
    }
    for (unsigned seed = 1; seed <= 2; seed++) {
        double e = fu_compare(ref, g, seed);
        if (!(e <= 1e-5))
            fail_msg("%s: error %g after fusion of\n%s", sm_act_name(k), e,
                     text);
    }
    sm_graph_free(ref);
    sm_graph_free(g);
}

/* Every row's example after a Conv, a Gemm and a MatMul. */
static void test_act_fusion(void **state)
{
    (void)state;
    for (int k = 0; k < SM_ACT_COUNT; k++) {
        expect_fused("%x: f32[1,2,5,5], %w: f32[3,2,3,3]",
                     "  %a = Conv(%x, %w) @conv\n", SM_OP_FusedConv,
                     (sm_act_kind)k);
        expect_fused("%x: f32[4,6], %w: f32[5,6], %c: f32[5]",
                     "  %a = Gemm(%x, %w, %c) {transB = 1} @gemm\n",
                     SM_OP_FusedGemm, (sm_act_kind)k);
        expect_fused("%x: f32[2,4,6], %w: f32[6,5]",
                     "  %a = MatMul(%x, %w) @mm\n", SM_OP_FusedGemm,
                     (sm_act_kind)k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_act_names),
        cmocka_unit_test(test_act_vector),
        cmocka_unit_test(test_act_fusion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
