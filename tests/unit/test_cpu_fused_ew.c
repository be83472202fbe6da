/*
 * test_cpu_fused_ew.c - the FusedElementwise CPU kernel (fused_ew.c):
 * a fused body gives bit for bit what its nodes give as separate steps,
 * on every ISA, at odd sizes (1, 7, 1000, 100003), 1 and 2 threads, with
 * one-element and bias-row broadcasts, repeated inputs and an output that
 * later body nodes read; bodies it refuses (an op with no row function,
 * a row shorter than 16, a returned parameter) still run, expanded; and the
 * fused plan holds fewer arena buffers than the unfused one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A body: its parameters (name and whether it is one element), its
 * lines with '$' for the full shape, and what it returns. */
typedef struct body {
    const char *name;
    int n_par;
    const char *par[6];
    int par_one[6]; /* 1: one element; 2: a row of the last dim */
    const char *lines;
    int n_ret;
    const char *ret[3];
    int fuses; /* the kernel takes it */
} body;

/* AdamW's update: one-element constants and a scalar input (the
 * learning rate), a repeated input (g * g), the new m returned and read
 * again (m2 / ...). */
static const body adamw = {"adamw",
                           5,
                           {"pw", "pg", "pm", "pv", "plr"},
                           {0, 0, 0, 0, 1},
                           "%b1: f32[] = const 0.9\n"
                           "%c1: f32[] = const 0.1\n"
                           "%b2: f32[] = const 0.999\n"
                           "%c2: f32[] = const 0.001\n"
                           "%eps: f32[] = const 1e-8\n"
                           "%wd: f32[] = const 0.01\n"
                           "%t0: f32$ = Mul(%pm, %b1)\n"
                           "%t1: f32$ = Mul(%pg, %c1)\n"
                           "%m2: f32$ = Add(%t0, %t1)\n"
                           "%t2: f32$ = Mul(%pg, %pg)\n"
                           "%t3: f32$ = Mul(%t2, %c2)\n"
                           "%t4: f32$ = Mul(%pv, %b2)\n"
                           "%v2: f32$ = Add(%t4, %t3)\n"
                           "%t5: f32$ = Sqrt(%v2)\n"
                           "%t6: f32$ = Add(%t5, %eps)\n"
                           "%t7: f32$ = Div(%m2, %t6)\n"
                           "%t8: f32$ = Mul(%pw, %wd)\n"
                           "%t9: f32$ = Add(%t7, %t8)\n"
                           "%t10: f32$ = Mul(%t9, %plr)\n"
                           "%w2: f32$ = Sub(%pw, %t10)\n",
                           3,
                           {"m2", "v2", "w2"},
                           1};

/* Every unary and binary row op, scalars on either side. */
static const body acts = {"acts",
                          3,
                          {"px", "py", "pk"},
                          {0, 0, 1},
                          "%lo: f32[] = const -0.5\n"
                          "%hi: f32[] = const 0.75\n"
                          "%a0: f32$ = Gelu(%px) {approximate = \"tanh\"}\n"
                          "%a1: f32$ = Gelu(%py)\n"
                          "%a2: f32$ = Sub(%pk, %a0)\n"
                          "%a3: f32$ = Sigmoid(%a2)\n"
                          "%a4: f32$ = LeakyRelu(%a1) {alpha = 0.2}\n"
                          "%a5: f32$ = Clip(%a4, %lo, %hi)\n"
                          "%a6: f32$ = Tanh(%a5)\n"
                          "%a7: f32$ = Erf(%a3)\n"
                          "%a8: f32$ = Exp(%a7)\n"
                          "%a9: f32$ = Neg(%a6)\n"
                          "%b0: f32$ = Abs(%a9)\n"
                          "%b1: f32$ = Max(%b0, %a8)\n"
                          "%b2: f32$ = Min(%a8, %pk)\n"
                          "%b3: f32$ = Reciprocal(%b2)\n"
                          "%b4: f32$ = Div(%hi, %b3)\n"
                          "%b5: f32$ = Relu(%b4)\n"
                          "%b6: f32$ = Add(%b5, %b1)\n"
                          "%b7: f32$ = Add(%a6, %a6)\n",
                          2,
                          {"b6", "b7"},
                          1};

