/*
 * test_profile_api.c - what the profiler reads from the library: a
 * plan's buffers (every slot and workspace with its lifetime and arena
 * place, regions live at once never overlapping), a step's operands as
 * text (cut to the caller's buffer), and a profiled session's work items
 * (every one belongs to a step and a thread of the pool, and nests in
 * its step's time on thread 0). Bad arguments are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Conv -> Relu -> MaxPool -> Conv on 2x3x32x32: arena buffers, in-place
 * sharing, workspaces and parallel kernels. The weights' literals are
 * written out here (the text IR has no splat). */
static char *model_text(void)
{
    size_t cap = 64 * 1024, at = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    at += (size_t)snprintf(t + at, cap - at,
                           "graph m(%%x: f32[2,3,32,32]) {\n"
                           "  %%w: f32[8,3,3,3] = const [");
    for (int i = 0; i < 8 * 3 * 9; i++)
        at += (size_t)snprintf(t + at, cap - at, "%s%g", i ? ", " : "",
                               (double)(i % 7 - 3) * 0.05);
    at +=
        (size_t)snprintf(t + at, cap - at, "]\n  %%w2: f32[8,8,3,3] = const [");
    for (int i = 0; i < 8 * 8 * 9; i++)
        at += (size_t)snprintf(t + at, cap - at, "%s%g", i ? ", " : "",
                               (double)(i % 5 - 2) * 0.03);
    snprintf(t + at, cap - at,
             "]\n"
             "  %%c: f32[2,8,30,30] = Conv(%%x, %%w)\n"
             "  %%r: f32[2,8,30,30] = Relu(%%c)\n"
             "  %%p: f32[2,8,15,15] = MaxPool(%%r) {kernel_shape = [2, 2], "
             "strides = [2, 2]}\n"
             "  %%d: f32[2,8,13,13] = Conv(%%p, %%w2)\n"
             "  return %%d\n"
             "}\n");
    return t;
}

static smelt_plan_t *compile(smelt_ctx_t *ctx, int threads)
{
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = NULL;
    char *model = model_text();
    assert_int_equal(smelt_graph_parse(ctx, model, strlen(model), "m.ir", &g),
                     SMELT_OK);
    free(model);
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = threads;
    assert_int_equal(smelt_plan_compile_take(ctx, g, &po, &p), SMELT_OK);
    return p;
}

/* Every arena buffer lives within the steps; regions (a buffer and those
 * sharing its bytes) live at one step do not overlap; weights are
 * listed with their bytes. */
static void test_buffers(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_plan_t *p = compile(ctx, 1);
    int n = smelt_plan_num_buffers(p), steps = smelt_plan_num_steps(p);
    assert_true(n > 0);
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &st), SMELT_OK);
    smelt_plan_buffer_info *b = calloc((size_t)n, sizeof *b);
    int weights = 0, inputs = 0, outputs = 0;
    for (int i = 0; i < n; i++) {
        b[i] =
            (smelt_plan_buffer_info)SMELT_STRUCT_INIT(smelt_plan_buffer_info);
        assert_int_equal(smelt_plan_buffer(p, i, &b[i]), SMELT_OK);
        weights += b[i].kind == SMELT_BUFFER_WEIGHT && b[i].bytes > 0;
        inputs += b[i].kind == SMELT_BUFFER_INPUT;
        outputs += b[i].kind == SMELT_BUFFER_OUTPUT;
        if (b[i].kind != SMELT_BUFFER_ARENA &&
            b[i].kind != SMELT_BUFFER_WORKSPACE)
            continue;
        assert_true(b[i].first >= 0 && b[i].first <= b[i].last);
        assert_true(b[i].last < steps);
        assert_true(b[i].offset >= 0);
        assert_true(b[i].offset + b[i].bytes <= st.arena_bytes);
    }
    assert_int_equal(weights, 2);
    assert_int_equal(inputs, 1);
    assert_int_equal(outputs, 1);
    /* regions: a root and its sharers' union */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const smelt_plan_buffer_info *x = &b[i], *y = &b[j];
            if ((x->kind != SMELT_BUFFER_ARENA &&
                 x->kind != SMELT_BUFFER_WORKSPACE) ||
                (y->kind != SMELT_BUFFER_ARENA &&
                 y->kind != SMELT_BUFFER_WORKSPACE))
                continue;
            int rx = x->shares >= 0 ? x->shares : i;
            int ry = y->shares >= 0 ? y->shares : j;
            if (rx == ry)
                continue;
            int live = x->first <= y->last && y->first <= x->last;
            int overlap = x->offset < y->offset + y->bytes &&
                          y->offset < x->offset + x->bytes;
            if (live && overlap)
                fail_msg("buffers '%s' and '%s' live together overlap", x->name,
                         y->name);
        }
    free(b);
    smelt_plan_buffer_info bad = SMELT_STRUCT_INIT(smelt_plan_buffer_info);
    assert_int_equal(smelt_plan_buffer(p, n, &bad), SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_plan_buffer(p, -1, &bad), SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_plan_buffer(NULL, 0, &bad), SMELT_ERR_INVALID_ARG);
    bad.struct_size = 3;
    assert_int_equal(smelt_plan_buffer(p, 0, &bad), SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_plan_num_buffers(NULL), 0);
    smelt_plan_free(p);
    smelt_ctx_free(ctx);
}

