/*
 * test_plan_attention.c - Attention nodes in compiled plans: random
 * Attention graphs (text IR: sizes, grouped heads, causal, no mask or a
 * float or bool mask of a random broadcast shape) compiled for every ISA
 * this machine has and 1 or 2 threads run the flash kernel
 * (attention_f32_<isa>) and match the reference interpreter; the plan's
 * workspace for attention stays O(block), not O(T^2); f64 Attention runs
 * the reference kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpuid.h"
#include "testutil.h"

static unsigned rng = 777u;

static unsigned urand(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

/* A tensor of dtype dt and the given dims: values in [-2, 2), or for
 * bool about 80% true with every query row keeping at least one key. */
static smelt_tensor_t *rand_tensor(smelt_dtype dt, int ndim,
                                   const int64_t *dims)
{
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, dt, ndim, dims, &t), SMELT_OK);
    int64_t n = smelt_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        if (dt == SMELT_DTYPE_BOOL)
            ((unsigned char *)smelt_tensor_data(t))[i] = urand(5) != 0;
        else if (dt == SMELT_DTYPE_F64)
            ((double *)smelt_tensor_data(t))[i] = urand(4000) / 1000.0 - 2;
        else
            ((float *)smelt_tensor_data(t))[i] = urand(4000) / 1000.0f - 2;
    }
    return t;
}

/* "a,b,c" for n dims. */
static void dims_str(char *buf, size_t size, int n, const int64_t *d)
{
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
                 (long long)d[i]);
    }
}

/*
 * One random Attention graph run as plans on every ISA and 1 / 2 threads
 * against the reference interpreter (elementwise within 1e-5 of the
 * largest |output|; NaN where the reference has NaN).
 */
static void one_graph(int iter)
{
    int64_t B = 1 + urand(2), Hkv = 1 + urand(3), G = 1 + urand(3),
            Tq = 1 + urand(iter % 4 == 0 ? 300 : 40),
            Tk = 1 + urand(iter % 4 == 1 ? 300 : 40), D = 1 + urand(80),
            Dv = iter % 3 ? D : 1 + urand(80), Hq = Hkv * G;
    int causal = urand(2), mask = urand(3); /* none, float, bool */
    int64_t q[4] = {B, Hq, Tq, D}, k[4] = {B, Hkv, Tk, D},
            v[4] = {B, Hkv, Tk, Dv}, full[4] = {B, Hq, Tq, Tk}, md[4];
    int mr = 2 + urand(3); /* mask rank 2..4, each dim full or 1 */
    for (int i = 0; i < mr; i++)
        md[i] = urand(3) ? full[4 - mr + i] : 1;
    char sq[64], sk[64], sv[64], sm[64], so[64], text[1024];
    int64_t o[4] = {B, Hq, Tq, Dv};
    dims_str(sq, sizeof sq, 4, q);
    dims_str(sk, sizeof sk, 4, k);
    dims_str(sv, sizeof sv, 4, v);
    dims_str(sm, sizeof sm, mr, md);
    dims_str(so, sizeof so, 4, o);
    float scale = 0.05f + (float)urand(100) / 200.0f;
    char mdecl[96] = "", marg[16] = "";
    if (mask) {
        snprintf(mdecl, sizeof mdecl, ", %%m: %s[%s]",
                 mask == 1 ? "f32" : "bool", sm);
        snprintf(marg, sizeof marg, ", %%m");
    }
    snprintf(text, sizeof text,
             "graph a(%%q: f32[%s], %%k: f32[%s], %%v: f32[%s]%s) {\n"
             "  %%y: f32[%s] = Attention(%%q, %%k, %%v%s) {scale = %.4f, "
             "causal = %d}\n"
             "  return %%y\n}\n",
             sq, sk, sv, mdecl, so, marg, (double)scale, causal);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, text);
    smelt_tensor_t *in[4] = {
        rand_tensor(SMELT_DTYPE_F32, 4, q), rand_tensor(SMELT_DTYPE_F32, 4, k),
        rand_tensor(SMELT_DTYPE_F32, 4, v),
        mask ? rand_tensor(mask == 1 ? SMELT_DTYPE_F32 : SMELT_DTYPE_BOOL, mr,
                           md)
             : NULL};
    int n_in = mask ? 4 : 3;
    smelt_tensor_t *ref = NULL;
    if (smelt_graph_run_reference(ctx, g, in, n_in, &ref, 1) != SMELT_OK)
        fail_msg("reference: %s\n%s", smelt_ctx_error(ctx), text);
    const float *r = smelt_tensor_data(ref);
    int64_t n = smelt_tensor_numel(ref);
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(r[i]) && fabs(r[i]) > amax)
            amax = fabs(r[i]);
    static const char *isas[] = {"avx512", "avx2", "scalar"};
    static const unsigned need[] = {SM_CPU_AVX512F | SM_CPU_AVX512BW,
                                    SM_CPU_AVX2 | SM_CPU_FMA, 0};
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
            smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
            char want[64];
            snprintf(want, sizeof want, "attention_f32_%s", isas[s]);
            int found = 0;
            for (int i = 0; i < smelt_plan_num_steps(p); i++) {
                assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
                found |=
                    !strcmp(si.op, "Attention") && !strcmp(si.kernel, want);
            }
            if (!found)
                fail_msg("no %s step in the plan of\n%s", want, text);
            smelt_tensor_t *y = NULL;
            if (smelt_plan_run(ctx, p, in, n_in, &y, 1) != SMELT_OK)
                fail_msg("run: %s\n%s", smelt_ctx_error(ctx), text);
            const float *a = smelt_tensor_data(y);
            for (int64_t i = 0; i < n; i++) {
                int bad = isnan(r[i])
                              ? !isnan(a[i])
                              : !(fabs(a[i] - r[i]) <= 1e-5 * amax + 1e-6);
                if (bad)
                    fail_msg("%s, %d thread(s), element %lld: %.9g, reference "
                             "%.9g\n%s",
                             isas[s], th, (long long)i, a[i], r[i], text);
            }
            smelt_tensor_free(y);
            smelt_plan_free(p);
        }
    }
    smelt_tensor_free(ref);
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_random_graphs(void **state)
{
    (void)state;
    for (int iter = 0; iter < 40; iter++)
        one_graph(iter);
}

/* One attention of 8 heads of 64 at length 2048: the plan holds Q, K, V,
 * the output and the kernel's per-thread tiles, never the 2048 x 2048
 * scores of 8 heads (128 MiB); the arena stays under 8 MiB with both
 * threads' workspace. */
static void test_workspace_linear(void **state)
{
    (void)state;
    const char *text =
        "graph a(%q: f32[1,8,2048,64], %k: f32[1,8,2048,64], "
        "%v: f32[1,8,2048,64]) {\n"
        "  %y: f32[1,8,2048,64] = Attention(%q, %k, %v) {scale = 0.125, "
        "causal = 1}\n"
        "  return %y\n}\n";
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

/* f64 Attention (gradcheck's dtype) stays on the reference kernel. */
static void test_f64_reference(void **state)
{
    (void)state;
    const char *text =
        "graph a(%q: f64[1,2,5,8], %k: f64[1,2,6,8], %v: f64[1,2,6,8]) {\n"
        "  %y: f64[1,2,5,8] = Attention(%q, %k, %v) {scale = 0.3}\n"
        "  return %y\n}\n";
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_graphs),
        cmocka_unit_test(test_workspace_linear),
        cmocka_unit_test(test_f64_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
