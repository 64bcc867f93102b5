// LN, tangent projection and uniform sampling on S^{d-1}.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

TEST(Sphere, NormalizeRowsGivesUnitVectorsAlongTheInput) {
  std::vector<double> x = {3, 4, 0, -1, 2, 2, 1e-200, 0, 0};  // includes a tiny but non-zero row
  const std::vector<double> before = x;
  normalize_rows(x.data(), 3, 3);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(test::dot(&x[3 * i], &x[3 * i], 3), 1.0, 1e-15);
    const double n = std::sqrt(test::dot(&before[3 * i], &before[3 * i], 3));
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(x[3 * i + a], before[3 * i + a] / n, 1e-15);
  }
  EXPECT_DOUBLE_EQ(x[0], 0.6);
  EXPECT_DOUBLE_EQ(x[1], 0.8);
}

TEST(Sphere, TangentProjectionIsOrthogonalAndIdempotent) {
  std::vector<double> x(5 * 7), v(5 * 7);
  sample_uniform_sphere(11, 0, 5, 7, x.data());
  sample_uniform_sphere(12, 0, 5, 7, v.data());
  for (double& e : v) e *= 3.0;
  std::vector<double> p = v;
  tangent_project(x.data(), p.data(), 5, 7);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(test::dot(&x[7 * i], &p[7 * i], 7), 0.0, 1e-14);
  std::vector<double> pp = p;
  tangent_project(x.data(), pp.data(), 5, 7);
  for (std::size_t k = 0; k < p.size(); ++k) EXPECT_NEAR(pp[k], p[k], 1e-14);
  // P_x x = 0 and P_x of a tangent vector is itself: v - <x,v> x with the closed form.
  for (int i = 0; i < 5; ++i) {
    const double c = test::dot(&x[7 * i], &v[7 * i], 7);
    for (int a = 0; a < 7; ++a) EXPECT_NEAR(p[7 * i + a], v[7 * i + a] - c * x[7 * i + a], 1e-14);
  }
}

// Moments of the uniform law on S^{d-1}: E x = 0, E x x^T = I/d, E x_a^4 = 3/(d(d+2)).
// Tolerances are 5 standard errors of the sample means (the draws are deterministic, the bound is honest).
TEST(Sphere, UniformSamplingMoments) {
  for (int d : {2, 3, 5, 16}) {
    const std::int64_t n = 40000;
    std::vector<double> x(n * d);
    sample_uniform_sphere(5, 0, n, d, x.data());
    std::vector<double> mean(d, 0.0), second(d * d, 0.0);
    double fourth = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (int a = 0; a < d; ++a) {
        mean[a] += x[i * d + a] / n;
        fourth += std::pow(x[i * d + a], 4) / (double(n) * d);
        for (int b = 0; b < d; ++b) second[a * d + b] += x[i * d + a] * x[i * d + b] / n;
      }
    const double se_mean = std::sqrt(1.0 / d / n);
    for (int a = 0; a < d; ++a) EXPECT_NEAR(mean[a], 0.0, 5 * se_mean) << "d = " << d;
    const double e4 = 3.0 / (d * (d + 2.0));
    const double se_second = std::sqrt(e4 / n);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) EXPECT_NEAR(second[a * d + b], a == b ? 1.0 / d : 0.0, 5 * se_second) << "d = " << d;
    const double e8 = 105.0 / (d * (d + 2.0) * (d + 4.0) * (d + 6.0));
    EXPECT_NEAR(fourth, e4, 5 * std::sqrt((e8 - e4 * e4) / n)) << "d = " << d;
  }
}

TEST(Sphere, SamplesDependOnlyOnSeedAndGlobalIndex) {
  std::vector<double> all(10 * 4), part(4 * 4);
  sample_uniform_sphere(9, 0, 10, 4, all.data());
  sample_uniform_sphere(9, 3, 4, 4, part.data());  // rows 3..6 as a rank would draw them
  for (int k = 0; k < 16; ++k) EXPECT_EQ(part[k], all[12 + k]);
}
