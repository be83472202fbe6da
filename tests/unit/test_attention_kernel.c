/*
 * test_attention_kernel.c - the CPU flash attention kernel
 * (kernels/cpu/attention.c, attention.inc.h) against a naive
 * double-precision attention written here, on every ISA table this
 * machine can run plus scalar, with no pool and with 2 threads: odd
 * lengths (1, 7, 63, 1000, Tq != Tk), head sizes 17, 32, 64, 80, 128,
 * Dv != D, grouped heads, every mask kind and broadcast, causal with and
 * without a mask, rows every key of which is hidden (NaN) and rows masked
 * by float min (an ordinary, finite softmax).
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/threadpool.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpuid.h"

static sm_threadpool *pool2;

/* One case: the sizes, and the mask's dims (each 1 = broadcast, or the
 * full [B, Hq, Tq, Tk] dim). */
typedef struct tcase {
    int64_t B, Hq, Hkv, Tq, Tk, D, Dv;
    int causal, mask_kind;
    int mfull[4]; /* mask dim d is full (1) or broadcast (0) */
} tcase;

/* Hidden rows to plant: none, whole rows hidden (NaN expected), or
 * whole rows at float min (finite). */
enum { PLANT_NONE, PLANT_HIDDEN, PLANT_FLOATMIN };

static unsigned rng = 12345u;

