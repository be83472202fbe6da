/*
 * kernel.h - what a kernel sees: tensors and attributes, never the graph.
 */
#ifndef SM_KERNEL_H
#define SM_KERNEL_H

#include "core/attr.h"
#include "core/status.h"
#include "core/tensor.h"

/* Runs sub-block `block` of a control op (If: 0 = then, 1 = else; Loop:
 * 0 = body) on the given inputs, returning new tensors owned by the
 * caller. Given to control kernels by the executor. */
typedef smelt_status (*sm_run_block_fn)(void *user, int block, int n_in,
                                        sm_tensor *const *in, int n_out,
                                        sm_tensor **out);

/* What the graph declares about an output (-1: unknown), for kernels that
 * size their own outputs (a Loop that runs zero times still knows its scan
 * outputs' dtype and trailing dims). */
typedef struct sm_out_hint {
    smelt_dtype dtype;
    int ndim;
    int64_t dims[SMELT_MAX_DIMS];
} sm_out_hint;

/* Channels-last operands (sm_kargs.nhwc, sm_kernel_desc.nhwc): a 4-D
 * tensor [N, C, H, W] held in memory as [N, H, W, C]. The plan chooses
 * it for values passed between kernels that both handle it
 * (plan/layout.c); the graph and every other kernel see NCHW. */
#define SM_NHWC_IN 1u  /* input 0 */
#define SM_NHWC_OUT 2u /* output 0, and input 3 (a residual) with it */
/* In what a kernel allows (registry.h layouts()): SM_NHWC_IN only
 * together with SM_NHWC_OUT. */
#define SM_NHWC_TIED 4u
/* Channel-blocked operands: [N, C, H, W] held as [N, C / 16, H, W, 16]
 * (C a multiple of 16), each block's plane contiguous. */
#define SM_B16_IN 8u   /* input 0 */
#define SM_B16_OUT 16u /* output 0 (never with a residual) */

typedef struct sm_kargs {
    const char *op_name;
    sm_attrs attrs;
    int n_in;
    sm_tensor *const *in; /* NULL where an optional input is absent */
    int n_out;
    /* Preallocated with the shapes the op's shape function computed from
     * the concrete inputs, except for control ops (If, Loop), whose kernel
     * stores new tensors here. */
    sm_tensor **out;
    smelt_ctx_t *ctx;
    sm_run_block_fn run_block;
    void *run_block_user;
    int n_block_out;             /* number of results each sub-block returns */
    const sm_out_hint *out_hint; /* n_out entries, or NULL */
    /* Scratch for optimized kernels (kernels/cpu/registry.h): the bytes
     * the kernel's configure() asked for (sm_cpu_config.ws_bytes),
     * 64-byte aligned; NULL/0 for reference kernels. */
    void *workspace;
    size_t workspace_bytes;
    unsigned nhwc; /* SM_NHWC_* / SM_B16_* bits; 0 for reference kernels */
} sm_kargs;

typedef smelt_status (*sm_kernel_fn)(const sm_kargs *a);

#endif
