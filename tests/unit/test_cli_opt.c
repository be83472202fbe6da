/*
 * test_cli_opt.c - the `smelt opt` and `smelt check` verbs, run as the
 * built binary: outputs, reports, files written, exit codes, and the
 * bisection naming a deliberately broken pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char dir[64];

static const char *model =
    "graph m(%x: f32[2,3]) {\n"
    "  %w: f32[3,2] = const [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\n"
    "  %b1: f32[2] = const [0.5, 0.5]\n"
    "  %b2: f32[2] = const [0.25, 0.25]\n"
    "  %b: f32[2] = Add(%b1, %b2)\n"
    "  %h: f32[2,2] = MatMul(%x, %w)\n"
    "  %i: f32[2,2] = Identity(%h)\n"
    "  %y: f32[2,2] = Add(%i, %b)\n"
    "  %dead: f32[2,2] = Exp(%y)\n"
    "  return %y\n"
    "}\n";

static int sh(const char *cmd, char **out)
{
    return tu_sh(dir, cmd, out);
}

/* A MobileNet-style chain (1x1, depthwise 3x3, 1x1 with Relus) with a
 * symbolic batch and deterministic weights, written to path. */
static int write_conv_chain(const char *path)
{
    static const int w[3][4] = {{32, 32, 1, 1}, {32, 1, 3, 3}, {64, 32, 1, 1}};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("graph c(%x: f32[batch,32,10,10]) {\n", f);
    unsigned x = 12345u;
    for (int c = 0; c < 3; c++) {
        fprintf(f, "  %%w%d: f32[%d,%d,%d,%d] = const [", c, w[c][0], w[c][1],
                w[c][2], w[c][3]);
        for (int i = 0; i < w[c][0] * w[c][1] * w[c][2] * w[c][3]; i++) {
            x = x * 1103515245u + 12345u;
            fprintf(f, "%s%.4f", i ? ", " : "",
                    (double)((x >> 8) & 0xffff) / 65536.0 - 0.5);
        }
        fputs("]\n", f);
    }
    fputs("  %a = Conv(%x, %w0)\n  %r = Relu(%a)\n"
          "  %d = Conv(%r, %w1) {group = 32, pads = [1, 1, 1, 1]}\n"
          "  %s = Relu(%d)\n  %y = Conv(%s, %w2)\n  return %y\n}\n",
          f);
    return fclose(f) == 0 ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/smelt-cli-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char path[128];
    snprintf(path, sizeof path, "%s/m.ir", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(model, f);
    fclose(f);
    /* NaN and -inf come out for inputs <= 0: they must compare equal */
    snprintf(path, sizeof path, "%s/nan.ir", dir);
    if (!(f = fopen(path, "w")))
        return -1;
    fputs("graph n(%x: f32[4,4]) {\n"
          "  %one: f32[] = const 1.0\n"
          "  %a: f32[4,4] = Mul(%x, %one)\n"
          "  %y: f32[4,4] = Log(%a)\n"
          "  return %y\n"
          "}\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/chain.ir", dir);
    return write_conv_chain(path);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#define SMELT SMELT_BUILD_DIR "/smelt"

static void test_opt_prints_graph(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " opt m.ir", &out), 0);
    assert_non_null(strstr(out, "%b: f32[2] = const [0.75, 0.75]\n"));
    assert_non_null(strstr(out, "%y: f32[2,2] = Add(%h, %b)\n"));
    assert_null(strstr(out, "Identity"));
    assert_null(strstr(out, "Exp"));
    assert_non_null(strstr(out, "m.ir: 5 -> 2 nodes in 7 passes"));
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir -O0", &out), 0);
    assert_non_null(strstr(out, "Identity"));
    assert_non_null(strstr(out, "5 -> 5 nodes in 0 passes"));
    free(out);
}

