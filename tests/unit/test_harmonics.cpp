// The series of the harmonic attention: e^{-|b|} i_l(b) against the standard library's I_{l+1/2} and its
// truncation the smallest at the tolerance; the real spherical harmonics obey the addition theorem
// sum_m H_lm(x) H_lm(y) = (2l + 1) P_l(<x, y>) and the expansion sums back to e^{b <x, y>}.
#include <gtest/gtest.h>

#include <cmath>

#include "tokdyn/attention/harmonic_attention.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

TEST(SphericalBessel, MatchesTheStandardLibraryAndTruncatesAtTheTolerance) {
  for (double tolerance : {1e-12, 1e-6})
    for (double b : {1e-3, 0.5, 4.0, 20.0, 100.0}) {
      const std::vector<double> s = scaled_spherical_bessel_series(b, tolerance);
      const int p = static_cast<int>(s.size()) - 1;
      // i_l(b) = sqrt(pi / 2b) I_{l+1/2}(b); e^{-b} i_l(b) computed in logs of libstdc++'s I_nu (b <= 100: no overflow).
      auto ref = [b](int l) { return std::sqrt(M_PI / (2 * b)) * std::cyl_bessel_i(l + 0.5, b) * std::exp(-b); };
      double tail = 0;
      for (int l = p + 300; l > p; --l) tail += (2 * l + 1) * ref(l);
      EXPECT_LE(tail, tolerance * (1 + 1e-12)) << "b " << b;
      if (p > 0) {
        EXPECT_GT(tail + (2 * p + 1) * ref(p), tolerance) << "b " << b << ": p is not the smallest";
      }
      for (int l = 0; l <= p; ++l)  // a product of l ratios, each a few ulp, against libstdc++'s own ~l eps
        EXPECT_NEAR(s[l], ref(l), 1e-15 * (l + 20) * ref(l) + 1e-300) << "b " << b << " l " << l;
    }
  const std::vector<double> plus = scaled_spherical_bessel_series(3.0, 1e-12),
                            minus = scaled_spherical_bessel_series(-3.0, 1e-12);
  ASSERT_EQ(plus.size(), minus.size());
  for (std::size_t l = 0; l < plus.size(); ++l) EXPECT_EQ(minus[l], l % 2 ? -plus[l] : plus[l]);
}

TEST(SphericalHarmonics, AdditionTheoremAndTheKernelExpansion) {
  const int p = 40, count = (p + 1) * (p + 1);
  const SphericalHarmonics h(p);
  ASSERT_EQ(h.count(), count);
  double x[2 * 3];
  sample_uniform_sphere(17, 0, 2, 3, x);
  double ux[2] = {x[0], x[3]}, uy[2] = {x[1], x[4]}, uz[2] = {x[2], x[5]};
  std::vector<double> table(static_cast<std::size_t>(count) * 2);
  h.evaluate(2, ux, uy, uz, table.data(), 2);
  const double t = x[0] * x[3] + x[1] * x[4] + x[2] * x[5];
  std::vector<double> by_degree(p + 1, 0.0), square(p + 1, 0.0);
  for (int r = 0; r < count; ++r) {
    by_degree[h.row_degree()[r]] += table[r * 2] * table[r * 2 + 1];
    square[h.row_degree()[r]] += table[r * 2] * table[r * 2];
  }
  for (int l = 0; l <= p; ++l) {
    // The recurrences lose ~l eps relative in each harmonic; 2l + 1 of them add up: 1e-13 (2l + 1).
    EXPECT_NEAR(by_degree[l], (2 * l + 1) * std::legendre(l, t), 1e-13 * (2 * l + 1)) << "l " << l;
    EXPECT_NEAR(square[l], 2 * l + 1, 1e-13 * (2 * l + 1)) << "l " << l;  // P_l(1) = 1
  }
  // sum_l e^{-b} i_l(b) sum_m H_lm(x) H_lm(y) = e^{b (t - 1)} to the series' tolerance.
  const std::vector<double> s = scaled_spherical_bessel_series(12.0, 1e-14);
  ASSERT_LE(static_cast<int>(s.size()) - 1, p);
  double kernel = 0;
  for (int l = static_cast<int>(s.size()) - 1; l >= 0; --l) kernel += s[l] * by_degree[l];
  EXPECT_NEAR(kernel, std::exp(12.0 * (t - 1)), 1e-13);
}
