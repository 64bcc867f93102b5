#!/usr/bin/env python3
"""Coefficients of src/noise/activation.cpp's erfcx (the exact GELU's vectorised erfc).

(1 + 2z) erfcx(z), erfcx(z) = e^{z^2} erfc(z), is smooth on z in [0, inf) and tends to 2/sqrt(pi); in
t = (z - 3)/(z + 3), which maps [0, inf) onto [-1, 1), it is analytic near [-1, 1], so its Chebyshev
interpolant converges geometrically: 25 terms reach 1e-17. Computed here at 50 digits (mpmath), turned into
monomial coefficients (all below 1.3 in size, so Horner in double loses nothing) and printed as C++.
Prints the largest relative error of double Horner against the 50-digit function on a grid of z.
Run: python3 doc/erfcx_fit.py  (needs python3-mpmath; not part of the build).
"""
import mpmath as mp

mp.mp.dps = 50
K, TERMS, NODES = 3, 25, 80


def h(z):
    return (1 + 2 * z) * mp.exp(z * z) * mp.erfc(z)


def chebyshev(n, m):
    nodes = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / m) for j in range(m)]
    vals = [h(K * (1 + t) / (1 - t)) for t in nodes]
    c = [2 * mp.fsum(vals[j] * mp.cos(mp.pi * i * (j + mp.mpf(1) / 2) / m) for j in range(m)) / m for i in range(n)]
    c[0] /= 2
    return c


def monomial(c):
    T = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    while len(T) < len(c):
        a = [mp.mpf(0)] + [2 * v for v in T[-1]]
        b = T[-2] + [mp.mpf(0)] * (len(a) - len(T[-2]))
        T.append([x - y for x, y in zip(a, b)])
    out = [mp.mpf(0)] * len(c)
    for ci, Ti in zip(c, T):
        for j, v in enumerate(Ti):
            out[j] += ci * v
    return out


def main():
    c = chebyshev(TERMS + 1, NODES)
    dropped, c = c[TERMS], c[:TERMS]
    m = [float(v) for v in monomial(c)]
    worst = 0.0
    for i in range(6001):
        z = 30.0 * i / 6000
        t = (z - K) / (z + K)
        p = 0.0
        for a in reversed(m):
            p = p * t + a
        exact = h(K * (1 + mp.mpf(t)) / (1 - mp.mpf(t)))
        worst = max(worst, abs(float((p - exact) / exact)))
    print(f"// dropped Chebyshev term {float(abs(dropped)):.1e}; Horner in double within {worst / 2.220446049250313e-16:.2f} ulp")
    print("constexpr double kErfcxPoly[%d] = {" % TERMS)
    for i in range(0, TERMS, 3):
        print("    " + " ".join(f"{v:.17e}," for v in m[i:i + 3]))
    print("};")


if __name__ == "__main__":
    main()
