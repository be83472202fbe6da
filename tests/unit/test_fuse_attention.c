/*
 * test_fuse_attention.c - the fuse_attention pass beyond its FileCheck
 * cases (tests/passes/fuse_attention_*.ir):
 *
 *  - --why-not-fused names the reason of each near miss of
 *    fuse_attention_negative.ir, and logs nothing without the option;
 *  - the script frontend's `softmax(q @ k.transpose(-1, -2) * s) @ v`
 *    becomes one Attention node at -O2 and computes what it did;
 *  - memory (issue 15 item 3): the planned arena of one attention layer,
 *    batch 1, 8 heads of 64, grows linearly with the sequence length when
 *    the pass runs (at 2048: at most 8 MiB, and under 2.2 times the arena
 *    at 1024), where without it the score matrices make it quadratic.
 *    Bytes planned, never times.
 */
#include "fusion_util.h"

#include "ir/op.h"
#include "ir/rewrite.h"

/* Whether some pass's log holds fragment. */
static int log_has(const sm_pass_report *rep, const char *fragment)
{
    for (int i = 0; i < rep->n; i++)
        if (rep->steps[i].stats.log &&
            strstr(rep->steps[i].stats.log, fragment))
            return 1;
    return 0;
}

static void test_why_not_fused(void **state)
{
    (void)state;
    size_t len;
    char *text =
        tu_read_file(SMELT_TEST_DIR "/passes/fuse_attention_negative.ir", &len);
    assert_non_null(text);
    static const char *const reasons[] = {
        "%p1 (Softmax): Attention pattern stops: the Softmax is not over the "
        "last axis",
        "%p2 (Softmax): Attention pattern stops: the scores are scaled by a "
        "value that is not a constant scalar",
        "%p3 (Softmax): Attention pattern stops: an Add before the Softmax "
        "adds a mask that does not broadcast onto the scores",
        "%p4 (Softmax): Attention pattern stops: the score matrix Q K^T has a "
        "second reader",
        "%p5 (Softmax): Attention pattern stops: the attention probabilities",
        "%p6 (Softmax): Attention pattern stops: a Where before the Softmax "
        "fills with neither -inf",
        "%p7 (Softmax): Attention pattern stops: the scores are scaled after "
        "the mask",
    };
    for (int why = 0; why <= 1; why++) {
        sm_graph *g = fu_parse(text);
        sm_pass_report rep;
        fu_passes(g, "fuse_attention", why, &rep);
        assert_int_equal(fu_count(g->top, SM_OP_Attention), 0);
        for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
            if (log_has(&rep, reasons[i]) != why)
                fail_msg("why_not_fused %d: '%s' %s the log", why, reasons[i],
                         why ? "missing from" : "in");
        sm_pass_report_free(&rep);
        sm_graph_free(g);
    }
    free(text);
}

/* The script frontend's attention fuses, and computes what it did. */
static void test_script(void **state)
{
    (void)state;
    static const char src[] =
        "def attn(q: Tensor[f32, 2, 4, 6, 8], k: Tensor[f32, 2, 4, 7, 8],\n"
        "         v: Tensor[f32, 2, 4, 7, 5]) -> Tensor:\n"
        "    s = 0.35355339\n"
        "    return softmax(q @ k.transpose(-1, -2) * s) @ v\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL, *orig = NULL;
    if (smelt_script_compile(ctx, src, strlen(src), "attn.py", NULL, &g) !=
        SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    assert_int_equal(sm_graph_clone(ctx, g, &orig), SMELT_OK);
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 2;
    assert_int_equal(smelt_graph_optimize(ctx, g, &o, NULL), SMELT_OK);
    assert_int_equal(fu_count(g->top, SM_OP_Attention), 1);
    assert_int_equal(fu_count(g->top, SM_OP_Softmax), 0);
    assert_true(fu_compare(orig, g, 7) < 1e-5);
    sm_graph_free(orig);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The planned arena of one self-attention layer at sequence length t
 * (batch 1, 8 heads of 64, the heads' outputs side by side after it), at
 * -O level. */
static int64_t arena_at(int t, int level)
{
    char text[2048];
    snprintf(text, sizeof text,
             "graph attn(%%q: f32[1,8,%d,64], %%k: f32[1,8,%d,64], "
             "%%v: f32[1,8,%d,64]) {\n"
             "  %%s8: f32[] = const 0.125\n"
             "  %%kt = Transpose(%%k) {perm = [0, 1, 3, 2]}\n"
             "  %%s = MatMul(%%q, %%kt)\n"
             "  %%d = Mul(%%s, %%s8)\n"
             "  %%p = Softmax(%%d) {axis = -1}\n"
             "  %%o = MatMul(%%p, %%v)\n"
             "  %%m = Transpose(%%o) {perm = [0, 2, 1, 3]}\n"
             "  return %%m\n}\n",
             t, t, t);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = NULL;
    if (smelt_graph_parse(ctx, text, strlen(text), "attn", &g) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.level = level;
    if (smelt_plan_compile(ctx, g, &po, &p) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &st), SMELT_OK);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return st.arena_bytes;
}

static void test_arena_linear(void **state)
{
    (void)state;
    int64_t a1 = arena_at(1024, 2), a2 = arena_at(2048, 2);
    int64_t u2 = arena_at(2048, 1);
    print_message("arena at 1024: %lld bytes, at 2048: %lld bytes fused, "
                  "%lld bytes unfused\n",
                  (long long)a1, (long long)a2, (long long)u2);
    assert_true(a1 > 0);
    assert_true(a2 <= 8 << 20);
    assert_true((double)a2 < 2.2 * (double)a1);
    /* the two score matrices, 8 x 2048 x 2048 floats each */
    assert_true(u2 >= (int64_t)128 << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_why_not_fused),
        cmocka_unit_test(test_script),
        cmocka_unit_test(test_arena_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
