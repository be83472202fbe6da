/*
 * reduce_mapped.c - reference kernels of ReduceProd, ReduceL1, ReduceL2,
 * ReduceSumSquare, ReduceLogSum and ReduceLogSumExp, on the loop of
 * reduce.c (sm_ref_reduce_run): each is a map of the elements, a fold and
 * a final function.
 *
 * Floats accumulate in double; ReduceProd, ReduceL1 and ReduceSumSquare
 * keep integers exact in int64 (wrapping on overflow); the others compute
 * integers in double and truncate the result, as ONNX's reference does.
 * An empty reduction gives the fold's start: 1 for Prod, 0 for the sums
 * (so -inf for LogSum), -inf for LogSumExp.
 */
#include <math.h>

#include "kernels/ops.h"
#include "kernels/ref/pointwise.h"

static double rf_add(double acc, double x)
{
    return acc + x;
}

static int64_t ri_add(int64_t acc, int64_t x)
{
    return (int64_t)((uint64_t)acc + (uint64_t)x);
}

static double rf_mul(double acc, double x)
{
    return acc * x;
}

static int64_t ri_mul(int64_t acc, int64_t x)
{
    return (int64_t)((uint64_t)acc * (uint64_t)x);
}

/* log(exp(acc) + exp(x)) without overflow: the larger term is factored
 * out, so a fold over any values stays finite where the result is. */
static double rf_logaddexp(double acc, double x)
{
    if (isnan(acc) || isnan(x))
        return NAN;
    if (acc == x)
        return acc + log(2.0); /* also +-inf, where acc - x is nan */
    double hi = acc > x ? acc : x, lo = acc > x ? x : acc;
    return hi + log1p(exp(lo - hi));
}

static double map_abs(double x)
{
    return fabs(x);
}

static int64_t imap_abs(int64_t x)
{
    return x < 0 ? (int64_t)(0u - (uint64_t)x) : x;
}

static double map_square(double x)
{
    return x * x;
}

static int64_t imap_square(int64_t x)
{
    return ri_mul(x, x);
}

static double post_sqrt(double x)
{
    return sqrt(x);
}

static double post_log(double x)
{
    return log(x);
}

/* Defines sm_ref_<name> as the reduction of the given sm_reducer fields
 * (the unnamed ones zero). */
#define REDUCE2_KERNEL(name, ...)                                              \
    smelt_status sm_ref_##name(const sm_kargs *a)                              \
    {                                                                          \
        static const sm_reducer rd = {__VA_ARGS__};                            \
        return sm_ref_reduce_run(a, &rd);                                      \
    }

REDUCE2_KERNEL(reduceprod, .f = rf_mul, .i = ri_mul, .init = 1, .iinit = 1)
REDUCE2_KERNEL(reducel1, .f = rf_add, .i = ri_add, .map = map_abs,
               .imap = imap_abs)
REDUCE2_KERNEL(reducel2, .f = rf_add, .map = map_square, .post = post_sqrt,
               .in_double = 1)
REDUCE2_KERNEL(reducesumsquare, .f = rf_add, .i = ri_add, .map = map_square,
               .imap = imap_square)
REDUCE2_KERNEL(reducelogsum, .f = rf_add, .post = post_log, .in_double = 1)
REDUCE2_KERNEL(reducelogsumexp, .f = rf_logaddexp, .init = -INFINITY,
               .in_double = 1)
