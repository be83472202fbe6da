/*
 * test_grad_attention.c - Attention's gradient inside joint graphs:
 *
 * - GPT-style blocks (Q, K, V and output projections, heads split and
 *   merged, a residual and a tanh so dO varies) written as exporters
 *   write attention: a causal block (masked_fill of a constant triangle),
 *   a grouped-query block (repeat_kv: Unsqueeze, Expand, Reshape) and a
 *   block with a learned additive bias (a float mask that is itself
 *   differentiated). Each is differentiated as written and after
 *   fuse_attention made its Attention node (checked); the gradients of
 *   the input and every weight, run as plans, agree within 1e-4 of their
 *   largest element, and the fused joint graph runs the AttentionGrad
 *   kernel (or the reference kernel where a mask's gradient is asked).
 * - Memory: the joint graph of one attention (8 heads of 64, length
 *   2048) planned with the fused node stays under 16 MiB of arena, where
 *   the unfused one holds the 128 MiB scores and probabilities.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static unsigned rng = 99u;

static float frand(float lo, float hi)
{
    rng = rng * 1103515245u + 12345u;
    return lo + (hi - lo) * (float)((rng >> 8) % 100000) / 100000.0f;
}

/* A growing text buffer. */
typedef struct buf {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 256;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
}

/* A constant of n random values in [-a, a). */
static void put_const(buf *b, const char *name, const char *type, int64_t n,
                      float a)
{
    put(b, "  %%%s: f32[%s] = const [", name, type);
    for (int64_t i = 0; i < n; i++)
        put(b, "%s%.6f", i ? ", " : "", (double)frand(-a, a));
    put(b, "]\n");
}

enum { BLOCK_CAUSAL, BLOCK_GQA, BLOCK_BIAS };

/*
 * The text of one block on x [B, T, C], C = H * Dh, K and V with Hkv
 * heads: kind BLOCK_CAUSAL (Hkv = H, a causal masked_fill), BLOCK_GQA
 * (repeat_kv to H heads, causal) or BLOCK_BIAS (Hkv = H, an additive
 * [T, T] bias initializer).
 */
