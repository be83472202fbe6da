/*
 * test_hostile.c - values a hostile model or script carries, which the
 * ops' ordinary cases never hold: NaN and 3e38 coordinates, a step of
 * INT64_MIN, a window of 2^62 channels or 2^30 x 2^30 taps, empty
 * strings and lists. Each must give a defined answer fast, on the
 * reference and on compiled plans under every ISA, with the sanitizers
 * quiet (the ASan build adds -fsanitize=float-cast-overflow, so a NaN or
 * an out-of-range double cast to an integer fails there).
 */
#include "ref_harness.h"

#include "core/alloc.h"
#include "core/arena.h"

static const char *const isas[] = {"scalar", "avx2", "avx512"};

/* Runs the one-input, one-output graph `text` on x through the reference
 * and through a plan (-O3, two threads) under each ISA; checks that every
 * output has n elements equal to want[] (within tol; NaN matches NaN). */
static void graph_expect(const char *text, smelt_tensor_t *x, int64_t n,
                         const double *want, double tol)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    if (smelt_graph_parse(ctx, text, strlen(text), "hostile.ir", &g) !=
        SMELT_OK)
        fail_msg("parse: %s", smelt_ctx_error(ctx));
    for (int k = -1; k < 3; k++) {
        smelt_tensor_t *y = NULL;
        smelt_status st;
        if (k < 0) {
            st = smelt_graph_run_reference(ctx, g, &x, 1, &y, 1);
        } else {
            smelt_plan_options o;
            smelt_plan_options_default(&o);
            o.isa = isas[k];
            o.threads = 2;
            o.inputs = &x;
            o.n_inputs = 1;
            smelt_plan_t *p = NULL;
            st = smelt_plan_compile(ctx, g, &o, &p);
            if (st == SMELT_OK)
                st = smelt_plan_run(ctx, p, &x, 1, &y, 1);
            smelt_plan_free(p);
        }
        const char *who = k < 0 ? "reference" : isas[k];
        if (st != SMELT_OK)
            fail_msg("%s: %s", who, smelt_ctx_error(ctx));
        assert_int_equal(smelt_tensor_numel(y), n);
        for (int64_t i = 0; i < n; i++) {
            double v = smelt_tensor_get_f64(y, i);
            if (!(fabs(v - want[i]) <= tol || (isnan(v) && isnan(want[i]))))
                fail_msg("%s: element %lld: got %.9g, want %.9g", who,
                         (long long)i, v, want[i]);
        }
        smelt_tensor_free(y);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* An f32 tensor of the given shape holding v (public API). */
static smelt_tensor_t *pub_tensor(int ndim, const int64_t *dims,
                                  const double *v)
{
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_F32, ndim, dims, &t),
                     SMELT_OK);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++)
        ((float *)smelt_tensor_data(t))[i] = (float)v[i];
    return t;
}

/* tf_crop_and_resize with a NaN, an infinite or a +-3e38 ROI: positions
 * that map to NaN or past the input are extrapolated (they were cast to
 * int64, undefined). */
static void test_resize_hostile_roi(void **state)
{
    (void)state;
    const double rois[3][8] = {
        {0, 0, NAN, NAN, 1, 1, NAN, NAN},
        {0, 0, -3e38, -3e38, 1, 1, 3e38, 3e38},
        {0, 0, -INFINITY, 0, 1, 1, INFINITY, 1},
    };
    for (int r = 0; r < 3; r++) {
        for (int mode = 0; mode < 3; mode++) {
            static const char *const modes[] = {"nearest", "linear", "cubic"};
            sm_tensor *y =
                run1(SM_OP_Resize,
                     ATTRS(a_str("coordinate_transformation_mode",
                                 "tf_crop_and_resize"),
                           a_str("mode", modes[mode]),
                           a_float("extrapolation_value", 7)),
                     INS(iota(4, D(1, 1, 2, 2)), tf(F32, 1, D(8), rois[r]),
                         NULL, L(4, 1, 1, 3, 3)));
            /* the third ROI maps rows to NaN (0 * inf) or past the input */
            expect(y, F32, 4, D(1, 1, 3, 3), V(7, 7, 7, 7, 7, 7, 7, 7, 7), 0);
        }
    }
}

