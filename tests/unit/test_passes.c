/*
 * test_passes.c - the pass manager, the rewriter and the cleanup passes
 * through the C API: fold's size budget, CSE commutativity, DCE of unused
 * If outputs, the unroll threshold, pipelines, verify-after-each, debug
 * dumps, graph copies, and allocation failures walked over -O2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/tensor.h"
#include "ir/infer.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "ir/eval.h"
#include "runtime/interp.h"

static sm_graph *parse(const char *text)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL;
    if (smelt_graph_parse(ctx, text, strlen(text), "test", &g) != SMELT_OK)
        fail_msg("parse: %s", smelt_ctx_error(ctx));
    if (sm_graph_verify(ctx, g) != SMELT_OK)
        fail_msg("verify: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return g;
}

/* Runs the comma list `passes` over g with opt (NULL: defaults plus
 * verification), stats into rep when not NULL. */
static smelt_status run(smelt_ctx_t *ctx, sm_graph *g, const char *passes,
                        const sm_pass_options *opt, sm_pass_report *rep)
{
    sm_pass_options o;
    if (!opt) {
        sm_pass_options_default(&o);
        o.verify_each = 1;
        opt = &o;
    }
    const sm_pass_info **list;
    int n;
    smelt_status st = sm_pipeline_resolve(ctx, 0, passes, &list, &n);
    if (st == SMELT_OK)
        st = sm_pass_run(ctx, g, opt, list, n, rep);
    sm_free(list);
    return st;
}

static char *print(const sm_graph *g)
{
    char *s = NULL;
    assert_int_equal(smelt_graph_print(NULL, g, &s), SMELT_OK);
    return s;
}

static int count_op(const sm_block *b, sm_op op)
{
    int k = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        k += b->nodes[i]->op == op;
        for (int j = 0; j < b->nodes[i]->n_blocks; j++)
            k += count_op(b->nodes[i]->blocks[j], op);
    }
    return k;
}

/* ---- fold ---------------------------------------------------------------- */

static const char *budget_graph =
    "graph g(%x: f32[5,5]) {\n"
    "  %s4: i64[2] = const [4, 4]\n"
    "  %s5: i64[2] = const [5, 5]\n"
    "  %a: f32[4,4] = ConstantOfShape(%s4) {value = tensor f32[1] [1.0]}\n"
    "  %b: f32[5,5] = ConstantOfShape(%s5) {value = tensor f32[1] [2.0]}\n"
    "  %s: f32[] = ReduceSum(%a) {keepdims = 0}\n"
    "  %y: f32[5,5] = Add(%x, %b)\n"
    "  %z: f32[5,5] = Mul(%y, %s)\n"
    "  return %z\n"
    "}\n";

/* Folds budget_graph with a budget; returns the constants folded and
 * checks no constant the pass made exceeds it. */
static int fold_with_budget(size_t budget)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse(budget_graph);
    sm_pass_options o;
    sm_pass_options_default(&o);
    o.verify_each = 1;
    o.fold_max_bytes = budget;
    sm_pass_report rep;
    assert_int_equal(run(ctx, g, "fold", &o, &rep), SMELT_OK);
    assert_int_equal(rep.n, 1);
    int folded = rep.steps[0].stats.folded;
    for (int i = 0; i < g->top->n_consts; i++)
        assert_true(g->top->consts[i]->data->nbytes <= budget);
    sm_pass_report_free(&rep);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
    return folded;
}

