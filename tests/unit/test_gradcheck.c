/*
 * test_gradcheck.c - smelt_gradcheck itself: a right gradient passes and
 * reports tiny errors; a check made too coarse to agree fails and names
 * the element; kinks are left out and counted; f32, f16, bf16 values and
 * Cast are widened to f64 (promote.c); inputs are generated from the
 * seed or given (binding symbolic dims); sampling checks at most K
 * elements; bad options and requests fail with a message.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "autograd/promote.h"
#include "core/alloc.h"
#include "core/tensor.h"
#include "ir/ir.h"

static smelt_gradcheck_value value(const smelt_gradcheck_report_t *r, int i)
{
    smelt_gradcheck_value v = SMELT_STRUCT_INIT(smelt_gradcheck_value);
    assert_int_equal(smelt_gradcheck_get(r, i, &v), SMELT_OK);
    return v;
}

/* Runs the check with options o (NULL: defaults), which must run. */
static smelt_gradcheck_report_t *check(smelt_graph_t *g,
                                       const smelt_gradcheck_options *o)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_gradcheck_report_t *r = NULL;
    if (smelt_gradcheck(ctx, g, o, &r) != SMELT_OK)
        fail_msg("gradcheck: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return r;
}

/* An f32 layer with a generated input: every float initializer and the
 * input are checked by default, all pass with errors near f64 rounding. */
static void test_passes(void **state)
{
    (void)state;
    smelt_graph_t *g =
        tu_parse(NULL, "graph l(%x: f32[3,4]) {\n"
                       "  %w: f32[4,2] = const [0.1, -0.2, 0.3, 0.4,"
                       " -0.5, 0.6, 0.7, -0.8]\n"
                       "  %b: f32[2] = const [0.05, -0.15]\n"
                       "  %k: i64[1] = const [1]\n"
                       "  %h: f32[3,2] = MatMul(%x, %w)\n"
                       "  %y: f32[3,2] = Add(%h, %b)\n"
                       "  %t: f32[3,2] = Tanh(%y)\n"
                       "  return %t\n"
                       "}\n");
    smelt_gradcheck_report_t *r = check(g, NULL);
    assert_int_equal(smelt_gradcheck_num_values(r), 3); /* w, b, x */
    assert_int_equal(smelt_gradcheck_num_failed(r), 0);
    const char *names[3] = {"w", "b", "x"};
    int64_t numel[3] = {8, 2, 12};
    for (int i = 0; i < 3; i++) {
        smelt_gradcheck_value v = value(r, i);
        assert_string_equal(v.name, names[i]);
        assert_int_equal(v.dtype, SMELT_DTYPE_F32);
        assert_int_equal(v.checked, numel[i]);
        assert_int_equal(v.kinks, 0);
        assert_true(v.passed);
        assert_true(v.max_abs_err < 1e-8);
    }
    assert_true(isfinite(smelt_gradcheck_loss(r)));
    smelt_gradcheck_report_free(r);
    smelt_graph_free(g);
}

/* With no tolerance at all, central differences of exp differ from its
 * derivative by rounding (and exp(x) eps^2 / 6): the check fails and the
 * worst element carries both numbers. */
static void test_fails(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, "graph e() {\n"
                                      "  %a: f64[3] = const [0.5, 1.0, 2.0]\n"
                                      "  %y: f64[3] = Exp(%a)\n"
                                      "  return %y\n"
                                      "}\n");
    smelt_gradcheck_options o;
    assert_int_equal(smelt_gradcheck_options_default(&o), SMELT_OK);
    o.atol = 0;
    o.rtol = 0;
    smelt_gradcheck_report_t *r = check(g, &o);
    assert_int_equal(smelt_gradcheck_num_failed(r), 1);
    smelt_gradcheck_value v = value(r, 0);
    const double a[3] = {0.5, 1.0, 2.0};
    assert_false(v.passed);
    assert_int_equal(v.kinks, 0);
    assert_true(v.worst >= 0 && v.worst < 3);
    assert_true(fabs(v.worst_analytic - exp(a[v.worst])) < 1e-12);
    assert_true(fabs(v.worst_numeric - exp(a[v.worst])) < 1e-6);
    assert_true(v.max_abs_err > 0 && v.max_abs_err < 1e-6);
    smelt_gradcheck_report_free(r);
    smelt_graph_free(g);
}

/* Relu at exactly 0 and a tie of Max have no derivative: those elements
 * are counted as kinks and left out; the others are checked. */
