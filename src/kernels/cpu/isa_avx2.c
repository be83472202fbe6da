/*
 * isa_avx2.c - the AVX2 + FMA table of CPU primitives: the templates over
 * simd_avx2.h, compiled with -mavx2 -mfma (CPU kernels block of the top
 * CMakeLists.txt).
 *
 * GEMM tile 6 x 16: 12 accumulators, 2 B vectors and 1 broadcast fill 15
 * of the 16 ymm registers.
 */
#include "kernels/cpu/cpu_ops.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpuid.h"
#include "kernels/cpu/simd_avx2.h"
#include "core/act.h"

#define GEMM_MR 6
#define GEMM_NV 2

#include "kernels/cpu/vmath.inc.h"
#include "kernels/cpu/gemm.inc.h"
#include "kernels/cpu/rows.inc.h"
#include "kernels/cpu/conv_winograd.inc.h"
#include "kernels/cpu/attention.inc.h"
#include "kernels/cpu/attention_grad.inc.h"
#include "kernels/cpu/isa_table.inc.h"
#else
/* Built without the ISA's flags (not x86-64): a table no CPU selects. */
const sm_cpu_ops sm_cpu_ops_avx2 = {.name = "avx2", .isa = ~0u};
#endif
