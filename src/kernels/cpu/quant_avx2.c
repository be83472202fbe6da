/*
 * quant_avx2.c - the AVX2 int8 micro-kernel (quant_gemm.h), 4 x 16,
 * without VNNI. vpmaddubsw adds two u8 x s8 products into an int16 with
 * saturation, which is exact only while the weights lie in [-64, 63]
 * (2 x 255 x 64 = 32640 <= 32767): the packer marks such B "narrow" and
 * they take vpmaddubsw + vpmaddwd(1). Every other B takes the exact
 * split: each 32-bit lane's even and odd bytes widened to int16 in
 * registers (A zero-extended, B sign-extended) and two vpmaddwd, whose
 * int32 sums cannot saturate. Compiled with -mavx2 -mfma (the CPU
 * kernels block of the top CMakeLists.txt).
 */
#include "kernels/cpu/quant_gemm.h"

#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

static inline __m256i bcast4(const uint8_t *a)
{
    int32_t v;
    memcpy(&v, a, 4);
    return _mm256_set1_epi32(v);
}

#define ROWS(X) X(0) X(1) X(2) X(3)
#define DECL(r) __m256i c##r##0 = _mm256_setzero_si256(), c##r##1 = c##r##0;
#define STORE(r)                                                               \
    _mm256_storeu_si256((__m256i *)(c + (r)*16), c##r##0);                     \
    _mm256_storeu_si256((__m256i *)(c + (r)*16 + 8), c##r##1);

/* Weights in [-64, 63]: vpmaddubsw cannot saturate. */
#define STEP_N(r)                                                              \
    {                                                                          \
        __m256i av = bcast4(a + 4 * (r));                                      \
        c##r##0 = _mm256_add_epi32(                                            \
            c##r##0, _mm256_madd_epi16(_mm256_maddubs_epi16(av, b0), one));    \
        c##r##1 = _mm256_add_epi32(                                            \
            c##r##1, _mm256_madd_epi16(_mm256_maddubs_epi16(av, b1), one));    \
    }

static void ukr_narrow(int64_t kg, const uint8_t *a, const int8_t *b,
                       int32_t *c)
{
    const __m256i one = _mm256_set1_epi16(1);
    ROWS(DECL)
    for (int64_t g = 0; g < kg; g++, a += 16, b += 64) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 32));
        ROWS(STEP_N)
    }
    ROWS(STORE)
}

/* Any weights: bytes 0 and 2 of each lane (even) and 1 and 3 (odd) as
 * int16 pairs, two exact vpmaddwd. */
#define STEP_W(r)                                                              \
    {                                                                          \
        __m256i av = bcast4(a + 4 * (r));                                      \
        __m256i ae = _mm256_and_si256(av, lo8), ao = _mm256_srli_epi16(av, 8); \
        c##r##0 = _mm256_add_epi32(                                            \
            c##r##0, _mm256_add_epi32(_mm256_madd_epi16(ae, b0e),              \
                                      _mm256_madd_epi16(ao, b0o)));            \
        c##r##1 = _mm256_add_epi32(                                            \
            c##r##1, _mm256_add_epi32(_mm256_madd_epi16(ae, b1e),              \
                                      _mm256_madd_epi16(ao, b1o)));            \
    }

static void ukr_wide(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c)
{
    const __m256i lo8 = _mm256_set1_epi16(0x00ff);
    ROWS(DECL)
    for (int64_t g = 0; g < kg; g++, a += 16, b += 64) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 32));
        __m256i b0e = _mm256_srai_epi16(_mm256_slli_epi16(b0, 8), 8);
        __m256i b0o = _mm256_srai_epi16(b0, 8);
        __m256i b1e = _mm256_srai_epi16(_mm256_slli_epi16(b1, 8), 8);
        __m256i b1o = _mm256_srai_epi16(b1, 8);
        ROWS(STEP_W)
    }
    ROWS(STORE)
}

static void ukr(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c,
                int narrow)
{
    if (narrow)
        ukr_narrow(kg, a, b, c);
    else
        ukr_wide(kg, a, b, c);
}

const sm_q8_isa sm_q8_isa_avx2 = {
    .name = "avx2", .mr = 4, .nr = 16, .ukr = ukr};
#else
const sm_q8_isa sm_q8_isa_avx2 = {
    .name = "avx2", .mr = 4, .nr = 8, .ukr = sm_q8_ukr_scalar};
#endif
