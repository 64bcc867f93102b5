// exp of non-positive arguments (the shifted logits of an online softmax), written so the compiler
// vectorises loops over it: Cody-Waite reduction x = k ln2 + r, a degree-13 Taylor polynomial on
// |r| <= ln2/2 (truncation < 1.2e-16 relative), 2^k assembled from bits. Within 2 ulp of std::exp and
// the same bits on every machine (Horner by std::fma, exactly rounded wherever it runs: one instruction on
// x86-64-v3 and later, half the operations of a multiply and an add); NaN in -> NaN out; arguments below -708
// give 0. expm1 (E_beta's pair term) from the same reduction.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tokdyn {

namespace detail {
// Cody-Waite reduction v = k ln2 + r (|r| <= ln2/2, a clamped at -708 so 2^k stays normal), and
// q(r) = (e^r - 1) / r = sum_{j=1..13} r^{j-1} / j! by Horner (truncation < 1.2e-16 relative).
struct ReducedExp {
  double r, q, scale;  // e^v = scale (1 + r q)
};
inline ReducedExp reduce_exp(double v) {
  constexpr double log2e = 1.4426950408889634074, ln2_hi = 6.93147180369123816490e-01,
                   ln2_lo = 1.90821492927058770002e-10, shifter = 6755399441055744.0;  // 1.5 * 2^52
  constexpr std::int64_t shifter_bits = 0x4338000000000000;
  const double a = v < -708.0 ? -708.0 : v;  // keeps 2^k normal; NaN passes through
  const double t = a * log2e + shifter;       // rounds to the nearest integer k, held in t's low bits
  const double k = t - shifter;
  const double r = (a - k * ln2_hi) - k * ln2_lo;
  double p = 1.0 / 6227020800.0;
  p = std::fma(p, r, 1.0 / 479001600);
  p = std::fma(p, r, 1.0 / 39916800);
  p = std::fma(p, r, 1.0 / 3628800);
  p = std::fma(p, r, 1.0 / 362880);
  p = std::fma(p, r, 1.0 / 40320);
  p = std::fma(p, r, 1.0 / 5040);
  p = std::fma(p, r, 1.0 / 720);
  p = std::fma(p, r, 1.0 / 120);
  p = std::fma(p, r, 1.0 / 24);
  p = std::fma(p, r, 1.0 / 6);
  p = std::fma(p, r, 0.5);
  p = std::fma(p, r, 1.0);
  std::int64_t tb;
  std::memcpy(&tb, &t, sizeof t);
  const std::int64_t bits = (tb - shifter_bits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return {r, p, scale};
}
}  // namespace detail

inline double exp_nonpositive(double v) {
  const detail::ReducedExp e = detail::reduce_exp(v);
  return v < -708.0 ? 0.0 : (e.q * e.r + 1.0) * e.scale;
}

// e^v - 1 for v <= 0 (and round-off above it: v < 0.34), the per-pair term of E_beta: 2^k (r q) + (2^k - 1),
// so no cancellation near v = 0 (k = 0 there: the result is r q). Within 3 ulp of std::expm1, vectorisable;
// below -708 gives -1; NaN in -> NaN out.
inline double expm1_nonpositive(double v) {
  const detail::ReducedExp e = detail::reduce_exp(v);
  return v < -708.0 ? -1.0 : e.scale * (e.r * e.q) + (e.scale - 1.0);
}

// e^v for v <= 0 in float (the half ring's float32 tiles: a pair weight is e^{(c g - h_i) - h_j}): the same
// reduction with float constants (ln2_hi has 16 bits, so k ln2_hi is exact for |k| <= 126) and q of degree 6
// (truncation < 6e-9 relative on |r| <= ln2/2, a tenth of float's unit round-off). Within 2 ulp of
// std::exp rounded to float, eight lanes to a 256-bit vector, the same bits on every machine; arguments below
// -87.3 give 0 (2^k stays normal), NaN in -> NaN out.
inline float exp_nonpositive_float(float v) {
  constexpr float log2e = 1.44269504088896341f, ln2_hi = 0.693145751953125f, ln2_lo = 1.428606820309417232e-6f,
                  shifter = 12582912.0f;  // 1.5 * 2^23
  constexpr std::int32_t shifter_bits = 0x4b400000;
  const float a = v < -87.3f ? -87.3f : v;
  const float t = a * log2e + shifter;  // rounds to the nearest integer k, held in t's low bits
  const float k = t - shifter;
  const float r = (a - k * ln2_hi) - k * ln2_lo;
  float q = 1.0f / 5040;
  q = std::fma(q, r, 1.0f / 720);
  q = std::fma(q, r, 1.0f / 120);
  q = std::fma(q, r, 1.0f / 24);
  q = std::fma(q, r, 1.0f / 6);
  q = std::fma(q, r, 0.5f);
  q = std::fma(q, r, 1.0f);
  std::int32_t tb;
  std::memcpy(&tb, &t, sizeof t);
  const std::int32_t bits = (tb - shifter_bits + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return v < -87.3f ? 0.0f : std::fma(q, r, 1.0f) * scale;
}

// tanh |x| = -expm1(-2|x|) / (2 + expm1(-2|x|)): no cancellation near 0, 1 for large |x|. Vectorisable (the
// MLP's activations and GPT's GELU loop over rows with it), within a few ulp of std::tanh, and the same bits on
// every machine and vector width.
inline double tanh_v(double x) {
  const double e = expm1_nonpositive(-2 * std::abs(x));
  return std::copysign(-e / (2 + e), x);
}

}  // namespace tokdyn
