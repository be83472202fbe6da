/*
 * test_plan_attention_grad.c - Attention's backward in compiled plans:
 * random graphs O = Attention(Q, K, V, mask?), (dQ, dK, dV) =
 * AttentionGrad(Q, K, V, O, dO, mask?) (odd lengths, head dims up to
 * 130, grouped and multi-query heads, causal with Tq <= Tk and Tq > Tk,
 * no mask or a float or bool mask of a random broadcast shape, bool masks
 * hiding whole rows; and every remainder of the kernel's register tile:
 * lengths 1, 7, 63, 130 and 1000, head sizes 32, 64, 80, 128 and odd
 * ones) compiled for every ISA this machine has and 1 or 2
 * threads run the tiled kernel (attention_grad_f32_<isa>) and match the
 * reference interpreter; a fully masked row gets zero gradients; the
 * workspace of a backward at length 2048 is linear in the length; a
 * mask's gradient (a fourth output) runs the reference kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpuid.h"
#include "testutil.h"

static unsigned rng = 4242u;

static unsigned urand(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

/* Values in [-2, 2) (f32), or bool about 80% true; with dead_rows, bool
 * masks of rank >= 2 whose query axis is full get their first query row
 * all false. */
static smelt_tensor_t *rand_tensor(smelt_dtype dt, int ndim,
                                   const int64_t *dims, int dead_rows)
{
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, dt, ndim, dims, &t), SMELT_OK);
    int64_t n = smelt_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        if (dt == SMELT_DTYPE_BOOL)
            ((unsigned char *)smelt_tensor_data(t))[i] = urand(5) != 0;
        else
            ((float *)smelt_tensor_data(t))[i] = urand(4000) / 1000.0f - 2;
    }
    if (dt == SMELT_DTYPE_BOOL && dead_rows && ndim >= 2) {
        int64_t tk = dims[ndim - 1], tq = dims[ndim - 2];
        for (int64_t r = 0; r < n / (tq * tk); r++)
            memset((unsigned char *)smelt_tensor_data(t) + r * tq * tk, 0,
                   (size_t)tk);
    }
    return t;
}

static void dims_str(char *buf, size_t size, int n, const int64_t *d)
{
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
                 (long long)d[i]);
    }
}

/* Whether plan p runs AttentionGrad with kernel `want`. */
static int has_step(const smelt_plan_t *p, const char *want)
{
    smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
    for (int i = 0; i < smelt_plan_num_steps(p); i++) {
        assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
        if (!strcmp(si.op, "AttentionGrad") && !strcmp(si.kernel, want))
            return 1;
    }
    return 0;
}

/* Output o of a plan against the reference's: within 2e-4 of the
 * output's largest |value| plus 1e-5 (NaN nowhere: gradients are defined
 * on fully masked rows). The 1e-5 is for gradients that are 0 in exact
 * arithmetic: with one key (P = 1, O = V) dS = dO.V - dO.O cancels two
 * f32 sums of 80 products up to 4 each, ~1e-6 apart. */
static void compare(smelt_tensor_t *y, smelt_tensor_t *r, const char *what,
                    const char *text)
{
    const float *a = smelt_tensor_data(y), *b = smelt_tensor_data(r);
    int64_t n = smelt_tensor_numel(r);
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(b[i]) > amax)
            amax = fabs(b[i]);
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(a[i] - b[i]) <= 2e-4 * amax + 1e-5))
            fail_msg("%s, element %lld: %.9g, reference %.9g (max %g)\n%s",
                     what, (long long)i, a[i], b[i], amax, text);
}

/* One forward + backward graph's shape: batch, kv heads, query heads
 * per kv head, lengths, head dims, causal, mask kind (0 none, 1 float,
 * 2 bool) of rank mr and dims md, dead: a bool mask's first query row
 * hidden whole (where its query axis is full), the scale. */
typedef struct grad_case {
    int64_t B, Hkv, G, Tq, Tk, D, Dv;
    int causal, mask, mr, dead;
    int64_t md[4];
    float scale;
} grad_case;

/* The graph of c on every ISA and 1 / 2 threads against the reference
 * interpreter. */