/* The first Conv's operands, in full and cut to a small buffer. */
static void test_step_shapes(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_plan_t *p = compile(ctx, 1);
    char buf[256];
    int conv = -1;
    for (int i = 0; i < smelt_plan_num_steps(p) && conv < 0; i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
        if (strstr(si.op, "Conv"))
            conv = i;
    }
    assert_true(conv >= 0);
    assert_int_equal(smelt_plan_step_shapes(p, conv, buf, sizeof buf),
                     SMELT_OK);
    assert_non_null(strstr(buf, "f32[2,3,32,32], f32[8,3,3,3]"));
    assert_non_null(strstr(buf, " -> f32[2,8,30,30]"));
    char small[8];
    assert_int_equal(smelt_plan_step_shapes(p, conv, small, sizeof small),
                     SMELT_OK);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(strncmp(small, buf, sizeof small - 1), 0);
    assert_int_equal(smelt_plan_step_shapes(p, -1, buf, sizeof buf),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_plan_step_shapes(p, 0, buf, 0),
                     SMELT_ERR_INVALID_ARG);
    smelt_plan_free(p);
    smelt_ctx_free(ctx);
}

/* A profiled run on 2 threads leaves work items: thread 0 takes chunks
 * of every parallel loop, so some are its own, nested in their step. */
static void test_work_items(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_plan_t *p = compile(ctx, 2);
    smelt_session_t *s = NULL;
    assert_int_equal(smelt_session_init(ctx, p, &s), SMELT_OK);
    smelt_tensor_t *x = NULL, *out = NULL;
    int64_t dims[4] = {2, 3, 32, 32};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 4, dims, &x),
                     SMELT_OK);
    /* not profiled: no items */
    assert_int_equal(smelt_session_run(ctx, s, &x, 1, &out, 1), SMELT_OK);
    smelt_tensor_free(out);
    assert_int_equal(smelt_session_num_work_items(s), 0);
    smelt_session_set_profiling(s, 1);
    assert_int_equal(smelt_session_run(ctx, s, &x, 1, &out, 1), SMELT_OK);
    smelt_tensor_free(out);
    int n = smelt_session_num_work_items(s), own = 0;
    assert_true(n > 0);
    assert_int_equal(smelt_session_dropped_work_items(s), 0);
    for (int i = 0; i < n; i++) {
        smelt_work_item w = SMELT_STRUCT_INIT(smelt_work_item);
        assert_int_equal(smelt_session_work_item(s, i, &w), SMELT_OK);
        assert_true(w.step >= 0 && w.step < smelt_plan_num_steps(p));
        assert_true(w.thread >= 0 && w.thread < 2);
        assert_true(w.start_ms <= w.end_ms);
        if (w.thread == 0) {
            double t0, t1;
            assert_int_equal(smelt_session_step_time(s, w.step, &t0, &t1),
                             SMELT_OK);
            assert_true(w.start_ms >= t0 && w.end_ms <= t1);
            own++;
        }
    }
    assert_true(own > 0);
    smelt_work_item w = SMELT_STRUCT_INIT(smelt_work_item);
    assert_int_equal(smelt_session_work_item(s, n, &w), SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_session_work_item(NULL, 0, &w),
                     SMELT_ERR_INVALID_ARG);
    /* off again: later runs record nothing */
    smelt_session_set_profiling(s, 0);
    assert_int_equal(smelt_session_run(ctx, s, &x, 1, &out, 1), SMELT_OK);
    smelt_tensor_free(out);
    assert_int_equal(smelt_session_num_work_items(s), 0);
    smelt_tensor_free(x);
    smelt_session_free(s);
    smelt_plan_free(p);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_step_shapes),
        cmocka_unit_test(test_work_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
