/*
 * entry.h - turns one ISA-independent kernel (a run function taking the
 * primitive table, cpu_ops.h) into the three registry entries
 * (registry.h) sm_cpu_<name>_avx512, _avx2 and _scalar, each bound to its
 * table and needing its ISA's features.
 *
 * The per-op files (matmul.c, conv.c, ...) keep their logic free of ISA
 * detail; kernels.def lists the three entries of an op, widest first.
 */
#ifndef SM_CPU_ENTRY_H
#define SM_CPU_ENTRY_H

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/registry.h"

typedef smelt_status (*sm_cpu_run_fn)(const sm_cpu_ops *ops, const sm_kargs *a,
                                      void *packed, sm_threadpool *tp);
typedef smelt_status (*sm_cpu_prepack_fn)(const sm_cpu_ops *ops,
                                          smelt_ctx_t *ctx,
                                          const sm_kernel_desc *d,
                                          const sm_tensor *const *const_in,
                                          void **packed);

#define SM_CPU_RUN_WRAP_(name, isa, run)                                       \
    static smelt_status name##_run_##isa(const sm_kargs *a, void *packed,      \
                                         sm_threadpool *tp)                    \
    {                                                                          \
        return run(&sm_cpu_ops_##isa, a, packed, tp);                          \
    }
#define SM_CPU_PACK_WRAP_(name, isa, prepack)                                  \
    static smelt_status name##_prepack_##isa(                                  \
        smelt_ctx_t *ctx, const sm_kernel_desc *d,                             \
        const sm_tensor *const *const_in, void **packed)                       \
    {                                                                          \
        return prepack(&sm_cpu_ops_##isa, ctx, d, const_in, packed);           \
    }

/* Entries without prepacking. */
#define SM_CPU_ENTRIES(name, flags_, supports_, ws_, run)                      \
    SM_CPU_RUN_WRAP_(name, avx512, run)                                        \
    SM_CPU_RUN_WRAP_(name, avx2, run)                                          \
    SM_CPU_RUN_WRAP_(name, scalar, run)                                        \
    const sm_cpu_kernel sm_cpu_##name##_avx512 = {#name "_f32_avx512",         \
                                                  SM_CPU_ISA_AVX512,           \
                                                  flags_,                      \
                                                  supports_,                   \
                                                  NULL,                        \
                                                  NULL,                        \
                                                  ws_,                         \
                                                  name##_run_avx512};          \
    const sm_cpu_kernel sm_cpu_##name##_avx2 = {#name "_f32_avx2",             \
                                                SM_CPU_ISA_AVX2,               \
                                                flags_,                        \
                                                supports_,                     \
                                                NULL,                          \
                                                NULL,                          \
                                                ws_,                           \
                                                name##_run_avx2};              \
    const sm_cpu_kernel sm_cpu_##name##_scalar = {                             \
        #name "_f32_scalar", 0, flags_, supports_, NULL, NULL, ws_,            \
        name##_run_scalar};

/* Entries whose prepack() packs constant inputs for their own table. */
#define SM_CPU_ENTRIES_PACKED(name, flags_, supports_, prepack, free_, ws_,    \
                              run, layouts_)                                   \
    SM_CPU_RUN_WRAP_(name, avx512, run)                                        \
    SM_CPU_RUN_WRAP_(name, avx2, run)                                          \
    SM_CPU_RUN_WRAP_(name, scalar, run)                                        \
    SM_CPU_PACK_WRAP_(name, avx512, prepack)                                   \
    SM_CPU_PACK_WRAP_(name, avx2, prepack)                                     \
    SM_CPU_PACK_WRAP_(name, scalar, prepack)                                   \
    const sm_cpu_kernel sm_cpu_##name##_avx512 = {#name "_f32_avx512",         \
                                                  SM_CPU_ISA_AVX512,           \
                                                  flags_,                      \
                                                  supports_,                   \
                                                  name##_prepack_avx512,       \
                                                  free_,                       \
                                                  ws_,                         \
                                                  name##_run_avx512,           \
                                                  layouts_};                   \
    const sm_cpu_kernel sm_cpu_##name##_avx2 = {#name "_f32_avx2",             \
                                                SM_CPU_ISA_AVX2,               \
                                                flags_,                        \
                                                supports_,                     \
                                                name##_prepack_avx2,           \
                                                free_,                         \
                                                ws_,                           \
                                                name##_run_avx2,               \
                                                layouts_};                     \
    const sm_cpu_kernel sm_cpu_##name##_scalar = {#name "_f32_scalar",         \
                                                  0,                           \
                                                  flags_,                      \
                                                  supports_,                   \
                                                  name##_prepack_scalar,       \
                                                  free_,                       \
                                                  ws_,                         \
                                                  name##_run_scalar,           \
                                                  layouts_};

#endif
