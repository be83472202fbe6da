/*
 * test_binding_api.c - the two calls a language binding (the Python
 * package) needs: smelt_tensor_wrap (a tensor over the caller's bytes,
 * which runs read and never write or free) and smelt_ctx_set_cancel (a
 * hook asked before each step and Loop iteration, which stops the run).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Bad shapes, dtypes and NULL data are refused with a message; a good
 * wrap sees the caller's bytes, and freeing it leaves them alone. */
static void test_wrap_checks_and_borrows(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t = NULL;
    float buf[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3}, neg[2] = {2, -1}, zero[1] = {0};
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 2, neg, buf, &t),
                     SMELT_ERR_SHAPE);
    assert_null(t);
    assert_int_equal(
        smelt_tensor_wrap(ctx, SMELT_DTYPE_COUNT, 2, dims, buf, &t),
        SMELT_ERR_TYPE);
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 9, dims, buf, &t),
                     SMELT_ERR_SHAPE);
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 2, dims, NULL, &t),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "NULL data"));
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 2, NULL, buf, &t),
                     SMELT_ERR_INVALID_ARG);
    /* an empty tensor needs no data */
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 1, zero, NULL, &t),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_numel(t), 0);
    smelt_tensor_free(t);
    for (int dt = SMELT_DTYPE_F32; dt < SMELT_DTYPE_COUNT; dt++) {
        int64_t one = (int64_t)(sizeof buf / smelt_dtype_size((smelt_dtype)dt));
        assert_int_equal(
            smelt_tensor_wrap(ctx, (smelt_dtype)dt, 1, &one, buf, &t),
            SMELT_OK);
        assert_ptr_equal(smelt_tensor_data(t), buf);
        assert_int_equal(smelt_tensor_dim(t, 0), one);
        smelt_tensor_free(t);
    }
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 2, dims, buf, &t),
                     SMELT_OK);
    assert_true(smelt_tensor_get_f64(t, 5) == 6.0);
    smelt_tensor_free(t);
    assert_true(buf[5] == 6.0f); /* still the caller's */
    smelt_ctx_free(ctx);
}

/* A plan and the reference interpreter run on wrapped inputs of several
 * shapes, leave them unchanged, and give what cloned inputs give. */
static void test_wrapped_inputs_run(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, "graph g(%x: f32[n,5]) {\n"
                                     "  %a: f32[n,5] = Relu(%x)\n"
                                     "  %b: f32[n,5] = Add(%a, %x)\n"
                                     "  %y: f32[n,5] = Exp(%b)\n"
                                     "  return %y\n"
                                     "}\n");
    for (int64_t n = 1; n <= 7; n += 3) {
        float *buf = malloc(sizeof(float) * (size_t)n * 5);
        float *keep = malloc(sizeof(float) * (size_t)n * 5);
        for (int64_t i = 0; i < n * 5; i++)
            buf[i] = keep[i] = (float)((i * 37) % 11) / 4.0f - 1.25f;
        int64_t dims[2] = {n, 5};
        smelt_tensor_t *x = NULL, *y = NULL, *r = NULL;
        assert_int_equal(
            smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 2, dims, buf, &x),
            SMELT_OK);
        smelt_plan_options o;
        smelt_plan_options_default(&o);
        o.inputs = &x;
        o.n_inputs = 1;
        smelt_plan_t *p = NULL;
        if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
            fail_msg("compile: %s", smelt_ctx_error(ctx));
        assert_int_equal(smelt_plan_run(ctx, p, &x, 1, &y, 1), SMELT_OK);
        assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, &r, 1),
                         SMELT_OK);
        assert_memory_equal(buf, keep, sizeof(float) * (size_t)n * 5);
        for (int64_t i = 0; i < n * 5; i++) {
            double v = keep[i] > 0 ? 2.0 * keep[i] : keep[i];
            double want = exp(v);
            assert_true(fabs(smelt_tensor_get_f64(y, i) - want) < 1e-5 * want);
            assert_true(fabs(smelt_tensor_get_f64(r, i) - want) < 1e-5 * want);
        }
        smelt_tensor_free(x);
        smelt_tensor_free(y);
        smelt_tensor_free(r);
        smelt_plan_free(p);
        free(buf);
        free(keep);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static int calls_left;

/* Cancels once it has been asked calls_left times. */
static int cancel_after(void *user)
{
    int *asked = user;
    (*asked)++;
    return --calls_left < 0;
}

/* A Loop with no bound stops when the hook says so, in the reference
 * interpreter and in a plan; without the hook a plain graph runs. */
