/*
 * test_api_sized.c - the public structs that grow (smelt.h, "Structs
 * that grow"): a caller built against an older smelt.h (a smaller
 * struct_size) gets defaults for the fields it lacks and has no byte past
 * its struct written; a newer caller's zeroed extra fields are accepted,
 * set ones refused; a garbage size is refused with a message naming the
 * struct; smelt_attr's reserved slots must be NULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sized.h"
#include "testutil.h"

/* The ends of the first versions, spelled here independently of the
 * library so a field appended later turns these into "older caller"
 * sizes. */
#define OPT_V1 SM_FIELD_END(smelt_opt_options, debug_dir)
#define PLAN_V1 SM_FIELD_END(smelt_plan_options, reference)
#define STATS_V1 SM_FIELD_END(smelt_plan_stats, isa)
#define STEP_V1 SM_FIELD_END(smelt_plan_step_info, bytes_write)
#define PASS_V1 SM_FIELD_END(smelt_pass_stats, log)

#define CANARY 0xA5
#define SLACK 64

static const char *chain = "graph chain(%x: f32[8]) {\n"
                           "  %a: f32[8] = Relu(%x)\n"
                           "  %b: f32[8] = Neg(%a)\n"
                           "  return %b\n"
                           "}\n";

static smelt_graph_t *parse(smelt_ctx_t *ctx)
{
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, chain, strlen(chain), "t.ir", &g),
                     SMELT_OK);
    return g;
}

/* Whether the n bytes at p all hold the canary. */
static int untouched(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != CANARY)
            return 0;
    return 1;
}

/* A struct of the mechanism's own, in two versions: what an older caller
 * passes keeps the newer field's default. */
typedef struct v2 {
    size_t struct_size;
    int32_t a;
    int32_t b; /* added in "version 2" */
} v2;

static void test_sized_mechanism(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    size_t v1 = SM_FIELD_END(v2, a);
    /* older caller in: b keeps the default 7 */
    v2 lib = {sizeof(v2), 1, 7};
    v2 old = {v1, 42, 99}; /* b lies beyond what the caller has */
    assert_int_equal(sm_sized_in(ctx, "v2", &lib, sizeof lib, v1, &old),
                     SMELT_OK);
    assert_int_equal(lib.a, 42);
    assert_int_equal(lib.b, 7);
    /* older caller out: nothing past its size is written */
    unsigned char buf[sizeof(v2) + SLACK];
    memset(buf, CANARY, sizeof buf);
    memcpy(buf, &v1, sizeof v1);
    v2 full = {sizeof(v2), 5, 6};
    sm_sized_out(buf, &full, sizeof full);
    v2 got;
    memcpy(&got, buf, sizeof got);
    assert_int_equal(got.struct_size, v1);
    assert_int_equal(got.a, 5);
    assert_true(untouched(buf + v1, sizeof buf - v1));
    smelt_ctx_free(ctx);
}

/* Options initialized at an older caller's size leave the bytes past it
 * alone, and compile with every later field at its default. */
static void test_options_old_size(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = parse(ctx);
    unsigned char buf[sizeof(smelt_plan_options) + SLACK];
    memset(buf, CANARY, sizeof buf);
    smelt_plan_options *o = (smelt_plan_options *)buf;
    assert_int_equal(smelt_plan_options_init(o, PLAN_V1), SMELT_OK);
    assert_int_equal(o->struct_size, PLAN_V1);
    assert_int_equal(o->level, 3);
    assert_true(untouched(buf + PLAN_V1, sizeof buf - PLAN_V1));
    o->level = 0;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, o, &p), SMELT_OK);

    /* results at the older sizes: filled up to them, nothing after */
    unsigned char sb[sizeof(smelt_plan_stats) + SLACK];
    memset(sb, CANARY, sizeof sb);
    size_t n = STATS_V1;
    memcpy(sb, &n, sizeof n);
    assert_int_equal(smelt_plan_get_stats(p, (smelt_plan_stats *)sb), SMELT_OK);
    assert_int_equal(((smelt_plan_stats *)sb)->steps, 2);
    assert_true(untouched(sb + STATS_V1, sizeof sb - STATS_V1));
    unsigned char ib[sizeof(smelt_plan_step_info) + SLACK];
    memset(ib, CANARY, sizeof ib);
    n = STEP_V1;
    memcpy(ib, &n, sizeof n);
    assert_int_equal(smelt_plan_step(p, 1, (smelt_plan_step_info *)ib),
                     SMELT_OK);
    assert_string_equal(((smelt_plan_step_info *)ib)->op, "Neg");
    assert_true(untouched(ib + STEP_V1, sizeof ib - STEP_V1));
    smelt_plan_free(p);

    unsigned char ob[sizeof(smelt_opt_options) + SLACK];
    memset(ob, CANARY, sizeof ob);
    smelt_opt_options *oo = (smelt_opt_options *)ob;
    assert_int_equal(smelt_opt_options_init(oo, OPT_V1), SMELT_OK);
    assert_int_equal(oo->level, 1);
    assert_true(untouched(ob + OPT_V1, sizeof ob - OPT_V1));
    smelt_opt_report_t *rep = NULL;
    assert_int_equal(smelt_graph_optimize(ctx, g, oo, &rep), SMELT_OK);
    assert_true(smelt_opt_report_num_passes(rep) > 0);
    unsigned char pb[sizeof(smelt_pass_stats) + SLACK];
    memset(pb, CANARY, sizeof pb);
    n = PASS_V1;
    memcpy(pb, &n, sizeof n);
    assert_int_equal(smelt_opt_report_get(rep, 0, (smelt_pass_stats *)pb),
                     SMELT_OK);
    assert_non_null(((smelt_pass_stats *)pb)->name);
    assert_true(untouched(pb + PASS_V1, sizeof pb - PASS_V1));
    smelt_opt_report_free(rep);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A newer caller: extra fields left zero are fine, a set one is refused;
 * a result struct larger than ours gets its unknown tail zeroed. */
