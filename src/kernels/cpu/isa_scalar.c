/*
 * isa_scalar.c - the portable table of CPU primitives: the templates over
 * simd_scalar.h (one float per "vector"), for machines without AVX2 and
 * as the baseline every vector path is tested against.
 *
 * GEMM tile 4 x 4 scalars: 16 accumulators.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpuid.h"
#include "kernels/cpu/simd_scalar.h"
#include "core/act.h"

#define GEMM_MR 4
#define GEMM_NV 4

#include "kernels/cpu/vmath.inc.h"
#include "kernels/cpu/gemm.inc.h"
#include "kernels/cpu/rows.inc.h"
#include "kernels/cpu/conv_winograd.inc.h"
#include "kernels/cpu/attention.inc.h"
#include "kernels/cpu/attention_grad.inc.h"
#include "kernels/cpu/isa_table.inc.h"
