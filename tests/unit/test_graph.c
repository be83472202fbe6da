/*
 * test_graph.c - graph construction, the verifier, inference through
 * control flow, and the interpreter's control-flow kernels, on graphs built
 * with the C construction API (no parser, no arithmetic kernels needed).
 */
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "ir/shape_util.h"
#include "runtime/interp.h"

static sm_type type_of(smelt_dtype dt, int ndim, const int64_t *dims)
{
    sm_type t;
    sm_type_set(&t, dt, ndim, dims);
    return t;
}

static sm_tensor *scalar_i64(int64_t v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, SMELT_DTYPE_I64, 0, NULL, &t), 0);
    ((int64_t *)t->data)[0] = v;
    return t;
}

static sm_tensor *scalar_bool(int v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, SMELT_DTYPE_BOOL, 0, NULL, &t), 0);
    ((unsigned char *)t->data)[0] = (unsigned char)v;
    return t;
}

/* graph(%c: bool[], %a: f32[2], %b: f32[2]) { %r = If(%c) {a} {b} } */
static sm_graph *build_if(void)
{
    sm_graph *g;
    assert_int_equal(sm_graph_new(NULL, "pick", &g), SMELT_OK);
    int64_t two = 2;
    sm_type tb = type_of(SMELT_DTYPE_BOOL, 0, NULL);
    sm_type tf = type_of(SMELT_DTYPE_F32, 1, &two);
    sm_value *c = sm_block_add_param(g->top, "c", &tb);
    sm_value *a = sm_block_add_param(g->top, "a", &tf);
    sm_value *b = sm_block_add_param(g->top, "b", &tf);
    const char *names[] = {"r"};
    sm_node *n = sm_node_new(g->top, SM_OP_If, "pick", 1, &c, 1, names);
    sm_block *then_b = sm_block_new(g, "then_branch", n);
    sm_block *else_b = sm_block_new(g, "else_branch", n);
    sm_block_add_return(then_b, a);
    sm_block_add_return(else_b, b);
    sm_node_add_block(n, then_b);
    sm_node_add_block(n, else_b);
    sm_block_add_return(g->top, n->out[0]);
    return g;
}

static void test_if_infer_verify_run(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = build_if();
    assert_int_equal(sm_graph_infer(ctx, g), SMELT_OK);
    const sm_type *rt = &g->top->ret[0]->type;
    assert_int_equal(rt->dtype, SMELT_DTYPE_F32);
    assert_int_equal(rt->ndim, 1);
    assert_int_equal(rt->dims[0].size, 2);
    assert_int_equal(sm_graph_verify(ctx, g), SMELT_OK);

    int64_t two = 2;
    sm_tensor *a, *b, *out;
    sm_tensor_new(NULL, SMELT_DTYPE_F32, 1, &two, &a);
    sm_tensor_new(NULL, SMELT_DTYPE_F32, 1, &two, &b);
    ((float *)a->data)[0] = 1;
    ((float *)b->data)[0] = 7;
    for (int c = 0; c < 2; c++) {
        sm_tensor *in[3] = {scalar_bool(c), a, b};
        assert_int_equal(sm_interp_run(ctx, g, in, 3, &out, 1), SMELT_OK);
        assert_true(((float *)out->data)[0] == (c ? 1.0f : 7.0f));
        sm_tensor_free(out);
        sm_tensor_free(in[0]);
    }
    /* a wrongly shaped input is named in the error */
    sm_tensor *bad;
    int64_t three = 3;
    sm_tensor_new(NULL, SMELT_DTYPE_F32, 1, &three, &bad);
    sm_tensor *in[3] = {scalar_bool(1), bad, b};
    assert_int_equal(sm_interp_run(ctx, g, in, 3, &out, 1), SMELT_ERR_SHAPE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "input 'a'"));
    sm_tensor_free(in[0]);
    sm_tensor_free(bad);
    sm_tensor_free(a);
    sm_tensor_free(b);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Loop(M, _, %x) body(%i, %cond, %xc) { return %cond, %xc, %i }: carries x
 * unchanged and scans the iteration numbers. */
static sm_graph *build_loop(void)
{
    sm_graph *g;
    assert_int_equal(sm_graph_new(NULL, "count", &g), SMELT_OK);
    int64_t two = 2;
    sm_type ti = type_of(SMELT_DTYPE_I64, 0, NULL);
    sm_type tf = type_of(SMELT_DTYPE_F32, 1, &two);
    sm_value *m = sm_block_add_param(g->top, "m", &ti);
    sm_value *x = sm_block_add_param(g->top, "x", &tf);
    sm_value *ins[3] = {m, NULL, x};
    const char *names[] = {"xf", "iters"};
    sm_node *n = sm_node_new(g->top, SM_OP_Loop, NULL, 3, ins, 2, names);
    sm_block *body = sm_block_new(g, "body", n);
    sm_value *i = sm_block_add_param(body, "i", NULL);
    sm_value *cond = sm_block_add_param(body, "cond", NULL);
    sm_value *xc = sm_block_add_param(body, "xc", NULL);
    sm_block_add_return(body, cond);
    sm_block_add_return(body, xc);
    sm_block_add_return(body, i);
    sm_node_add_block(n, body);
    sm_block_add_return(g->top, n->out[0]);
    sm_block_add_return(g->top, n->out[1]);
    return g;
}

