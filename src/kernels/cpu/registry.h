/*
 * registry.h - the CPU kernel registry: optimized kernels the plan
 * chooses per node, at compile time, by op, dtypes, shapes, attributes and
 * what the CPU supports.
 *
 * Adding a CPU kernel:
 *   1. write its hooks in src/kernels/cpu/<family>.c, once for every ISA:
 *      they reach vector code only through the sm_cpu_ops table they are
 *      handed (cpu_ops.h), so the file needs no ISA flags;
 *   2. add one row to kernels.def: CPU_KERNEL(name, Op, isas, flags,
 *      supports, configure, prepack, run, layouts), above the rows of the
 *      same op it should be preferred to. isas VEC makes three instances
 *      (name_f32_avx512, _avx2, _scalar, each bound to its ISA's table),
 *      ANY one portable instance (name_any). Hooks the kernel lacks are
 *      the defaults below (sm_cpu_configure_plain, sm_cpu_prepack_none,
 *      sm_cpu_layouts_nchw); the prototypes come from the row itself;
 *   3. test it against the reference kernel on every ISA
 *      (tests/unit/cpu_harness.h: CK_ENTRIES(name) or CK_ONE(name)).
 * Nothing else: the plan asks the instances of an op in table order and
 * takes the first whose ISA the CPU has and whose supports() accepts the
 * node. Ops with no entry, or none that accepts, run the reference kernel
 * (kernels/ref), so every graph runs.
 *
 * What a kernel may rely on and must do:
 *   - It sees a sm_kernel_desc (plain data: the op, attributes, dtypes and
 *     the concrete shapes of inputs and outputs) and, when running, the
 *     usual sm_kargs: never the graph.
 *   - configure() decides, once per plan step at compile time, how the
 *     node runs: the algorithm, its geometry, the workspace bytes
 *     (sm_cpu_config). The plan stores the record in the step and hands
 *     the same record to prepack() and run(), which follow it and never
 *     decide again. The desc it sees carries the operand formats the plan
 *     chose (d->nhwc, from layouts()) and the plan's thread count.
 *   - Outputs are preallocated views into the plan's arena with exactly
 *     the shapes in the desc, NOT zero-filled: run() writes every element.
 *   - An entry flagged SM_CPU_KERNEL_INPLACE accepts an output that is the
 *     same buffer as one input of its dtype and shape (elementwise kernels
 *     that read element i before writing element i); without the flag the
 *     plan never aliases an output with an input.
 *   - prepack() runs once at compile time, after configure(), for nodes
 *     whose inputs marked is_const are weights: when the record says
 *     `packs`, it returns one sm_malloc'd block that run() receives as
 *     `packed` and the plan releases with sm_free (NULL otherwise).
 *     Packed data is read-only while running: one plan runs from several
 *     threads at once.
 *   - The plan reserves the record's ws_bytes of scratch in the session's
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
#include "kernels/cpu/cpu_ops.h"
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
    int is_const;     /* inputs: a constant (weight) known at compile time */
    const void *data; /* is_const: its bytes (read-only; axes, shapes) */
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
    /* FusedElementwise: its body as a program (fused_ew.h), or NULL when
     * the plan could not make one */
    const struct sm_ew_prog *ew;
} sm_kernel_desc;

/* Entry flags. */
#define SM_CPU_KERNEL_INPLACE 1u /* output 0 may alias an input */
/* run() reads input 1 (the weights) only from the blob prepack() made,
 * whenever it made one: the plan may then free the weight's own bytes
 * (plan/pack.c) */
#define SM_CPU_KERNEL_PACKED_W 2u

/* How a kernel runs a node: what configure() chose. The geometry
 * (sm_cpu_config.geom) means what sm_cpu_algo_label says per algorithm. */
