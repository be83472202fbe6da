/*
 * test_bench.c - a smoke test of `smelt bench` as a user runs it: two
 * timed runs of a small model print the figures, --json prints one JSON
 * line, --profile a per-op table, --trace a Chrome trace file; a
 * symbolic dim without --dim is refused with a hint. It checks that the
 * verb works, never how fast anything is (benchmarks are not tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define SMELT SMELT_BUILD_DIR "/smelt"

static int run(const char *cmd, char **out)
{
    return tu_sh(NULL, cmd, out);
}

static int have_smelt(void)
{
    if (access(SMELT, X_OK) == 0)
        return 1;
    print_message("skipping: %s not built\n", SMELT);
    return 0;
}

static void test_bench_runs(void **state)
{
    (void)state;
    if (!have_smelt())
        return;
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd, "%s bench %s --runs 2 --warmup 1 --profile",
             SMELT, tu_path("graphs/cnn_small.ir"));
    assert_int_equal(run(cmd, &out), 0);
    assert_non_null(strstr(out, "latency: median "));
    assert_non_null(strstr(out, "(2 runs, 1 warmup)"));
    assert_non_null(strstr(out, "memory:  arena "));
    assert_non_null(strstr(out, "peak RSS"));
    assert_non_null(strstr(out, "kernels:"));
    assert_non_null(strstr(out, "GFLOP/s"));
    assert_non_null(strstr(out, "Conv")); /* a row of the profile */
    free(out);

    char trace[] = "/tmp/smelt-trace-XXXXXX";
    int fd = mkstemp(trace);
    assert_true(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd,
             "%s bench %s --runs 2 --warmup 0 --threads 2 --json --trace %s",
             SMELT, tu_path("graphs/cnn_small.ir"), trace);
    assert_int_equal(run(cmd, &out), 0);
    assert_true(out[0] == '{');
    assert_non_null(strstr(out, "\"median_ms\":"));
    assert_non_null(strstr(out, "\"threads\":2"));
    free(out);
    char *t = tu_read_file(trace, NULL);
    assert_non_null(t);
    assert_non_null(strstr(t, "\"traceEvents\""));
    assert_non_null(strstr(t, "\"ph\":\"X\""));
    free(t);
    unlink(trace);
}

static void test_bench_errors(void **state)
{
    (void)state;
    if (!have_smelt())
        return;
    char cmd[2048], *out;
    /* examples/mlp.ir has x: f32[batch,16] */
    snprintf(cmd, sizeof cmd, "%s bench %s/../examples/mlp.ir --runs 1", SMELT,
             SMELT_TEST_DIR);
    /* an unbound symbolic dim is 1, and bench says so */
    assert_int_equal(run(cmd, &out), 0);
    assert_non_null(strstr(out, "dim 0 (batch) set to 1; --dim batch=N"));
    free(out);
    snprintf(cmd, sizeof cmd,
             "%s bench %s/../examples/mlp.ir --runs 2 --dim batch=3", SMELT,
             SMELT_TEST_DIR);
    assert_int_equal(run(cmd, &out), 0);
    assert_non_null(strstr(out, "latency: median"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s bench %s --runs 0", SMELT,
             tu_path("graphs/cnn_small.ir"));
    assert_int_equal(run(cmd, &out), 2);
    assert_non_null(
        strstr(out, "--runs needs a whole number in 1..1000000, got '0'"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s bench %s --isa sse9", SMELT,
             tu_path("graphs/cnn_small.ir"));
    assert_int_equal(run(cmd, &out), 1);
    assert_non_null(strstr(out, "unknown isa 'sse9'"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_runs),
        cmocka_unit_test(test_bench_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