static void test_loop_infer_run(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = build_loop();
    assert_int_equal(sm_graph_infer(ctx, g), SMELT_OK);
    assert_int_equal(sm_graph_verify(ctx, g), SMELT_OK);
    const sm_type *st = &g->top->ret[1]->type;
    assert_int_equal(st->dtype, SMELT_DTYPE_I64);
    assert_int_equal(st->ndim, 1);
    int64_t two = 2;
    sm_tensor *x, *outs[2];
    sm_tensor_new(NULL, SMELT_DTYPE_F32, 1, &two, &x);
    ((float *)x->data)[1] = 5;
    sm_tensor *in[2] = {scalar_i64(4), x};
    assert_int_equal(sm_interp_run(ctx, g, in, 2, outs, 2), SMELT_OK);
    assert_true(((float *)outs[0]->data)[1] == 5.0f);
    assert_int_equal(outs[1]->ndim, 1);
    assert_int_equal(outs[1]->dims[0], 4);
    for (int k = 0; k < 4; k++)
        assert_int_equal(((int64_t *)outs[1]->data)[k], k);
    sm_tensor_free(outs[0]);
    sm_tensor_free(outs[1]);
    sm_tensor_free(in[0]);
    sm_tensor_free(x);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static void expect_verify_error(sm_graph *g, const char *fragment)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_not_equal(sm_graph_verify(ctx, g), SMELT_OK);
    if (!strstr(smelt_ctx_error(ctx), fragment))
        fail_msg("error '%s' lacks '%s'", smelt_ctx_error(ctx), fragment);
    smelt_ctx_free(ctx);
    sm_graph_free(g);
}

static void test_verify_errors(void **state)
{
    (void)state;
    /* a value used outside its scope: the top block returns the loop
     * body's iteration number */
    sm_graph *g = build_loop();
    g->top->ret[1] = g->top->nodes[0]->blocks[0]->params[0];
    expect_verify_error(g, "outside its scope");

    g = build_if();
    sm_node_set_int(g->top->nodes[0], "bogus", 1);
    expect_verify_error(g, "unknown attribute 'bogus'");

    g = build_if();
    sm_block_add_return(g->top->nodes[0]->blocks[1], g->top->params[0]);
    expect_verify_error(g, "else_branch must take no parameters and return 1");

    /* blocks run by position: labels that disagree are an error */
    g = build_if();
    sm_block *swap = g->top->nodes[0]->blocks[0];
    g->top->nodes[0]->blocks[0] = g->top->nodes[0]->blocks[1];
    g->top->nodes[0]->blocks[1] = swap;
    expect_verify_error(
        g, "sub-block 0 must be labelled 'then_branch', is 'else_branch'");

    g = build_loop();
    g->top->nodes[0]->blocks[0]->label = "loop";
    expect_verify_error(g, "sub-block 0 must be labelled 'body', is 'loop'");

    g = build_if();
    g->top->params[2]->name = "a";
    expect_verify_error(g, "two values are named %a");

    g = build_loop();
    g->top->nodes[0]->blocks[0]->n_ret = 2;
    expect_verify_error(g, "body must take 3 parameters");

    /* Cast without its required attribute `to` */
    sm_graph *h;
    sm_graph_new(NULL, "cast", &h);
    sm_value *x = sm_block_add_param(h->top, "x", NULL);
    sm_node *c = sm_node_new(h->top, SM_OP_Cast, "c1", 1, &x, 1, NULL);
    sm_block_add_return(h->top, c->out[0]);
    expect_verify_error(h, "node 'c1' (Cast): required attribute 'to'");

    sm_graph_new(NULL, "cast", &h);
    x = sm_block_add_param(h->top, "x", NULL);
    c = sm_node_new(h->top, SM_OP_Cast, "c1", 1, &x, 1, NULL);
    sm_node_set_string(c, "to", "f32");
    sm_block_add_return(h->top, c->out[0]);
    expect_verify_error(h, "attribute 'to' must be int, not string");

    sm_graph_new(NULL, "empty", &h);
    expect_verify_error(h, "returns nothing");
}

/* Building a graph under allocation failure never crashes or leaks. */
static void test_build_alloc_failures(void **state)
{
    (void)state;
    for (long k = 0; k < 200; k++) {
        sm_alloc_fail_after(k);
        sm_graph *g = NULL;
        if (sm_graph_new(NULL, "x", &g) == SMELT_OK) {
            sm_value *p = sm_block_add_param(g->top, "p", NULL);
            if (p)
                sm_node_new(g->top, SM_OP_Relu, "r", 1, &p, 1, NULL);
        }
        sm_alloc_fail_after(-1);
        sm_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_if_infer_verify_run),
        cmocka_unit_test(test_loop_infer_run),
        cmocka_unit_test(test_verify_errors),
        cmocka_unit_test(test_build_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
