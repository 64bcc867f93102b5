// The per-layer random MLP field has covariance E[G(x) G(y)^T] = kappa(<x,y>) I_d for every width m
// (doc/science.md section 2). Monte Carlo over independent layers; tolerance 5 standard errors of the estimate.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tokdyn/noise/mlp_kernel.hpp"
#include "tokdyn/noise/random_mlp.hpp"

using namespace tokdyn;

namespace {

void check_covariance(const std::string& act, double sigma_u, double sigma_w, double expected_kappa(double)) {
  const int d = 3, draws = 20000;
  const std::vector<double> us = {1.0, 0.4, -0.7};
  // Rows: x = e1, then y_u = u e1 + sqrt(1 - u^2) e2 with <x, y_u> = u; one MLP draw per layer serves all.
  std::vector<double> rows = {1, 0, 0};
  for (double u : us) rows.insert(rows.end(), {u, std::sqrt(1 - u * u), 0});
  const int n = static_cast<int>(rows.size()) / d;
  for (std::int64_t m : {4, 256}) {
    MlpParams p;
    p.width = m;
    p.activation = act;
    p.sigma_u = sigma_u;
    p.sigma_w = sigma_w;
    p.seed = 2024;
    RandomMlp mlp(p, d);
    std::vector<double> g(rows.size());
    // Per u: samples of (1/d) sum_a G_a(x) G_a(y) -> kappa(u) and of G_0(x) G_1(y) -> 0.
    std::vector<double> s(us.size(), 0), s2(us.size(), 0), o(us.size(), 0), o2(us.size(), 0);
    for (int l = 1; l <= draws; ++l) {
      mlp.draw(l);
      mlp.apply(rows.data(), n, g.data());
      for (std::size_t k = 0; k < us.size(); ++k) {
        const double* y = &g[(k + 1) * d];
        const double diag = (g[0] * y[0] + g[1] * y[1] + g[2] * y[2]) / d, off = g[0] * y[1];
        s[k] += diag, s2[k] += diag * diag, o[k] += off, o2[k] += off * off;
      }
    }
    const double k1 = expected_kappa(1.0);
    for (std::size_t k = 0; k < us.size(); ++k) {
      const double mean = s[k] / draws, se = std::sqrt((s2[k] / draws - mean * mean) / draws);
      const double off = o[k] / draws, off_se = std::sqrt((o2[k] / draws - off * off) / draws);
      EXPECT_NEAR(mean, expected_kappa(us[k]), 5 * se) << act << " m = " << m << " u = " << us[k];
      EXPECT_NEAR(off, 0.0, 5 * off_se) << act << " m = " << m << " u = " << us[k];
      EXPECT_LT(se, 0.05 * k1);  // the test has power: errors well below the kernel's scale kappa(1)
    }
  }
}

}  // namespace

TEST(MlpCovariance, ReluMatchesClosedForm) {
  check_covariance("relu", 0.5, 0.3, [](double u) { return relu_kappa(3, 0.5, 0.3, u); });
}

TEST(MlpCovariance, TanhMatchesQuadrature) {
  check_covariance("tanh", 0.4, 0.2, [](double u) { return MlpKernel{&activation("tanh"), 3, 0.4, 0.2}.kappa(u); });
}