/* RoiAlign on a map with no rows reads nothing (it read before the
 * plane), and a NaN ROI samples nothing (it cast NaN to an index). */
static void test_roialign_hostile(void **state)
{
    (void)state;
    sm_tensor *y =
        run1(SM_OP_RoiAlign,
             ATTRS(a_int("output_height", 2), a_int("output_width", 2)),
             INS(iota(4, D(1, 2, 0, 3)), tf(F32, 2, D(1, 4), V(0, 0, 1, 1)),
                 L(1, 0)));
    expect(y, F32, 4, D(1, 2, 2, 2), V(0, 0, 0, 0, 0, 0, 0, 0), 0);
    for (int max = 0; max < 2; max++) {
        y = run1(SM_OP_RoiAlign,
                 ATTRS(a_int("output_height", 1), a_int("output_width", 2),
                       a_int("sampling_ratio", 2),
                       a_str("mode", max ? "max" : "avg")),
                 INS(iota(4, D(1, 1, 4, 4)),
                     tf(F32, 2, D(1, 4), V(NAN, 0, 2, NAN)), L(1, 0)));
        expect(y, F32, 4, D(1, 1, 1, 2), V(0, 0), 0);
    }
}

/* An integer Shrink whose bias is NaN or 1e30 saturates (x - bias was
 * cast to int64 as it came). */
static void test_shrink_int_saturates(void **state)
{
    (void)state;
    sm_tensor *y =
        run1(SM_OP_Shrink, ATTRS(a_float("lambd", 0.5), a_float("bias", NAN)),
             INS(ti(I64, 1, D(3), D(5, 0, -5))));
    expect_i(y, I64, 1, D(3), D(0, 0, 0));
    y = run1(SM_OP_Shrink, ATTRS(a_float("lambd", 0.5), a_float("bias", 1e30)),
             INS(ti(I64, 1, D(3), D(5, 0, -5))));
    expect_i(y, I64, 1, D(3), D(INT64_MIN, 0, INT64_MAX));
}

/* A step of INT64_MIN reads one element per axis; step x stride
 * overflowed in the plan's slice kernel. */
static void test_slice_int64_min_step(void **state)
{
    (void)state;
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = i;
    smelt_tensor_t *t = pub_tensor(2, D(3, 4), x);
    graph_expect("graph s(%x: f32[3,4]) {\n"
                 "  %b: i64[1] = const [2]\n"
                 "  %e: i64[1] = const [-9223372036854775808]\n"
                 "  %a: i64[1] = const [0]\n"
                 "  %s: i64[1] = const [-9223372036854775808]\n"
                 "  %y = Slice(%x, %b, %e, %a, %s)\n"
                 "  return %y\n"
                 "}\n",
                 t, 4, V(8, 9, 10, 11), 0);
    graph_expect("graph s(%x: f32[3,4]) {\n"
                 "  %b: i64[2] = const [0, 3]\n"
                 "  %e: i64[2] = const [3, -9223372036854775808]\n"
                 "  %s: i64[2] = const [9223372036854775807, "
                 "-9223372036854775808]\n"
                 "  %a: i64[2] = const [0, 1]\n"
                 "  %y = Slice(%x, %b, %e, %a, %s)\n"
                 "  return %y\n"
                 "}\n",
                 t, 1, V(3), 0);
    smelt_tensor_free(t);
}

/* LRN with size 2^62 walks the C channels, not 2^62 of them: with
 * alpha = size, y = x / (1 + sum over all channels of x^2)^0.75. */
