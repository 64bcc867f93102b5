// Counter-based streams: determinism, independence of purposes, prefix stability, Gaussian moments.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tokdyn/core/numerics/random.hpp"

using namespace tokdyn;

TEST(Random, SameCounterSameDrawDifferentPurposeDifferentDraw) {
  const RandomStream a(42, Purpose::mlp_u), b(42, Purpose::mlp_u), c(42, Purpose::mlp_w), e(43, Purpose::mlp_u);
  EXPECT_EQ(a.bits(3, 7, 0), b.bits(3, 7, 0));
  EXPECT_NE(a.bits(3, 7, 0), c.bits(3, 7, 0));
  EXPECT_NE(a.bits(3, 7, 0), e.bits(3, 7, 0));
  EXPECT_NE(a.bits(3, 7, 0), a.bits(4, 7, 0));
  EXPECT_NE(a.bits(3, 7, 0), a.bits(3, 8, 0));
}

TEST(Random, NormalsArePrefixStable) {
  const RandomStream s(1, Purpose::test);
  std::vector<double> a(10), b(3);
  s.normals(5, 2, a.data(), a.size());
  s.normals(5, 2, b.data(), b.size());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(a[k], b[k]);
}

// Mean 0, variance 1, kurtosis 3 within 5 standard errors over 400k draws.
TEST(Random, NormalMoments) {
  const RandomStream s(2, Purpose::test);
  const int n = 100000;
  double m1 = 0, m2 = 0, m4 = 0;
  for (int i = 0; i < n; ++i)
    for (double z : s.normal4(0, i, 0)) m1 += z, m2 += z * z, m4 += z * z * z * z;
  const double count = 4.0 * n;
  m1 /= count, m2 /= count, m4 /= count;
  EXPECT_NEAR(m1, 0.0, 5 / std::sqrt(count));
  EXPECT_NEAR(m2, 1.0, 5 * std::sqrt(2.0 / count));
  EXPECT_NEAR(m4, 3.0, 5 * std::sqrt(96.0 / count));
}

TEST(Random, UniformsInUnitInterval) {
  const RandomStream s(3, Purpose::test);
  double mean = 0;
  for (int i = 0; i < 50000; ++i)
    for (double u : s.uniform4(1, i, 0)) {
      ASSERT_GT(u, 0.0);
      ASSERT_LE(u, 1.0);
      mean += u / 200000.0;
    }
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / 200000));
}
