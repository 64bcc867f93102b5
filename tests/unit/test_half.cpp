// F16 / BF16 <-> double (core/numerics/half.hpp): known bit patterns, every pattern round-trips, ties to even,
// rounding once from the double, and agreement with the compiler's own _Float16 and float conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tokdyn/core/numerics/half.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {
namespace {

TEST(Half, DecodesKnownF16Patterns) {
  EXPECT_EQ(f16_to_double(0x0000), 0.0);
  EXPECT_TRUE(std::signbit(f16_to_double(0x8000)));
  EXPECT_EQ(f16_to_double(0x3c00), 1.0);
  EXPECT_EQ(f16_to_double(0xc000), -2.0);
  EXPECT_EQ(f16_to_double(0x3555), 0.333251953125);
  EXPECT_EQ(f16_to_double(0x7bff), 65504.0);                        // largest finite
  EXPECT_EQ(f16_to_double(0x0400), std::ldexp(1.0, -14));           // smallest normal
  EXPECT_EQ(f16_to_double(0x0001), std::ldexp(1.0, -24));           // smallest subnormal
  EXPECT_EQ(f16_to_double(0x03ff), std::ldexp(1023.0, -24));        // largest subnormal
  EXPECT_EQ(f16_to_double(0x7c00), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f16_to_double(0xfc00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_double(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_to_double(0x7c01)));
}

TEST(Half, DecodesKnownBF16Patterns) {
  EXPECT_EQ(bf16_to_double(0x3f80), 1.0);
  EXPECT_EQ(bf16_to_double(0xc000), -2.0);
  EXPECT_EQ(bf16_to_double(0x4049), 3.140625);
  EXPECT_EQ(bf16_to_double(0x7f7f), std::ldexp(255.0, 120));        // largest finite, 3.3895e38
  EXPECT_EQ(bf16_to_double(0x0080), std::ldexp(1.0, -126));         // smallest normal
  EXPECT_EQ(bf16_to_double(0x0001), std::ldexp(1.0, -133));         // smallest subnormal
  EXPECT_EQ(bf16_to_double(0x7f80), std::numeric_limits<double>::infinity());
  EXPECT_EQ(bf16_to_double(0xff80), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_double(0x7fc0)));
}

// BF16 is the top half of a float: decoding must agree with the float for every pattern.
TEST(Half, BF16IsTheTopHalfOfAFloat) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const std::uint32_t bits = b << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    const double v = bf16_to_double(static_cast<std::uint16_t>(b));
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(v));
    else
      EXPECT_EQ(v, static_cast<double>(f)) << std::hex << b;
  }
}

TEST(Half, EveryPatternRoundTrips) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const double f = f16_to_double(h), g = bf16_to_double(h);
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(f16_to_double(double_to_f16(f))));
    else
      EXPECT_EQ(double_to_f16(f), h) << std::hex << b;
    if (std::isnan(g))
      EXPECT_TRUE(std::isnan(bf16_to_double(double_to_bf16(g))));
    else
      EXPECT_EQ(double_to_bf16(g), h) << std::hex << b;
  }
}

TEST(Half, RoundsToNearestEven) {
  const double u = std::ldexp(1.0, -10);  // F16 ulp at 1
  EXPECT_EQ(double_to_f16(1 + u / 2), 0x3c00);                      // tie -> even (down)
  EXPECT_EQ(double_to_f16(1 + 3 * u / 2), 0x3c02);                  // tie -> even (up)
  EXPECT_EQ(double_to_f16(1 + u / 2 + std::ldexp(1.0, -40)), 0x3c01);  // just above the tie
  EXPECT_EQ(double_to_f16(1 + u / 2 - std::ldexp(1.0, -40)), 0x3c00);
  EXPECT_EQ(double_to_f16(-(1 + 3 * u / 2)), 0xbc02);
  EXPECT_EQ(double_to_f16(65519.0), 0x7bff);                        // below the overflow tie
  EXPECT_EQ(double_to_f16(65520.0), 0x7c00);                        // tie with 2^16 -> even = infinity
  EXPECT_EQ(double_to_f16(1e300), 0x7c00);
  EXPECT_EQ(double_to_f16(-1e300), 0xfc00);
  // Subnormals: ties between multiples of 2^-24.
  EXPECT_EQ(double_to_f16(std::ldexp(1.0, -25)), 0x0000);           // tie with 0 -> 0
  EXPECT_EQ(double_to_f16(std::ldexp(3.0, -25)), 0x0002);           // tie -> even
  EXPECT_EQ(double_to_f16(std::ldexp(1.0, -25) * (1 + 1e-9)), 0x0001);
  EXPECT_EQ(double_to_f16(std::ldexp(2047.0, -25)), 0x0400);        // rounds up into the smallest normal
  EXPECT_EQ(double_to_f16(1e-300), 0x0000);
  EXPECT_EQ(double_to_f16(-1e-300), 0x8000);
  EXPECT_EQ(double_to_f16(std::numeric_limits<double>::quiet_NaN()) & 0x7c00, 0x7c00);

  const double v = std::ldexp(1.0, -7);  // BF16 ulp at 1
  EXPECT_EQ(double_to_bf16(1 + v / 2), 0x3f80);
  EXPECT_EQ(double_to_bf16(1 + 3 * v / 2), 0x3f82);
  EXPECT_EQ(double_to_bf16(std::ldexp(1.0, -134)), 0x0000);
  EXPECT_EQ(double_to_bf16(std::ldexp(3.0, -134)), 0x0002);
  EXPECT_EQ(double_to_bf16(std::ldexp(511.0, 119)), 0x7f80);       // halfway past the max -> infinity
  EXPECT_EQ(double_to_bf16(std::ldexp(510.9, 119)), 0x7f7f);
}

// Through a float first, 1 + 2^-8 + 2^-30 would become 1 + 2^-8 (a tie) and then 1.0: rounding twice.
TEST(Half, RoundsOnceFromTheDouble) {
  EXPECT_EQ(double_to_bf16(1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), 0x3f81);
  EXPECT_EQ(double_to_f16(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
}

// Independent references: float -> bf16 by the integer RNE trick, and the compiler's _Float16.
TEST(Half, AgreesWithReferenceConversions) {
  RandomStream rng(7, Purpose::test);
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const auto w = rng.bits(0, i, 0);
    // Random sign, exponents across the whole F16 and BF16 ranges and beyond, random mantissa.
    const double m = 1 + static_cast<double>(w[0] >> 11) * std::ldexp(1.0, -53);
    [[maybe_unused]] const int e16 = static_cast<int>(w[1] % 48) - 30;
    const int e32 = static_cast<int>(w[2] % 290) - 145;
    const double s = (w[3] & 1) ? -1.0 : 1.0;
    const float f = static_cast<float>(s * std::ldexp(m, e32));
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (!std::isinf(f)) {
      const auto expect = static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
      EXPECT_EQ(double_to_bf16(f), expect) << f;
    }
#if defined(__FLT16_MAX__)
    const double x = s * std::ldexp(m, e16);
    const _Float16 h = static_cast<_Float16>(x);
    std::uint16_t hb;
    std::memcpy(&hb, &h, 2);
    EXPECT_EQ(double_to_f16(x), hb) << x;
#endif
  }
}

}  // namespace
}  // namespace tokdyn
