/*
 * registry.c - the CPU kernel registry built from kernels.def: every row
 * expanded into its ISA instances, the instances grouped by op (in table
 * order within an op), the choice of the first one that the CPU and the
 * node allow, and the defaults of the optional hooks.
 */
#include "kernels/cpu/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/quant_gemm.h"

/* One instance of a row: its name is the row's name and a suffix. */
#define SM_CPU_INSTANCE_(name, sfx, op, isa, ops, flags, su, co, pp, ru, la)   \
    {#name sfx, SM_OP_##op, isa, flags, ops, su, co, pp, ru, la},

/* isas VEC: widest first, as sm_cpu_kernel_choose tries them. */
#define SM_CPU_ISAS_VEC(name, op, fl, su, co, pp, ru, la)                      \
    SM_CPU_INSTANCE_(name, "_f32_avx512", op, SM_CPU_ISA_AVX512,               \
                     &sm_cpu_ops_avx512, fl, su, co, pp, ru, la)               \
    SM_CPU_INSTANCE_(name, "_f32_avx2", op, SM_CPU_ISA_AVX2, &sm_cpu_ops_avx2, \
                     fl, su, co, pp, ru, la)                                   \
    SM_CPU_INSTANCE_(name, "_f32_scalar", op, 0u, &sm_cpu_ops_scalar, fl, su,  \
                     co, pp, ru, la)

/* isas ANY: one portable instance (it uses no vector primitives; it is
 * handed the scalar table all the same). */
#define SM_CPU_ISAS_ANY(name, op, fl, su, co, pp, ru, la)                      \
    SM_CPU_INSTANCE_(name, "_any", op, 0u, &sm_cpu_ops_scalar, fl, su, co, pp, \
                     ru, la)

/* isas Q8: the int8 kernels (quant.c on quant_gemm.h), one instance per
 * int8 micro-kernel, widest first; each bound to a table that names its
 * ISA (sm_q8_isa_of), not to an f32 one. */
#define SM_CPU_ISAS_Q8(name, op, fl, su, co, pp, ru, la)                       \
    SM_CPU_INSTANCE_(name, "_i8_avx512vnni", op,                               \
                     SM_CPU_ISA_AVX512 | SM_CPU_AVX512VNNI,                    \
                     &sm_cpu_ops_q8_avx512vnni, fl, su, co, pp, ru, la)        \
    SM_CPU_INSTANCE_(name, "_i8_avxvnni", op,                                  \
                     SM_CPU_ISA_AVX2 | SM_CPU_AVXVNNI, &sm_cpu_ops_q8_avxvnni, \
                     fl, su, co, pp, ru, la)                                   \
    SM_CPU_INSTANCE_(name, "_i8_avx2", op, SM_CPU_ISA_AVX2,                    \
                     &sm_cpu_ops_q8_avx2, fl, su, co, pp, ru, la)              \
    SM_CPU_INSTANCE_(name, "_i8_scalar", op, 0u, &sm_cpu_ops_q8_scalar, fl,    \
                     su, co, pp, ru, la)

static const sm_cpu_kernel instances[] = {
#define CPU_KERNEL(name, op, isas, fl, su, co, pp, ru, la)                     \
    SM_CPU_ISAS_##isas(name, op, fl, su, co, pp, ru, la)
#include "kernels/cpu/kernels.def"
#undef CPU_KERNEL
    /* sentinel: the table may be empty */
    {NULL, SM_OP_COUNT, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL}};

#define N_INSTANCES ((int)(sizeof instances / sizeof instances[0]) - 1)

/* by_op[first[op] .. first[op + 1]) are op's instances. */
static const sm_cpu_kernel *by_op[sizeof instances / sizeof instances[0]];
static int first[SM_OP_COUNT + 1];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Counting sort of the instances by op, keeping table order within an
 * op. */
static void build(void)
{
    int count[SM_OP_COUNT + 1] = {0};
    for (int i = 0; i < N_INSTANCES; i++)
        count[instances[i].op]++;
    int at = 0;
    for (int op = 0; op <= SM_OP_COUNT; op++) {
        first[op] = at;
        at += op < SM_OP_COUNT ? count[op] : 0;
    }
    int fill[SM_OP_COUNT] = {0};
    for (int i = 0; i < N_INSTANCES; i++)
        by_op[first[instances[i].op] + fill[instances[i].op]++] = &instances[i];
}

const sm_cpu_kernel *const *sm_cpu_kernels_for(sm_op op, int *n)
{
    pthread_once(&once, build);
    if ((int)op < 0 || op >= SM_OP_COUNT) {
        *n = 0;
        return by_op;
    }
    *n = first[op + 1] - first[op];
    return &by_op[first[op]];
}

const sm_cpu_kernel *sm_cpu_kernel_choose(const sm_kernel_desc *d,
                                          unsigned features)
{
    int n;
    const sm_cpu_kernel *const *ks = sm_cpu_kernels_for(d->op, &n);
    for (int i = 0; i < n; i++) {
        const sm_cpu_kernel *k = ks[i];
        if ((k->isa & features) != k->isa)
            continue;
        if (k->supports(d))
            return k;
    }
    return NULL;
}

const sm_cpu_kernel *sm_cpu_kernel_find(const char *name)
{
    for (int i = 0; name && i < N_INSTANCES; i++)
        if (!strcmp(instances[i].name, name))
            return &instances[i];
    return NULL;
}

int sm_cpu_kernel_count(void)
{
    return N_INSTANCES;
}

void sm_cpu_kernel_configure(const sm_cpu_kernel *k, const sm_kernel_desc *d,
                             sm_cpu_config *c)
{
    memset(c, 0, sizeof *c);
    c->nhwc = d->nhwc;
    k->configure(k->ops, d, c);
}

/* ---- the records ------------------------------------------------------- */

/* Per algorithm: its name and the names of its geometry values. */
static const struct {
    const char *name;
    const char *label[4];
} algos[SM_CPU_ALGO_COUNT] = {
    [SM_CPU_ALGO_PLAIN] = {"plain", {0}},
    [SM_CPU_ALGO_GEMM] = {"gemm", {"m", "n", "k", "batch"}},
    [SM_CPU_ALGO_GEMM_1X1] = {"gemm-1x1", {"m", "n", "k", "batch"}},
    [SM_CPU_ALGO_IM2COL] = {"im2col", {"m", "n", "k", "batch"}},
    [SM_CPU_ALGO_IM2COL_BATCHED] = {"im2col-batched", {"m", "n", "k", "batch"}},
    [SM_CPU_ALGO_WINOGRAD] = {"winograd f(4,3)", {"tiles"}},
    [SM_CPU_ALGO_POS_MAJOR] = {"position-major", {"m", "n", "k", "batch"}},
    [SM_CPU_ALGO_DIRECT] = {"direct", {"taps"}},
    [SM_CPU_ALGO_DEPTHWISE] = {"depthwise", {"taps"}},
    [SM_CPU_ALGO_DEPTHWISE_BLOCKED] = {"depthwise-blocked", {"taps"}},
    [SM_CPU_ALGO_FUSED_TILES] = {"tiles", {"tile", "ops", "temps", "threads"}},
};

const char *sm_cpu_algo_name(sm_cpu_algo a)
{
    return (int)a >= 0 && a < SM_CPU_ALGO_COUNT ? algos[a].name : "?";
}

const char *sm_cpu_algo_label(sm_cpu_algo a, int i)
{
    if ((int)a < 0 || a >= SM_CPU_ALGO_COUNT || i < 0 || i >= 4)
        return NULL;
    return algos[a].label[i];
}

void sm_cpu_config_str(const sm_cpu_config *c, char *buf, size_t size)
{
    size_t at = 0;
    if (size == 0)
        return;
    buf[0] = 0;
#define PUT(...)                                                               \
    do {                                                                       \
        int n_ = snprintf(buf + at, size - at, __VA_ARGS__);                   \
        at = n_ < 0 || (size_t)n_ >= size - at ? size - 1 : at + (size_t)n_;   \
    } while (0)
    if (c->algo != SM_CPU_ALGO_PLAIN)
        PUT("%s", sm_cpu_algo_name(c->algo));
    for (int i = 0; i < 4 && sm_cpu_algo_label(c->algo, i); i++)
        PUT(" %s=%lld", sm_cpu_algo_label(c->algo, i), (long long)c->geom[i]);
    if (c->packs)
        PUT("%spacked", at ? " " : "");
#undef PUT
}

/* ---- default hooks ------------------------------------------------------ */

void sm_cpu_configure_plain(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                            sm_cpu_config *c)
{
    (void)ops;
    (void)d;
    c->algo = SM_CPU_ALGO_PLAIN;
}

smelt_status sm_cpu_prepack_none(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                 const sm_kernel_desc *d,
                                 const sm_cpu_config *c,
                                 const sm_tensor *const *const_in,
                                 void **packed)
{
    (void)ops;
    (void)ctx;
    (void)d;
    (void)c;
    (void)const_in;
    *packed = NULL;
    return SMELT_OK;
}

unsigned sm_cpu_layouts_nchw(const sm_kernel_desc *d)
{
    (void)d;
    return 0;
}
