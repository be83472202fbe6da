/*
 * cpuid.h - what the CPU supports, as a bit set, for choosing kernels.
 *
 * The environment variable SMELT_ISA (scalar | avx2 | avx512) lowers what
 * is reported so that tests can run every kernel path on one machine; it
 * never raises it above what the CPU has.
 */
#ifndef SM_CPUID_H
#define SM_CPUID_H

enum {
    SM_CPU_AVX2 = 1u << 0,
    SM_CPU_FMA = 1u << 1,
    SM_CPU_AVX512F = 1u << 2,
    SM_CPU_AVX512BW = 1u << 3,
    SM_CPU_AVX512VNNI = 1u << 4,
    SM_CPU_AVX512BF16 = 1u << 5,
    SM_CPU_AVXVNNI = 1u << 6 /* VEX vpdpbusd on ymm (int8 kernels) */
};

/* The ISA levels SMELT_ISA and the plan's isa option name. AVX-VNNI
 * (VEX vpdpbusd on ymm) belongs to the 256-bit level: `avx2` plans its
 * int8 kernels where the CPU has it (the vpmaddubsw ones otherwise). */
#define SM_CPU_LEVEL_SCALAR 0u
#define SM_CPU_LEVEL_AVX2 (SM_CPU_AVX2 | SM_CPU_FMA | SM_CPU_AVXVNNI)
#define SM_CPU_LEVEL_AVX512                                                    \
    (SM_CPU_LEVEL_AVX2 | SM_CPU_AVX512F | SM_CPU_AVX512BW |                    \
     SM_CPU_AVX512VNNI | SM_CPU_AVX512BF16 | SM_CPU_AVXVNNI)

/* What the CPU and the OS support (cpuid + xgetbv), not lowered. */
unsigned sm_cpu_detect(void);
/* sm_cpu_detect() lowered by SMELT_ISA when it is set to a known level. */
unsigned sm_cpu_features(void);
/* The level mask for "scalar", "avx2" or "avx512"; -1 cast to unsigned
 * (all bits) for NULL or "" or "native"; 0 with *ok = 0 for an unknown
 * name. */
unsigned sm_cpu_level_mask(const char *name, int *ok);
/* "avx512f avx512bw ..." for a feature set, into buf. */
void sm_cpu_features_str(unsigned f, char *buf, unsigned long size);

#endif