static void test_opt_stats_and_output(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " opt m.ir --passes=fold,simplify,dce --stats "
                              "-o o.ir",
                        &out),
                     0);
    assert_non_null(strstr(out, "pass "));
    /* pass, nodes before -> after, folded, removed, fused */
    int before, after, folded, removed, fused;
    assert_int_equal(sscanf(strstr(out, "\nfold "), " fold %d -> %d %d %d %d",
                            &before, &after, &folded, &removed, &fused),
                     5);
    assert_true(before == 5 && after == 4 && folded == 1 && removed == 1 &&
                fused == 0);
    assert_int_equal(sscanf(strstr(out, "\nsimplify "),
                            " simplify %d -> %d %d %d", &before, &after,
                            &folded, &removed),
                     4);
    assert_true(before == 4 && after == 3 && removed == 1);
    assert_int_equal(
        sscanf(strstr(out, "\ndce "), " dce %d -> %d", &before, &after), 2);
    assert_true(before == 3 && after == 2);
    /* then the plan of the result: h, MatMul's product, is the only
     * arena value (y is the caller's), so nothing is written in place */
    assert_non_null(strstr(out, "\nplan of the optimized graph (2 steps, "));
    assert_non_null(strstr(out, " buffers shared, 0 steps in place\n"));
    assert_non_null(strstr(out, "  layout: 0 values channels-last, 0 "
                                "channel-blocked, the others NCHW\n"));
    assert_non_null(strstr(out, "wrote o.ir"));
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/o.ir", dir);
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "graph m(%x: f32[2,3]) {\n"));
    assert_non_null(strstr(text, "MatMul(%x, %w)"));
    free(text);
    /* the written model loads and checks again */
    assert_int_equal(sh(SMELT " check o.ir", &out), 0);
    free(out);
}

/* The numbers `smelt opt --stats` reports for the plan are the plan's
 * own (smelt_plan_get_stats of the same graph, compiled as smelt run
 * would); symbolic dims are bound with --dim, else named, not guessed. */
static void test_opt_plan_stats(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " opt chain.ir -O3 --stats -o c.ir", &out), 0);
    assert_non_null(strstr(out, "plan of the optimized graph: not compiled, "
                                "its memory and layout depend on the shapes: "
                                "input 'x' has unbound dims: batch (bind it "
                                "with --dim batch=SIZE)\n"));
    free(out);
    assert_int_equal(
        sh(SMELT " opt chain.ir -O3 --stats --dim batch=2 -o c.ir", &out), 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/chain.ir", dir);
    assert_int_equal(smelt_graph_load(ctx, path, &g), SMELT_OK);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.dims = "batch=2";
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    /* the chain's values between convolutions leave NCHW */
    assert_true(s.channels_last + s.channel_blocked > 0);
    char want[256];
    snprintf(want, sizeof want,
             "; %d of %d buffers shared, %d steps in place\n"
             "  layout: %d values channels-last, %d channel-blocked, the "
             "others NCHW\n",
             s.shared_buffers, s.arena_buffers, s.inplace, s.channels_last,
             s.channel_blocked);
    if (!strstr(out, want))
        fail_msg("'%s' not in:\n%s", want, out);
    snprintf(want, sizeof want, "plan of the optimized graph (%d steps, isa ",
             s.steps);
    assert_non_null(strstr(out, want));
    free(out);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    assert_int_equal(sh(SMELT " opt chain.ir --dim batch", &out), 2);
    assert_non_null(strstr(out, "--dim needs NAME=SIZE"));
    free(out);
}