static char *block_text(int kind, int B, int T, int H, int Hkv, int Dh)
{
    int C = H * Dh, Ckv = Hkv * Dh, G = H / Hkv;
    buf b = {0};
    put(&b, "graph blk(%%x: f32[%d,%d,%d]) {\n", B, T, C);
    char t[64];
    snprintf(t, sizeof t, "%d,%d", C, C);
    put_const(&b, "wq", t, (int64_t)C * C, 0.4f);
    put_const(&b, "wo", t, (int64_t)C * C, 0.4f);
    snprintf(t, sizeof t, "%d,%d", C, Ckv);
    put_const(&b, "wk", t, (int64_t)C * Ckv, 0.4f);
    put_const(&b, "wv", t, (int64_t)C * Ckv, 0.4f);
    put(&b, "  %%sc: f32[] = const %.6f\n", 1.0 / sqrt((double)Dh));
    put(&b, "  %%sq: i64[4] = const [%d, %d, %d, %d]\n", B, T, H, Dh);
    put(&b, "  %%skv: i64[4] = const [%d, %d, %d, %d]\n", B, T, Hkv, Dh);
    put(&b, "  %%sy: i64[3] = const [%d, %d, %d]\n", B, T, C);
    if (kind == BLOCK_BIAS) {
        snprintf(t, sizeof t, "%d,%d", T, T);
        put_const(&b, "bias", t, (int64_t)T * T, 1.0f);
    } else {
        put(&b,
            "  %%ninf: f32[] = const -inf\n  %%hide: bool[%d,%d] = "
            "const [",
            T, T);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                put(&b, "%s%s", i || j ? ", " : "", j > i ? "true" : "false");
        put(&b, "]\n");
    }
    put(&b,
        "  %%q0: f32[%d,%d,%d] = MatMul(%%x, %%wq)\n"
        "  %%k0: f32[%d,%d,%d] = MatMul(%%x, %%wk)\n"
        "  %%v0: f32[%d,%d,%d] = MatMul(%%x, %%wv)\n"
        "  %%q1: f32[%d,%d,%d,%d] = Reshape(%%q0, %%sq)\n"
        "  %%k1: f32[%d,%d,%d,%d] = Reshape(%%k0, %%skv)\n"
        "  %%v1: f32[%d,%d,%d,%d] = Reshape(%%v0, %%skv)\n"
        "  %%q: f32[%d,%d,%d,%d] = Transpose(%%q1) {perm = [0, 2, 1, 3]}\n"
        "  %%k: f32[%d,%d,%d,%d] = Transpose(%%k1) {perm = [0, 2, 1, 3]}\n"
        "  %%v: f32[%d,%d,%d,%d] = Transpose(%%v1) {perm = [0, 2, 1, 3]}\n",
        B, T, C, B, T, Ckv, B, T, Ckv, B, T, H, Dh, B, T, Hkv, Dh, B, T, Hkv,
        Dh, B, H, T, Dh, B, Hkv, T, Dh, B, Hkv, T, Dh);
    const char *kr = "k", *vr = "v";
    if (kind == BLOCK_GQA) {
        put(&b,
            "  %%ax: i64[1] = const [2]\n"
            "  %%e5: i64[5] = const [%d, %d, %d, %d, %d]\n"
            "  %%r4: i64[4] = const [%d, %d, %d, %d]\n"
            "  %%ku: f32[%d,%d,1,%d,%d] = Unsqueeze(%%k, %%ax)\n"
            "  %%ke: f32[%d,%d,%d,%d,%d] = Expand(%%ku, %%e5)\n"
            "  %%kr: f32[%d,%d,%d,%d] = Reshape(%%ke, %%r4)\n"
            "  %%vu: f32[%d,%d,1,%d,%d] = Unsqueeze(%%v, %%ax)\n"
            "  %%ve: f32[%d,%d,%d,%d,%d] = Expand(%%vu, %%e5)\n"
            "  %%vr: f32[%d,%d,%d,%d] = Reshape(%%ve, %%r4)\n",
            B, Hkv, G, T, Dh, B, H, T, Dh, B, Hkv, T, Dh, B, Hkv, G, T, Dh, B,
            H, T, Dh, B, Hkv, T, Dh, B, Hkv, G, T, Dh, B, H, T, Dh);
        kr = "kr";
        vr = "vr";
    }
    put(&b,
        "  %%kt: f32[%d,%d,%d,%d] = Transpose(%%%s) {perm = [0, 1, 3, 2]}\n"
        "  %%s: f32[%d,%d,%d,%d] = MatMul(%%q, %%kt)\n"
        "  %%d: f32[%d,%d,%d,%d] = Mul(%%s, %%sc)\n",
        B, H, Dh, T, kr, B, H, T, T, B, H, T, T);
    if (kind == BLOCK_BIAS)
        put(&b, "  %%w: f32[%d,%d,%d,%d] = Add(%%d, %%bias)\n", B, H, T, T);
    else
        put(&b, "  %%w: f32[%d,%d,%d,%d] = Where(%%hide, %%ninf, %%d)\n", B, H,
            T, T);
    put(&b,
        "  %%p: f32[%d,%d,%d,%d] = Softmax(%%w) {axis = -1}\n"
        "  %%o: f32[%d,%d,%d,%d] = MatMul(%%p, %%%s)\n"
        "  %%ot: f32[%d,%d,%d,%d] = Transpose(%%o) {perm = [0, 2, 1, 3]}\n"
        "  %%or: f32[%d,%d,%d] = Reshape(%%ot, %%sy)\n"
        "  %%y0: f32[%d,%d,%d] = MatMul(%%or, %%wo)\n"
        "  %%y1: f32[%d,%d,%d] = Add(%%y0, %%x)\n"
        "  %%y: f32[%d,%d,%d] = Tanh(%%y1)\n"
        "  return %%y\n}\n",
        B, H, T, T, B, H, T, Dh, vr, B, T, H, Dh, B, T, C, B, T, C, B, T, C, B,
        T, C);
    return b.s;
}