static void check_graph(const grad_case *c)
{
    int64_t B = c->B, Hkv = c->Hkv, Tq = c->Tq, Tk = c->Tk, D = c->D,
            Dv = c->Dv, Hq = Hkv * c->G;
    int causal = c->causal, mask = c->mask, mr = c->mr;
    int64_t q[4] = {B, Hq, Tq, D}, k[4] = {B, Hkv, Tk, D},
            v[4] = {B, Hkv, Tk, Dv}, o[4] = {B, Hq, Tq, Dv};
    const int64_t *md = c->md;
    char sq[64], sk[64], sv[64], sm[64], so[64], text[2048];
    dims_str(sq, sizeof sq, 4, q);
    dims_str(sk, sizeof sk, 4, k);
    dims_str(sv, sizeof sv, 4, v);
    dims_str(sm, sizeof sm, mr, md);
    dims_str(so, sizeof so, 4, o);
    float scale = c->scale;
    char mdecl[96] = "", marg[16] = "";
    if (mask) {
        snprintf(mdecl, sizeof mdecl, ", %%m: %s[%s]",
                 mask == 1 ? "f32" : "bool", sm);
        snprintf(marg, sizeof marg, ", %%m");
    }
    snprintf(text, sizeof text,
             "graph a(%%q: f32[%s], %%k: f32[%s], %%v: f32[%s], "
             "%%dy: f32[%s]%s) {\n"
             "  %%y: f32[%s] = Attention(%%q, %%k, %%v%s) {scale = %.4f, "
             "causal = %d}\n"
             "  %%dq: f32[%s], %%dk: f32[%s], %%dv: f32[%s] = "
             "AttentionGrad(%%q, %%k, %%v, %%y, %%dy%s) {scale = %.4f, "
             "causal = %d}\n"
             "  return %%dq, %%dk, %%dv\n}\n",
             sq, sk, sv, so, mdecl, so, marg, (double)scale, causal, sq, sk, sv,
             marg, (double)scale, causal);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    smelt_tensor_t *in[5] = {
        rand_tensor(SMELT_DTYPE_F32, 4, q, 0),
        rand_tensor(SMELT_DTYPE_F32, 4, k, 0),
        rand_tensor(SMELT_DTYPE_F32, 4, v, 0),
        rand_tensor(SMELT_DTYPE_F32, 4, o, 0),
        mask ? rand_tensor(mask == 1 ? SMELT_DTYPE_F32 : SMELT_DTYPE_BOOL, mr,
                           md, c->dead && md[mr - 2] > 1)
             : NULL};
    int n_in = mask ? 5 : 4;
    smelt_tensor_t *ref[3] = {NULL, NULL, NULL};
    if (smelt_graph_run_reference(ctx, g, in, n_in, ref, 3) != SMELT_OK)
        fail_msg("reference: %s\n%s", smelt_ctx_error(ctx), text);
    static const char *isas[] = {"avx512", "avx2", "scalar"};
    static const unsigned need[] = {SM_CPU_AVX512F | SM_CPU_AVX512BW,
                                    SM_CPU_AVX2 | SM_CPU_FMA, 0};
    static const char *names[3] = {"dQ", "dK", "dV"};
    for (int s = 0; s < 3; s++) {
        if ((sm_cpu_detect() & need[s]) != need[s])
            continue;
        for (int th = 1; th <= 2; th++) {
            smelt_plan_options po;
            smelt_plan_options_default(&po);
            po.threads = th;
            po.isa = isas[s];
            po.level = 0;
            smelt_plan_t *p = NULL;
            if (smelt_plan_compile(ctx, g, &po, &p) != SMELT_OK)
                fail_msg("compile: %s\n%s", smelt_ctx_error(ctx), text);
            char want[64];
            snprintf(want, sizeof want, "attention_grad_f32_%s", isas[s]);
            if (!has_step(p, want))
                fail_msg("no %s step in the plan of\n%s", want, text);
            smelt_tensor_t *y[3] = {NULL, NULL, NULL};
            if (smelt_plan_run(ctx, p, in, n_in, y, 3) != SMELT_OK)
                fail_msg("run: %s\n%s", smelt_ctx_error(ctx), text);
            for (int i = 0; i < 3; i++) {
                char what[64];
                snprintf(what, sizeof what, "%s, %d thread(s), %s", isas[s], th,
                         names[i]);
                compare(y[i], ref[i], what, text);
                smelt_tensor_free(y[i]);
            }
            smelt_plan_free(p);
        }
    }
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(ref[i]);
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* One random forward + backward graph (each draw its own statement, so
 * the sequence is the same under every compiler). */
static void one_graph(int iter)
{
    grad_case c;
    memset(&c, 0, sizeof c);
    c.B = 1 + urand(2);
    c.Hkv = 1 + urand(2);
    c.G = 1 + urand(3);
    c.Tq = 1 + urand(iter % 4 == 0 ? 200 : 70);
    c.Tk = 1 + urand(iter % 4 == 1 ? 200 : 70);
    c.D = 1 + urand(iter % 5 == 0 ? 130 : 40);
    c.Dv = iter % 3 ? c.D : 1 + urand(80);
    c.causal = (int)urand(2);
    c.mask = (int)urand(3);
    c.mr = 2 + (int)urand(3);
    const int64_t full[4] = {c.B, c.Hkv * c.G, c.Tq, c.Tk};
    for (int i = 0; i < c.mr; i++)
        c.md[i] = urand(3) ? full[4 - c.mr + i] : 1;
    c.scale = 0.05f + (float)urand(100) / 200.0f;
    c.dead = (int)urand(2);
    check_graph(&c);
}

static void test_random_graphs(void **state)
{
    (void)state;
    for (int iter = 0; iter < 30; iter++)
        one_graph(iter);
}

/* The kernel's register tile (6 rows x 4 vectors with AVX-512, 6 x 2
 * AVX2, 4 x 4 scalar) at every remainder: lengths 1, 7, 63 and 130 (rows
 * of a query block of 32 and a key block of 64 left over after whole
 * tiles of 6), head sizes 32, 64, 80 and 128 and odd ones (vectors of a
 * padded row left over after whole tiles), causal and not, each mask
 * kind, and one length 1000; the scale 1 / sqrt(D), as models have it
 * (the random graphs' larger scales saturate the softmax at large D,
 * where the gradients are all f32 rounding). */
static void test_tile_shapes(void **state)
{
    (void)state;
    static const int64_t lens[] = {1, 7, 63, 130};
    static const int64_t dims[][2] = {{32, 32},   {64, 64}, {80, 80},
                                      {128, 128}, {17, 49}, {100, 33}};
    int n = 0;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
        for (size_t d = 0; d < sizeof dims / sizeof *dims; d++, n++) {
            int64_t T = lens[l], Tk = lens[(l + d) % 4];
            grad_case c = {.B = 1,
                           .Hkv = 1,
                           .G = 1 + n % 2,
                           .Tq = T,
                           .Tk = Tk,
                           .D = dims[d][0],
                           .Dv = dims[d][1],
                           .causal = n % 2,
                           .mask = n % 3,
                           .mr = 2,
                           .dead = 1,
                           .md = {T, Tk},
                           .scale = 1.0f / sqrtf((float)dims[d][0])};
            check_graph(&c);
        }
    grad_case big = {.B = 1,
                     .Hkv = 1,
                     .G = 1,
                     .Tq = 1000,
                     .Tk = 1000,
                     .D = 80,
                     .Dv = 80,
                     .causal = 1,
                     .mask = 1,
                     .mr = 2,
                     .md = {1, 1000},
                     .scale = 0.125f};
    check_graph(&big);
}

/* A query row a bool mask hides whole: its forward row is NaN, its dQ
 * row is 0, and dK, dV are what the other rows give (here: the other
 * row alone, so every dK and dV element of a graph of that row alone). */
static void test_masked_row(void **state)
{
    (void)state;
    const char *text =
        "graph a(%q: f32[1,1,2,3], %k: f32[1,1,2,3], %v: f32[1,1,2,3], "
        "%dy: f32[1,1,2,3]) {\n"
        "  %m: bool[2,2] = const [false, false, true, true]\n"
        "  %y: f32[1,1,2,3] = Attention(%q, %k, %v, %m) {scale = 0.5}\n"
        "  %dq: f32[1,1,2,3], %dk: f32[1,1,2,3], %dv: f32[1,1,2,3] = "
        "AttentionGrad(%q, %k, %v, %y, %dy, %m) {scale = 0.5}\n"
        "  return %y, %dq, %dk, %dv\n}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    int64_t d[4] = {1, 1, 2, 3};
    smelt_tensor_t *in[4];
    for (int i = 0; i < 4; i++)
        in[i] = rand_tensor(SMELT_DTYPE_F32, 4, d, 0);
    for (int ref = 0; ref < 2; ref++) {
        smelt_tensor_t *y[4] = {NULL};
        smelt_plan_t *p = NULL;
        if (ref)
            assert_int_equal(smelt_graph_run_reference(ctx, g, in, 4, y, 4),
                             SMELT_OK);
        else {
            smelt_plan_options po;
            smelt_plan_options_default(&po);
            po.level = 0;
            assert_int_equal(smelt_plan_compile(ctx, g, &po, &p), SMELT_OK);
            assert_int_equal(smelt_plan_run(ctx, p, in, 4, y, 4), SMELT_OK);
        }
        const float *o = smelt_tensor_data(y[0]), *dq = smelt_tensor_data(y[1]);
        for (int x = 0; x < 3; x++) {
            assert_true(isnan(o[x]));   /* row 0: hidden from every key */
            assert_true(dq[x] == 0.0f); /* ... and its gradient is 0 */
            assert_false(isnan(o[3 + x]));
            assert_true(dq[3 + x] != 0.0f);
        }
        for (int i = 0; i < 4; i++)
            smelt_tensor_free(y[i]);
        smelt_plan_free(p);
    }
    for (int i = 0; i < 4; i++)
        smelt_tensor_free(in[i]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The backward of one attention of 8 heads of 64 at length 2048 (causal)
 * needs its tiles and per-row statistics, never the 2048 x 2048 scores
 * of 8 heads (128 MiB): the arena stays under 8 MiB with two threads'
 * workspace. */
static void test_workspace_linear(void **state)
{
    (void)state;
    const char *text =
        "graph a(%q: f32[1,8,2048,64], %k: f32[1,8,2048,64], "
        "%v: f32[1,8,2048,64], %o: f32[1,8,2048,64], "
        "%dy: f32[1,8,2048,64]) {\n"
        "  %dq: f32[1,8,2048,64], %dk: f32[1,8,2048,64], "
        "%dv: f32[1,8,2048,64] = AttentionGrad(%q, %k, %v, %o, %dy) "
        "{scale = 0.125, causal = 1}\n"
        "  return %dq, %dk, %dv\n}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = 2;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, &po, &p), SMELT_OK);
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.kernel_steps, 1);
    assert_true(s.arena_bytes < ((int64_t)8 << 20));
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A float mask's gradient (the fourth output) runs the reference
 * kernel, whose accumulation into a broadcast mask is serial. */
static void test_mask_grad_reference(void **state)
{
    (void)state;
    const char *text =
        "graph a(%q: f32[1,2,5,8], %k: f32[1,2,6,8], %v: f32[1,2,6,8], "
        "%o: f32[1,2,5,8], %dy: f32[1,2,5,8], %m: f32[5,6]) {\n"
        "  %dq: f32[1,2,5,8], %dk: f32[1,2,6,8], %dv: f32[1,2,6,8], "
        "%dm: f32[5,6] = AttentionGrad(%q, %k, %v, %o, %dy, %m) "
        "{scale = 0.3}\n"
        "  return %dq, %dk, %dv, %dm\n}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, &po, &p), SMELT_OK);
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.kernel_steps, 0);
    assert_int_equal(s.ref_steps, 1);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Malformed AttentionGrad nodes fail type inference with a message
 * naming the op and what is wrong, never crash. */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *ir, *want;
    } bad[] = {
        {"graph a(%q: f32[1,2,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,4], "
         "%o: f32[1,2,3,5], %dy: f32[1,2,3,4]) {\n"
         "  %dq, %dk, %dv = AttentionGrad(%q, %k, %v, %o, %dy) "
         "{scale = 0.5}\n  return %dq\n}\n",
         "O is"},
        {"graph a(%q: f32[1,2,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,4], "
         "%o: f32[1,2,3,4], %dy: f32[1,2,3,4]) {\n"
         "  %dq, %dk, %dv, %dm = AttentionGrad(%q, %k, %v, %o, %dy) "
         "{scale = 0.5}\n  return %dq\n}\n",
         "fourth output"},
        {"graph a(%q: f32[1,2,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,4], "
         "%o: f32[1,2,3,4], %dy: f32[1,2,3,4], %m: bool[3,5]) {\n"
         "  %dq, %dk, %dv, %dm = AttentionGrad(%q, %k, %v, %o, %dy, %m) "
         "{scale = 0.5}\n  return %dq\n}\n",
         "fourth output"},
        {"graph a(%q: f32[1,3,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,4], "
         "%o: f32[1,3,3,4], %dy: f32[1,3,3,4]) {\n"
         "  %dq, %dk, %dv = AttentionGrad(%q, %k, %v, %o, %dy) "
         "{scale = 0.5}\n  return %dq\n}\n",
         "not a multiple"},
        {"graph a(%q: f32[1,2,3,4], %k: f32[1,2,5,4], %v: f32[1,2,5,4], "
         "%o: f32[1,2,3,4], %dy: f32[1,2,3,4], %m: f32[4,5]) {\n"
         "  %dq, %dk, %dv = AttentionGrad(%q, %k, %v, %o, %dy, %m) "
         "{scale = 0.5}\n  return %dq\n}\n",
         "does not broadcast"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_graph_t *g = NULL;
        smelt_status st =
            smelt_graph_parse(ctx, bad[i].ir, strlen(bad[i].ir), "t.ir", &g);
        if (st == SMELT_OK)
            st = smelt_graph_infer(ctx, g);
        assert_int_not_equal(st, SMELT_OK);
        const char *msg = smelt_ctx_error(ctx);
        if (!strstr(msg, "AttentionGrad") || !strstr(msg, bad[i].want))
            fail_msg("case %zu: message '%s' lacks '%s'", i, msg, bad[i].want);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_graphs),
        cmocka_unit_test(test_tile_shapes),
        cmocka_unit_test(test_masked_row),
        cmocka_unit_test(test_workspace_linear),
        cmocka_unit_test(test_mask_grad_reference),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
