// exp of non-positive arguments (the shifted logits of an online softmax), written so the compiler
// vectorises loops over it: Cody-Waite reduction x = k ln2 + r, a degree-13 Taylor polynomial on
// |r| <= ln2/2 (truncation < 1.2e-16 relative), 2^k assembled from bits. Within 2 ulp of std::exp and
// the same bits on every machine; NaN in -> NaN out; arguments below -708 give 0.
#pragma once

#include <cstdint>
#include <cstring>

namespace tokdyn {

inline double exp_nonpositive(double v) {
  constexpr double log2e = 1.4426950408889634074, ln2_hi = 6.93147180369123816490e-01,
                   ln2_lo = 1.90821492927058770002e-10, shifter = 6755399441055744.0;  // 1.5 * 2^52
  constexpr std::int64_t shifter_bits = 0x4338000000000000;
  const double a = v < -708.0 ? -708.0 : v;  // keeps 2^k normal; NaN passes through
  const double t = a * log2e + shifter;       // rounds to the nearest integer k, held in t's low bits
  const double k = t - shifter;
  const double r = (a - k * ln2_hi) - k * ln2_lo;
  // Horner on 1/j!, j = 13..0.
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600;
  p = p * r + 1.0 / 39916800;
  p = p * r + 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  std::int64_t tb;
  std::memcpy(&tb, &t, sizeof t);
  const std::int64_t bits = (tb - shifter_bits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return v < -708.0 ? 0.0 : p * scale;
}

}  // namespace tokdyn
