/*
 * quant_avxvnni.c - the AVX-VNNI int8 micro-kernel (quant_gemm.h): the
 * VEX form of vpdpbusd on ymm (CPUs with AVX-VNNI but no AVX-512, and
 * the choice below AVX-512 where both exist): a 6 x 16 tile, 12
 * accumulators, two B vectors and one broadcast. Compiled with -mavxvnni
 * (the CPU kernels block of the top CMakeLists.txt).
 */
#include "kernels/cpu/quant_gemm.h"

#if defined(__AVX2__) && defined(__AVXVNNI__)
#include <immintrin.h>
#include <string.h>

static inline __m256i bcast4(const uint8_t *a)
{
    int32_t v;
    memcpy(&v, a, 4);
    return _mm256_set1_epi32(v);
}

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECL(r) __m256i c##r##0 = _mm256_setzero_si256(), c##r##1 = c##r##0;
#define STEP(r)                                                                \
    {                                                                          \
        __m256i av = bcast4(a + 4 * (r));                                      \
        c##r##0 = _mm256_dpbusd_avx_epi32(c##r##0, av, b0);                    \
        c##r##1 = _mm256_dpbusd_avx_epi32(c##r##1, av, b1);                    \
    }
#define STORE(r)                                                               \
    _mm256_storeu_si256((__m256i *)(c + (r)*16), c##r##0);                     \
    _mm256_storeu_si256((__m256i *)(c + (r)*16 + 8), c##r##1);

static void ukr(int64_t kg, const uint8_t *a, const int8_t *b, int32_t *c,
                int narrow)
{
    (void)narrow;
    ROWS(DECL)
    for (int64_t g = 0; g < kg; g++, a += 24, b += 64) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 32));
        ROWS(STEP)
    }
    ROWS(STORE)
}

const sm_q8_isa sm_q8_isa_avxvnni = {
    .name = "avxvnni", .mr = 6, .nr = 16, .ukr = ukr};
#else
const sm_q8_isa sm_q8_isa_avxvnni = {
    .name = "avxvnni", .mr = 4, .nr = 8, .ukr = sm_q8_ukr_scalar};
#endif
