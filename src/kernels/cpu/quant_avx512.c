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

const sm_q8_isa sm_q8_isa_avx512vnni = {"avx512vnni", 8, 32, ukr};
#else
const sm_q8_isa sm_q8_isa_avx512vnni = {"avx512vnni", 4, 8, sm_q8_ukr_scalar};
#endif