static float urand(void)
{
    rng = rng * 1103515245u + 12345u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float *rand_buf(int64_t n, float amp)
{
    float *p = malloc((size_t)n * sizeof(float));
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = amp * urand();
    return p;
}

/* The mask element of (b, h, i, j) under strides s. */
static int64_t mask_at(const int64_t *s, int64_t b, int64_t h, int64_t i,
                       int64_t j)
{
    return b * s[0] + h * s[1] + i * s[2] + j * s[3];
}

/*
 * Naive attention in double: every score, hidden ones -inf, the max
 * subtracted, NaN for a row with no visible key. The mask is added in
 * float to the float-rounded score, as the f32 graph would (so float-min
 * masks swallow the score, as they do there).
 */
static void reference(const sm_attn_args *a, double *out)
{
    int64_t g = a->q_heads / a->kv_heads, off = a->kv_len - a->q_len;
    double *s = malloc((size_t)a->kv_len * sizeof(double));
    assert_non_null(s);
    for (int64_t b = 0; b < a->batch; b++)
        for (int64_t h = 0; h < a->q_heads; h++)
            for (int64_t i = 0; i < a->q_len; i++) {
                int64_t hk = h / g;
                const float *q =
                    a->q + ((b * a->q_heads + h) * a->q_len + i) * a->head_dim;
                double mx = -INFINITY;
                for (int64_t j = 0; j < a->kv_len; j++) {
                    const float *k =
                        a->k +
                        ((b * a->kv_heads + hk) * a->kv_len + j) * a->head_dim;
                    double dot = 0;
                    for (int64_t d = 0; d < a->head_dim; d++)
                        dot += (double)q[d] * k[d];
                    double v = a->scale * dot;
                    int64_t mi = mask_at(a->mask_strides, b, h, i, j);
                    if (a->mask_kind == SM_ATTN_MASK_FLOAT)
                        v = (double)((float)v + ((const float *)a->mask)[mi]);
                    if (a->mask_kind == SM_ATTN_MASK_BOOL &&
                        !((const uint8_t *)a->mask)[mi])
                        v = -INFINITY;
                    if (a->causal && j > i + off)
                        v = -INFINITY;
                    s[j] = v;
                    if (v > mx)
                        mx = v;
                }
                double *o =
                    out + ((b * a->q_heads + h) * a->q_len + i) * a->v_dim;
                for (int64_t x = 0; x < a->v_dim; x++)
                    o[x] = mx == -INFINITY ? NAN : 0.0;
                if (mx == -INFINITY)
                    continue;
                double sum = 0;
                for (int64_t j = 0; j < a->kv_len; j++) {
                    double p = exp(s[j] - mx);
                    sum += p;
                    const float *v =
                        a->v +
                        ((b * a->kv_heads + hk) * a->kv_len + j) * a->v_dim;
                    for (int64_t x = 0; x < a->v_dim; x++)
                        o[x] += p * v[x];
                }
                for (int64_t x = 0; x < a->v_dim; x++)
                    o[x] /= sum;
            }
    free(s);
}

/* The tables this machine runs, widest first, scalar always. */
static int isa_tables(const sm_cpu_ops **t)
{
    const sm_cpu_ops *all[] = {&sm_cpu_ops_avx512, &sm_cpu_ops_avx2,
                               &sm_cpu_ops_scalar};
    int n = 0;
    for (int i = 0; i < 3; i++)
        if ((all[i]->isa & sm_cpu_detect()) == all[i]->isa)
            t[n++] = all[i];
    return n;
}

/*
 * Runs case c (with rows planted per `plant`) on every table and pool,
 * comparing with the reference: |O - ref| <= 1e-5 max |ref| elementwise,
 * NaN exactly where the reference has NaN. Returns how many NaN rows the
 * reference had, so callers can assert their case planted some.
 */
static int64_t run_case(const tcase *c, int plant)
{
    sm_attn_args a = {.batch = c->B,
                      .q_heads = c->Hq,
                      .kv_heads = c->Hkv,
                      .q_len = c->Tq,
                      .kv_len = c->Tk,
                      .head_dim = c->D,
                      .v_dim = c->Dv,
                      .scale = 1.0f / sqrtf((float)c->D),
                      .causal = c->causal,
                      .mask_kind = c->mask_kind};
    float *q = rand_buf(c->B * c->Hq * c->Tq * c->D, 2.0f);
    float *k = rand_buf(c->B * c->Hkv * c->Tk * c->D, 2.0f);
    float *v = rand_buf(c->B * c->Hkv * c->Tk * c->Dv, 1.0f);
    int64_t full[4] = {c->B, c->Hq, c->Tq, c->Tk}, md[4], mn = 1;
    for (int d = 3; d >= 0; d--) {
        md[d] = c->mfull[d] ? full[d] : 1;
        a.mask_strides[d] = md[d] == 1 ? 0 : mn;
        mn *= md[d];
    }
    void *mask = NULL;
    if (c->mask_kind == SM_ATTN_MASK_FLOAT) {
        mask = rand_buf(mn, 3.0f);
    } else if (c->mask_kind == SM_ATTN_MASK_BOOL) {
        uint8_t *m = malloc((size_t)mn);
        assert_non_null(m);
        for (int64_t i = 0; i < mn; i++)
            m[i] = urand() > -0.6f; /* 80% may attend */
        mask = m;
    }
    /* plant: rows of query 0 and of the last query, in the mask's first
     * (b, h) slice (all of them when broadcast) */
    if (plant != PLANT_NONE) {
        assert_non_null(mask);
        int64_t rows[2] = {0, md[2] - 1};
        for (int r = 0; r < 2; r++)
            for (int64_t j = 0; j < md[3]; j++) {
                int64_t mi =
                    rows[r] * a.mask_strides[2] + j * a.mask_strides[3];
                if (c->mask_kind == SM_ATTN_MASK_BOOL)
                    ((uint8_t *)mask)[mi] = 0;
                else
                    ((float *)mask)[mi] =
                        plant == PLANT_HIDDEN ? -INFINITY : -FLT_MAX;
            }
    }
    a.q = q;
    a.k = k;
    a.v = v;
    a.mask = mask;
    int64_t no = c->B * c->Hq * c->Tq * c->Dv;
    double *ref = malloc((size_t)no * sizeof(double));
    float *out = malloc((size_t)no * sizeof(float));
    assert_non_null(ref);
    assert_non_null(out);
    a.out = out;
    assert_null(sm_cpu_attention_check(&a));
    reference(&a, ref);
    double amax = 0;
    int64_t nan_rows = 0;
    for (int64_t i = 0; i < no; i++) {
        if (isnan(ref[i]))
            nan_rows += i % c->Dv == 0;
        else if (fabs(ref[i]) > amax)
            amax = fabs(ref[i]);
    }
    double tol = 1e-5 * (amax > 1e-30 ? amax : 1.0);

    const sm_cpu_ops *tabs[3];
    int nt = isa_tables(tabs);
    sm_threadpool *pools[2] = {NULL, pool2};
    /* query blocks per key sweep: the driver's choice, one, and three
     * (a group that ends in a partial block, and groups whose earlier
     * blocks the causal rule stops sooner) */
    static const int groups[] = {0, 1, 3};
    for (int t = 0; t < nt; t++)
        for (int pg = 0; pg < 6; pg++) {
            int p = pg % 2;
            a.q_group = groups[pg / 2];
            size_t wsb = sm_cpu_attention_ws(tabs[t], c->D, c->Dv,
                                             sm_threadpool_size(pools[p]));
            void *ws = aligned_alloc(64, (wsb + 63) & ~(size_t)63);
            assert_non_null(ws);
            /* a workspace one byte short is refused, nothing written */
            for (int64_t i = 0; i < no; i++)
                out[i] = 12345.0f;
            assert_int_equal(
                sm_cpu_attention(tabs[t], &a, ws, wsb - 1, pools[p]), -1);
            assert_true(out[0] == 12345.0f);
            assert_int_equal(sm_cpu_attention(tabs[t], &a, ws, wsb, pools[p]),
                             0);
            for (int64_t i = 0; i < no; i++) {
                int bad = isnan(ref[i]) ? !isnan(out[i])
                                        : !(fabs(out[i] - ref[i]) <= tol);
                if (bad)
                    fail_msg(
                        "%s, %d thread(s), B%lld Hq%lld Hkv%lld Tq%lld "
                        "Tk%lld D%lld Dv%lld causal %d mask %d "
                        "(%d%d%d%d) plant %d group %d: element %lld (row %lld) "
                        "%.9g, expected %.9g (tol %.3g)",
                        tabs[t]->name, sm_threadpool_size(pools[p]),
                        (long long)c->B, (long long)c->Hq, (long long)c->Hkv,
                        (long long)c->Tq, (long long)c->Tk, (long long)c->D,
                        (long long)c->Dv, c->causal, c->mask_kind, c->mfull[0],
                        c->mfull[1], c->mfull[2], c->mfull[3], plant, a.q_group,
                        (long long)i, (long long)(i / c->Dv), out[i], ref[i],
                        tol);
            }
            free(ws);
        }
    free(q);
    free(k);
    free(v);
    free(mask);
    free(ref);
    free(out);
    return nan_rows;
}

/* Lengths 1, 7, 63, 1000 against each other, head sizes 17..128. */
static void test_lengths_and_heads(void **state)
{
    (void)state;
    static const int64_t T[] = {1, 7, 63, 1000};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++) {
            if (T[i] * T[j] > 63 * 1000)
                continue; /* 1000 x 1000 below, once */
            for (int causal = 0; causal < 2; causal++) {
                tcase c = {1, 2, 2, T[i], T[j], 32, 32, causal, 0, {0}};
                run_case(&c, PLANT_NONE);
            }
        }
    static const int64_t hd[] = {17, 32, 64, 80, 128};
    for (size_t i = 0; i < 5; i++) {
        tcase c = {1, 1, 1, 70, 130, hd[i], hd[i], 0, 0, {0}};
        run_case(&c, PLANT_NONE);
        c.causal = 1;
        run_case(&c, PLANT_NONE);
    }
    /* Dv != D, both ways */
    tcase c1 = {2, 2, 1, 33, 65, 64, 17, 1, 0, {0}};
    run_case(&c1, PLANT_NONE);
    tcase c2 = {1, 3, 3, 20, 9, 17, 80, 0, 0, {0}};
    run_case(&c2, PLANT_NONE);
    tcase big = {1, 1, 1, 1000, 1000, 64, 64, 1, 0, {0}};
    run_case(&big, PLANT_NONE);
    /* head dims that end the register transposes of Q^T in and O out in
     * partial tiles on every ISA, blocks ending mid-vector, and causal
     * diagonals (Tq below, above and equal to Tk) under a float mask,
     * where the mask pass and the softmax skip the vectors a key row
     * hides whole */
    static const int64_t dd[][4] = {
        {5, 3, 45, 77}, {20, 47, 77, 45}, {33, 24, 150, 150}};
    for (size_t i = 0; i < 3; i++) {
        tcase m = {1,        2,        1, dd[i][2],           dd[i][3],
                   dd[i][0], dd[i][1], 1, SM_ATTN_MASK_FLOAT, {0, 1, 1, 1}};
        run_case(&m, PLANT_NONE);
        m.mask_kind = SM_ATTN_MASK_NONE;
        run_case(&m, PLANT_NONE);
    }
}

