/*
 * test_plan_remat.c - recomputation under a memory budget (plan/remat.c):
 * the joint graph of a deep MLP planned with and without a budget gives
 * the same numbers, the budgeted plan recomputes values and has a
 * smaller arena, and no value is recomputed without a budget or when the
 * budget is already met.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define LAYERS 4
#define BATCH 512
#define WIDTH 128

/* graph mlp(%x, %w0..%w3): LAYERS of MatMul + Tanh/Relu/Sigmoid, mean
 * loss, differentiated with respect to the weights. */
static smelt_graph_t *joint_mlp(smelt_ctx_t *ctx)
{
    char text[4096];
    int n =
        snprintf(text, sizeof text, "graph mlp(%%x: f32[%d,%d]", BATCH, WIDTH);
    for (int l = 0; l < LAYERS; l++)
        n += snprintf(text + n, sizeof text - (size_t)n, ", %%w%d: f32[%d,%d]",
                      l, WIDTH, WIDTH);
    n += snprintf(text + n, sizeof text - (size_t)n, ") {\n");
    const char *acts[] = {"Tanh", "Relu", "Sigmoid"};
    for (int l = 0; l < LAYERS; l++) {
        char src[16] = "x";
        if (l)
            snprintf(src, sizeof src, "h%d", l - 1);
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "  %%m%d = MatMul(%%%s, %%w%d)\n  %%h%d = %s(%%m%d)\n", l,
                      src, l, l, acts[l % 3], l);
    }
    snprintf(text + n, sizeof text - (size_t)n, "  return %%h%d\n}\n",
             LAYERS - 1);
    smelt_graph_t *g = NULL, *j = NULL;
    if (smelt_graph_parse(ctx, text, strlen(text), "mlp.ir", &g) != SMELT_OK)
        fail_msg("%s\n%s", smelt_ctx_error(ctx), text);
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    const char *wrt[LAYERS] = {"w0", "w1", "w2", "w3"};
    o.wrt = wrt;
    o.n_wrt = LAYERS;
    o.loss_reduce = SMELT_LOSS_MEAN;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    smelt_graph_free(g);
    return j;
}

static smelt_tensor_t *filled(smelt_ctx_t *ctx, int64_t r, int64_t c,
                              unsigned seed, float scale)
{
    smelt_tensor_t *t;
    int64_t dims[2] = {r, c};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &t),
                     SMELT_OK);
    float *d = smelt_tensor_data(t);
    for (int64_t i = 0; i < r * c; i++) {
        seed = seed * 1103515245u + 12345u;
        d[i] = scale * ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
    }
    return t;
}

/* Compiles j with budget and runs it; fills out[] and the stats. */
static smelt_plan_t *run(smelt_ctx_t *ctx, const smelt_graph_t *j,
                         int64_t budget, smelt_tensor_t **in, int n_in,
                         smelt_tensor_t **out, int n_out, smelt_plan_stats *st)
{
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.memory_budget = budget;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, j, &o, &p) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    if (smelt_plan_run(ctx, p, in, n_in, out, n_out) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_plan_get_stats(p, st), SMELT_OK);
    return p;
}

static void test_budget(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = joint_mlp(ctx);
    int n_in = smelt_graph_num_inputs(j), n_out = smelt_graph_num_outputs(j);
    assert_int_equal(n_in, 1 + LAYERS);
    smelt_tensor_t *in[1 + LAYERS], *a[16] = {0}, *b[16] = {0};
    in[0] = filled(ctx, BATCH, WIDTH, 7, 1.0f);
    for (int l = 0; l < LAYERS; l++)
        in[1 + l] = filled(ctx, WIDTH, WIDTH, 11u + (unsigned)l, 0.2f);
    smelt_plan_stats free_st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_stats tight_st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_t *p0 = run(ctx, j, 0, in, n_in, a, n_out, &free_st);
    assert_int_equal(free_st.recomputed, 0);
    /* a budget already met changes nothing */
    smelt_plan_stats met = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_tensor_t *c[16] = {0};
    smelt_plan_t *p1 =
        run(ctx, j, free_st.arena_bytes, in, n_in, c, n_out, &met);
    assert_int_equal(met.recomputed, 0);
    assert_int_equal(met.arena_bytes, free_st.arena_bytes);
    /* an impossible budget recomputes what it can */
    smelt_plan_t *p2 = run(ctx, j, 1, in, n_in, b, n_out, &tight_st);
    print_message("arena %lld bytes kept, %lld with %d values recomputed\n",
                  (long long)free_st.arena_bytes,
                  (long long)tight_st.arena_bytes, tight_st.recomputed);
    assert_true(tight_st.recomputed > 0);
    assert_true(tight_st.arena_bytes < free_st.arena_bytes);
    assert_int_equal(tight_st.steps, free_st.steps + tight_st.recomputed);
    for (int k = 0; k < n_out; k++) {
        assert_int_equal(smelt_tensor_numel(a[k]), smelt_tensor_numel(b[k]));
        const float *x = smelt_tensor_data(a[k]), *y = smelt_tensor_data(b[k]);
        for (int64_t i = 0; i < smelt_tensor_numel(a[k]); i++)
            assert_true(x[i] == y[i]); /* same kernels, same order */
    }
    /* the plan says which steps recompute */
    char *text = NULL;
    assert_int_equal(smelt_plan_print(ctx, p2, &text), SMELT_OK);
    const char *dump = getenv("REMAT_PLAN"); /* a file to write it to */
    FILE *f = dump ? fopen(dump, "w") : NULL;
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    assert_non_null(strstr(text, "recompute of step"));
    assert_non_null(strstr(text, "# recomputed: "));
    smelt_string_free(text);
    for (int k = 0; k < n_out; k++) {
        smelt_tensor_free(a[k]);
        smelt_tensor_free(b[k]);
        smelt_tensor_free(c[k]);
    }
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    smelt_plan_free(p0);
    smelt_plan_free(p1);
    smelt_plan_free(p2);
    smelt_graph_free(j);
    smelt_ctx_free(ctx);
}

static void test_bad_budget(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = joint_mlp(ctx);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.memory_budget = -5;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, j, &o, &p), SMELT_ERR_INVALID_ARG);
    assert_null(p);
    assert_non_null(strstr(smelt_ctx_error(ctx), "memory_budget"));
    smelt_graph_free(j);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_bad_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
