/*
 * vmath.inc.h - vectorized exp, tanh, erf, sigmoid, gelu and the
 * activations of the fused epilogues, written once over the vocabulary of
 * a simd_*.h header and compiled per ISA (included by isa_*.c).
 *
 * Accuracy, measured against double-precision libm by test_cpu_gemm
 * (test_vmath_accuracy) over [-30, 30] plus tiny arguments; relative
 * errors where the exact value exceeds 1e-30 (measured max in brackets):
 *   exp        relative <= 3e-7 (1.2e-7); x below -87.34 gives 0, above
 *              ln(FLT_MAX) +inf, above
 *              88.72 +inf, NaN stays NaN
 *   tanh       relative <= 3e-7 (1.3e-7)
 *   erf        relative <= 1e-6 (6.1e-7), absolute <= 3e-7 (2.0e-7)
 *   sigmoid    relative <= 3e-7 (1.8e-7; AVX-512, whose reciprocal is an
 *              estimate and a Newton step, 1.9e-7)
 *   silu       relative <= 3e-7 (1.9e-7; AVX-512 2.2e-7)
 *   gelu       relative <= 3e-5 (8.4e-6; 3.3e-6 for |x| < 5), computed as
 *              x Phi(-|x|) or x (1 - Phi(-|x|)) so the left tail keeps
 *              its digits; the worst case is the far tail (x < -9,
 *              values < 1e-18), where rounding x^2 to f32 adds its part
 *   gelu_tanh  relative <= 3e-5 (1.0e-5), as x sigmoid(2u): the same tail
 * (The double reference 0.5 x (1 + erf(x/sqrt2)) itself cancels there.)
 */

/* The shared core: e^r for r = xc - n ln2 (n = round(xc / ln2)), ln2 in
 * two parts so r keeps its digits. */
VINL V v_exp_r(V xc, V n)
{
    V r = v_fnma(n, v_set1(0.693359375f), xc);
    r = v_fnma(n, v_set1(-2.12194440e-4f), r);
    V p = v_set1(1.9875691500e-4f);
    p = v_fma(p, r, v_set1(1.3981999507e-3f));
    p = v_fma(p, r, v_set1(8.3334519073e-3f));
    p = v_fma(p, r, v_set1(4.1665795894e-2f));
    p = v_fma(p, r, v_set1(1.6666665459e-1f));
    p = v_fma(p, r, v_set1(5.0000001201e-1f));
    return v_fma(p, v_mul(r, r), v_add(r, v_set1(1.0f)));
}

/* e^x: x = n ln2 + r with |r| <= ln2 / 2, e^r by a degree-6 polynomial
 * (Cephes expf), scaled by 2^n through the exponent bits (in two steps,
 * so n = 128 near the top of the range does not overflow the exponent).
 * Above ln(FLT_MAX) the result is +inf, below -87.34 it is 0 (the exact
 * value is then a denormal under 1.2e-38); NaN stays NaN (the clamps put
 * x second, where max/min return a NaN operand). */
VINL V v_exp(V x)
{
    V lo = v_set1(-87.33654f), hi = v_set1(88.72284f);
    V xc = v_min(hi, v_max(lo, x));
    V n = v_round(v_mul(xc, v_set1(1.44269504088896341f)));
    V p = v_exp_r(xc, n);
    V n1 = v_min(v_set1(127.0f), n);
    V y = v_mul(v_mul(p, v_pow2i(n1)), v_pow2i(v_sub(n, n1)));
    y = v_sel_lt(x, lo, v_zero(), y);
    return v_sel_lt(hi, x, v_set1(__builtin_inff()), y);
}

/* e^x for x <= 1 (no overflow to handle: one 2^n scale, no upper
 * clamp), as v_exp otherwise. */
VINL V v_exp_low(V x)
{
    V lo = v_set1(-87.33654f);
    V xc = v_max(lo, x);
    V n = v_round(v_mul(xc, v_set1(1.44269504088896341f)));
    return v_sel_lt(x, lo, v_zero(), v_mul(v_exp_r(xc, n), v_pow2i(n)));
}

/* 1/d: the ISA's reciprocal estimate and one Newton step, cheaper than a
 * division (exact to a few ulps on AVX-512's 14-bit estimate). */
VINL V v_rcp_nr(V d)
{
    V t = v_rcp_est(d);
    return v_mul(t, v_fnma(d, t, v_set1(2.0f)));
}

