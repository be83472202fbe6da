/*
 * simd_avx2.h - the vector vocabulary of the kernel templates (*.inc.h)
 * on AVX2 + FMA: V holds 8 floats. Included only by isa_avx2.c, which
 * CMake compiles with -mavx2 -mfma.
 *
 * Partial vectors (tails) use vmaskmovps, which neither reads nor writes
 * the lanes past n (no fault, no out-of-bounds access).
 */
#ifndef SM_SIMD_AVX2_H
#define SM_SIMD_AVX2_H

#include <immintrin.h>

#define SM_ISA_SUFFIX avx2
#define VL 8

typedef __m256 V;
typedef __m256i VM;

#define VINL static inline __attribute__((always_inline))

VINL V v_zero(void)
{
    return _mm256_setzero_ps();
}
VINL V v_set1(float x)
{
    return _mm256_set1_ps(x);
}
VINL V v_load(const float *p)
{
    return _mm256_loadu_ps(p);
}
VINL void v_store(float *p, V v)
{
    _mm256_storeu_ps(p, v);
}
/* Lane i is active when i < n: compare the lane numbers with n. */
VINL VM v_mask(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
VINL V v_loadn(const float *p, int64_t n)
{
    return _mm256_maskload_ps(p, v_mask(n));
}
VINL V v_loadn_fill(const float *p, int64_t n, float fill)
{
    VM m = v_mask(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m),
                            _mm256_castsi256_ps(m));
}
VINL void v_storen(float *p, V v, int64_t n)
{
    _mm256_maskstore_ps(p, v_mask(n), v);
}
VINL V v_add(V a, V b)
{
    return _mm256_add_ps(a, b);
}
VINL V v_sub(V a, V b)
{
    return _mm256_sub_ps(a, b);
}
VINL V v_mul(V a, V b)
{
    return _mm256_mul_ps(a, b);
}
VINL V v_div(V a, V b)
{
    return _mm256_div_ps(a, b);
}
/* 1 / a to about 12 bits (a Newton step brings it to about 23). */
VINL V v_rcp_est(V a)
{
    return _mm256_rcp_ps(a);
}
VINL V v_fma(V a, V b, V c)
{
    return _mm256_fmadd_ps(a, b, c);
}
VINL V v_fnma(V a, V b, V c)
{
    return _mm256_fnmadd_ps(a, b, c);
}
VINL V v_max(V a, V b)
{
    return _mm256_max_ps(a, b);
}
VINL V v_min(V a, V b)
{
    return _mm256_min_ps(a, b);
}
VINL V v_sqrt(V a)
{
    return _mm256_sqrt_ps(a);
}
VINL V v_abs(V a)
{
    return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}
VINL V v_floor(V a)
{
    return _mm256_floor_ps(a);
}
VINL V v_round(V a)
{
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
VINL V v_pow2i(V n)
{
    __m256i i = _mm256_cvtps_epi32(n);
    i = _mm256_slli_epi32(_mm256_add_epi32(i, _mm256_set1_epi32(127)), 23);
    return _mm256_castsi256_ps(i);
}
VINL V v_sel_lt(V x, V y, V a, V b)
{
    return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, y, _CMP_LT_OQ));
}
VINL V v_copysign(V m, V s)
{
    V sign = _mm256_and_ps(
        s, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u)));
    return _mm256_or_ps(m, sign);
}
VINL float v_hsum(V a)
{
    __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
VINL float v_hmax(V a)
{
    __m128 s =
        _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
VINL float v_hmin(V a)
{
    __m128 s =
        _mm_min_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
VINL void v_prefetch(const void *p)
{
    _mm_prefetch((const char *)p, _MM_HINT_T0);
}
/* The even elements of the 2 VL floats a then b: per 128-bit lane
 * (a0 a2 b0 b2 | a4 a6 b4 b6), then the 64-bit pairs reordered. */
VINL V v_even(V a, V b)
{
    __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* r[0..8) transposed in place: afterwards r[c][l] is what r[l][c] was. */
VINL void v_transpose(V r[8])
{
    V t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}

#endif
