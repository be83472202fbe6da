#!/usr/bin/python3
"""The coefficients of v_gelu (src/kernels/cpu/vmath.inc.h) and their error.

GELU(x) = x Q for x < 0, x (1 - Q) for x >= 0, Q = Phi(-|x|), computed as
Q = t 2^(P(t) - c x^2), c = log2(e) / 2, t = 1 / (1 + p |x|). This fits P
(degree 6, minimax on |x| <= 11.8, where GELU's magnitude passes 1e-30)
and 2^f on [-1/2, 1/2] (degree 5, minimax relative) by linear programming
over dense grids, prints both as f32 literals, then runs the vector
code's arithmetic in numpy f32 (each FMA rounded once) over
test_vmath_accuracy's grid and prints the largest relative error against
double erfc, for the fit and for the coefficients vmath.inc.h holds
(CODE_P, CODE_E: an earlier run of the same fit; the linear program's
optimum is not unique, so a run may print other coefficients of the
same error). Needs numpy and scipy.

usage: /usr/bin/python3 scripts/fit_gelu.py [--p 0.28]
"""
import argparse

import numpy as np
from scipy.optimize import linprog
from scipy.special import erfc

C = np.log2(np.e) / 2
AFIT = 11.8
f32 = np.float32
# vmath.inc.h's v_gelu, lowest degree first
CODE_P = [-3.16193175, 1.43370235, 0.692071378, -0.116687998, 0.90879643,
          -1.1015116, 0.345563918]
CODE_E = [1.00000012, 0.693146884, 0.24022004, 0.0555076823, 0.00967937615,
          0.00132709648]


def minimax(xs, ys, deg, w):
    """Coefficients (lowest first) minimizing max |w (poly(xs) - ys)|."""
    v = np.vander(xs, deg + 1, increasing=True) * w[:, None]
    one = np.ones((len(xs), 1))
    a = np.vstack([np.hstack([v, -one]), np.hstack([-v, -one])])
    b = np.concatenate([ys * w, -ys * w])
    c = np.zeros(deg + 2)
    c[-1] = 1
    r = linprog(c, A_ub=a, b_ub=b, bounds=[(None, None)] * (deg + 1) +
                [(0, None)], method="highs")
    return r.x[:-1], r.x[-1]


def fma(a, b, c):
    return (a.astype(np.float64) * b + c).astype(f32)


def horner(cs, x):
    r = np.full_like(x, f32(cs[-1]))
    for k in cs[-2::-1]:
        r = fma(r, x, f32(k))
    return r


def gelu32(x, p, P, E):
    a = np.minimum(np.abs(x), f32(13))
    t = (1 / fma(a, f32(p), f32(1)).astype(np.float64)).astype(f32)
    w = fma(-a, (a * f32(C)).astype(f32), horner(P, t))
    n = np.round(w).astype(f32)
    e = horner(E, (w - n).astype(f32))
    q = ((e * t).astype(np.float64) * np.exp2(n.astype(np.float64)))
    q = np.where(a < 13, q.astype(f32), f32(0))
    return (x * np.where(x < 0, q, (f32(1) - q).astype(f32))).astype(f32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=float, default=0.28)
    p = ap.parse_args().p
    t = np.linspace(1 / (1 + AFIT * p), 1, 20000)
    a = (1 / t - 1) / p
    P, pe = minimax(t, np.log2(0.5 * erfc(a / np.sqrt(2)) / t) + C * a * a,
                    6, np.ones_like(t))
    f = np.linspace(-0.5, 0.5, 20001)
    E, ee = minimax(f, np.exp2(f), 5, np.exp2(-f))
    print("P (t^6 first):", ", ".join("%.9g" % f32(c) for c in P[::-1]))
    print("2^f (f^5 first):", ", ".join("%.9g" % f32(c) for c in E[::-1]))
    print("fit errors: P %.2g (log2 units), 2^f %.2g (relative)" % (pe, ee))
    x = np.concatenate([f32(-30) + np.arange(60001, dtype=f32) * f32(0.001),
                        (np.arange(200) - 100).astype(f32) * f32(1e-6)])
    want = 0.5 * x.astype(np.float64) * erfc(-x.astype(np.float64) /
                                               np.sqrt(2))
    m = np.abs(want) > 1e-30
    inner = np.abs(x[m]) < 5
    for what, cp, ce in (("this fit", P, E), ("vmath.inc.h", CODE_P, CODE_E)):
        rel = np.abs(gelu32(x, p, cp, ce) - want)[m] / np.abs(want[m])
        print("%s: relative error max %.3g (at x = %.3f), %.3g for |x| < 5"
              % (what, rel.max(), x[m][rel.argmax()], rel[inner].max()))


if __name__ == "__main__":
    main()
