// IEEE binary16 (F16) and bfloat16 (BF16) <-> double, exactly: model files store weights in these
// 16-bit formats. Decoding is exact; encoding rounds once, to nearest with ties to even, from the double.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace tokdyn {

namespace half_detail {

// A 16-bit float with 1 sign bit, E exponent bits (bias 2^(E-1) - 1) and M mantissa bits.
template <int E, int M>
struct Format {
  static constexpr int bias = (1 << (E - 1)) - 1;
  static constexpr std::uint16_t exponent_mask = ((1u << E) - 1) << M;
  static constexpr std::uint16_t mantissa_mask = (1u << M) - 1;
  static constexpr std::uint16_t quiet_nan = exponent_mask | (1u << (M - 1));

  static double decode(std::uint16_t bits) {
    const bool negative = bits & 0x8000u;
    const int field = (bits & exponent_mask) >> M;
    const int mantissa = bits & mantissa_mask;
    double magnitude;
    if (field == (1 << E) - 1)
      magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else if (field == 0)  // subnormal: mantissa * 2^(1 - bias - M)
      magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - M);
    else
      magnitude = std::ldexp(static_cast<double>((1 << M) + mantissa), field - bias - M);
    return negative ? -magnitude : magnitude;
  }

  // Round-to-nearest-even straight from the double (never through float: that would round twice).
  static std::uint16_t encode(double x) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
    if (std::isnan(x)) return sign | quiet_nan;
    const double a = std::fabs(x);
    if (a == 0) return sign;
    if (std::isinf(a)) return sign | exponent_mask;
    int k = 0;
    std::frexp(a, &k);
    const int e = k - 1;  // 2^e <= a < 2^(e+1)
    if (e > bias) return sign | exponent_mask;
    // Units of the last place of the target: 2^(e - M) for normals, 2^(1 - bias - M) below 2^(1 - bias).
    const int ulp_exponent = (e < 1 - bias ? 1 - bias : e) - M;
    // a / ulp is exact (a power-of-two scaling); nearbyint rounds it to nearest-even (default mode).
    const double units = std::nearbyint(std::ldexp(a, -ulp_exponent));
    std::uint32_t bits;
    if (e < 1 - bias)
      bits = static_cast<std::uint32_t>(units);  // subnormal; 2^M units is the smallest normal's encoding
    else  // units in [2^M, 2^(M+1)]: the top value carries into the exponent, and into infinity past the max
      bits = (static_cast<std::uint32_t>(e + bias) << M) + static_cast<std::uint32_t>(units) - (1u << M);
    if (bits >= exponent_mask) bits = exponent_mask;
    return static_cast<std::uint16_t>(sign | bits);
  }
};

using F16 = Format<5, 10>;
using BF16 = Format<8, 7>;

}  // namespace half_detail

inline double f16_to_double(std::uint16_t bits) { return half_detail::F16::decode(bits); }
inline double bf16_to_double(std::uint16_t bits) { return half_detail::BF16::decode(bits); }
// Nearest F16 / BF16 (ties to even); beyond the largest finite value (after rounding): infinity; NaN: quiet NaN.
inline std::uint16_t double_to_f16(double x) { return half_detail::F16::encode(x); }
inline std::uint16_t double_to_bf16(double x) { return half_detail::BF16::encode(x); }

}  // namespace tokdyn