static void test_kinks(void **state)
{
    (void)state;
    smelt_graph_t *g =
        tu_parse(NULL, "graph k() {\n"
                       "  %a: f64[4] = const [0.0, 1.5, -2.0, 0.0]\n"
                       "  %y: f64[4] = Relu(%a)\n"
                       "  return %y\n"
                       "}\n");
    smelt_gradcheck_report_t *r = check(g, NULL);
    smelt_gradcheck_value v = value(r, 0);
    assert_true(v.passed);
    assert_int_equal(v.kinks, 2);
    assert_int_equal(v.checked, 2);
    smelt_gradcheck_report_free(r);
    smelt_graph_free(g);
}

/* f16 and bf16 constants, an f32 input and a Cast between them are all
 * widened: the check runs in f64 (errors far below f16's precision) and
 * reports each value's own dtype. */
static void test_promote(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, "graph p(%x: f32[2,3]) {\n"
                                      "  %h: f16[3] = const [0.5, -1.0, 0.25]\n"
                                      "  %b: bf16[2,1] = const [1.5, -0.5]\n"
                                      "  %hc: f32[3] = Cast(%h) {to = 1}\n"
                                      "  %m: f32[2,3] = Mul(%x, %hc)\n"
                                      "  %bc: f32[2,1] = Cast(%b) {to = 1}\n"
                                      "  %s: f32[2,3] = Sub(%m, %bc)\n"
                                      "  %y: f32[2,3] = Sigmoid(%s)\n"
                                      "  return %y\n"
                                      "}\n");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *c = NULL;
    assert_int_equal(smelt_graph_clone(ctx, g, &c), SMELT_OK);
    assert_int_equal(sm_graph_promote_f64(ctx, c), SMELT_OK);
    const char *names[] = {"x", "h", "b", "hc", "m", "bc", "s", "y"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        sm_value *v = sm_graph_find_value(c, names[i]);
        assert_non_null(v);
        assert_int_equal(v->type.dtype, SMELT_DTYPE_F64);
        if (v->data)
            assert_int_equal(v->data->dtype, SMELT_DTYPE_F64);
    }
    assert_true(((double *)sm_graph_find_value(c, "h")->data->data)[2] == 0.25);
    smelt_graph_free(c);
    smelt_ctx_free(ctx);
    /* Cast has no gradient rule yet: check through it once it has one;
     * the widening above is what gradcheck relies on either way. */
    smelt_graph_free(g);
}

/* Given inputs bind symbolic dims (so broadcasting rules see sizes);
 * generated ones follow the seed; integer inputs become constants. */
static void test_inputs(void **state)
{
    (void)state;
    smelt_graph_t *g =
        tu_parse(NULL, "graph i(%x: f32[n,3], %y: f32[1,3], %k: i64[1]) {\n"
                       "  %s: f32[n,3] = Add(%x, %y)\n"
                       "  %r: f32[n] = ReduceSum(%s, %k) {keepdims = 0}\n"
                       "  %t: f32[n] = Tanh(%r)\n"
                       "  return %t\n"
                       "}\n");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *in[3] = {0};
    int64_t dx[2] = {2, 3}, dk[1] = {1};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dx, &in[0]), 0);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1, dk, &in[2]), 0);
    float *px = smelt_tensor_data(in[0]);
    for (int i = 0; i < 6; i++)
        px[i] = 0.1f * (float)(i - 2);
    ((int64_t *)smelt_tensor_data(in[2]))[0] = 1;
    smelt_gradcheck_options o;
    smelt_gradcheck_options_default(&o);
    o.inputs = in;
    o.n_inputs = 3;
    o.seed = 7;
    smelt_gradcheck_report_t *r = NULL, *r2 = NULL;
    if (smelt_gradcheck(ctx, g, &o, &r) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_gradcheck_num_values(r), 2); /* x, y */
    assert_int_equal(smelt_gradcheck_num_failed(r), 0);
    smelt_gradcheck_value v = value(r, 0);
    assert_int_equal(v.ndim, 2);
    assert_int_equal(v.dims[0], 2);
    /* the same seed makes the same generated y, hence the same loss */
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r2), SMELT_OK);
    assert_true(smelt_gradcheck_loss(r) == smelt_gradcheck_loss(r2));
    smelt_gradcheck_report_free(r2);
    r2 = NULL;
    o.seed = 8;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r2), SMELT_OK);
    assert_true(smelt_gradcheck_loss(r) != smelt_gradcheck_loss(r2));
    smelt_gradcheck_report_free(r2);
    smelt_gradcheck_report_free(r);
    /* without the given x, its symbolic dim leaves nothing to generate */
    in[0] = (smelt_tensor_free(in[0]), NULL);
    r = NULL;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_SHAPE);
    assert_null(r);
    assert_non_null(strstr(smelt_ctx_error(ctx), "'x'"));
    smelt_tensor_free(in[2]);
    smelt_ctx_free(ctx);
    smelt_graph_free(g);
}

