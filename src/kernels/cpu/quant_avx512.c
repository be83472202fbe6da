/*
 * quant_avx512.c - the AVX-512 VNNI int8 micro-kernel (quant_gemm.h):
 * an 8 x 32 tile, 16 zmm accumulators; per group of 4 depths two B
 * vectors and, per row, one 32-bit broadcast of A and two vpdpbusd
 * (u8 x s8 products summed four at a time straight into int32: no
 * intermediate saturation). Compiled with the AVX-512 VNNI flags (the
 * CPU kernels block of the top CMakeLists.txt); chosen only where cpuid
 * reports them.
 */
#include "kernels/cpu/quant_gemm.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#include <string.h>

/* Four bytes of A as one 32-bit lane in every lane. */
static inline __m512i bcast4(const uint8_t *a)
{
    int32_t v;
    memcpy(&v, a, 4);
    return _mm512_set1_epi32(v);
}

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define DECL(r) __m512i c##r##0 = _mm512_setzero_si512(), c##r##1 = c##r##0;
#define STEP(r)                                                                \
    {                                                                          \
        __m512i av = bcast4(a + 4 * (r));                                      \
        c##r##0 = _mm512_dpbusd_epi32(c##r##0, av, b0);                        \
        c##r##1 = _mm512_dpbusd_epi32(c##r##1, av, b1);                        \
    }
#define STORE(r)                                                               \
    _mm512_storeu_si512((void *)(c + (r)*32), c##r##0);                        \
    _mm512_storeu_si512((void *)(c + (r)*32 + 16), c##r##1);

static void ukr(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c,
                int narrow)
{
    (void)narrow;
    ROWS(DECL)
    for (int64_t g = 0; g < kg; g++, a += 32, b += 128) {
        __m512i b0 = _mm512_loadu_si512((const void *)b);
        __m512i b1 = _mm512_loadu_si512((const void *)(b + 64));
        ROWS(STEP)
    }
    ROWS(STORE)
}

/* The dynamic quantization's passes (quant_gemm.h, the hooks; the SSE2
 * ones in quant_conv.c say why they are exact), 16 floats per vector:
 * vminps / vmaxps keep the second operand when one is NaN, like the
 * scalar ternaries; vpmovusdb saturates to u8. */
static void minmax(const float *x, int64_t n, float *lo, float *hi)
{
    __m512 l0 = _mm512_setzero_ps(), l1 = l0, h0 = l0, h1 = l0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
        l0 = _mm512_min_ps(a, l0), h0 = _mm512_max_ps(a, h0);
        l1 = _mm512_min_ps(b, l1), h1 = _mm512_max_ps(b, h1);
    }
    for (; i < n; i += 16) {
        __m512 a = _mm512_loadu_ps(x + i);
        l0 = _mm512_min_ps(a, l0), h0 = _mm512_max_ps(a, h0);
    }
    float lv[32], hv[32];
    _mm512_storeu_ps(lv, l0), _mm512_storeu_ps(lv + 16, l1);
    _mm512_storeu_ps(hv, h0), _mm512_storeu_ps(hv + 16, h1);
    for (int l = 0; l < 32; l++) {
        *lo = lv[l] < *lo ? lv[l] : *lo;
        *hi = hv[l] > *hi ? hv[l] : *hi;
    }
}

static void quant(const float *x, int64_t n, float scale, float zp, uint8_t *y)
{
    float r = 1.0f / scale;
    int recip = r == r && r < 1e30f && r >= 1e-30f;
    const __m512 vs = _mm512_set1_ps(scale), vz = _mm512_set1_ps(zp);
    const __m512 vr = _mm512_set1_ps(r), near = _mm512_set1_ps(0.499f);
    const __m512 hi = _mm512_set1_ps(300.0f), lo = _mm512_set1_ps(-300.0f);
    const __m512 magic = _mm512_set1_ps(12582912.0f);
    const __m512 zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.0f);
    for (int64_t i = 0; i < n; i += 16) {
        __m512 xv = _mm512_loadu_ps(x + i);
        __m512 t = recip ? _mm512_mul_ps(xv, vr) : _mm512_div_ps(xv, vs);
        t = _mm512_max_ps(lo, _mm512_min_ps(hi, t));
        __m512 rt = _mm512_sub_ps(_mm512_add_ps(t, magic), magic);
        if (recip && _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(t, rt)),
                                        near, _CMP_GT_OQ)) {
            t = _mm512_div_ps(xv, vs);
            t = _mm512_max_ps(lo, _mm512_min_ps(hi, t));
            rt = _mm512_sub_ps(_mm512_add_ps(t, magic), magic);
        }
        t = _mm512_add_ps(rt, vz);
        t = _mm512_min_ps(top, _mm512_max_ps(zero, t));
        t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t);
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm512_cvtusepi32_epi8(_mm512_cvttps_epi32(t)));
    }
}

/* The f32 epilogue row (quant_gemm.h, epi_f32), 16 columns per vector,
 * the last ones masked; the same f32 operations as the C loop. */
static void epi_f32(const int32_t *t, const uint32_t *colk, const float *sf,
                    const float *bf, float *y, int n)
{
    for (int c = 0; c < n; c += 16) {
        __mmask16 m =
            n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1);
        __m512i acc = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, t + c),
                                       _mm512_maskz_loadu_epi32(m, colk + c));
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc),
                                 _mm512_maskz_loadu_ps(m, sf + c));
        if (bf)
            v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bf + c));
        _mm512_mask_storeu_ps(y + c, m, v);
    }
}

const sm_q8_isa sm_q8_isa_avx512vnni = {.name = "avx512vnni",
                                        .mr = 8,
                                        .nr = 32,
                                        .ukr = ukr,
                                        .minmax = minmax,
                                        .quant = quant,
                                        .epi_f32 = epi_f32};
#else
const sm_q8_isa sm_q8_isa_avx512vnni = {
    .name = "avx512vnni", .mr = 4, .nr = 8, .ukr = sm_q8_ukr_scalar};
#endif