/* 1 / (1 + e^-x), the activation of every EfficientNet-style layer
 * (SiLU), so made cheap: -x is clamped to [-87, 87] first, where e^-x
 * is a normal float and needs one 2^n scale and no range selects
 * (sigmoid(-87) = 1.6e-38 stands for the denormal-small values below,
 * sigmoid(87) rounds to 1 like every larger x); with AVX-512 the
 * reciprocal is the ISA's 14-bit estimate and one Newton step (relative
 * error about 2^-28 before rounding) instead of a division, which costs
 * several times an FMA there. AVX2's 12-bit estimate would leave 1e-7
 * after the step, too much next to exp's own error: it divides. NaN
 * stays NaN (x second in the clamps). */
VINL V v_sigmoid(V x)
{
    V t = v_min(v_set1(87.0f), v_max(v_set1(-87.0f), v_sub(v_zero(), x)));
    V n = v_round(v_mul(t, v_set1(1.44269504088896341f)));
    V d = v_fma(v_exp_r(t, n), v_pow2i(n), v_set1(1.0f));
    if (VL < 16)
        return v_div(v_set1(1.0f), d);
    return v_rcp_nr(d);
}

/* tanh: an odd polynomial below |x| = 0.625 (Cephes tanhf), otherwise
 * 1 - 2 / (e^2|x| + 1) with x's sign. */
VINL V v_tanh(V x)
{
    V ax = v_abs(x);
    V z = v_mul(x, x);
    V p = v_set1(-5.70498872745e-3f);
    p = v_fma(p, z, v_set1(2.06390887954e-2f));
    p = v_fma(p, z, v_set1(-5.37397155531e-2f));
    p = v_fma(p, z, v_set1(1.33314422036e-1f));
    p = v_fma(p, z, v_set1(-3.33332819422e-1f));
    V small = v_fma(v_mul(p, z), x, x);
    V a9 = v_min(v_set1(9.0f), ax); /* NaN stays NaN */
    V e = v_exp(v_add(a9, a9));
    V big = v_sub(v_set1(1.0f), v_div(v_set1(2.0f), v_add(e, v_set1(1.0f))));
    big = v_copysign(big, x);
    return v_sel_lt(ax, v_set1(0.625f), small, big);
}

/* erfc(z) for z >= 0 (Numerical Recipes erfcc: relative error below
 * 1.2e-7 for every z): t e^(-z^2 + P(t)) with t = 1 / (1 + z/2). */
VINL V v_erfc_pos(V z)
{
    /* t = 1 / d, d >= 1: the ISA's estimate and one Newton step, cheaper
     * than a division and as exact for the polynomial below. z is capped
     * at 10 first (erfc(10) is 2e-45, 0 in f32 either way), so that
     * z = inf does not make the step inf * 0; NaN stays NaN. */
    z = v_min(v_set1(10.0f), z);
    V d = v_fma(z, v_set1(0.5f), v_set1(1.0f));
    V t = v_rcp_nr(d);
    V p = v_set1(0.17087277f);
    p = v_fma(p, t, v_set1(-0.82215223f));
    p = v_fma(p, t, v_set1(1.48851587f));
    p = v_fma(p, t, v_set1(-1.13520398f));
    p = v_fma(p, t, v_set1(0.27886807f));
    p = v_fma(p, t, v_set1(-0.18628806f));
    p = v_fma(p, t, v_set1(0.09678418f));
    p = v_fma(p, t, v_set1(0.37409196f));
    p = v_fma(p, t, v_set1(1.00002368f));
    p = v_fma(p, t, v_set1(-1.26551223f));
    p = v_fnma(z, z, p);
    return v_mul(t, v_exp_low(p));
}

/* erf: 1 - erfc(|x|) with x's sign, or an odd Taylor polynomial near 0
 * where 1 - erfc would cancel. */
VINL V v_erf(V x)
{
    V ax = v_abs(x);
    V big = v_copysign(v_sub(v_set1(1.0f), v_erfc_pos(ax)), x);
    V z = v_mul(x, x);
    /* 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216) */
    V p = v_set1(1.0f / 216);
    p = v_fma(p, z, v_set1(-1.0f / 42));
    p = v_fma(p, z, v_set1(1.0f / 10));
    p = v_fma(p, z, v_set1(-1.0f / 3));
    p = v_fma(p, z, v_set1(1.0f));
    V small = v_mul(v_mul(p, x), v_set1(1.12837916709551257f));
    return v_sel_lt(ax, v_set1(0.25f), small, big);
}