/* Occurrences of s in g's text form. */
static int count_in_text(smelt_ctx_t *ctx, const smelt_graph_t *g,
                         const char *s)
{
    char *text = NULL;
    assert_int_equal(smelt_graph_print(ctx, g, &text), SMELT_OK);
    int n = 0;
    for (const char *p = text; (p = strstr(p, s)) != NULL; p += strlen(s))
        n++;
    smelt_string_free(text);
    return n;
}

/* The joint graph of g for the loss sum(y) with respect to wrt. */
static smelt_graph_t *joint(smelt_ctx_t *ctx, const smelt_graph_t *g,
                            const char *const *wrt, int n_wrt)
{
    smelt_grad_options o;
    assert_int_equal(smelt_grad_options_default(&o), SMELT_OK);
    o.wrt = wrt;
    o.n_wrt = n_wrt;
    smelt_graph_t *j = NULL;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    return j;
}

/* Runs joint graph j as a plan (2 threads) on x; out gets its outputs. */
static smelt_plan_t *run(smelt_ctx_t *ctx, const smelt_graph_t *j,
                         smelt_tensor_t *x, smelt_tensor_t **out, int n_out)
{
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = 2;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
        fail_msg("compile: %s", smelt_ctx_error(ctx));
    if (smelt_plan_run(ctx, p, &x, 1, out, n_out) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    return p;
}

/* Whether plan p has a step of op running kernel (a prefix). */
static int has_step(const smelt_plan_t *p, const char *op, const char *kernel)
{
    smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
    for (int i = 0; i < smelt_plan_num_steps(p); i++) {
        assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
        if (!strcmp(si.op, op) && !strncmp(si.kernel, kernel, strlen(kernel)))
            return 1;
    }
    return 0;
}

/*
 * One block kind: differentiated as written and with its attention
 * fused, the gradients compared.
 */
static void one_block(int kind, int B, int T, int H, int Hkv, int Dh)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    char *text = block_text(kind, B, T, H, Hkv, Dh);
    smelt_graph_t *g = tu_parse(ctx, text), *f = tu_parse(ctx, text);
    free(text);
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.passes = "fuse_attention";
    assert_int_equal(smelt_graph_optimize(ctx, f, &oo, NULL), SMELT_OK);
    assert_int_equal(count_in_text(ctx, f, "= Attention("), 1);
    assert_int_equal(count_in_text(ctx, f, "causal = 1"),
                     kind == BLOCK_BIAS ? 0 : 1);
    static const char *const wrt[] = {"x", "wq", "wk", "wv", "wo", "bias"};
    int n_wrt = kind == BLOCK_BIAS ? 6 : 5;
    smelt_graph_t *jg = joint(ctx, g, wrt, n_wrt),
                  *jf = joint(ctx, f, wrt, n_wrt);
    int n_out = smelt_graph_num_outputs(jg);
    assert_int_equal(smelt_graph_num_outputs(jf), n_out);
    int64_t xd[3] = {B, T, (int64_t)H * Dh};
    smelt_tensor_t *x = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 3, xd, &x),
                     SMELT_OK);
    float *xv = smelt_tensor_data(x);
    for (int64_t i = 0; i < smelt_tensor_numel(x); i++)
        xv[i] = frand(-1.5f, 1.5f);
    smelt_tensor_t *og[16] = {0}, *of[16] = {0};
    assert_true(n_out <= 16);
    smelt_plan_t *pg = run(ctx, jg, x, og, n_out);
    smelt_plan_t *pf = run(ctx, jf, x, of, n_out);
    assert_false(has_step(pg, "AttentionGrad", ""));
    assert_true(has_step(pf, "AttentionGrad",
                         kind == BLOCK_BIAS ? "ref" : "attention_grad_f32"));
    for (int i = 0; i < smelt_graph_num_grads(jg); i++) {
        int k = smelt_graph_grad_output(jg, i);
        assert_string_equal(smelt_graph_grad_wrt(jf, i),
                            smelt_graph_grad_wrt(jg, i));
        smelt_tensor_t *a = og[k], *b = of[smelt_graph_grad_output(jf, i)];
        int64_t n = smelt_tensor_numel(a);
        assert_int_equal(smelt_tensor_numel(b), n);
        const float *av = smelt_tensor_data(a), *bv = smelt_tensor_data(b);
        double amax = 0, err = 0;
        for (int64_t e = 0; e < n; e++) {
            amax = fmax(amax, fabs(av[e]));
            err = fmax(err, fabs(av[e] - bv[e]));
        }
        print_message("  block %d, d/d%s: max |unfused| %.4g, max diff %.3g\n",
                      kind, smelt_graph_grad_wrt(jg, i), amax, err);
        assert_true(amax > 0);
        if (!(err <= 1e-4 * amax))
            fail_msg("block %d: d/d%s differs by %g (largest %g)", kind,
                     smelt_graph_grad_wrt(jg, i), err, amax);
    }
    for (int i = 0; i < n_out; i++) {
        smelt_tensor_free(og[i]);
        smelt_tensor_free(of[i]);
    }
    smelt_tensor_free(x);
    smelt_plan_free(pg);
    smelt_plan_free(pf);
    smelt_graph_free(jg);
    smelt_graph_free(jf);
    smelt_graph_free(g);
    smelt_graph_free(f);
    smelt_ctx_free(ctx);
}