/* Query heads sharing key/value heads (h reads h / (Hq / Hkv)). */
static void test_grouped_heads(void **state)
{
    (void)state;
    tcase c = {2, 6, 2, 19, 40, 32, 24, 0, 0, {0}};
    run_case(&c, PLANT_NONE);
    c.causal = 1;
    run_case(&c, PLANT_NONE);
    tcase m = {1, 4, 1, 9, 9, 16, 16, 1, SM_ATTN_MASK_FLOAT, {0, 1, 1, 1}};
    run_case(&m, PLANT_NONE);
}

/* Float masks full and broadcast over every combination of dims, bool
 * masks, each with and without the causal rule. */
static void test_masks(void **state)
{
    (void)state;
    for (int kind = SM_ATTN_MASK_FLOAT; kind <= SM_ATTN_MASK_BOOL; kind++)
        for (int bits = 0; bits < 16; bits++)
            for (int causal = 0; causal < 2; causal++) {
                tcase c = {
                    2,
                    3,
                    3,
                    21,
                    77,
                    32,
                    40,
                    causal,
                    kind,
                    {bits & 1, (bits >> 1) & 1, (bits >> 2) & 1, (bits >> 3) & 1}};
                run_case(&c, PLANT_NONE);
            }
    /* a padding mask [B, 1, 1, Tk] over long keys */
    tcase pad = {2, 2, 2, 63, 300, 64, 64, 0, SM_ATTN_MASK_BOOL, {1, 0, 0, 1}};
    run_case(&pad, PLANT_NONE);
}