/* SiLU times a residual: x * sigmoid(x) + r */
static const body silu = {"silu",
                          2,
                          {"px", "pr"},
                          {0, 0},
                          "%s0: f32$ = Sigmoid(%px)\n"
                          "%s1: f32$ = Mul(%px, %s0)\n"
                          "%s2: f32$ = Add(%s1, %pr)\n",
                          1,
                          {"s2"},
                          1};

/* Pow has no row function: expanded. */
static const body pow_body = {"pow",
                              2,
                              {"px", "py"},
                              {0, 0},
                              "%two: f32[] = const 2.0\n"
                              "%q0: f32$ = Pow(%px, %two)\n"
                              "%q1: f32$ = Add(%q0, %py)\n",
                              1,
                              {"q1"},
                              0};

/* A returned parameter: expanded (with a copy). */
static const body ret_par = {
    "ret_par",    2, {"px", "py"}, {0, 0}, "%r0: f32$ = Mul(%px, %py)\n", 2,
    {"r0", "py"}, 0};

static void put(char **p, size_t *left, const char *fmt, const char *s)
{
    int n = snprintf(*p, *left, fmt, s);
    assert_true(n >= 0 && (size_t)n < *left);
    *p += n;
    *left -= (size_t)n;
}

/* s with every '$' replaced by sh. */
static void put_shaped(char **p, size_t *left, const char *s, const char *sh)
{
    for (; *s; s++) {
        if (*s == '$') {
            put(p, left, "%s", sh);
        } else {
            char c[2] = {*s, 0};
            put(p, left, "%s", c);
        }
    }
}

/* A parameter's type: the full shape sh, one element or the row. */
static void put_par(char **p, size_t *left, int one, const char *sh,
                    const char *row)
{
    put(p, left, "f32%s", one == 1 ? "[1]" : one == 2 ? row : sh);
}

/* The graph of body b over shape sh: fused (one FusedElementwise whose
 * body is b) or not (b's nodes in the top block). */
static char *graph_text(const body *b, const char *sh, const char *row,
                        int fused)
{
    size_t left = 16384;
    char *text = malloc(left), *p = text;
    assert_non_null(text);
    put(&p, &left, "%s", "graph g(");
    for (int i = 0; i < b->n_par; i++) {
        put(&p, &left, i ? ", %%%s" : "%%%s", b->par[i]);
        put(&p, &left, fused ? "_in: " : ": %s", "");
        put_par(&p, &left, b->par_one[i], sh, row);
    }
    put(&p, &left, "%s", ") {\n");
    if (fused) {
        for (int i = 0; i < b->n_ret; i++) {
            put(&p, &left, i ? ", %%%s_out: " : "%%%s_out: ", b->ret[i]);
            put_shaped(&p, &left, "f32$", sh);
        }
        put(&p, &left, "%s", " = FusedElementwise(");
        for (int i = 0; i < b->n_par; i++)
            put(&p, &left, i ? ", %%%s_in" : "%%%s_in", b->par[i]);
        put(&p, &left, "%s", ") body(");
        for (int i = 0; i < b->n_par; i++) {
            put(&p, &left, i ? ", %%%s: " : "%%%s: ", b->par[i]);
            put_par(&p, &left, b->par_one[i], sh, row);
        }
        put(&p, &left, "%s", ") {\n");
    }
    put_shaped(&p, &left, b->lines, sh);
    put(&p, &left, "%s", "return ");
    for (int i = 0; i < b->n_ret; i++)
        put(&p, &left, i ? ", %%%s" : "%%%s", b->ret[i]);
    put(&p, &left, "%s", "\n");
    if (fused) {
        put(&p, &left, "%s", "}\nreturn ");
        for (int i = 0; i < b->n_ret; i++)
            put(&p, &left, i ? ", %%%s_out" : "%%%s_out", b->ret[i]);
        put(&p, &left, "%s", "\n");
    }
    put(&p, &left, "%s", "}\n");
    return text;
}

static smelt_plan_t *plan_of(smelt_ctx_t *ctx, const char *text,
                             const char *isa, int threads)
{
    smelt_graph_t *g = NULL;
    if (smelt_graph_parse(ctx, text, strlen(text), "t.ir", &g) != SMELT_OK)
        fail_msg("parse: %s\n%s", smelt_ctx_error(ctx), text);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 0; /* no fusion: the graph's nodes as written */
    o.threads = threads;
    o.isa = isa;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, g, &o, &p) != SMELT_OK)
        fail_msg("compile: %s", smelt_ctx_error(ctx));
    smelt_graph_free(g);
    return p;
}

