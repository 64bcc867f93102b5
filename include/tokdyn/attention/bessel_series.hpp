// The expansions of the kernel e^{b <x, y>} on spheres that the fast attention styles sum:
//   S^1:  e^{b cos s} = sum_{n in Z} I_n(b) e^{i n s}                    (modified Bessel functions),
//   S^2:  e^{b t}     = sum_{l >= 0} (2l + 1) i_l(b) P_l(t)                (Funk-Hecke; i_l(b) = sqrt(pi / 2b) I_{l+1/2}(b)).
// Both series are returned scaled by e^{-|b|}, truncated where the neglected tail (its terms at t = 1, the
// largest they get) is below a relative tolerance of their sum e^{|b|}. Signs of b < 0 are included:
// I_n(-b) = (-1)^n I_n(b), i_l(-b) = (-1)^l i_l(b).
#pragma once

#include <vector>

namespace tokdyn {

// s_n = e^{-|b|} I_n(b), n = 0..p, with the smallest p such that 2 sum_{n > p} I_n(|b|) < 1e-16 I_0(|b|).
std::vector<double> scaled_bessel_series(double b);

// s_l = e^{-|b|} i_l(b), l = 0..p, with the smallest p such that sum_{l > p} (2l + 1) i_l(|b|) < tolerance e^{|b|}.
std::vector<double> scaled_spherical_bessel_series(double b, double tolerance);

}  // namespace tokdyn
