/*
 * fused_prog.h - FusedElementwise bodies as programs of the fused CPU
 * kernel (fused_prog.c, kernels/cpu/fused_ew.h).
 */
#ifndef SM_PLAN_FUSED_PROG_H
#define SM_PLAN_FUSED_PROG_H

#include "ir/ir.h"
#include "kernels/cpu/fused_ew.h"

/* Fills *pg with the program of FusedElementwise node n and returns 1,
 * or returns 0 when the kernel cannot run n's body (an op with no row
 * function, a value that is not f32 or has neither the output's element
 * count nor one, a return that is an input or returned twice, a body
 * larger than the program holds): the plan then expands it. */
int sm_ew_prog_make(const sm_node *n, sm_ew_prog *pg);

#endif
