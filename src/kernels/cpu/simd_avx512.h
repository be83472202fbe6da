/*
 * simd_avx512.h - the vector vocabulary of the kernel templates (*.inc.h)
 * on AVX-512: V holds 16 floats. Included only by isa_avx512.c, which CMake
 * compiles with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma; the rest
 * of the library stays baseline x86-64.
 *
 * Partial vectors (tails) use masked loads and stores, which neither read
 * nor write past the n valid elements.
 */
#ifndef SM_SIMD_AVX512_H
#define SM_SIMD_AVX512_H

#include <immintrin.h>

#define SM_ISA_SUFFIX avx512
#define VL 16

typedef __m512 V;
typedef __mmask16 VM;

#define VINL static inline __attribute__((always_inline))

VINL V v_zero(void)
{
    return _mm512_setzero_ps();
}
VINL V v_set1(float x)
{
    return _mm512_set1_ps(x);
}
VINL V v_load(const float *p)
{
    return _mm512_loadu_ps(p);
}
VINL void v_store(float *p, V v)
{
    _mm512_storeu_ps(p, v);
}
VINL VM v_mask(int64_t n)
{
    return (VM)((1u << n) - 1u);
}
/* n in [0, VL): the first n lanes; the others read as 0. */
VINL V v_loadn(const float *p, int64_t n)
{
    return _mm512_maskz_loadu_ps(v_mask(n), p);
}
/* Lanes past n read as `fill` (max and min reductions pad with -inf / inf). */
VINL V v_loadn_fill(const float *p, int64_t n, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), v_mask(n), p);
}
VINL void v_storen(float *p, V v, int64_t n)
{
    _mm512_mask_storeu_ps(p, v_mask(n), v);
}
VINL V v_add(V a, V b)
{
    return _mm512_add_ps(a, b);
}
VINL V v_sub(V a, V b)
{
    return _mm512_sub_ps(a, b);
}
VINL V v_mul(V a, V b)
{
    return _mm512_mul_ps(a, b);
}
VINL V v_div(V a, V b)
{
    return _mm512_div_ps(a, b);
}
/* 1 / a to about 14 bits (a Newton step makes it float-exact). */
VINL V v_rcp_est(V a)
{
    return _mm512_rcp14_ps(a);
}
VINL V v_fma(V a, V b, V c)
{
    return _mm512_fmadd_ps(a, b, c);
}
VINL V v_fnma(V a, V b, V c)
{
    return _mm512_fnmadd_ps(a, b, c);
}
VINL V v_max(V a, V b)
{
    return _mm512_max_ps(a, b);
}
VINL V v_min(V a, V b)
{
    return _mm512_min_ps(a, b);
}
VINL V v_sqrt(V a)
{
    return _mm512_sqrt_ps(a);
}
VINL V v_abs(V a)
{
    return _mm512_abs_ps(a);
}
VINL V v_floor(V a)
{
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
VINL V v_round(V a)
{
    return _mm512_roundscale_ps(a,
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* 2^n for a vector of whole numbers n in [-126, 127]. */
VINL V v_pow2i(V n)
{
    __m512i i = _mm512_cvtps_epi32(n);
    i = _mm512_slli_epi32(_mm512_add_epi32(i, _mm512_set1_epi32(127)), 23);
    return _mm512_castsi512_ps(i);
}
/* lt ? a : b, lanewise, where lt is x < y. */
VINL V v_sel_lt(V x, V y, V a, V b)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_LT_OQ), b, a);
}
/* Copies the sign of s onto magnitude m (m >= 0). */
VINL V v_copysign(V m, V s)
{
    __m512i sign = _mm512_and_si512(_mm512_castps_si512(s),
                                    _mm512_set1_epi32((int)0x80000000u));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(m), sign));
}
VINL float v_hsum(V a)
{
    return _mm512_reduce_add_ps(a);
}
VINL float v_hmax(V a)
{
    return _mm512_reduce_max_ps(a);
}
VINL float v_hmin(V a)
{
    return _mm512_reduce_min_ps(a);
}
VINL void v_prefetch(const void *p)
{
    _mm_prefetch((const char *)p, _MM_HINT_T0);
}
/* The even elements of the 2 VL floats a then b. */
VINL V v_even(V a, V b)
{
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                          22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, idx, b);
}

/* r[0..16) transposed in place: afterwards r[c][l] is what r[l][c] was
 * (32-bit, then 64-bit interleaves within 128-bit lanes, then two rounds
 * of 128-bit lane shuffles). */
VINL void v_transpose(V r[16])
{
    V t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
        __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
        u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* u[4g + j], lane q: column 4q + j of rows 4g..4g+3 */
    for (int j = 0; j < 4; j++) {
        V vlo = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44);
        V vhi = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
        V wlo = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
        V whi = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_f32x4(vlo, wlo, 0x88);
        r[4 + j] = _mm512_shuffle_f32x4(vlo, wlo, 0xDD);
        r[8 + j] = _mm512_shuffle_f32x4(vhi, whi, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(vhi, whi, 0xDD);
    }
}

#endif
