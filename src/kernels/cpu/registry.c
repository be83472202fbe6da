/*
 * registry.c - the CPU kernel registry built from kernels.def: entries
 * grouped by op (in table order within an op) and the choice of the first
 * entry that the CPU and the node allow.
 */
#include "kernels/cpu/registry.h"

#include <pthread.h>

typedef struct row {
    sm_op op;
    const sm_cpu_kernel *k;
} row;

static const row rows[] = {
#define CPU_KERNEL(op, sym) {SM_OP_##op, &sym},
#include "kernels/cpu/kernels.def"
#undef CPU_KERNEL
    {SM_OP_COUNT, NULL} /* sentinel: the table may be empty */
};

#define N_ROWS ((int)(sizeof rows / sizeof rows[0]) - 1)

/* by_op[first[op] .. first[op + 1]) are op's entries. */
static const sm_cpu_kernel *by_op[sizeof rows / sizeof rows[0]];
static int first[SM_OP_COUNT + 1];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Counting sort of the rows by op, keeping table order within an op. */
static void build(void)
{
    int count[SM_OP_COUNT + 1] = {0};
    for (int i = 0; i < N_ROWS; i++)
        count[rows[i].op]++;
    int at = 0;
    for (int op = 0; op <= SM_OP_COUNT; op++) {
        first[op] = at;
        at += op < SM_OP_COUNT ? count[op] : 0;
    }
    int fill[SM_OP_COUNT] = {0};
    for (int i = 0; i < N_ROWS; i++)
        by_op[first[rows[i].op] + fill[rows[i].op]++] = rows[i].k;
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
        if (!k->supports || k->supports(d))
            return k;
    }
    return NULL;
}

int sm_cpu_kernel_count(void)
{
    return N_ROWS;
}