/* Rows whose every key is hidden give NaN (bool false, -inf, and the
 * causal rule with more queries than keys); rows at float min are an
 * ordinary softmax and stay finite. */
static void test_hidden_rows(void **state)
{
    (void)state;
    for (int causal = 0; causal < 2; causal++) {
        tcase b = {1,           2, 2, 70, 90, 32, 32, causal, SM_ATTN_MASK_BOOL,
                   {0, 0, 1, 1}};
        assert_true(run_case(&b, PLANT_HIDDEN) >= 2 * 2);
        tcase f = {
            1, 2, 2, 70, 90, 32, 32, causal, SM_ATTN_MASK_FLOAT, {1, 1, 1, 1}};
        assert_true(run_case(&f, PLANT_HIDDEN) >= 2);
        assert_int_equal(run_case(&f, PLANT_FLOATMIN), 0);
        tcase fb = {
            1, 2, 2, 5, 130, 32, 32, causal, SM_ATTN_MASK_FLOAT, {0, 0, 0, 1}};
        assert_int_equal(run_case(&fb, PLANT_FLOATMIN), 0);
    }
    /* causal, Tq > Tk: queries i < Tq - Tk see no key */
    tcase c = {1, 1, 1, 100, 30, 32, 32, 1, 0, {0}};
    assert_int_equal(run_case(&c, PLANT_NONE), 70);
}

/* Bad arguments are refused with a reason, nothing run. */
static void test_check(void **state)
{
    (void)state;
    float x = 0;
    sm_attn_args a = {1, 3,  2,  1,  1,  1, 1,    1.0f,
                      0, &x, &x, &x, &x, 0, NULL, {0}};
    assert_non_null(sm_cpu_attention_check(&a));
    char ws[256] __attribute__((aligned(64)));
    assert_int_equal(
        sm_cpu_attention(&sm_cpu_ops_scalar, &a, ws, sizeof ws, NULL), -1);
    a.q_heads = 2;
    assert_null(sm_cpu_attention_check(&a));
    a.mask_kind = SM_ATTN_MASK_FLOAT;
    assert_non_null(sm_cpu_attention_check(&a));
    a.mask_kind = 7;
    a.mask = &x;
    assert_non_null(sm_cpu_attention_check(&a));
    a.mask_kind = 0;
    a.q_group = -1;
    assert_non_null(sm_cpu_attention_check(&a));
    a.q_group = SM_ATTN_GROUP + 1;
    assert_non_null(sm_cpu_attention_check(&a));
    a.q_group = SM_ATTN_GROUP;
    assert_null(sm_cpu_attention_check(&a));
    a.kv_len = 0;
    assert_non_null(sm_cpu_attention_check(&a));
}

static int setup(void **state)
{
    (void)state;
    return sm_threadpool_new(NULL, 2, &pool2) == SMELT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sm_threadpool_free(pool2);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lengths_and_heads),
        cmocka_unit_test(test_grouped_heads),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_hidden_rows),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
