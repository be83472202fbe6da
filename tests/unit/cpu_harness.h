/*
 * cpu_harness.h - runs an optimized CPU kernel (kernels/cpu) and the
 * reference kernel of the same op on the same inputs and compares them,
 * for every ISA this machine has (each registry instance is bound to one
 * ISA's table, so calling the avx512, avx2 and scalar instances forces
 * each path; a data-movement kernel has one instance, CK_ONE), with no
 * pool and with pools of 2 and 3 threads, with the weights as run-time
 * inputs and as prepacked constants (the kernel configured for each).
 * Outputs start as NaN (integer outputs as bytes 0xa5, a value the
 * tests' inputs do not hold), so an element the kernel forgets to write
 * fails the comparison.
 *
 * Used by the test_cpu_*.c of each kernel family.
 */
#ifndef SM_CPU_HARNESS_H
#define SM_CPU_HARNESS_H

#include <math.h>
#include <stdlib.h>

#include "nn_harness.h"

#include "core/alloc.h"
#include "ir/op.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/registry.h"
#include "core/threadpool.h"

/* The registry instance called name; the test fails without it. */
static inline const sm_cpu_kernel *ck_kernel(const char *name)
{
    const sm_cpu_kernel *k = sm_cpu_kernel_find(name);
    if (!k)
        fail_msg("no CPU kernel instance '%s' in the registry", name);
    return k;
}

/* One ISA's instance of a VEC row (kernels.def), and the one instance
 * of an ANY row. */
#define CK_K(name, isa) ck_kernel(#name "_f32_" #isa)
#define CK_ANY(name) ck_kernel(#name "_any")

/* The three ISA instances of one kernel, widest first. */
#define CK_ENTRIES(name)                                                       \
    ((const sm_cpu_kernel *const[]){CK_K(name, avx512), CK_K(name, avx2),      \
                                    CK_K(name, scalar)})

/* A kernel with one portable instance (data movement,
 * kernels/cpu/movement.c), in the three-entry form ck_check takes (NULL
 * entries are skipped). */
#define CK_ONE(name) ((const sm_cpu_kernel *const[]){CK_ANY(name), NULL, NULL})

