/*
 * simd_scalar.h - the vector vocabulary of the kernel templates (*.inc.h)
 * for the portable path: V is one float (VL = 1), so every template
 * compiles to plain C that runs on any machine (the compiler may still
 * vectorize it with baseline SSE2). Partial vectors never occur (n < VL
 * means n = 0), but the functions handle n = 0 for completeness.
 */
#ifndef SM_SIMD_SCALAR_H
#define SM_SIMD_SCALAR_H

#include <math.h>

#define SM_ISA_SUFFIX scalar
#define VL 1

typedef float V;

#define VINL static inline

VINL V v_zero(void)
{
    return 0.0f;
}
VINL V v_set1(float x)
{
    return x;
}
VINL V v_load(const float *p)
{
    return *p;
}
VINL void v_store(float *p, V v)
{
    *p = v;
}
VINL V v_loadn(const float *p, int64_t n)
{
    return n > 0 ? *p : 0.0f;
}
VINL V v_loadn_fill(const float *p, int64_t n, float fill)
{
    return n > 0 ? *p : fill;
}
VINL void v_storen(float *p, V v, int64_t n)
{
    if (n > 0)
        *p = v;
}
VINL V v_add(V a, V b)
{
    return a + b;
}
VINL V v_sub(V a, V b)
{
    return a - b;
}
VINL V v_mul(V a, V b)
{
    return a * b;
}
VINL V v_div(V a, V b)
{
    return a / b;
}
VINL V v_rcp_est(V a)
{
    return 1.0f / a;
}
VINL V v_fma(V a, V b, V c)
{
    return a * b + c;
}
VINL V v_fnma(V a, V b, V c)
{
    return c - a * b;
}
/* Like maxps/minps: the second operand when either is NaN. */
VINL V v_max(V a, V b)
{
    return a > b ? a : b;
}
VINL V v_min(V a, V b)
{
    return a < b ? a : b;
}
VINL V v_sqrt(V a)
{
    return sqrtf(a);
}
VINL V v_abs(V a)
{
    return fabsf(a);
}
VINL V v_floor(V a)
{
    return floorf(a);
}
VINL V v_round(V a)
{
    return nearbyintf(a);
}
VINL V v_pow2i(V n)
{
    return n == n ? ldexpf(1.0f, (int)n) : n; /* (int)NaN is undefined */
}
VINL V v_sel_lt(V x, V y, V a, V b)
{
    return x < y ? a : b;
}
VINL V v_copysign(V m, V s)
{
    return copysignf(m, s);
}
VINL float v_hsum(V a)
{
    return a;
}
VINL float v_hmax(V a)
{
    return a;
}
VINL float v_hmin(V a)
{
    return a;
}
VINL void v_prefetch(const void *p)
{
    (void)p;
}
/* The even elements of the 2 floats a then b. */
VINL V v_even(V a, V b)
{
    (void)b;
    return a;
}

/* A 1 x 1 transpose: nothing to do. */
VINL void v_transpose(V r[1])
{
    (void)r;
}

#endif