static void test_newer_caller(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = parse(ctx);
    size_t big = sizeof(smelt_plan_options) + 16;
    unsigned char buf[sizeof(smelt_plan_options) + SLACK];
    memset(buf, CANARY, sizeof buf);
    smelt_plan_options *o = (smelt_plan_options *)buf;
    assert_int_equal(smelt_plan_options_init(o, big), SMELT_OK);
    for (size_t i = sizeof(smelt_plan_options); i < big; i++)
        assert_int_equal(buf[i], 0);
    assert_true(untouched(buf + big, sizeof buf - big));
    o->level = 0;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, o, &p), SMELT_OK);
    smelt_plan_free(p);
    buf[big - 1] = 1;
    assert_int_equal(smelt_plan_compile(ctx, g, o, &p), SMELT_ERR_UNSUPPORTED);
    assert_null(p);
    assert_non_null(strstr(smelt_ctx_error(ctx), "smelt_plan_options"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "this library"));
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Garbage sizes (zero, one short of the first version, an uninitialized
 * field's worth) are refused with a message naming the struct, and
 * nothing is written. */
static void test_garbage_size(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = parse(ctx);
    const size_t bad[] = {0, 3, PLAN_V1 - 1, (size_t)1 << 40};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        smelt_plan_options o;
        memset(&o, CANARY, sizeof o);
        assert_int_equal(smelt_plan_options_init(&o, bad[k]),
                         SMELT_ERR_INVALID_ARG);
        assert_true(untouched((unsigned char *)&o, sizeof o));
        smelt_plan_options_default(&o);
        o.struct_size = bad[k];
        smelt_plan_t *p = NULL;
        assert_int_equal(smelt_plan_compile(ctx, g, &o, &p),
                         SMELT_ERR_INVALID_ARG);
        assert_null(p);
        char want[64];
        snprintf(want, sizeof want, "smelt_plan_options: struct_size %zu",
                 bad[k]);
        assert_non_null(strstr(smelt_ctx_error(ctx), want));
        /* the take variant frees the graph it was given */
        smelt_graph_t *c = NULL;
        assert_int_equal(smelt_graph_clone(ctx, g, &c), SMELT_OK);
        assert_int_equal(smelt_plan_compile_take(ctx, c, &o, &p),
                         SMELT_ERR_INVALID_ARG);

        smelt_opt_options oo;
        smelt_opt_options_default(&oo);
        oo.struct_size = bad[k];
        assert_int_equal(smelt_graph_optimize(ctx, g, &oo, NULL),
                         SMELT_ERR_INVALID_ARG);
        assert_non_null(strstr(smelt_ctx_error(ctx), "smelt_opt_options"));
        char *pipe = NULL;
        assert_int_equal(smelt_opt_pipeline(ctx, &oo, &pipe),
                         SMELT_ERR_INVALID_ARG);
        assert_null(pipe);
    }
    /* result structs: refused, and left as they were */
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, NULL, &p), SMELT_OK);
    smelt_plan_stats st;
    memset(&st, 0, sizeof st);
    assert_int_equal(smelt_plan_get_stats(p, &st), SMELT_ERR_INVALID_ARG);
    assert_int_equal(st.steps, 0);
    smelt_plan_step_info si;
    memset(&si, 0, sizeof si);
    si.struct_size = 1;
    assert_int_equal(smelt_plan_step(p, 0, &si), SMELT_ERR_INVALID_ARG);
    assert_null(si.op);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* smelt_attr cannot carry a size (the library indexes arrays of it), so
 * its room to grow is `reserved`, which must stay NULL. */
static void test_attr_reserved(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int64_t dims[2] = {2, 3};
    smelt_tensor_t *x = NULL, *y = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &x),
                     SMELT_OK);
    memset(smelt_tensor_data(x), 0, 6 * sizeof(float));
    smelt_attr ok = {.name = "axis", .kind = SMELT_ATTR_INT, .i = 1};
    assert_int_equal(smelt_op(ctx, "Softmax", &x, 1, &ok, 1, &y, 1), SMELT_OK);
    smelt_tensor_free(y);
    y = NULL;
    smelt_attr bad = ok;
    bad.reserved[1] = &ok;
    assert_int_equal(smelt_op(ctx, "Softmax", &x, 1, &bad, 1, &y, 1),
                     SMELT_ERR_INVALID_ARG);
    assert_null(y);
    assert_non_null(strstr(smelt_ctx_error(ctx), "reserved"));
    smelt_tensor_free(x);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sized_mechanism),
        cmocka_unit_test(test_options_old_size),
        cmocka_unit_test(test_newer_caller),
        cmocka_unit_test(test_garbage_size),
        cmocka_unit_test(test_attr_reserved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