static void test_opt_onnx_output(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " opt m.ir -o o.onnx", &out), 0);
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/o.onnx", dir);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    if (smelt_onnx_load(ctx, path, &g) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_nodes(g), 2);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_opt_usage(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " opt", &out), 2);
    assert_non_null(strstr(out, "no FILE given"));
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir --passes=fold,nope", &out), 1);
    assert_non_null(strstr(out, "no pass named 'nope'"));
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir -O7", &out), 2);
    assert_non_null(strstr(out, "-O needs a whole number in 0..3, got '7'"));
    free(out);
    /* -O3, -O 3 and --level=3 are one option */
    assert_int_equal(sh(SMELT " opt m.ir -O 3 -o o1.ir", &out), 0);
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir --level=3 -o o2.ir", &out), 0);
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir --debug-dir", &out), 2);
    assert_non_null(strstr(out, "option --debug-dir needs a value (DIR)"));
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir --runs 3", &out), 2);
    assert_non_null(strstr(out, "'smelt opt' takes no --runs option"));
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir -o out.txt", &out), 1);
    assert_non_null(strstr(out, "must end in .ir or .onnx"));
    free(out);
    assert_int_equal(sh(SMELT " opt m.ir --fold-max-bytes lots", &out), 2);
    free(out);
    assert_int_equal(sh(SMELT " opt --list-passes", &out), 0);
    assert_non_null(strstr(out, "\nfold "));
    assert_non_null(strstr(out, "-O1: infer,fold,"));
    free(out);
    assert_int_equal(sh(SMELT " opt --help", &out), 0);
    assert_non_null(strstr(out, "--why-not-fused"));
    free(out);
}

static void test_opt_debug_dumps(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " opt m.ir --passes=fold,dce --debug-dir dd "
                              "-o d.ir",
                        &out),
                     0);
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/dd/index.txt", dir);
    char *index = tu_read_file(path, NULL);
    assert_non_null(index);
    assert_non_null(strstr(index, "000-captured.ir\tcaptured\tnodes=5\n"));
    assert_non_null(strstr(index, "001-fold.ir\tfold\tnodes=4\n"));
    assert_non_null(strstr(index, "002-dce.dot\tdce\tnodes=3\n"));
    /* then the plan the optimized graph compiles into */
    assert_non_null(strstr(index, "plan.txt\tplan\n"));
    free(index);
    snprintf(path, sizeof path, "%s/dd/plan.txt", dir);
    char *plan = tu_read_file(path, NULL);
    assert_non_null(plan);
    assert_non_null(strstr(plan, "# plan 'm': 3 steps"));
    assert_non_null(strstr(plan, " buffers shared, 0 in place\n"));
    assert_non_null(strstr(plan, "# layout: 0 values channels-last"));
    assert_non_null(strstr(plan, " MatMul "));
    free(plan);
    /* no plan for unbound dims: the dump says why */
    assert_int_equal(sh(SMELT " opt chain.ir --passes=dce --debug-dir dc "
                              "-o d.ir",
                        &out),
                     0);
    free(out);
    snprintf(path, sizeof path, "%s/dc/plan.txt", dir);
    plan = tu_read_file(path, NULL);
    assert_non_null(plan);
    assert_non_null(strstr(plan, "# no plan: plan: input 'x' is "
                                 "f32[batch,32,10,10]; a plan needs concrete "
                                 "shapes"));
    free(plan);
    /* SMELT_DEBUG=1 dumps into ./smelt-debug */
    assert_int_equal(
        sh("SMELT_DEBUG=1 " SMELT " opt m.ir --passes=cse -o e.ir", &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/smelt-debug/001-cse.ir", dir);
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "graph m("));
    free(text);
    snprintf(path, sizeof path, "%s/smelt-debug/plan.txt", dir);
    text = tu_read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "# plan 'm': "));
    free(text);
}

