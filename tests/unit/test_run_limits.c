/*
 * test_run_limits.c - runs that would grow without bound or never end
 * stop with SMELT_ERR_LIMIT naming the Loop and the limit: scan outputs
 * too large to hold (declared, or M trips with no condition) before the
 * first iteration, a carried value that doubles once the loop holds half
 * the memory limit, a loop with no bound when the run's timeout is up.
 * In the reference interpreter and in a plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "testutil.h"

static smelt_tensor_t *scalar_i64(int64_t v)
{
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_I64, 0, NULL, &t),
                     SMELT_OK);
    *(int64_t *)smelt_tensor_data(t) = v;
    return t;
}

static smelt_tensor_t *ones(int64_t n)
{
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_F32, 1, &n, &t),
                     SMELT_OK);
    for (int64_t i = 0; i < n; i++)
        ((float *)smelt_tensor_data(t))[i] = 1.0f;
    return t;
}

/* Runs text's graph on (n, x) with the reference interpreter, then as a
 * plan at -O0 (timeout_ms as the plan's option), and checks that both
 * fail with SMELT_ERR_LIMIT and a message holding each of want[]. */
static void expect_limit(const char *text, int64_t n, int64_t x_len,
                         int64_t timeout_ms, const char *const *want)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    smelt_tensor_t *in[2] = {scalar_i64(n), ones(x_len)}, *out = NULL;
    for (int mode = 0; mode < 2; mode++) {
        smelt_status st;
        smelt_plan_t *p = NULL;
        if (mode == 0) {
            smelt_ctx_set_timeout(ctx, timeout_ms);
            st = smelt_graph_run_reference(ctx, g, in, 2, &out, 1);
            smelt_ctx_set_timeout(ctx, 0);
        } else {
            smelt_plan_options o;
            smelt_plan_options_default(&o);
            o.level = 0;
            o.inputs = in;
            o.n_inputs = 2;
            o.timeout_ms = timeout_ms;
            if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
                fail_msg("compile: %s", smelt_ctx_error(ctx));
            st = smelt_plan_run(ctx, p, in, 2, &out, 1);
        }
        const char *msg = smelt_ctx_error(ctx);
        print_message("%s: %s\n", mode ? "plan" : "reference", msg);
        if (st != SMELT_ERR_LIMIT)
            fail_msg("%s: status %s, message '%s'", mode ? "plan" : "reference",
                     smelt_status_name(st), msg);
        assert_null(out);
        for (int i = 0; want[i]; i++)
            if (!strstr(msg, want[i]))
                fail_msg("'%s' not in '%s'", want[i], msg);
        smelt_plan_free(p);
    }
    smelt_tensor_free(in[0]);
    smelt_tensor_free(in[1]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The graph declares a scan output of 2^40 rows: refused before the body
 * runs once, where it used to grow iteration by iteration. */
static void test_declared_scan_too_large(void **state)
{
    (void)state;
    const char *text =
        "graph g(%n: i64[], %x: f32[4]) {\n"
        "  %acc: f32[4], %scan: f32[1099511627776,4] = Loop(%n, _, %x) "
        "@grow body(%i: i64[], %c: bool[], %v: f32[4]) {\n"
        "    %v1: f32[4] = Relu(%v)\n"
        "    return %c, %v1, %v1\n"
        "  }\n"
        "  return %scan\n"
        "}\n";
    const char *want[] = {"'grow'", "scan output 0", "17592186044416 bytes",
                          "limit", NULL};
    expect_limit(text, 3, 4, 0, want);
}

/* M = 2^40 trips and no condition to end the loop early: the stacked
 * scan output's size is known before the first iteration. */
static void test_trip_count_scan_too_large(void **state)
{
    (void)state;
    const char *text = "graph g(%n: i64[], %x: f32[4]) {\n"
                       "  %acc: f32[4], %scan: f32[?,4] = Loop(%n, _, %x) "
                       "@grow body(%i: i64[], %c: bool[], %v: f32[4]) {\n"
                       "    %v1: f32[4] = Relu(%v)\n"
                       "    return %c, %v1, %v1\n"
                       "  }\n"
                       "  return %scan\n"
                       "}\n";
    const char *want[] = {"'grow'", "scan output 0", "limit", NULL};
    expect_limit(text, (int64_t)1 << 40, 4, 0, want);
}

/* A carried value that doubles every iteration: the loop stops when it
 * holds half the (lowered) memory limit, naming the iterations made. */
static void test_doubling_concat(void **state)
{
    (void)state;
    const char *text = "graph g(%n: i64[], %x: f32[?]) {\n"
                       "  %r: f32[?] = Loop(%n, _, %x) @double "
                       "body(%i: i64[], %c: bool[], %v: f32[?]) {\n"
                       "    %w: f32[?] = Concat(%v, %v) {axis = 0}\n"
                       "    return %c, %w\n"
                       "  }\n"
                       "  return %r\n"
                       "}\n";
    size_t old = sm_alloc_set_limit((size_t)1 << 20);
    const char *want[] = {"'double'", "after 18 iterations", "1048576 bytes",
                          "half the memory limit", NULL};
    expect_limit(text, 64, 1, 0, want);
    sm_alloc_set_limit(old);
}

/* No trip count and a condition that stays true: the run's timeout
 * stops it (the reference run takes the ctx's, the plan its own). */
static void test_unbounded_loop_times_out(void **state)
{
    (void)state;
    const char *text = "graph g(%n: i64[], %x: f32[4]) {\n"
                       "  %true: bool[] = const true\n"
                       "  %r: f32[4] = Loop(_, %true, %x) @forever "
                       "body(%i: i64[], %c: bool[], %v: f32[4]) {\n"
                       "    %v1: f32[4] = Relu(%v)\n"
                       "    return %c, %v1\n"
                       "  }\n"
                       "  return %r\n"
                       "}\n";
    const char *want[] = {"'forever'", "time limit (timeout) of 50 ms", NULL};
    expect_limit(text, 0, 4, 50, want);
}

/* A timeout that is not reached changes nothing. */
static void test_timeout_not_reached(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, "graph g(%x: f32[4]) {\n"
                                     "  %y: f32[4] = Relu(%x)\n"
                                     "  return %y\n"
                                     "}\n");
    smelt_tensor_t *x = ones(4), *y = NULL;
    smelt_ctx_set_timeout(ctx, 60000);
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, &y, 1), SMELT_OK);
    assert_true(smelt_tensor_get_f64(y, 3) == 1.0);
    smelt_tensor_free(y);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.timeout_ms = -1;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_ERR_INVALID_ARG);
    assert_null(p);
    smelt_tensor_free(x);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declared_scan_too_large),
        cmocka_unit_test(test_trip_count_scan_too_large),
        cmocka_unit_test(test_doubling_concat),
        cmocka_unit_test(test_unbounded_loop_times_out),
        cmocka_unit_test(test_timeout_not_reached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