static void test_blocks(void **state)
{
    (void)state;
    one_block(BLOCK_CAUSAL, 2, 37, 4, 4, 6);
    one_block(BLOCK_CAUSAL, 1, 70, 2, 2, 16);
    one_block(BLOCK_GQA, 2, 19, 6, 2, 5);
    one_block(BLOCK_BIAS, 2, 13, 3, 3, 7);
}

/* Arena of the joint graph of one attention on inputs q, k, v (8 heads
 * of 64 at length 2048), fused or as the unfused graph. */
static int64_t joint_arena(int fused)
{
    const char *text =
        "graph a(%q: f32[1,8,2048,64], %k: f32[1,8,2048,64], "
        "%v: f32[1,8,2048,64]) {\n"
        "  %sc: f32[] = const 0.125\n"
        "  %kt: f32[1,8,64,2048] = Transpose(%k) {perm = [0, 1, 3, 2]}\n"
        "  %s: f32[1,8,2048,2048] = MatMul(%q, %kt)\n"
        "  %d: f32[1,8,2048,2048] = Mul(%s, %sc)\n"
        "  %p: f32[1,8,2048,2048] = Softmax(%d) {axis = -1}\n"
        "  %o: f32[1,8,2048,64] = MatMul(%p, %v)\n"
        "  return %o\n}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    if (fused) {
        smelt_opt_options oo;
        smelt_opt_options_default(&oo);
        oo.passes = "fuse_attention";
        assert_int_equal(smelt_graph_optimize(ctx, g, &oo, NULL), SMELT_OK);
        assert_int_equal(count_in_text(ctx, g, "= Attention("), 1);
    }
    static const char *const wrt[] = {"q", "k", "v"};
    smelt_graph_t *j = joint(ctx, g, wrt, 3);
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = 2;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
        fail_msg("compile: %s", smelt_ctx_error(ctx));
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    smelt_plan_free(p);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return s.arena_bytes;
}

static void test_joint_memory(void **state)
{
    (void)state;
    int64_t f = joint_arena(1), u = joint_arena(0);
    print_message("  joint graph arena at 2048: fused %lld bytes, unfused "
                  "%lld bytes\n",
                  (long long)f, (long long)u);
    assert_true(f < ((int64_t)16 << 20));
    assert_true(u >= ((int64_t)128 << 20));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_joint_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