static void test_cancel_stops_runs(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g =
        tu_parse(ctx, "graph g(%x: f32[4]) {\n"
                      "  %true: bool[] = const true\n"
                      "  %r: f32[4] = Loop(_, %true, %x) @forever "
                      "body(%i: i64[], %c: bool[], %v: f32[4]) {\n"
                      "    %v1: f32[4] = Relu(%v)\n"
                      "    return %c, %v1\n"
                      "  }\n"
                      "  return %r\n"
                      "}\n");
    float buf[4] = {1, -2, 3, -4};
    int64_t four = 4;
    smelt_tensor_t *x = NULL, *y = NULL;
    assert_int_equal(smelt_tensor_wrap(ctx, SMELT_DTYPE_F32, 1, &four, buf, &x),
                     SMELT_OK);
    int asked = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (int after = 0; after < 40; after += 13) {
            asked = 0;
            calls_left = after;
            smelt_ctx_set_cancel(ctx, cancel_after, &asked);
            smelt_status st;
            smelt_plan_t *p = NULL;
            if (mode == 0) {
                st = smelt_graph_run_reference(ctx, g, &x, 1, &y, 1);
            } else {
                smelt_plan_options o;
                smelt_plan_options_default(&o);
                o.level = 0;
                smelt_ctx_set_cancel(ctx, NULL, NULL); /* not while compiling */
                assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_OK);
                smelt_ctx_set_cancel(ctx, cancel_after, &asked);
                st = smelt_plan_run(ctx, p, &x, 1, &y, 1);
            }
            assert_int_equal(st, SMELT_ERR_LIMIT);
            assert_null(y);
            assert_non_null(strstr(smelt_ctx_error(ctx), "cancelled"));
            assert_int_equal(asked, after + 1);
            smelt_plan_free(p);
        }
    }
    smelt_ctx_set_cancel(ctx, NULL, &asked);
    smelt_graph_t *h = tu_parse(ctx, "graph h(%x: f32[4]) {\n"
                                     "  %y: f32[4] = Relu(%x)\n"
                                     "  return %y\n"
                                     "}\n");
    asked = 0;
    assert_int_equal(smelt_graph_run_reference(ctx, h, &x, 1, &y, 1), SMELT_OK);
    assert_int_equal(asked, 0);
    assert_true(smelt_tensor_get_f64(y, 2) == 3.0);
    smelt_tensor_free(y);
    smelt_graph_free(h);
    smelt_tensor_free(x);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A binding frees a graph while graphs made from it live on (a Model
 * optimized on a copy, a gradient graph): the copies must not point into
 * the source, symbolic dimension names included. Each derived graph is
 * printed, compiled and run after its source is freed (ASan sees any
 * read of freed memory). */
static void test_derived_graphs_outlive_their_source(void **state)
{
    (void)state;
    const char *text = "graph g(%x: f32[batch,seq,3]) {\n"
                       "  %w: f32[3,2] = const [1, 2, 3, 4, 5, 6]\n"
                       "  %h: f32[batch,seq,2] = MatMul(%x, %w)\n"
                       "  %y: f32[batch,seq,2] = Tanh(%h)\n"
                       "  return %y\n"
                       "}\n";
    for (int kind = 0; kind < 3; kind++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_graph_t *g = tu_parse(ctx, text), *d = NULL;
        smelt_status st;
        if (kind == 0) {
            st = smelt_graph_clone(ctx, g, &d);
        } else if (kind == 1) {
            smelt_grad_options o;
            smelt_grad_options_default(&o);
            st = smelt_graph_grad(ctx, g, &o, &d);
        } else {
            st = smelt_graph_add_loss(ctx, g, "mse", &d);
        }
        if (st != SMELT_OK)
            fail_msg("kind %d: %s", kind, smelt_ctx_error(ctx));
        smelt_graph_free(g);
        char *s = NULL;
        assert_int_equal(smelt_graph_print(ctx, d, &s), SMELT_OK);
        assert_non_null(strstr(s, "batch"));
        smelt_string_free(s);
        smelt_plan_options o;
        smelt_plan_options_default(&o);
        o.dims = "batch=2,seq=5";
        smelt_plan_t *p = NULL;
        if (smelt_plan_compile(ctx, d, &o, &p) != SMELT_OK)
            fail_msg("kind %d: compile: %s", kind, smelt_ctx_error(ctx));
        int n_in = smelt_plan_num_inputs(p), n_out = smelt_plan_num_outputs(p);
        smelt_tensor_t *in[4] = {0}, *out[8] = {0};
        assert_true(n_in <= 4 && n_out <= 8);
        for (int i = 0; i < n_in; i++) {
            int64_t dims[SMELT_MAX_DIMS];
            int nd = smelt_plan_input_ndim(p, i);
            for (int k = 0; k < nd; k++)
                dims[k] = smelt_plan_input_dim(p, i, k);
            assert_int_equal(smelt_tensor_init(ctx,
                                               smelt_plan_input_dtype(p, i), nd,
                                               dims, &in[i]),
                             SMELT_OK);
        }
        if (smelt_plan_run(ctx, p, in, n_in, out, n_out) != SMELT_OK)
            fail_msg("kind %d: run: %s", kind, smelt_ctx_error(ctx));
        for (int i = 0; i < n_in; i++)
            smelt_tensor_free(in[i]);
        for (int i = 0; i < n_out; i++)
            smelt_tensor_free(out[i]);
        smelt_plan_free(p);
        smelt_graph_free(d);
        smelt_ctx_free(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_checks_and_borrows),
        cmocka_unit_test(test_wrapped_inputs_run),
        cmocka_unit_test(test_cancel_stops_runs),
        cmocka_unit_test(test_derived_graphs_outlive_their_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
