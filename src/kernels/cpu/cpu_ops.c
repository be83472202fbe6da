/*
 * cpu_ops.c - run-time choice of the per-ISA primitive table (cpu_ops.h)
 * from what cpuid reports, lowered by SMELT_ISA.
 */
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/cpuid.h"

const sm_cpu_ops *sm_cpu_ops_for(unsigned features)
{
    const sm_cpu_ops *const order[] = {&sm_cpu_ops_avx512, &sm_cpu_ops_avx2};
    for (int i = 0; i < 2; i++)
        if ((order[i]->isa & features) == order[i]->isa)
            return order[i];
    return &sm_cpu_ops_scalar;
}

const sm_cpu_ops *sm_cpu_ops_best(void)
{
    return sm_cpu_ops_for(sm_cpu_features());
}
