/*
 * isa_avx512.c - the AVX-512 table of CPU primitives: the templates
 * (gemm.inc.h, vmath.inc.h, rows.inc.h) over simd_avx512.h. The only
 * file compiled with AVX-512 flags (see the CPU kernels block of the top
 * CMakeLists.txt); nothing reaches it unless cpuid says AVX-512F/BW/VL/DQ.
 *
 * GEMM tile 14 x 32: 28 accumulators, 2 B vectors and 1 broadcast take 31
 * of the 32 zmm registers; per k, 28 FMAs for 2 loads and 14 broadcasts.
 * Measured against 12 x 32 and 6 x 64 (bench/gemm_bench, Zen 4): equal on
 * large squares (~87% of peak), 14 x 32 ahead by 6-8% on the convolution
 * shape 64 x 3136 x 576 and on the memory-bound 8 x 4096 x 1024.
 */
#include "kernels/cpu/cpu_ops.h"

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpuid.h"
#include "kernels/cpu/simd_avx512.h"
#include "core/act.h"

#ifndef GEMM_MR /* -D overrides are for tile experiments (gemm_bench) */
#define GEMM_MR 14
#define GEMM_NV 2
#endif

#include "kernels/cpu/vmath.inc.h"
#include "kernels/cpu/gemm.inc.h"
#include "kernels/cpu/rows.inc.h"
#include "kernels/cpu/conv_winograd.inc.h"
#include "kernels/cpu/attention.inc.h"
#include "kernels/cpu/attention_grad.inc.h"
#include "kernels/cpu/isa_table.inc.h"
#else
/* Built without the ISA's flags (not x86-64): a table no CPU selects. */
const sm_cpu_ops sm_cpu_ops_avx512 = {.name = "avx512", .isa = ~0u};
#endif