/* Inputs of b at n elements: varied values, positive where Sqrt reads. */
static void make_inputs(const body *b, int nd, const int64_t *dims,
                        smelt_tensor_t **in)
{
    for (int i = 0; i < b->n_par; i++) {
        int64_t one = 1;
        const int64_t *d = b->par_one[i] == 1   ? &one
                           : b->par_one[i] == 2 ? dims + nd - 1
                                                : dims;
        int r = b->par_one[i] ? 1 : nd;
        assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_F32, r, d, &in[i]),
                         SMELT_OK);
        float *x = smelt_tensor_data(in[i]);
        unsigned s = 12345u * (unsigned)(i + 1);
        int64_t cnt = smelt_tensor_numel(in[i]);
        for (int64_t k = 0; k < cnt; k++) {
            s = s * 1103515245u + 12345u;
            x[k] = (float)((s >> 8) & 0xffff) / 8192.0f - 3.0f;
        }
        if (!strcmp(b->par[i], "pv"))
            for (int64_t k = 0; k < cnt; k++)
                x[k] = x[k] * x[k];
    }
}

/* Whether step 0 of p runs the fused kernel of isa. */
static int fused_on(const smelt_plan_t *p, const char *isa)
{
    smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
    assert_int_equal(smelt_plan_step(p, 0, &si), SMELT_OK);
    char want[64];
    snprintf(want, sizeof want, "fused_ew_f32_%s", isa);
    return !strcmp(si.kernel, want);
}

/* Body b at n elements on isa with `threads`: the fused plan and the
 * unfused one agree bit for bit; the kernel takes b exactly when
 * b->fuses says. */
static void check_dims(const body *b, int nd, const int64_t *dims,
                       const char *isa, int threads)
{
    char sh[64], row[32];
    int64_t n = 1;
    for (int k = 0; k < nd; k++)
        n *= dims[k];
    if (nd == 1)
        snprintf(sh, sizeof sh, "[%lld]", (long long)dims[0]);
    else
        snprintf(sh, sizeof sh, "[%lld,%lld]", (long long)dims[0],
                 (long long)dims[1]);
    snprintf(row, sizeof row, "[%lld]", (long long)dims[nd - 1]);
    char *ft = graph_text(b, sh, row, 1), *ut = graph_text(b, sh, row, 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_plan_t *fp = plan_of(ctx, ft, isa, threads);
    smelt_plan_t *up = plan_of(ctx, ut, isa, threads);
    /* the unfused plan runs each body node as a step of its own */
    assert_false(fused_on(up, isa));
    if (fused_on(fp, isa) != b->fuses)
        fail_msg("%s at %lld on %s: fused kernel %s", b->name, (long long)n,
                 isa, b->fuses ? "expected" : "unexpected");
    smelt_tensor_t *in[6] = {0}, *got[3] = {0}, *want[3] = {0};
    make_inputs(b, nd, dims, in);
    assert_int_equal(smelt_plan_run(ctx, fp, in, b->n_par, got, b->n_ret),
                     SMELT_OK);
    assert_int_equal(smelt_plan_run(ctx, up, in, b->n_par, want, b->n_ret),
                     SMELT_OK);
    for (int i = 0; i < b->n_ret; i++) {
        assert_int_equal(smelt_tensor_numel(got[i]), n);
        if (memcmp(smelt_tensor_data(got[i]), smelt_tensor_data(want[i]),
                   (size_t)n * sizeof(float)))
            fail_msg("%s at %lld on %s, %d threads: output %d differs", b->name,
                     (long long)n, isa, threads, i);
        smelt_tensor_free(got[i]);
        smelt_tensor_free(want[i]);
    }
    for (int i = 0; i < b->n_par; i++)
        smelt_tensor_free(in[i]);
    smelt_plan_free(fp);
    smelt_plan_free(up);
    smelt_ctx_free(ctx);
    free(ft);
    free(ut);
}

static void check(const body *b, int64_t n, const char *isa, int threads)
{
    check_dims(b, 1, &n, isa, threads);
}

/* The ISAs this CPU runs (the plan never goes above what it has). */
static int isa_ok(const char *isa)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    char *t = graph_text(&silu, "[8]", "[8]", 1);
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, t, strlen(t), "t.ir", &g),
                     SMELT_OK);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 0;
    o.isa = isa;
    smelt_plan_t *p = NULL;
    int ok = smelt_plan_compile(ctx, g, &o, &p) == SMELT_OK && fused_on(p, isa);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    free(t);
    return ok;
}

