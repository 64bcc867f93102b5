// Gaussian-field representations reproduce the kernel kappa: Fourier modes on S^1 to the neglected variance,
// random features to the Monte Carlo rate; the fast kernel matches the reference quadrature.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/kernel_function.hpp"

using namespace tokdyn;

namespace {
double field_kernel(const GaussianField& f, const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> px(f.modes()), py(f.modes());
  f.evaluate(x.data(), 1, px.data());
  f.evaluate(y.data(), 1, py.data());
  double s = 0;
  for (std::int64_t k = 0; k < f.modes(); ++k) s += px[k] * py[k];
  return s;
}
}  // namespace

TEST(KernelFunction, MatchesReferenceQuadrature) {
  for (const char* act : {"tanh", "sigmoid", "silu", "gelu"})
    for (double s : {0.0, 0.3}) {
      const MlpKernel k{&activation(act), 5, s, s};
      const KernelFunction f(k);
      for (double u : {-1.0, -0.3, 0.2, 0.8, 0.999, 1.0}) EXPECT_NEAR(f(u), k.kappa(u), 1e-10) << act << " u = " << u;
    }
  const MlpKernel relu{&activation("relu"), 4, 0.2, 0.1};
  EXPECT_EQ(KernelFunction(relu)(0.3), relu_kappa(4, 0.2, 0.1, 0.3));
}

TEST(GaussianHermite, IntegratesPolynomialsExactly) {
  std::vector<double> z, w;
  gauss_hermite(20, z, w);
  for (int p = 0; p <= 12; p += 2) {
    double s = 0, moment = 1;
    for (int k = 1; k < p; k += 2) moment *= k;  // E Z^p = (p - 1)!!
    for (int i = 0; i < 20; ++i) s += w[i] * std::pow(z[i], p);
    EXPECT_NEAR(s, moment, 1e-11 * moment);
  }
}

TEST(FourierField, ReproducesTheKernelToTheNeglectedVariance) {
  for (const char* act : {"relu", "tanh"}) {
    FieldParams p;
    p.kernel = MlpKernel{&activation(act), 2, 0.1, 0.2};
    p.kl_tolerance = 1e-6;
    const FourierField f(p);
    const KernelFunction kappa(p.kernel);
    EXPECT_LE(f.neglected_variance(), 1e-6 * kappa(1.0));
    for (double t : {0.0, 0.4, 1.3, 2.9, 3.14159}) {
      const std::vector<double> x = {1, 0}, y = {std::cos(t), std::sin(t)};
      // |kappa - kappa_K| <= sum_{n > K} c_n = neglected variance (plus round-off).
      EXPECT_NEAR(field_kernel(f, x, y), kappa(std::cos(t)), f.neglected_variance() + 1e-14) << act << " t = " << t;
    }
    // Zonal: the same variance everywhere.
    std::vector<double> v(1), g(2);
    const std::vector<double> x = {0.6, 0.8};
    f.variance(x.data(), 1, v.data(), g.data());
    EXPECT_NEAR(v[0], field_kernel(f, x, x), 1e-14);
  }
}

TEST(RandomFeatureField, KernelConvergesAtTheMonteCarloRate) {
  FieldParams p;
  p.kernel = MlpKernel{&activation("relu"), 5, 0.3, 0.2};
  p.features = 40000;
  const RandomFeatureField f(p);
  const std::vector<double> x = {1, 0, 0, 0, 0}, y = {0.6, 0.8, 0, 0, 0};
  const double k1 = relu_kappa(5, 0.3, 0.2, 1.0);
  // Each feature product has variance < kappa(1)^2: 5 standard errors.
  EXPECT_NEAR(field_kernel(f, x, y), relu_kappa(5, 0.3, 0.2, 0.6), 5 * k1 / std::sqrt(40000.0));
  EXPECT_NEAR(field_kernel(f, x, x), k1, 5 * k1 / std::sqrt(40000.0));
}

TEST(RandomFeatureField, VarianceGradientMatchesFiniteDifferences) {
  FieldParams p;
  p.kernel = MlpKernel{&activation("tanh"), 3, 0.3, 0.2};
  p.features = 50;
  const RandomFeatureField f(p);
  std::vector<double> x = {0.3, -0.5, 0.8}, v(1), g(3), vp(1), vm(1), tmp(3);
  f.variance(x.data(), 1, v.data(), g.data());
  EXPECT_NEAR(v[0], field_kernel(f, x, x), 1e-14);
  const double h = 1e-6;
  for (int a = 0; a < 3; ++a) {
    std::vector<double> xp = x, xm = x;
    xp[a] += h, xm[a] -= h;
    f.variance(xp.data(), 1, vp.data(), tmp.data());
    f.variance(xm.data(), 1, vm.data(), tmp.data());
    EXPECT_NEAR(g[a], (vp[0] - vm[0]) / (2 * h), 1e-8);
  }
}