static void test_lrn_huge_size(void **state)
{
    (void)state;
    double x[12], want[12];
    for (int i = 0; i < 12; i++)
        x[i] = 0.1 * i;
    for (int i = 0; i < 12; i++) {
        int s = i % 4;
        double sum = 0;
        for (int c = 0; c < 3; c++)
            sum += x[c * 4 + s] * x[c * 4 + s];
        want[i] = x[i] / pow(1 + sum, 0.75);
    }
    smelt_tensor_t *t = pub_tensor(4, D(1, 3, 2, 2), x);
    graph_expect("graph l(%x: f32[1,3,2,2]) {\n"
                 "  %y = LRN(%x) {size = 4611686018427387904, "
                 "alpha = 4.611686018427388e18}\n"
                 "  return %y\n"
                 "}\n",
                 t, 12, want, 1e-6);
    smelt_tensor_free(t);
}

/* Pooling windows of 2^30 x 2^30 taps almost all in the padding: only
 * the taps that read the input are walked (2^60 were), and an average
 * counting the padding divides by the 2^60 taps of the padded extent. */
static void test_pool_huge_window(void **state)
{
    (void)state;
    smelt_tensor_t *t = pub_tensor(4, D(1, 1, 1, 1), V(3));
    static const char *const ops[3] = {
        "MaxPool(%x) {kernel_shape = [1073741824, 1073741824], "
        "pads = [1073741823, 1073741823, 0, 0]}",
        "AveragePool(%x) {kernel_shape = [1073741824, 1073741824], "
        "pads = [1073741823, 1073741823, 0, 0]}",
        "AveragePool(%x) {kernel_shape = [1073741824, 1073741824], "
        "pads = [1073741823, 1073741823, 0, 0], count_include_pad = 1}",
    };
    const double want[3] = {3, 3, 3.0 / 1073741824.0 / 1073741824.0};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "graph p(%%x: f32[1,1,1,1]) {\n  %%y = %s\n  return %%y\n}\n",
                 ops[i]);
        graph_expect(text, t, 1, &want[i], 1e-25);
    }
    smelt_tensor_free(t);
}

/* Empty strings and lists come with no bytes at all (protobuf leaves an
 * empty string's pointer NULL): copying them passes no NULL to memcpy,
 * and a list times a negative count is empty, as in Python (it was the
 * list itself). */
static void test_empty_strings_and_lists(void **state)
{
    (void)state;
    char *s = sm_strndup(NULL, 0);
    assert_non_null(s);
    assert_string_equal(s, "");
    sm_free(s);
    sm_arena a;
    sm_arena_init(&a);
    s = sm_arena_strndup(&a, NULL, 0);
    assert_non_null(s);
    assert_string_equal(s, "");
    sm_arena_free(&a);

    const char *src = "def f(x: Tensor):\n"
                      "    return x, len([1] * -5), len(-5 * [1, 2]), "
                      "len([] + []), len([] * 3), len([1, 2] * 2), "
                      "len(() + (1,))\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    if (smelt_script_compile(ctx, src, strlen(src), "inline.py", "f", &g) !=
        SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    smelt_tensor_t *x = pub_tensor(1, D(1), V(1)), *out[7] = {0};
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, out, 7),
                     SMELT_OK);
    const double want[6] = {0, 0, 0, 0, 4, 1};
    for (int i = 0; i < 6; i++)
        assert_true(smelt_tensor_get_f64(out[i + 1], 0) == want[i]);
    for (int i = 0; i < 7; i++)
        smelt_tensor_free(out[i]);
    smelt_tensor_free(x);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_hostile_roi),
        cmocka_unit_test(test_roialign_hostile),
        cmocka_unit_test(test_shrink_int_saturates),
        cmocka_unit_test(test_slice_int64_min_step),
        cmocka_unit_test(test_lrn_huge_size),
        cmocka_unit_test(test_pool_huge_window),
        cmocka_unit_test(test_empty_strings_and_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