typedef enum sm_cpu_algo {
    SM_CPU_ALGO_PLAIN,             /* the kernel's one way */
    SM_CPU_ALGO_GEMM,              /* matmul.c: one GEMM call, m n k, batch */
    SM_CPU_ALGO_GEMM_1X1,          /* conv.c: a GEMM per (image, group), the
                                      input itself as B: m n k, batch */
    SM_CPU_ALGO_IM2COL,            /* conv.c: the same, B gathered by im2col */
    SM_CPU_ALGO_IM2COL_BATCHED,    /* conv_batched.c: one GEMM over a chunk
                                      of images' positions: m n k, batch */
    SM_CPU_ALGO_WINOGRAD,          /* conv_winograd.c F(4x4, 3x3): tiles */
    SM_CPU_ALGO_POS_MAJOR,         /* conv_posmajor.c: Y^T = X^T W^T, m n k */
    SM_CPU_ALGO_DIRECT,            /* conv_direct.c, few input channels: taps */
    SM_CPU_ALGO_DEPTHWISE,         /* conv_depthwise.c, row by row: taps */
    SM_CPU_ALGO_DEPTHWISE_BLOCKED, /* conv_depthwise_blocked.c, channels
                                      interleaved a vector at a time: taps */
    SM_CPU_ALGO_FUSED_TILES,       /* fused_ew.c: the body tile by tile:
                                      tile, ops, temps, threads */
    SM_CPU_ALGO_COUNT
} sm_cpu_algo;

/* A kernel's decision for one plan step (configure()): plain data, made
 * once at compile time and read by prepack() and run(). */
typedef struct sm_cpu_config {
    sm_cpu_algo algo;
    int packs;       /* prepack() makes a blob that run() reads */
    unsigned nhwc;   /* SM_NHWC_* / SM_B16_* operand formats it runs with
                        (the plan's choice, d->nhwc) */
    int64_t geom[4]; /* sizes the algorithm works in (sm_cpu_algo) */
    size_t ws_bytes; /* scratch run() needs with the plan's threads */
    /* why configure() chose algo, a static string --print-plan shows
     * (conv.c); NULL for a kernel with one way */
    const char *why;
} sm_cpu_config;

/* "winograd f(4,3)", "im2col", ... */
const char *sm_cpu_algo_name(sm_cpu_algo a);
/* The name of geometry value i of algorithm a ("m", "tiles"), or NULL
 * past its last. */
const char *sm_cpu_algo_label(sm_cpu_algo a, int i);
/* The record as text, less its workspace (the plan prints that with
 * its arena offset): "winograd f(4,3) tiles=196 packed"; "" for a
 * plain kernel. */
void sm_cpu_config_str(const sm_cpu_config *c, char *buf, size_t size);

/* The hooks of a kernel, written once for every ISA: ops is the table of
 * the instance's ISA (cpu_ops.h). */
typedef int (*sm_cpu_supports_fn)(const sm_kernel_desc *d);
typedef void (*sm_cpu_configure_fn)(const sm_cpu_ops *ops,
                                    const sm_kernel_desc *d, sm_cpu_config *c);
typedef smelt_status (*sm_cpu_prepack_fn)(
    const sm_cpu_ops *ops, smelt_ctx_t *ctx, const sm_kernel_desc *d,
    const sm_cpu_config *c, const sm_tensor *const *const_in, void **packed);
typedef smelt_status (*sm_cpu_run_fn)(const sm_cpu_ops *ops, const sm_kargs *a,
                                      const sm_cpu_config *c,
                                      const void *packed, sm_threadpool *tp);
typedef unsigned (*sm_cpu_layouts_fn)(const sm_kernel_desc *d);