/* samples = K checks K elements of a larger value, spread over it; the
 * mean loss divides the gradient as the numeric side does. */
static void test_samples_mean(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, "graph s(%x: f64[10,10]) {\n"
                                      "  %y: f64[10,10] = Mul(%x, %x)\n"
                                      "  return %y\n"
                                      "}\n");
    smelt_gradcheck_options o;
    smelt_gradcheck_options_default(&o);
    o.samples = 7;
    o.loss_reduce = SMELT_LOSS_MEAN;
    o.low = 0.5;
    o.high = 2.0;
    smelt_gradcheck_report_t *r = check(g, &o);
    smelt_gradcheck_value v = value(r, 0);
    assert_int_equal(v.checked, 7);
    assert_true(v.passed);
    assert_true(smelt_gradcheck_loss(r) > 0.25);
    smelt_gradcheck_report_free(r);
    smelt_graph_free(g);
}

/* Requests that cannot run fail with a message naming the problem. */
static void test_errors(void **state)
{
    (void)state;
    smelt_graph_t *g = tu_parse(NULL, "graph e(%x: f32[2], %i: i64[2]) {\n"
                                      "  %y: f32[2] = Exp(%x)\n"
                                      "  return %y\n"
                                      "}\n");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_gradcheck_report_t *r = NULL;
    smelt_gradcheck_options o;
    smelt_gradcheck_options_default(&o);
    o.eps = 0;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "eps"));
    smelt_gradcheck_options_default(&o);
    o.low = 1;
    o.high = 1;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_INVALID_ARG);
    smelt_gradcheck_options_default(&o);
    const char *bad[] = {"nope"}, *intv[] = {"i"}, *twice[] = {"x", "x"};
    o.wrt = bad;
    o.n_wrt = 1;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_NOT_FOUND);
    assert_non_null(strstr(smelt_ctx_error(ctx), "'nope'"));
    o.wrt = intv;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_TYPE);
    o.wrt = twice;
    o.n_wrt = 2;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_INVALID_ARG);
    smelt_gradcheck_options_default(&o);
    o.loss = "zzz";
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_NOT_FOUND);
    o.struct_size = 3;
    assert_int_equal(smelt_gradcheck(ctx, g, &o, &r), SMELT_ERR_INVALID_ARG);
    assert_null(r);
    smelt_ctx_free(ctx);
    smelt_graph_free(g);
}

/* Every allocation of a check failing in turn: each fails cleanly with
 * SMELT_ERR_NOMEM (nothing leaks: the sanitizer build checks), until
 * enough succeed for the check to pass. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_graph_t *g =
        tu_parse(NULL, "graph a(%x: f32[2,3]) {\n"
                       "  %w: f32[3] = const [0.5, -1.0, 0.25]\n"
                       "  %k: i64[1] = const [1]\n"
                       "  %m: f32[2,3] = Mul(%x, %w)\n"
                       "  %r: f32[2] = ReduceSum(%m, %k) {keepdims = 0}\n"
                       "  %y: f32[2] = Tanh(%r)\n"
                       "  return %y\n"
                       "}\n");
    int done = 0;
    for (long k = 0; k < 100000 && !done; k++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_gradcheck_report_t *r = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_gradcheck(ctx, g, NULL, &r);
        sm_alloc_fail_after(-1);
        if (st == SMELT_OK) {
            done = 1;
            assert_int_equal(smelt_gradcheck_num_failed(r), 0);
        } else if (st != SMELT_ERR_NOMEM) {
            fail_msg("k = %ld: status %d: %s", k, st, smelt_ctx_error(ctx));
        } else {
            assert_null(r);
        }
        smelt_gradcheck_report_free(r);
        smelt_ctx_free(ctx);
    }
    assert_true(done);
    smelt_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passes), cmocka_unit_test(test_fails),
        cmocka_unit_test(test_kinks),  cmocka_unit_test(test_promote),
        cmocka_unit_test(test_inputs), cmocka_unit_test(test_samples_mean),
        cmocka_unit_test(test_errors), cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