static const char *const isas[] = {"scalar", "avx2", "avx512"};
static const int64_t sizes[] = {1, 7, 1000, 100003};

static void run_all(const body *b)
{
    for (int k = 0; k < 3; k++) {
        if (!isa_ok(isas[k])) {
            if (k == 0)
                fail_msg("the scalar fused kernel is not chosen");
            continue;
        }
        for (int s = 0; s < 4; s++)
            for (int th = 1; th <= 2; th++)
                check(b, sizes[s], isas[k], th);
    }
}

static void test_adamw(void **state)
{
    (void)state;
    run_all(&adamw);
}

static void test_activations(void **state)
{
    (void)state;
    run_all(&acts);
}

static void test_silu_residual(void **state)
{
    (void)state;
    run_all(&silu);
}

static void test_refused_bodies_expand(void **state)
{
    (void)state;
    run_all(&pow_body);
    run_all(&ret_par);
}

/* A bias row broadcast along the rows, on either side of a binary op,
 * with a one-element input too; the rows cross tile boundaries. */
#define BIAS_LINES                                                             \
    "%e0: f32$ = Add(%px, %pb)\n"                                              \
    "%e1: f32$ = Gelu(%e0) {approximate = \"tanh\"}\n"                         \
    "%e2: f32$ = Mul(%pb, %e1)\n"                                              \
    "%e3: f32$ = Sub(%e2, %pk)\n"

static const body bias = {"bias",     3, {"px", "pb", "pk"}, {0, 2, 1},
                          BIAS_LINES, 2, {"e3", "e0"},       1};

/* The same with rows shorter than SM_EW_MIN_ROW: expanded. */
static const body bias_short = {"bias_short", 3, {"px", "pb", "pk"}, {0, 2, 1},
                                BIAS_LINES,   2, {"e3", "e0"},       0};

static void test_row_broadcast(void **state)
{
    (void)state;
    static const int64_t shapes[][2] = {{3, 37},    {1, 17},     {7, 16},
                                        {1000, 19}, {100, 1000}, {3, 2053}};
    for (int k = 0; k < 3; k++) {
        if (!isa_ok(isas[k]))
            continue;
        for (int s = 0; s < 6; s++)
            for (int th = 1; th <= 2; th++)
                check_dims(&bias, 2, shapes[s], isas[k], th);
        int64_t narrow[2] = {50, 8};
        check_dims(&bias_short, 2, narrow, isas[k], 1);
    }
}

/* The fused AdamW update keeps no intermediate in the arena: its
 * temporaries are the kernel's tiles. */
static void test_fewer_buffers(void **state)
{
    (void)state;
    char *ft = graph_text(&adamw, "[4096]", "", 1),
         *ut = graph_text(&adamw, "[4096]", "", 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_plan_t *fp = plan_of(ctx, ft, NULL, 1);
    smelt_plan_t *up = plan_of(ctx, ut, NULL, 1);
    smelt_plan_stats fs = SMELT_STRUCT_INIT(smelt_plan_stats),
                     us = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(fp, &fs), SMELT_OK);
    assert_int_equal(smelt_plan_get_stats(up, &us), SMELT_OK);
    assert_int_equal(fs.steps, 1);
    assert_int_equal(fs.kernel_steps, 1);
    assert_true(fs.arena_buffers < us.arena_buffers);
    assert_true(fs.arena_bytes < us.arena_bytes);
    /* the workspace: a few tiles, not a tensor */
    assert_true(fs.arena_bytes <= 8 * 1024 * 4);
    smelt_plan_free(fp);
    smelt_plan_free(up);
    smelt_ctx_free(ctx);
    free(ft);
    free(ut);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adamw),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_silu_residual),
        cmocka_unit_test(test_refused_bodies_expand),
        cmocka_unit_test(test_row_broadcast),
        cmocka_unit_test(test_fewer_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