/* One instance: a kernels.def row bound to one ISA. */
typedef struct sm_cpu_kernel {
    const char *name; /* "gemm_f32_avx512": shown by stats and profiler */
    sm_op op;
    unsigned isa;   /* SM_CPU_* features it needs, all of them (0: any) */
    unsigned flags; /* SM_CPU_KERNEL_* */
    const sm_cpu_ops *ops; /* the primitives of its ISA */
    /* Nonzero when this kernel can run the node (dtypes, shapes,
     * attributes). Must not allocate. */
    sm_cpu_supports_fn supports;
    /* The decision for a node supports() accepted (c arrives zeroed,
     * with c->nhwc = d->nhwc). */
    sm_cpu_configure_fn configure;
    /* Weights in, packed blob out. const_in[i] is the data of input i
     * when d->in[i].is_const, else NULL. */
    sm_cpu_prepack_fn prepack;
    sm_cpu_run_fn run;
    /* The SM_NHWC_* / SM_B16_* bits (kernel.h) of the operands it can
     * read or write channels-last or channel-blocked for d (d->nhwc 0):
     * what it could do, not a decision. The plan passes a value so only
     * between kernels that both allow it (plan/layout.c); configure,
     * prepack and run then see the chosen bits in d->nhwc / c->nhwc. */
    sm_cpu_layouts_fn layouts;
} sm_cpu_kernel;

/* The defaults of the hooks a kernel does not need: the one way with no
 * workspace; no packing; NCHW only. */
void sm_cpu_configure_plain(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                            sm_cpu_config *c);
smelt_status sm_cpu_prepack_none(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                 const sm_kernel_desc *d,
                                 const sm_cpu_config *c,
                                 const sm_tensor *const *const_in,
                                 void **packed);
unsigned sm_cpu_layouts_nchw(const sm_kernel_desc *d);

/* Declarations of every hook kernels.def names (a default named by
 * several rows is declared again, compatibly). */
#define CPU_KERNEL(name, op, isas, flags, supports, configure, prepack, run,   \
                   layouts)                                                    \
    int supports(const sm_kernel_desc *d);                                     \
    void configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,             \
                   sm_cpu_config *c);                                          \
    smelt_status prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,              \
                         const sm_kernel_desc *d, const sm_cpu_config *c,      \
                         const sm_tensor *const *const_in, void **packed);     \
    smelt_status run(const sm_cpu_ops *ops, const sm_kargs *a,                 \
                     const sm_cpu_config *c, const void *packed,               \
                     sm_threadpool *tp);                                       \
    unsigned layouts(const sm_kernel_desc *d);
#include "kernels/cpu/kernels.def"
#undef CPU_KERNEL

/* The instances for op in preference order; *n receives their count. */
const sm_cpu_kernel *const *sm_cpu_kernels_for(sm_op op, int *n);

/* The first instance for d's op whose isa is within `features` and whose
 * supports() accepts d; NULL when none does (run the reference kernel). */
const sm_cpu_kernel *sm_cpu_kernel_choose(const sm_kernel_desc *d,
                                          unsigned features);

/* The first instance called `name` ("conv_f32_avx2", "slice_any"), or
 * NULL (tests and benchmarks force an ISA's instance this way). */
const sm_cpu_kernel *sm_cpu_kernel_find(const char *name);

/* Total instances in the registry (for tests and `smelt bench`). */
int sm_cpu_kernel_count(void);

/* k's decision for d: the record zeroed, its nhwc set, then configure(). */
void sm_cpu_kernel_configure(const sm_cpu_kernel *k, const sm_kernel_desc *d,
                             sm_cpu_config *c);

/* k's prepack() and run() on its own ISA's table. */
static inline smelt_status
sm_cpu_kernel_prepack(const sm_cpu_kernel *k, smelt_ctx_t *ctx,
                      const sm_kernel_desc *d, const sm_cpu_config *c,
                      const sm_tensor *const *const_in, void **packed)
{
    *packed = NULL;
    return k->prepack(k->ops, ctx, d, c, const_in, packed);
}

static inline smelt_status
sm_cpu_kernel_run(const sm_cpu_kernel *k, const sm_kargs *a,
                  const sm_cpu_config *c, const void *packed, sm_threadpool *tp)
{
    return k->run(k->ops, a, c, packed, tp);
}

#endif