static void test_fold_budget(void **state)
{
    (void)state;
    /* 64 bytes: %a (4x4 f32) and the sum over it fold, %b (100 B) not */
    assert_int_equal(fold_with_budget(64), 2);
    assert_int_equal(fold_with_budget(99), 2);
    assert_int_equal(fold_with_budget(100), 3);
    assert_int_equal(fold_with_budget(SM_FOLD_MAX_BYTES_DEFAULT), 3);
    /* the reason is logged */
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse(budget_graph);
    sm_pass_options o;
    sm_pass_options_default(&o);
    o.fold_max_bytes = 64;
    sm_pass_report rep;
    assert_int_equal(run(ctx, g, "fold", &o, &rep), SMELT_OK);
    assert_non_null(strstr(rep.steps[0].stats.log, "limit 64"));
    assert_non_null(strstr(rep.steps[0].stats.log, "larger than 64 bytes"));
    sm_pass_report_free(&rep);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_fold_failure_is_not_fatal(void **state)
{
    (void)state;
    /* index 7 is out of range (the verifier would say so; the pass runs
     * unverified here): evaluating the Gather fails, so it stays and the
     * pass goes on */
    const char *text = "graph g(%x: f32[1]) {\n"
                       "  %d: f32[3] = const [1.0, 2.0, 3.0]\n"
                       "  %i: i64[1] = const [7]\n"
                       "  %e: f32[1] = Gather(%d, %i)\n"
                       "  %y: f32[1] = Add(%x, %e)\n"
                       "  %k: f32[3] = Neg(%d)\n"
                       "  return %y, %k\n"
                       "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text), "t", &g),
                     SMELT_OK);
    sm_pass_options o;
    sm_pass_options_default(&o);
    o.verify_each = 0;
    sm_pass_report rep;
    assert_int_equal(run(ctx, g, "fold", &o, &rep), SMELT_OK);
    assert_int_equal(rep.steps[0].stats.folded, 1); /* the Neg */
    assert_non_null(strstr(rep.steps[0].stats.log, "not folded"));
    assert_non_null(strstr(rep.steps[0].stats.log, "index 7"));
    assert_int_equal(count_op(g->top, SM_OP_Gather), 1);
    sm_pass_report_free(&rep);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Shape arithmetic that overflows int64 (2^32 * 2^32) is the model's
 * error, named at its Mul with the values, not a wrapped 0 that makes the
 * Reshape after it fail the verifier ("invalid after pass 'fold'"). A
 * product that fits folds as before. */
static void test_fold_overflow_is_the_models_error(void **state)
{
    (void)state;
    const char *text = "graph g(%x: f32[65536, 65536], %y: f32[1]) {\n"
                       "  %s: i64[2] = Shape(%x)\n"
                       "  %m: i64[2] = Mul(%s, %s)\n"
                       "  %p: i64[2] = Mul(%m, %m) @square\n"
                       "  %r = Reshape(%y, %p)\n"
                       "  return %r, %m\n"
                       "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text), "t", &g),
                     SMELT_OK);
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.verify_each = 1;
    assert_int_equal(smelt_graph_optimize(ctx, g, &o, NULL), SMELT_ERR_LIMIT);
    const char *msg = smelt_ctx_error(ctx);
    if (!strstr(msg, "node 'square' (Mul): Mul overflows i64: element 0 is "
                     "1.8446744073709552e+19, not 0 (inputs [4294967296, "
                     "4294967296] and [4294967296, 4294967296])") ||
        strstr(msg, "invalid after"))
        fail_msg("%s", msg);
    sm_graph_free(g);
    /* Neg of INT64_MIN wraps as well; 3 * 5 does not */
    g = parse("graph g() {\n"
              "  %a: i64[2] = const [-9223372036854775808, 3]\n"
              "  %b: i64[2] = const [1, 5]\n"
              "  %n: i64[2] = Neg(%a)\n"
              "  %c: i64[2] = Mul(%a, %b)\n"
              "  return %n, %c\n"
              "}\n");
    assert_int_equal(run(ctx, g, "fold", NULL, NULL), SMELT_ERR_LIMIT);
    assert_non_null(strstr(smelt_ctx_error(ctx), "Neg overflows i64"));
    sm_graph_free(g);
    g = parse("graph g() {\n"
              "  %a: i64[2] = const [4294967296, 3]\n"
              "  %c: i64[2] = Mul(%a, %a)\n"
              "  %d: i64[1] = const [4611686018427387904]\n"
              "  %e: i64[1] = Add(%d, %d)\n"
              "  return %c\n"
              "}\n");
    assert_int_equal(run(ctx, g, "fold", NULL, NULL), SMELT_ERR_LIMIT);
    sm_graph_free(g);
    g = parse("graph g() {\n"
              "  %a: i64[2] = const [3037000499, 3]\n"
              "  %c: i64[2] = Mul(%a, %a)\n"
              "  return %c\n"
              "}\n");
    assert_int_equal(run(ctx, g, "fold", NULL, NULL), SMELT_OK);
    assert_int_equal(count_op(g->top, SM_OP_Mul), 0);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_eval_node_limit(void **state)
{
    (void)state;
    sm_graph *g = parse(budget_graph);
    sm_node *b = g->top->nodes[1]; /* ConstantOfShape 5x5 */
    sm_tensor *args[1] = {g->top->consts[1]->data}, *out[1];
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(sm_eval_node(ctx, b, args, out, 99), SMELT_ERR_LIMIT);
    assert_null(out[0]);
    assert_non_null(strstr(smelt_ctx_error(ctx), "100 bytes"));
    assert_int_equal(sm_eval_node(ctx, b, args, out, 100), SMELT_OK);
    assert_int_equal(out[0]->numel, 25);
    assert_true(((float *)out[0]->data)[24] == 2.0f);
    sm_tensor_free(out[0]);
    smelt_ctx_free(ctx);
    sm_graph_free(g);
}

/* ---- cse ----------------------------------------------------------------- */

static void test_cse_commutative(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%a: f32[2], %b: f32[2]) {\n"
                        "  %1: f32[2] = Add(%a, %b)\n"
                        "  %2: f32[2] = Add(%b, %a)\n"
                        "  %3: f32[2] = Mul(%b, %a)\n"
                        "  %4: f32[2] = Mul(%a, %b)\n"
                        "  %5: f32[2] = Sub(%a, %b)\n"
                        "  %6: f32[2] = Sub(%b, %a)\n"
                        "  %7: bool[2] = Equal(%a, %b)\n"
                        "  %8: bool[2] = Equal(%b, %a)\n"
                        "  %9: f32[2] = Max(%a, %b, %a)\n"
                        "  %10: f32[2] = Max(%a, %a, %b)\n"
                        "  %11: f32[2] = Sum(%1, %2, %3, %4, %5, %6, %9, %10)\n"
                        "  %12: bool[2] = And(%7, %8)\n"
                        "  return %11, %12\n"
                        "}\n");
    sm_pass_report rep;
    assert_int_equal(run(ctx, g, "cse", NULL, &rep), SMELT_OK);
    assert_int_equal(rep.steps[0].stats.nodes_before, 12);
    assert_int_equal(rep.steps[0].stats.nodes_after, 8);
    assert_int_equal(rep.steps[0].stats.removed, 4);
    assert_int_equal(count_op(g->top, SM_OP_Sub), 2);
    /* every use now reads the first of each pair */
    sm_node *sum = g->top->nodes[g->top->n_nodes - 2];
    assert_int_equal(sum->op, SM_OP_Sum);
    assert_ptr_equal(sum->in[0], sum->in[1]);
    assert_ptr_equal(sum->in[2], sum->in[3]);
    assert_ptr_equal(sum->in[6], sum->in[7]);
    assert_ptr_not_equal(sum->in[4], sum->in[5]);
    sm_pass_report_free(&rep);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- dce ----------------------------------------------------------------- */

static void test_dce_if_outputs(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%c: bool[], %x: f32[2]) {\n"
                        "  %p: f32[2], %q: f32[2], %r: f32[2] = If(%c) "
                        "then_branch() {\n"
                        "    %t1: f32[2] = Exp(%x)\n"
                        "    %t2: f32[2] = Neg(%x)\n"
                        "    %t3: f32[2] = Abs(%x)\n"
                        "    return %t1, %t2, %t3\n"
                        "  } else_branch() {\n"
                        "    %e1: f32[2] = Sin(%x)\n"
                        "    return %e1, %x, %e1\n"
                        "  }\n"
                        "  return %q\n"
                        "}\n");
    sm_pass_report rep;
    assert_int_equal(run(ctx, g, "dce", NULL, &rep), SMELT_OK);
    sm_node *n = g->top->nodes[0];
    assert_int_equal(n->op, SM_OP_If);
    assert_int_equal(n->n_out, 1);
    assert_string_equal(n->out[0]->name, "q");
    assert_int_equal(n->out[0]->def_index, 0);
    assert_int_equal(n->blocks[0]->n_ret, 1);
    assert_int_equal(n->blocks[0]->n_nodes, 1); /* only Neg */
    assert_int_equal(n->blocks[0]->nodes[0]->op, SM_OP_Neg);
    assert_int_equal(n->blocks[1]->n_ret, 1);
    assert_int_equal(n->blocks[1]->n_nodes, 0);
    assert_ptr_equal(n->blocks[1]->ret[0], g->top->params[1]);
    assert_int_equal(rep.steps[0].stats.removed, 3);
    assert_non_null(strstr(rep.steps[0].stats.log, "2 unused If/Loop"));
    sm_pass_report_free(&rep);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- unroll -------------------------------------------------------------- */

static const char *loop_graph =
    "graph g(%x: f32[2]) {\n"
    "  %n: i64[] = const 6\n"
    "  %acc: f32[2], %sc: f32[6,2] = Loop(%n, _, %x) "
    "body(%i: i64[], %c: bool[], %a: f32[2]) {\n"
    "    %fi: f32[] = Cast(%i) {to = 1}\n"
    "    %a2: f32[2] = Add(%a, %fi)\n"
    "    return %c, %a2, %a\n"
    "  }\n"
    "  return %acc, %sc\n"
    "}\n";

/* Runs graph g on x = [1, 2] into out[2]. */
static void run_loop_graph(const sm_graph *g, sm_tensor **out)
{
    int64_t two = 2;
    sm_tensor *x;
    assert_int_equal(sm_tensor_new(NULL, SMELT_DTYPE_F32, 1, &two, &x), 0);
    ((float *)x->data)[0] = 1;
    ((float *)x->data)[1] = 2;
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (sm_interp_run(ctx, g, &x, 1, out, 2) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    sm_tensor_free(x);
}

static void test_unroll_threshold(void **state)
{
    (void)state;
    for (int max = 5; max <= 6; max++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        sm_graph *g = parse(loop_graph);
        sm_pass_options o;
        sm_pass_options_default(&o);
        o.verify_each = 1;
        o.unroll_max_trips = max;
        assert_int_equal(run(ctx, g, "unroll,fold,dce", &o, NULL), SMELT_OK);
        assert_int_equal(count_op(g->top, SM_OP_Loop), max < 6 ? 1 : 0);
        if (max == 6) {
            assert_int_equal(count_op(g->top, SM_OP_Concat), 1);
            assert_int_equal(count_op(g->top, SM_OP_Unsqueeze), 6);
        }
        sm_tensor *out[2];
        run_loop_graph(g, out);
        /* acc = x + 0 + 1 + ... + 5; scan row k = x + k(k-1)/2 */
        assert_true(((float *)out[0]->data)[0] == 16);
        assert_true(((float *)out[0]->data)[1] == 17);
        assert_int_equal(out[1]->numel, 12);
        assert_true(((float *)out[1]->data)[10] == 11);
        sm_tensor_free(out[0]);
        sm_tensor_free(out[1]);
        sm_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

/* ---- manager ------------------------------------------------------------- */

static void test_pipelines(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const sm_pass_info **list;
    int n;
    assert_int_equal(sm_pipeline_resolve(ctx, 0, NULL, &list, &n), SMELT_OK);
    assert_int_equal(n, 0);
    assert_null(list);
    assert_int_equal(sm_pipeline_resolve(ctx, 1, NULL, &list, &n), SMELT_OK);
    assert_string_equal(list[0]->name, "infer");
    assert_string_equal(list[n - 1]->name, "dce");
    for (int i = 0; i < n; i++)
        assert_true(list[i]->level == 1);
    sm_free(list);
    assert_int_equal(sm_pipeline_resolve(ctx, 2, NULL, &list, &n), SMELT_OK);
    int has_unroll = 0;
    for (int i = 0; i < n; i++)
        has_unroll |= !strcmp(list[i]->name, "unroll");
    assert_true(has_unroll);
    sm_free(list);
    assert_int_equal(sm_pipeline_resolve(ctx, 0, " fold, cse ,dce", &list, &n),
                     SMELT_OK);
    assert_int_equal(n, 3);
    assert_string_equal(list[1]->name, "cse");
    sm_free(list);
    assert_int_equal(sm_pipeline_resolve(ctx, 0, "fold,nope", &list, &n),
                     SMELT_ERR_NOT_FOUND);
    assert_non_null(strstr(smelt_ctx_error(ctx), "'nope'"));
    assert_int_equal(sm_pipeline_resolve(ctx, 4, NULL, &list, &n),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "level 4"));
    /* every row of passes.def is found by its name */
    for (int i = 0; i < sm_pass_count(); i++)
        assert_ptr_equal(sm_pass_find(sm_pass_get(i)->name), sm_pass_get(i));
    smelt_ctx_free(ctx);
}

static void test_broken_pass_needs_env(void **state)
{
    (void)state;
    unsetenv("SMELT_TEST_BROKEN_PASS");
    assert_null(sm_pass_find("break_add"));
    setenv("SMELT_TEST_BROKEN_PASS", "1", 1);
    const sm_pass_info *p = sm_pass_find("break_add");
    assert_non_null(p);
    assert_int_equal(p->level, 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%a: f32[2]) {\n"
                        "  %b: f32[2] = Add(%a, %a)\n"
                        "  return %b\n"
                        "}\n");
    assert_int_equal(run(ctx, g, "break_add", NULL, NULL), SMELT_OK);
    assert_int_equal(g->top->nodes[0]->op, SM_OP_Sub);
    unsetenv("SMELT_TEST_BROKEN_PASS");
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A pass that breaks an invariant: two values named alike. */
static smelt_status clash_pass(sm_pass_ctx *pc, sm_graph *g)
{
    (void)pc;
    g->top->nodes[0]->out[0]->name = g->top->params[0]->name;
    return SMELT_OK;
}

static smelt_status failing_pass(sm_pass_ctx *pc, sm_graph *g)
{
    (void)g;
    return sm_err(pc->ctx, SMELT_ERR_UNSUPPORTED, "cannot do that");
}

static smelt_status dumping_pass(sm_pass_ctx *pc, sm_graph *g)
{
    (void)g;
    sm_pass_log(pc, "note %d", 1);
    sm_pass_log(pc, "note %d", 2);
    return sm_pass_dump_file(pc, "plan.txt", "a plan\n", 7);
}

static void test_verify_each_names_pass(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%a: f32[2]) {\n"
                        "  %b: f32[2] = Neg(%a)\n"
                        "  return %b\n"
                        "}\n");
    const sm_pass_info clash = {"clash", clash_pass, 0, "test"};
    const sm_pass_info fail = {"failing", failing_pass, 0, "test"};
    const sm_pass_info *list[] = {&fail};
    sm_pass_options o;
    sm_pass_options_default(&o);
    o.verify_each = 1;
    assert_int_equal(sm_pass_run(ctx, g, &o, list, 1, NULL),
                     SMELT_ERR_UNSUPPORTED);
    assert_string_equal(smelt_ctx_error(ctx), "pass 'failing': cannot do that");
    list[0] = &clash;
    sm_pass_report rep;
    assert_int_equal(sm_pass_run(ctx, g, &o, list, 1, &rep), SMELT_ERR_VERIFY);
    assert_non_null(strstr(smelt_ctx_error(ctx),
                           "the graph is invalid after pass 'clash'"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "two values are named %a"));
    assert_int_equal(rep.n, 1);
    sm_pass_report_free(&rep);
    /* without verify_each the manager does not look */
    o.verify_each = 0;
    assert_int_equal(sm_pass_run(ctx, g, &o, list, 1, NULL), SMELT_OK);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_debug_dump(void **state)
{
    (void)state;
    char dir[] = "/tmp/smelt-dump-XXXXXX";
    assert_non_null(mkdtemp(dir));
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%a: f32[2]) {\n"
                        "  %k: f32[2] = const [1.0, 2.0]\n"
                        "  %k2: f32[2] = Neg(%k)\n"
                        "  %b: f32[2] = Add(%a, %k2)\n"
                        "  return %b\n"
                        "}\n");
    const sm_pass_info dumper = {"planner", dumping_pass, 0, "test"};
    const sm_pass_info *list[] = {sm_pass_find("fold"), &dumper};
    sm_pass_options o;
    sm_pass_options_default(&o);
    o.debug_dir = dir;
    sm_pass_report rep;
    assert_int_equal(sm_pass_run(ctx, g, &o, list, 2, &rep), SMELT_OK);
    assert_string_equal(rep.steps[1].stats.log, "note 1\nnote 2\n");
    char path[256];
    snprintf(path, sizeof path, "%s/index.txt", dir);
    char *index = tu_read_file(path, NULL);
    assert_non_null(index);
    assert_non_null(strstr(index, "000-captured.ir\tcaptured\tnodes=2\n"));
    assert_non_null(strstr(index, "000-captured.dot\tcaptured\tnodes=2\n"));
    assert_non_null(strstr(index, "001-fold.ir\tfold\tnodes=1\n"));
    assert_non_null(strstr(index, "002-planner.plan.txt\tplanner\n"));
    assert_true(strstr(index, "002-planner.plan.txt") <
                strstr(index, "002-planner.ir"));
    snprintf(path, sizeof path, "%s/001-fold.ir", dir);
    char *text = tu_read_file(path, NULL);
    assert_non_null(strstr(text, "%k2: f32[2] = const [-1.0, -2.0]"));
    free(text);
    snprintf(path, sizeof path, "%s/002-planner.plan.txt", dir);
    text = tu_read_file(path, NULL);
    assert_string_equal(text, "a plan\n");
    free(text);
    /* remove what was written */
    for (char *p = index; (p = strchr(p, '\n')) && p[1];) {
        p++;
        size_t len = strcspn(p, "\t");
        snprintf(path, sizeof path, "%s/%.*s", dir, (int)len, p);
        if (p[0] != '#')
            unlink(path);
    }
    snprintf(path, sizeof path, "%s/index.txt", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    free(index);
    sm_pass_report_free(&rep);
    /* a folder that cannot be made is an error */
    o.debug_dir = "/nonexistent-dir/x/y";
    assert_int_equal(sm_pass_run(ctx, g, &o, list, 1, NULL), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "/nonexistent-dir/x/y"));
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- rewriter and copies ------------------------------------------------- */

static const char *rich_graph =
    "graph rich(%x: f32[2,3], %c: bool[]) {\n"
    "  %w: f32[3,2] = const [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\n"
    "  %one: f32[] = const 1.0\n"
    "  %t: bool[] = const true\n"
    "  %n: i64[] = const 3\n"
    "  %s: i64[2] = const [3, 2]\n"
    "  %wt: f32[2,3] = Transpose(%w) {perm = [1, 0]}\n"
    "  %w2: f32[3,2] = Reshape(%wt, %s)\n"
    "  %h: f32[2,2] = MatMul(%x, %w2)\n"
    "  %h2: f32[2,2] = Mul(%h, %one)\n"
    "  %h3: f32[2,2] = Identity(%h2)\n"
    "  %p: f32[2,2] = If(%t) then_branch() {\n"
    "    %r: f32[2,2] = Relu(%h3)\n"
    "    return %r\n"
    "  } else_branch() {\n"
    "    return %h3\n"
    "  }\n"
    "  %q: f32[2,2] = If(%c) then_branch() {\n"
    "    %e: f32[2,2] = Exp(%p)\n"
    "    return %e\n"
    "  } else_branch() {\n"
    "    %f: f32[2,2] = LeakyRelu(%p) {alpha = 0.5}\n"
    "    return %f\n"
    "  }\n"
    "  %acc: f32[2,2], %sc: f32[3,2,2] = Loop(%n, _, %q) "
    "body(%i: i64[], %cond: bool[], %a: f32[2,2]) {\n"
    "    %a2: f32[2,2] = Add(%a, %p)\n"
    "    %a3: f32[2,2] = Add(%p, %a)\n"
    "    %a4: f32[2,2] = Mul(%a2, %a3)\n"
    "    return %cond, %a4, %a2\n"
    "  }\n"
    "  %dead: f32[2,2] = Tanh(%acc)\n"
    "  return %acc, %sc\n"
    "}\n";

static void test_graph_clone(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse(rich_graph), *c = NULL;
    assert_int_equal(sm_graph_clone(ctx, g, &c), SMELT_OK);
    char *a = print(g), *b = print(c);
    assert_string_equal(a, b);
    assert_int_equal(sm_graph_verify(ctx, c), SMELT_OK);
    /* the copy is independent */
    assert_int_equal(run(ctx, c, "fold,dce", NULL, NULL), SMELT_OK);
    char *a2 = print(g);
    assert_string_equal(a, a2);
    smelt_string_free(a);
    smelt_string_free(a2);
    smelt_string_free(b);
    sm_graph_free(c);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_forward_keeps_output_names(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%x: f32[2]) {\n"
                        "  %h: f32[2] = Exp(%x)\n"
                        "  %y: f32[2] = Identity(%h)\n"
                        "  %z: f32[2] = Identity(%x)\n"
                        "  %u: f32[2] = Identity(%y)\n"
                        "  return %y, %z, %u\n"
                        "}\n");
    sm_rw *rw;
    assert_int_equal(sm_rw_new(ctx, g, &rw), SMELT_OK);
    sm_node *ny = g->top->nodes[1], *nz = g->top->nodes[2];
    sm_value *h = g->top->nodes[0]->out[0];
    /* %h may take %y's name; %x (a graph input) may not take %z's */
    assert_true(sm_rw_can_forward(rw, ny->out[0], h));
    assert_false(sm_rw_can_forward(rw, nz->out[0], g->top->params[0]));
    assert_int_equal(sm_rw_uses(rw, ny->out[0]), 2);
    assert_true(sm_rw_is_output(rw, ny->out[0]));
    assert_int_equal(sm_rw_forward(rw, ny->out[0], h), SMELT_OK);
    sm_rw_remove_node(rw, ny);
    assert_int_equal(sm_rw_uses(rw, h), 2);
    assert_int_equal(sm_rw_forward(rw, nz->out[0], g->top->params[0]),
                     SMELT_OK);
    sm_rw_remove_node(rw, nz);
    assert_int_equal(sm_rw_removed(rw), 2);
    sm_rw_free(rw);
    assert_int_equal(sm_graph_verify(ctx, g), SMELT_OK);
    char *s = print(g);
    assert_string_equal(s, "graph g(%x: f32[2]) {\n"
                           "  %y: f32[2] = Exp(%x)\n"
                           "  %u: f32[2] = Identity(%y)\n"
                           "  %z: f32[2] = Identity(%x)\n"
                           "  return %y, %z, %u\n"
                           "}\n");
    smelt_string_free(s);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_rewriter_edits(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse("graph g(%x: f32[2], %c: bool[]) {\n"
                        "  %a: f32[2] = Neg(%x)\n"
                        "  %b: f32[2] = If(%c) then_branch() {\n"
                        "    %t: f32[2] = Exp(%a)\n"
                        "    return %a\n"
                        "  } else_branch() {\n"
                        "    return %x\n"
                        "  }\n"
                        "  return %b\n"
                        "}\n");
    sm_rw *rw;
    assert_int_equal(sm_rw_new(ctx, g, &rw), SMELT_OK);
    sm_value *x = g->top->params[0], *a = g->top->nodes[0]->out[0];
    /* uses in sub-blocks count: Exp's input and then_branch's return */
    assert_int_equal(sm_rw_uses(rw, a), 2);
    assert_int_equal(sm_rw_uses(rw, x), 2);
    sm_node *ifn = g->top->nodes[1];
    sm_node *before = sm_rw_node_new(rw, g->top, ifn, SM_OP_Abs, NULL, 1, &x, 1,
                                     (const char *const[]){"a"});
    assert_non_null(before);
    assert_string_not_equal(before->out[0]->name, "a");
    assert_int_equal(sm_rw_infer_node(rw, before), SMELT_OK);
    assert_int_equal(before->out[0]->type.dtype, SMELT_DTYPE_F32);
    sm_rw_replace_uses(rw, a, before->out[0]);
    assert_int_equal(sm_rw_uses(rw, a), 0);
    assert_int_equal(sm_rw_uses(rw, before->out[0]), 2);
    assert_ptr_equal(ifn->blocks[0]->ret[0], before->out[0]);
    assert_true(sm_rw_remove_if_dead(rw, g->top->nodes[0]));
    assert_ptr_equal(sm_rw_first(rw, g->top), before);
    assert_ptr_equal(sm_rw_next(rw, before), ifn);
    assert_ptr_equal(sm_rw_prev(rw, ifn), before);
    assert_ptr_equal(sm_rw_last(rw, g->top), ifn);
    sm_rw_free(rw);
    assert_int_equal(g->top->n_nodes, 2);
    assert_int_equal(sm_graph_verify(ctx, g), SMELT_OK);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- public API ---------------------------------------------------------- */

static void test_public_optimize(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = parse(rich_graph);
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    assert_int_equal(o.level, 1);
    assert_int_equal(o.fold_max_bytes, SM_FOLD_MAX_BYTES_DEFAULT);
    o.level = 2;
    o.verify_each = 1;
    char *pipe = NULL;
    assert_int_equal(smelt_opt_pipeline(ctx, &o, &pipe), SMELT_OK);
    assert_true(!strncmp(pipe, "infer,qdq,fold,if_const,unroll,", 31));
    smelt_string_free(pipe);
    o.passes = "";
    assert_int_equal(smelt_opt_pipeline(ctx, &o, &pipe), SMELT_OK);
    assert_string_equal(pipe, "");
    smelt_string_free(pipe);
    o.passes = NULL;
    smelt_opt_report_t *rep = NULL;
    assert_int_equal(smelt_graph_optimize(ctx, g, &o, &rep), SMELT_OK);
    int n = smelt_opt_report_num_passes(rep);
    assert_true(n >= 8);
    smelt_pass_stats s = SMELT_STRUCT_INIT(smelt_pass_stats);
    assert_int_equal(smelt_opt_report_get(rep, 2, &s), SMELT_OK);
    assert_string_equal(s.name, "fold"); /* after infer and qdq */
    assert_true(s.folded >= 2);
    assert_int_equal(smelt_opt_report_get(rep, n, &s), SMELT_ERR_INVALID_ARG);
    char *table = NULL;
    assert_int_equal(smelt_opt_report_print(ctx, rep, 1, &table), SMELT_OK);
    assert_non_null(strstr(table, "pass "));
    assert_non_null(strstr(table, "\nfold "));
    assert_non_null(strstr(table, "\ntotal "));
    smelt_string_free(table);
    smelt_opt_report_free(rep);
    assert_int_equal(count_op(g->top, SM_OP_Loop), 0);
    assert_int_equal(count_op(g->top, SM_OP_Identity), 0);
    assert_int_equal(count_op(g->top, SM_OP_Tanh), 0);
    /* errors */
    assert_int_equal(smelt_graph_optimize(ctx, NULL, &o, &rep),
                     SMELT_ERR_INVALID_ARG);
    assert_null(rep);
    o.passes = "fold,bogus";
    assert_int_equal(smelt_graph_optimize(ctx, g, &o, &rep),
                     SMELT_ERR_NOT_FOUND);
    assert_null(rep);
    smelt_graph_t *c = g;
    assert_int_equal(smelt_graph_clone(ctx, NULL, &c), SMELT_ERR_INVALID_ARG);
    assert_null(c);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
    assert_string_equal(smelt_pass_name(0), "infer");
    assert_int_equal(smelt_pass_level(0), 1);
    assert_null(smelt_pass_name(-1));
    assert_int_equal(smelt_pass_count(), sm_pass_count());
}

static void test_input_queries(void **state)
{
    (void)state;
    smelt_graph_t *g = parse("graph g(%x: f32[batch,3], %y: i64[*]) {\n"
                             "  return %x\n"
                             "}\n");
    assert_int_equal(smelt_graph_input_dtype(g, 0), SMELT_DTYPE_F32);
    assert_int_equal(smelt_graph_input_ndim(g, 0), 2);
    assert_int_equal(smelt_graph_input_dim(g, 0, 0), -1);
    assert_string_equal(smelt_graph_input_dim_name(g, 0, 0), "batch");
    assert_int_equal(smelt_graph_input_dim(g, 0, 1), 3);
    assert_null(smelt_graph_input_dim_name(g, 0, 1));
    assert_int_equal(smelt_graph_input_ndim(g, 1), -1);
    assert_int_equal(smelt_graph_input_dtype(g, 2), SMELT_DTYPE_UNDEFINED);
    assert_int_equal(smelt_graph_input_dim(g, 0, 5), -1);
    sm_graph_free(g);
}

/* ---- allocation failures ------------------------------------------------- */

/* -O2 over rich_graph with the k-th allocation failing must fail cleanly
 * (NOMEM) or succeed, never crash or leak; every k up to the allocations
 * a clean run makes is tried. */
static void test_alloc_failures_o2(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *orig = parse(rich_graph);
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 2;
    o.verify_each = 1;
    sm_graph *g;
    assert_int_equal(sm_graph_clone(ctx, orig, &g), SMELT_OK);
    smelt_opt_report_t *rep;
    sm_alloc_fail_after(-1);
    assert_int_equal(smelt_graph_optimize(ctx, g, &o, &rep), SMELT_OK);
    long total = sm_alloc_fail_after(-1);
    char *want = print(g);
    smelt_opt_report_free(rep);
    sm_graph_free(g);
    assert_true(total > 100);
    int failed = 0;
    for (long k = 0; k < total; k++) {
        assert_int_equal(sm_graph_clone(ctx, orig, &g), SMELT_OK);
        sm_alloc_fail_after(k);
        smelt_status st = smelt_graph_optimize(ctx, g, &o, &rep);
        sm_alloc_fail_after(-1);
        if (st == SMELT_OK) {
            smelt_opt_report_free(rep);
        } else {
            assert_int_equal(st, SMELT_ERR_NOMEM);
            failed++;
        }
        sm_graph_free(g);
    }
    assert_true(failed > 0);
    /* copies fail cleanly too */
    for (long k = 0; k < 400; k++) {
        sm_alloc_fail_after(k);
        smelt_status st = sm_graph_clone(ctx, orig, &g);
        sm_alloc_fail_after(-1);
        if (st == SMELT_OK) {
            char *s = print(g);
            sm_graph_free(g);
            smelt_string_free(s);
            break;
        }
        assert_int_equal(st, SMELT_ERR_NOMEM);
        assert_null(g);
    }
    smelt_string_free(want);
    sm_graph_free(orig);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_budget),
        cmocka_unit_test(test_fold_failure_is_not_fatal),
        cmocka_unit_test(test_eval_node_limit),
        cmocka_unit_test(test_cse_commutative),
        cmocka_unit_test(test_dce_if_outputs),
        cmocka_unit_test(test_unroll_threshold),
        cmocka_unit_test(test_pipelines),
        cmocka_unit_test(test_broken_pass_needs_env),
        cmocka_unit_test(test_verify_each_names_pass),
        cmocka_unit_test(test_debug_dump),
        cmocka_unit_test(test_graph_clone),
        cmocka_unit_test(test_forward_keeps_output_names),
        cmocka_unit_test(test_rewriter_edits),
        cmocka_unit_test(test_public_optimize),
        cmocka_unit_test(test_fold_overflow_is_the_models_error),
        cmocka_unit_test(test_input_queries),
        cmocka_unit_test(test_alloc_failures_o2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
