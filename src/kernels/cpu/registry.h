/*
 * registry.h - the CPU kernel registry: optimized kernels the plan
 * chooses per node, at compile time, by op, dtypes, shapes, attributes and
 * what the CPU supports.
 *
 * Adding a CPU kernel:
 *   1. write it in src/kernels/cpu/<family>_<isa>.c as a
 *      `const sm_cpu_kernel sm_cpu_<name> = {...};` (compile ISA-specific
 *      code with __attribute__((target("avx2,fma"))) or
 *      ("avx512f,avx512bw,...") on its functions, so the build needs no
 *      special flags and the scalar path still runs everywhere);
 *   2. add one row CPU_KERNEL(Op, sm_cpu_<name>) to kernels.def, above the
 *      rows of the same op it should be preferred to.
 * Nothing else: the plan asks the entries of an op in table order and
 * takes the first whose ISA the CPU has and whose supports() accepts the
 * node. Ops with no entry, or none that accepts, run the reference kernel
 * (kernels/ref), so every graph runs.
 *
 * What a kernel may rely on and must do:
 *   - It sees a sm_kernel_desc (plain data: the op, attributes, dtypes and
 *     the concrete shapes of inputs and outputs) and, when running, the
 *     usual sm_kargs: never the graph.
 *   - Outputs are preallocated views into the plan's arena with exactly
 *     the shapes in the desc, NOT zero-filled: run() writes every element.
 *   - An entry flagged SM_CPU_KERNEL_INPLACE accepts an output that is the
 *     same buffer as one input of its dtype and shape (elementwise kernels
 *     that read element i before writing element i); without the flag the
 *     plan never aliases an output with an input.
 *   - prepack() runs once at compile time, for nodes whose inputs marked
 *     is_const are weights; it returns an sm_malloc'd blob that run()
 *     receives as `packed` and free_packed() releases (both optional; run
 *     gets NULL without prepack). Packed data is read-only while running:
 *     one plan runs from several threads at once.
 *   - workspace() (optional) says how many bytes of scratch run() needs
 *     for a given thread count; the plan reserves it in the session's
 *     arena and passes it as a->workspace (64-byte aligned). No kernel
 *     allocates while running.
 *   - run() may split its work with sm_parallel_for(tp, ...); tp may be
 *     NULL or have one thread. Errors go through sm_err(a->ctx, ...).
 */
#ifndef SM_CPU_REGISTRY_H
#define SM_CPU_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "core/attr.h"
#include "kernels/ops.h"
#include "kernels/cpu/cpuid.h"
#include "kernels/kernel.h"
#include "core/threadpool.h"

/* The most inputs or outputs a planned node may have. */
#define SM_KERNEL_MAX_OPERANDS 64

/* One input or output as a kernel's supports() sees it. */
typedef struct sm_kernel_operand {
    int present; /* 0: an absent optional input */
    smelt_dtype dtype;
    int ndim;
    int64_t dims[SMELT_MAX_DIMS];
    int is_const; /* inputs: a constant (weight) known at compile time */
} sm_kernel_operand;

/* A node, as plain data: what a kernel is chosen and prepacked for. */
typedef struct sm_kernel_desc {
    sm_op op;
    sm_attrs attrs; /* the node's attributes over its op's schema */
    int n_in, n_out;
    const sm_kernel_operand *in;  /* n_in entries */
    const sm_kernel_operand *out; /* n_out entries */
    int n_threads;                /* threads of the plan (>= 1) */
    unsigned nhwc; /* SM_NHWC_* / SM_B16_* (kernel.h): operand formats */
} sm_kernel_desc;

/* Entry flags. */
#define SM_CPU_KERNEL_INPLACE 1u /* output 0 may alias an input */
/* run() reads input 1 (the weights) only from the blob prepack() made,
 * whenever it made one: the plan may then free the weight's own bytes
 * (plan/pack.c) */
#define SM_CPU_KERNEL_PACKED_W 2u

typedef struct sm_cpu_kernel {
    const char *name; /* "gemm_f32_avx512": shown by stats and profiler */
    unsigned isa;     /* SM_CPU_* features it needs, all of them (0: any) */
    unsigned flags;   /* SM_CPU_KERNEL_* */
    /* Nonzero when this kernel can run the node (dtypes, shapes,
     * attributes). Must not allocate. NULL: supports everything of its
     * op. */
    int (*supports)(const sm_kernel_desc *d);
    /* Optional: weights in, packed blob out (sm_malloc'd). const_in[i] is
     * the data of input i when d->in[i].is_const, else NULL. */
    smelt_status (*prepack)(smelt_ctx_t *ctx, const sm_kernel_desc *d,
                            const sm_tensor *const *const_in, void **packed);
    void (*free_packed)(void *packed);
    /* Optional: scratch bytes run() needs with n_threads threads. */
    size_t (*workspace)(const sm_kernel_desc *d, int n_threads);
    smelt_status (*run)(const sm_kargs *a, void *packed, sm_threadpool *tp);
    /* Optional: the SM_NHWC_* / SM_B16_* bits (kernel.h) of the operands
     * it can read or write channels-last or channel-blocked for d
     * (d->nhwc 0). The plan passes a value so only between kernels that
     * both allow it; prepack, workspace and run then see the chosen bits
     * in d->nhwc / a->nhwc. NULL: NCHW only. */
    unsigned (*layouts)(const sm_kernel_desc *d);
} sm_cpu_kernel;

/* Declarations of every entry kernels.def names. */
#define CPU_KERNEL(op, sym) extern const sm_cpu_kernel sym;
#include "kernels/cpu/kernels.def"
#undef CPU_KERNEL

/* The entries for op in preference order; *n receives their count. */
const sm_cpu_kernel *const *sm_cpu_kernels_for(sm_op op, int *n);

/* The first entry for d's op whose isa is within `features` and whose
 * supports() accepts d; NULL when none does (run the reference kernel). */
const sm_cpu_kernel *sm_cpu_kernel_choose(const sm_kernel_desc *d,
                                          unsigned features);

/* Total entries in the registry (for tests and `smelt bench`). */
int sm_cpu_kernel_count(void);

#endif