/* Uniform values in [-1, 1) from a seeded LCG (reproducible). */
static inline sm_tensor *ck_rand(int ndim, const int64_t *dims, unsigned seed)
{
    sm_tensor *t = nn_tensor(F32, ndim, dims, NULL);
    unsigned x = seed * 2654435761u + 7u;
    float *p = t->data;
    for (int64_t i = 0; i < t->numel; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (float)((x >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return t;
}

static inline int ck_have(const sm_cpu_kernel *k)
{
    return (k->isa & sm_cpu_detect()) == k->isa;
}

/* Thread pools shared by the tests of one program: none, 2, 3. */
static sm_threadpool *ck_pools[3];

static inline int ck_setup(void **state)
{
    (void)state;
    ck_pools[0] = NULL;
    /* small shapes take the threaded paths too */
    sm_gemm_set_parallel_threshold(0);
    if (sm_threadpool_new(NULL, 2, &ck_pools[1]) != SMELT_OK ||
        sm_threadpool_new(NULL, 3, &ck_pools[2]) != SMELT_OK)
        return -1;
    return 0;
}

static inline int ck_teardown(void **state)
{
    (void)state;
    sm_threadpool_free(ck_pools[1]);
    sm_threadpool_free(ck_pools[2]);
    return 0;
}

/* The reference outputs of op on in[] (inputs kept). */
static inline int ck_reference(sm_op op, int n_in, sm_tensor **in, int n_out,
                               const sm_attrs *at, sm_tensor **out)
{
    const sm_op_info *info = sm_op_info_get(op);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_type types[9], ot[4];
    sm_operand opnd[9];
    for (int i = 0; i < n_in; i++) {
        if (in[i])
            sm_type_from_tensor(&types[i], in[i]);
        opnd[i] = (sm_operand){in[i] != NULL, in[i] ? &types[i] : NULL, in[i]};
    }
    for (int j = 0; j < n_out; j++)
        sm_type_unknown(&ot[j]);
    sm_shape_ctx s = {.op = info,
                      .attrs = *at,
                      .n_in = n_in,
                      .in = opnd,
                      .n_out = n_out,
                      .out = ot,
                      .ctx = ctx};
    smelt_status st = info->shape(&s);
    for (int j = 0; st == SMELT_OK && j < n_out; j++) {
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < ot[j].ndim; d++)
            dims[d] = ot[j].dims[d].size;
        st = sm_tensor_new(ctx, ot[j].dtype, ot[j].ndim, dims, &out[j]);
    }
    if (st == SMELT_OK) {
        sm_kargs k = {.op_name = info->name,
                      .attrs = *at,
                      .n_in = n_in,
                      .in = in,
                      .n_out = n_out,
                      .out = out,
                      .ctx = ctx};
        st = info->ref(&k);
    }
    if (st != SMELT_OK)
        fail_msg("%s reference failed: %s", info->name, smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return 1;
}

/* The description a plan would give kernel k: const_mask bit i marks
 * input i as a constant. */
static inline void ck_desc(sm_op op, int n_in, sm_tensor **in, int n_out,
                           sm_tensor **out, const sm_attrs *at,
                           unsigned const_mask, int threads,
                           sm_kernel_operand *ins, sm_kernel_operand *outs,
                           sm_kernel_desc *d)
{
    memset(ins, 0, sizeof *ins * (size_t)n_in);
    memset(outs, 0, sizeof *outs * (size_t)n_out);
    for (int i = 0; i < n_in; i++) {
        if (!in[i])
            continue;
        ins[i].present = 1;
        ins[i].dtype = in[i]->dtype;
        ins[i].ndim = in[i]->ndim;
        memcpy(ins[i].dims, in[i]->dims, sizeof in[i]->dims);
        ins[i].is_const = (const_mask >> i) & 1;
        ins[i].data = ins[i].is_const ? in[i]->data : NULL;
    }
    for (int j = 0; j < n_out; j++) {
        outs[j].present = 1;
        outs[j].dtype = out[j]->dtype;
        outs[j].ndim = out[j]->ndim;
        memcpy(outs[j].dims, out[j]->dims, sizeof out[j]->dims);
    }
    *d = (sm_kernel_desc){op, *at, n_in, n_out, ins, outs, threads};
}

/* Whether got matches want within abs_tol + rel_tol * |want|. */
static inline void ck_compare(const char *what, const sm_tensor *got,
                              const sm_tensor *want, double abs_tol,
                              double rel_tol)
{
    assert_int_equal(got->numel, want->numel);
    for (int64_t i = 0; i < got->numel; i++) {
        double g = nn_at(got, i), w = nn_at(want, i);
        if ((isnan(w) && isnan(g)) || g == w) /* NaN, and infinities */
            continue;
        if (!(fabs(g - w) <= abs_tol + rel_tol * fabs(w)))
            fail_msg("%s: element %lld of %lld: got %.9g, expected %.9g", what,
                     (long long)i, (long long)got->numel, g, w);
    }
}

/*
 * Runs each available ISA entry of `ks` (3 entries) on in[] and compares
 * with the reference. Each entry must accept the node (supports()).
 * const_mask selects the inputs that may be constant weights: every ISA
 * runs, on each pool, the node configured with no constants and (with a
 * mask) configured with them and prepacked, as the plan would.
 */
static inline void ck_check(sm_op op, int n_in, sm_tensor **in, int n_out,
                            const sm_attr *al, int n_al,
                            const sm_cpu_kernel *const *ks, unsigned const_mask,
                            double abs_tol, double rel_tol)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_attrs at = {al, n_al, info->spec, info->n_spec};
    sm_tensor *want[4] = {0};
    ck_reference(op, n_in, in, n_out, &at, want);
    for (int e = 0; e < 3; e++) {
        const sm_cpu_kernel *k = ks[e];
        if (!k || !ck_have(k))
            continue;
        for (int p = 0; p < 3; p++) {
            int threads = sm_threadpool_size(ck_pools[p]);
            sm_kernel_operand ins[9], outs[4];
            sm_kernel_desc d;
            ck_desc(op, n_in, in, n_out, want, &at, const_mask, threads, ins,
                    outs, &d);
            if (!k->supports(&d))
                fail_msg("%s does not support this %s node", k->name,
                         info->name);
            for (int use_pack = 0; use_pack < 1 + (const_mask != 0);
                 use_pack++) {
                unsigned mask = use_pack ? const_mask : 0;
                ck_desc(op, n_in, in, n_out, want, &at, mask, threads, ins,
                        outs, &d);
                sm_cpu_config cfg;
                sm_cpu_kernel_configure(k, &d, &cfg);
                void *packed = NULL;
                if (cfg.packs) {
                    const sm_tensor *ci[9] = {0};
                    for (int i = 0; i < n_in; i++)
                        ci[i] = ((mask >> i) & 1) ? in[i] : NULL;
                    assert_int_equal(
                        sm_cpu_kernel_prepack(k, NULL, &d, &cfg, ci, &packed),
                        SMELT_OK);
                    assert_non_null(packed);
                }
                sm_tensor *got[4] = {0};
                for (int j = 0; j < n_out; j++) {
                    got[j] = nn_tensor(want[j]->dtype, want[j]->ndim,
                                       want[j]->dims, NULL);
                    if (!sm_dtype_is_float(got[j]->dtype))
                        memset(got[j]->data, 0xa5, got[j]->nbytes);
                    else
                        for (int64_t i = 0; i < got[j]->numel; i++)
                            sm_store_f64(got[j]->dtype, got[j]->data, i, NAN);
                }
                size_t wsb = cfg.ws_bytes;
                void *ws =
                    wsb ? aligned_alloc(64, (wsb + 63) & ~(size_t)63) : NULL;
                smelt_ctx_t *ctx = smelt_ctx_init();
                sm_kargs ka = {.op_name = info->name,
                               .attrs = at,
                               .n_in = n_in,
                               .in = in,
                               .n_out = n_out,
                               .out = got,
                               .ctx = ctx,
                               .workspace = ws,
                               .workspace_bytes = wsb};
                smelt_status st =
                    sm_cpu_kernel_run(k, &ka, &cfg, packed, ck_pools[p]);
                if (st != SMELT_OK)
                    fail_msg("%s failed: %s", k->name, smelt_ctx_error(ctx));
                char what[256];
                for (int j = 0; j < n_out; j++) {
                    char cs[96];
                    sm_cpu_config_str(&cfg, cs, sizeof cs);
                    snprintf(
                        what, sizeof what, "%s [%s] (%d threads, %s) out %d",
                        k->name, cs, threads,
                        use_pack ? "constant weights" : "run-time weights", j);
                    ck_compare(what, got[j], want[j], abs_tol, rel_tol);
                    sm_tensor_free(got[j]);
                }
                smelt_ctx_free(ctx);
                free(ws);
                sm_free(packed);
            }
        }
    }
    for (int j = 0; j < n_out; j++)
        sm_tensor_free(want[j]);
}

/* ck_check, then frees the inputs: CK_CHECK(op, n_in, in, n_out, attrs,
 * n_attrs, entries, const_mask, abs_tol, rel_tol), where the attributes
 * may come as ATTRS(...) / NO_ATTRS and the tolerances as one macro. */
#define CK_CHECK(op, n_in, in, n_out, ...)                                     \
    do {                                                                       \
        sm_tensor **ck_in_ = (in);                                             \
        ck_check(op, n_in, ck_in_, n_out, __VA_ARGS__);                        \
        for (int ck_i_ = 0; ck_i_ < (n_in); ck_i_++)                           \
            sm_tensor_free(ck_in_[ck_i_]);                                     \
    } while (0)

/* A kernel's supports() on a node, for the refusal tests. */
static inline int ck_supports(const sm_cpu_kernel *k, sm_op op, int n_in,
                              sm_tensor **in, int n_out, sm_tensor **out,
                              const sm_attr *al, int n_al)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_attrs at = {al, n_al, info->spec, info->n_spec};
    sm_kernel_operand ins[9], outs[4];
    sm_kernel_desc d;
    ck_desc(op, n_in, in, n_out, out, &at, 0, 1, ins, outs, &d);
    return k->supports(&d);
}

#endif
