// The scaled Bessel series of the Fourier attention: e^{-|b|} I_n(|b|) against std::cyl_bessel_i, and
// the truncation p is the smallest whose neglected tail 2 sum_{n > p} I_n is below 1e-16 I_0.
#include <gtest/gtest.h>

#include <cmath>

#include "tokdyn/attention/fourier_attention.hpp"

using namespace tokdyn;

TEST(ScaledBessel, MatchesTheStandardLibrary) {
  for (double b : {1e-3, 0.1, 1.0, 4.0, 16.0, 100.0, 600.0}) {
    const std::vector<double> s = scaled_bessel_series(b);
    const int p = static_cast<int>(s.size()) - 1;
    const double i0 = std::cyl_bessel_i(0.0, b);
    double tail = 0, tail_from_p = 0;  // 2 sum_{n > p} I_n / I_0 and 2 sum_{n >= p} I_n / I_0
    for (int n = p + 200; n > p; --n) tail += 2 * std::cyl_bessel_i(static_cast<double>(n), b) / i0;
    tail_from_p = tail + 2 * std::cyl_bessel_i(static_cast<double>(p), b) / i0;
    EXPECT_LE(tail, 1e-16) << "b " << b;
    if (p > 0) {
      EXPECT_GT(tail_from_p, 1e-16) << "b " << b << ": p is not the smallest";
    }
    for (int n = 0; n <= p; ++n) {
      const double ref = std::exp(-b) * std::cyl_bessel_i(static_cast<double>(n), b);
      // s_n is a product of n ratios, each a few ulp off, and libstdc++'s I_n carries its own error of the
      // same kind: ~ n eps relative (1.2e-13 seen at b = 600, n = 214), so 1e-15 (n + 20).
      EXPECT_NEAR(s[n], ref, 1e-15 * (n + 20) * ref + 1e-300) << "b " << b << " n " << n;
    }
  }
}

TEST(ScaledBessel, ZeroAndNegativeArguments) {
  EXPECT_EQ(scaled_bessel_series(0.0), std::vector<double>{1.0});
  const std::vector<double> plus = scaled_bessel_series(3.0), minus = scaled_bessel_series(-3.0);
  ASSERT_EQ(plus.size(), minus.size());
  // I_n(-b) = (-1)^n I_n(b), exactly (the same magnitudes, signs flipped).
  for (std::size_t n = 0; n < plus.size(); ++n) EXPECT_EQ(minus[n], n % 2 ? -plus[n] : plus[n]);
}
