/*
 * pointwise.h - the shared loops of the elementwise, broadcasting and
 * reduction reference kernels (elementwise.c, reduce.c), for the kernel
 * files that add ops of the same shape (math.c, reduce_mapped.c) without
 * repeating the loops.
 *
 * An op is a pair of scalar functions, one over doubles (every float dtype
 * is computed in double and rounded once on store) and one over int64
 * (integers and bool, so int64 stays exact); NULL where the op is not
 * defined on that kind.
 */
#ifndef SM_REF_POINTWISE_H
#define SM_REF_POINTWISE_H

#include <stdint.h>

#include "kernels/kernel.h"

/* Parameters the unary functions read: up to three float attributes of
 * the op (which ones is the kernel's choice: LeakyRelu's alpha, Selu's
 * alpha and gamma, Shrink's lambd and bias...) and Clip's bounds. */
typedef struct sm_unary_prm {
    double alpha, beta, gamma;
    double lo, hi;
    int64_t ilo, ihi;
} sm_unary_prm;

typedef struct sm_unary_fn {
    double (*f)(double x, const sm_unary_prm *p);
    int64_t (*i)(int64_t x, const sm_unary_prm *p);
} sm_unary_fn;

/* y[i] = fn(x[i]) over input 0 into output 0 (of the same element count;
 * the output's dtype may differ, as IsNaN's bool). */
smelt_status sm_ref_unary_run(const sm_kargs *a, const sm_unary_fn *fn,
                              const sm_unary_prm *p);

/* A broadcasting op: a fold of f (or i) over the inputs, left to right.
 * With `mean` set, the float fold is divided by the input count (Mean).
 * `u` (may be NULL: i is right for unsigned too) replaces i when an input
 * is u64, whose values load as their int64 bit pattern (core/dtype.h):
 * it treats its operands as uint64_t where the sign matters (<, /, %). */
typedef struct sm_binary_fn {
    double (*f)(double x, double y);
    int64_t (*i)(int64_t x, int64_t y);
    int mean;
    int64_t (*u)(int64_t x, int64_t y);
} sm_binary_fn;

/* out = the fold of fn over all inputs with numpy broadcasting; runs in
 * double when any input is a float dtype, else in int64 (with fn->u when
 * an input is u64 and fn->u is set). */
smelt_status sm_ref_nary_run(const sm_kargs *a, const sm_binary_fn *fn);

/* One reduction (ReduceSum...): a combining pair over doubles and over
 * int64. `first` reductions start from the first element (Max, Min: never
 * empty), the others from `init` (f) / `iinit` (i); `mean` divides by the
 * element count. `map` / `imap` (may be NULL) transform each element
 * before it is combined (abs, square), `post` the double result (sqrt,
 * log). `in_double` computes integer inputs in double too (then truncated
 * on store), for reductions whose result is not an integer. */
typedef struct sm_reducer {
    double (*f)(double acc, double x);
    int64_t (*i)(int64_t acc, int64_t x);
    int first;
    int mean;
    double init;
    int64_t iinit;
    double (*map)(double x);
    int64_t (*imap)(int64_t x);
    double (*post)(double acc);
    int in_double;
} sm_reducer;

/* Reduces input 0 over the axes (input 1, else the `axes` attribute; none:
 * all, or none with noop_with_empty_axes) into output 0. */
smelt_status sm_ref_reduce_run(const sm_kargs *a, const sm_reducer *rd);

#endif
