/*
 * cpu_util.h - small helpers the optimized CPU kernels share: dtype
 * checks on a kernel description, broadcast strides, the activation of a
 * fused op, and the scratch a kernel runs with.
 */
#ifndef SM_CPU_UTIL_H
#define SM_CPU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/registry.h"

/* Nonzero when every present input and every output of d is f32. */
int sm_cpu_all_f32(const sm_kernel_desc *d);

/*
 * Element strides of a row-major tensor of rank tr (dims td) broadcast
 * onto a shape of rank yr (dims yd), aligned right: out[d] is 0 where the
 * tensor has no dim or a dim of 1, its row-major stride otherwise.
 * Returns 0 when it does not broadcast (a dim that is neither 1 nor
 * yd's, or tr > yr).
 */
int sm_cpu_bcast_strides(int tr, const int64_t *td, int yr, const int64_t *yd,
                         int64_t *out);

/*
 * Loops over an output shape that several operands step through, each
 * with its own element strides (0 broadcasts, negative walks backwards):
 * dims of size 1 dropped and adjacent dims merged wherever every operand
 * steps through them as one (stride of the outer = stride of the inner x
 * its size), so the innermost loop is as long as it can be. Always at
 * least one dim. Elementwise and data-movement kernels share it.
 */
#define SM_CPU_LOOP_OPS 4
typedef struct sm_cpu_loops {
    int nd, n_ops;
    int64_t dims[SMELT_MAX_DIMS];
    int64_t s[SM_CPU_LOOP_OPS][SMELT_MAX_DIMS];
} sm_cpu_loops;

/* Collapses, in place, the loops over a rank-nd shape (dims) whose
 * g->n_ops operands (at most SM_CPU_LOOP_OPS) have strides
 * g->s[k][0..nd) on entry. */
void sm_cpu_loops_collapse(sm_cpu_loops *g, int nd, const int64_t *dims);

/* The element offset of each operand at outer iteration r, r a row-major
 * index over every dim but the last. */
void sm_cpu_loops_offsets(const sm_cpu_loops *g, int64_t r, int64_t *off);

/* The fused activation of a node (attributes activation,
 * activation_alpha, activation_beta) into an epilogue; 0 when the
 * attributes are bad (the reference kernel reports them). */
int sm_cpu_epi_act(const sm_attrs *at, sm_gemm_epi *e);

/* Chunk size for splitting n items over the pool: about 8 chunks per
 * thread, handed out dynamically, so a thread the OS deschedules holds up
 * at most a small share of the work. */
int64_t sm_cpu_chunk(int64_t n, sm_threadpool *tp);

/* A kernel's 64-byte aligned scratch of `need` bytes: the plan's
 * workspace ws when it is large enough (ws_bytes), else a block
 * allocated here and returned in *own as well (the caller sm_frees
 * *own, NULL or not); NULL when that allocation fails. */
char *sm_cpu_scratch(void *ws, size_t ws_bytes, size_t need, void **own);

/* Product of n dims. */
int64_t sm_cpu_prod(int n, const int64_t *d);

#endif