/*
 * GELU, x Phi(x), with Q = Phi(-|x|) = erfc(|x|/sqrt2)/2: x Q for x < 0
 * and x (1 - Q) for x >= 0, so the left tail keeps its digits. Q is
 * t 2^(P(t) - c x^2), c = log2(e)/2, t = 1/(1 + 0.28|x|): t carries Q's
 * 1/|x| decay and P is a degree-6 polynomial in t (a minimax fit of
 * log2(Q/t) + c x^2 on |x| <= 11.8, scripts/fit_gelu.py; error 2.8e-6
 * in log2 units, 1.9e-6 relative in Q), and
 * 2^w is 2^round(w) times a degree-5 polynomial of the rest (2^f on
 * [-1/2, 1/2], relative error 6e-8). One exponential and no exact
 * division: about two thirds of the work of x erfc(.)/2 with erfc to f32
 * precision, which this needs only to 1e-5 (about 30 vector operations
 * instead of 45, the activation of every BERT feed-forward layer). |x| is
 * capped at 13, so the exponent stays above -126 and an infinite x does
 * not make t's Newton step inf * 0, and Q is 0 there (Q(13) = 6e-39; x
 * times a capped Q would grow with x): GELU(-inf) is NaN as in the
 * reference, NaN stays NaN. Against double erfc over test_vmath_accuracy's
 * grid: relative error 8.4e-6 at most (in the far left tail, x < -9,
 * where rounding c x^2 to f32 adds its part), 3.3e-6 for |x| < 5.
 */
VINL V v_gelu(V x)
{
    V a = v_min(v_set1(13.0f), v_abs(x));
    V d = v_fma(a, v_set1(0.28f), v_set1(1.0f));
    V t = v_rcp_nr(d);
    V p = v_set1(0.345563918f);
    p = v_fma(p, t, v_set1(-1.1015116f));
    p = v_fma(p, t, v_set1(0.90879643f));
    p = v_fma(p, t, v_set1(-0.116687998f));
    p = v_fma(p, t, v_set1(0.692071378f));
    p = v_fma(p, t, v_set1(1.43370235f));
    p = v_fma(p, t, v_set1(-3.16193175f));
    V w = v_fnma(a, v_mul(a, v_set1(0.721347511f)), p);
    V n = v_round(w);
    V f = v_sub(w, n);
    V e = v_set1(0.00132709648f);
    e = v_fma(e, f, v_set1(0.00967937615f));
    e = v_fma(e, f, v_set1(0.0555076823f));
    e = v_fma(e, f, v_set1(0.24022004f));
    e = v_fma(e, f, v_set1(0.693146884f));
    e = v_fma(e, f, v_set1(1.00000012f));
    V q = v_mul(v_mul(e, t), v_pow2i(n));
    q = v_sel_lt(a, v_set1(13.0f), q, v_zero());
    return v_mul(x, v_sel_lt(x, v_zero(), q, v_sub(v_set1(1.0f), q)));
}

/* x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3). */
VINL V v_gelu_tanh(V x)
{
    V x3 = v_mul(v_mul(x, x), x);
    V u2 = v_mul(v_fma(x3, v_set1(0.044715f), x),
                 v_set1(2.0f * 0.79788456080286535588f));
    return v_mul(x, v_sigmoid(u2));
}

/* ---- the vector column of core/act.def: v(x, alpha, beta) -------------- */

VINL V v_act_none(V x, V a, V b)
{
    (void)a, (void)b;
    return x;
}

VINL V v_act_relu(V x, V a, V b)
{
    (void)a, (void)b;
    return v_max(v_zero(), x);
}

VINL V v_act_relu6(V x, V a, V b)
{
    (void)a, (void)b;
    return v_min(v_set1(6.0f), v_max(v_zero(), x));
}

VINL V v_act_clip(V x, V a, V b)
{
    return v_min(b, v_max(a, x));
}

VINL V v_act_sigmoid(V x, V a, V b)
{
    (void)a, (void)b;
    return v_sigmoid(x);
}

VINL V v_act_silu(V x, V a, V b)
{
    (void)a, (void)b;
    return v_mul(x, v_sigmoid(x));
}

VINL V v_act_gelu(V x, V a, V b)
{
    (void)a, (void)b;
    return v_gelu(x);
}

VINL V v_act_gelu_tanh(V x, V a, V b)
{
    (void)a, (void)b;
    return v_gelu_tanh(x);
}

VINL V v_act_leakyrelu(V x, V a, V b)
{
    (void)b;
    return v_sel_lt(x, v_zero(), v_mul(x, a), x);
}

VINL V v_act_tanh(V x, V a, V b)
{
    (void)a, (void)b;
    return v_tanh(x);
}

/* The activation of an epilogue (an sm_act_kind), applied to a whole
 * vector; kind is a constant in the bodies specialized per activation,
 * where the switch folds away. Not an activation: x unchanged. */
VINL V v_act(V x, int kind, V a, V b)
{
    switch (kind) {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    case SM_ACT_##ID:                                                          \
        return vector(x, a, b);
#include "core/act.def"
#undef ACT
    default: return x;
    }
}