static void test_check_ok(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(sh(SMELT " check m.ir -O2 --seed 7", &out), 0);
    assert_non_null(strstr(out, "inputs: 1 random (seed 7)"));
    assert_non_null(strstr(out, "y                f32[2,2]"));
    assert_non_null(strstr(out, "1.3e-06     1e-05  ok"));
    assert_non_null(strstr(out, "deployment checklist:"));
    assert_non_null(strstr(out, "[x] graph valid"));
    assert_non_null(strstr(out, "[x] optimized graph: 1 of 1 output(s)"));
    assert_non_null(strstr(out, "the reference interpreter allocated"));
    /* the compiled plan runs too, at least with scalar kernels, and the
     * checklist says only that */
    assert_non_null(strstr(out, "  scalar   y "));
    assert_non_null(strstr(out, "[x] compiled plan (-O2) on scalar"));
    assert_non_null(strstr(out, "every output matches"));
    assert_null(strstr(out, "only backend"));
    assert_null(strstr(out, "no memory plan"));
    /* the plan of the optimized graph: one FusedGemm writing the output,
     * so the arena holds no value (a workspace at most) */
    assert_non_null(strstr(out, "[-] memory: plan arena "));
    assert_non_null(strstr(out, " buffers shared, 0 in place)"));
    assert_null(strstr(out, "bisecting"));
    free(out);
    assert_int_equal(sh(SMELT " check nan.ir", &out), 0);
    assert_non_null(strstr(out, "[x] optimized graph: 1 of 1"));
    free(out);
    /* numbers are numbers */
    assert_int_equal(sh(SMELT " check m.ir --seed abc", &out), 2);
    assert_non_null(strstr(out, "--seed needs a whole number"));
    free(out);
    assert_int_equal(sh(SMELT " check m.ir --rtol -1", &out), 2);
    free(out);
}

static void test_check_inputs_from_files(void **state)
{
    (void)state;
    int64_t dims[2] = {2, 3};
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &t), 0);
    float *p = smelt_tensor_data(t);
    for (int i = 0; i < 6; i++)
        p[i] = (float)i;
    char path[128];
    snprintf(path, sizeof path, "%s/x.npy", dir);
    assert_int_equal(smelt_npy_save(ctx, path, t), SMELT_OK);
    smelt_tensor_free(t);
    smelt_ctx_free(ctx);
    char *out;
    assert_int_equal(
        sh(SMELT " check m.ir --input x=x.npy --rtol 0 --atol 0", &out), 0);
    assert_null(strstr(out, "random"));
    assert_non_null(strstr(out, "0         0  ok"));
    free(out);
    assert_int_equal(sh(SMELT " check m.ir --input nope=x.npy", &out), 1);
    assert_non_null(strstr(out, "the graph has no input 'nope'"));
    free(out);
}

static void test_check_bisects_broken_pass(void **state)
{
    (void)state;
    char *out;
    /* without the variable the test pass does not exist */
    assert_int_equal(sh(SMELT " check m.ir --passes=fold,break_add,dce", &out),
                     1);
    assert_non_null(strstr(out, "no pass named 'break_add'"));
    free(out);
    assert_int_equal(sh("SMELT_TEST_BROKEN_PASS=1 " SMELT
                        " check m.ir --passes=infer,fold,simplify,break_add,"
                        "cse,dce",
                        &out),
                     1);
    assert_non_null(strstr(out, "DIFFERS"));
    assert_non_null(strstr(out, "bisecting the pipeline one pass at a time"));
    assert_non_null(strstr(out, "  fold           ok\n"));
    assert_non_null(strstr(out, "  simplify       ok\n"));
    assert_non_null(strstr(out, "  break_add      DIFFERS: output 'y'"));
    assert_non_null(strstr(out, "first pass that broke the results: "
                                "break_add\n"));
    assert_null(strstr(out, "  cse "));
    assert_non_null(strstr(out, "[ ] optimized graph: 0 of 1"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opt_prints_graph),
        cmocka_unit_test(test_opt_stats_and_output),
        cmocka_unit_test(test_opt_plan_stats),
        cmocka_unit_test(test_opt_onnx_output),
        cmocka_unit_test(test_opt_usage),
        cmocka_unit_test(test_opt_debug_dumps),
        cmocka_unit_test(test_check_ok),
        cmocka_unit_test(test_check_inputs_from_files),
        cmocka_unit_test(test_check_bisects_broken_pass),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
