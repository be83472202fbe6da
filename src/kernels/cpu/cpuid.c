/*
 * cpuid.c - CPU feature detection for kernel dispatch (x86-64 cpuid and
 * xgetbv; other machines report no features and run the portable
 * kernels), lowered by SMELT_ISA so tests can force each path.
 */
#include "kernels/cpu/cpuid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0: which register states the OS saves (AVX needs bits 1-2, AVX-512
 * bits 5-7 as well). */
static unsigned long long xgetbv0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

unsigned sm_cpu_detect(void)
{
    unsigned a, b, c, d, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    int osxsave = (c >> 27) & 1, fma = (c >> 12) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx)
        return 0;
    unsigned long long xcr0 = xgetbv0();
    if ((xcr0 & 6) != 6)
        return 0;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b >> 5) & 1)
        f |= SM_CPU_AVX2;
    if (fma)
        f |= SM_CPU_FMA;
    {
        unsigned a1, b1, c1, d1;
        __cpuid_count(7, 1, a1, b1, c1, d1);
        (void)b1, (void)c1, (void)d1;
        if ((a1 >> 4) & 1)
            f |= SM_CPU_AVXVNNI;
    }
    if ((xcr0 & 0xe6) == 0xe6 && ((b >> 16) & 1)) {
        f |= SM_CPU_AVX512F;
        if ((b >> 30) & 1)
            f |= SM_CPU_AVX512BW;
        if ((c >> 11) & 1)
            f |= SM_CPU_AVX512VNNI;
        unsigned a1, b1, c1, d1;
        __cpuid_count(7, 1, a1, b1, c1, d1);
        (void)b1, (void)c1, (void)d1;
        if ((a1 >> 5) & 1)
            f |= SM_CPU_AVX512BF16;
    }
    return f;
}
#else
unsigned sm_cpu_detect(void)
{
    return 0;
}
#endif

unsigned sm_cpu_level_mask(const char *name, int *ok)
{
    *ok = 1;
    if (!name || !*name || !strcmp(name, "native"))
        return ~0u;
    if (!strcmp(name, "scalar"))
        return SM_CPU_LEVEL_SCALAR;
    if (!strcmp(name, "avx2"))
        return SM_CPU_LEVEL_AVX2;
    if (!strcmp(name, "avx512"))
        return SM_CPU_LEVEL_AVX512;
    *ok = 0;
    return 0;
}

unsigned sm_cpu_features(void)
{
    unsigned f = sm_cpu_detect();
    int ok;
    unsigned m = sm_cpu_level_mask(getenv("SMELT_ISA"), &ok);
    return ok ? f & m : f;
}

void sm_cpu_features_str(unsigned f, char *buf, unsigned long size)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{SM_CPU_AVX2, "avx2"},
                 {SM_CPU_FMA, "fma"},
                 {SM_CPU_AVX512F, "avx512f"},
                 {SM_CPU_AVX512BW, "avx512bw"},
                 {SM_CPU_AVX512VNNI, "avx512vnni"},
                 {SM_CPU_AVX512BF16, "avx512bf16"},
                 {SM_CPU_AVXVNNI, "avxvnni"}};
    size_t at = 0;
    if (size)
        buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((f & names[i].bit) && at < size)
            at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? " " : "",
                                   names[i].name);
    if (!f && size)
        snprintf(buf, size, "scalar");
}
