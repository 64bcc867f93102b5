// The vectorisable exp and expm1 of the row kernels against std::exp and std::expm1.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/random.hpp"

using namespace tokdyn;

TEST(FastExp, WithinTwoUlpOfStdExpOnTheNonPositiveAxis) {
  const RandomStream s(5, Purpose::test);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double u = s.uniform4(0, i, 0)[0];
    const double x = -708.0 * u * u;  // dense near 0, where softmax weights live
    const double e = std::exp(x), f = exp_nonpositive(x);
    const double ulp = std::nextafter(e, INFINITY) - e;
    worst = std::max(worst, std::abs(f - e) / ulp);
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(exp_nonpositive(0.0), 1.0);
  EXPECT_EQ(exp_nonpositive(-709.0), 0.0);
  EXPECT_EQ(exp_nonpositive(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_TRUE(std::isnan(exp_nonpositive(std::numeric_limits<double>::quiet_NaN())));
}

TEST(FastExp, Expm1WithinThreeUlpOfStdExpm1) {
  const RandomStream s(7, Purpose::test);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double u = s.uniform4(0, i, 0)[0];
    // dense near 0 (pairs near a cluster, where 1 - e^v cancels), across the whole axis, and round-off above 0
    const double x = i % 3 == 0 ? -1e-12 * u : i % 3 == 1 ? -708.0 * u * u * u : 1e-15 * u;
    const double e = std::expm1(x), f = expm1_nonpositive(x);
    const double ulp = std::abs(std::nextafter(e, INFINITY) - e);
    worst = std::max(worst, std::abs(f - e) / ulp);
  }
  EXPECT_LE(worst, 3.0);
  EXPECT_EQ(expm1_nonpositive(0.0), 0.0);
  EXPECT_EQ(expm1_nonpositive(-709.0), -1.0);
  EXPECT_EQ(expm1_nonpositive(-std::numeric_limits<double>::infinity()), -1.0);
  EXPECT_TRUE(std::isnan(expm1_nonpositive(std::numeric_limits<double>::quiet_NaN())));
}

TEST(FastExp, FloatWithinTwoUlpOfStdExp) {
  // Against std::exp in double rounded to float: the float32 tiles' pair weights.
  const RandomStream s(9, Purpose::test);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double u = s.uniform4(0, i, 0)[0];
    const float x = static_cast<float>(i % 2 == 0 ? -87.0 * u * u : -1e-6 * u);  // the axis; near 0
    const float e = static_cast<float>(std::exp(static_cast<double>(x))), f = exp_nonpositive_float(x);
    const double ulp = std::nextafter(e, INFINITY) - e;
    worst = std::max(worst, std::abs(static_cast<double>(f) - e) / ulp);
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(exp_nonpositive_float(0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive_float(-88.0f), 0.0f);
  EXPECT_EQ(exp_nonpositive_float(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(exp_nonpositive_float(std::numeric_limits<float>::quiet_NaN())));
}
