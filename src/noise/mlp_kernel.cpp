#include "tokdyn/noise/mlp_kernel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

namespace tokdyn {
namespace {

constexpr double kCut = 10.0;  // |z| > 10 carries Gaussian mass < 2e-23
constexpr double kPanelWidth = 0.25;  // widest panel
constexpr int kOrder = 16;     // Gauss-Legendre points per panel

struct Rule {
  std::array<double, kOrder> x, w;  // on [-1, 1]
};

// Gauss-Legendre nodes and weights by Newton's iteration on P_n.
const Rule& legendre() {
  static const Rule rule = [] {
    Rule r;
    const int n = kOrder;
    for (int i = 0; i < n; ++i) {
      double z = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5)), dp = 0;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = z;
        for (int k = 2; k <= n; ++k) {
          const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (z * p1 - p0) / (z * z - 1);
        const double dz = p1 / dp;
        z -= dz;
        if (std::abs(dz) < 1e-16) break;
      }
      r.x[i] = z;
      r.w[i] = 2 / ((1 - z * z) * dp * dp);
    }
    return r;
  }();
  return rule;
}

// Nodes z and weights w (density included) for E[f(Z)], Z ~ N(0,1), on [-kCut, kCut] cut at the given
// breakpoints; panels are at most kPanelWidth wide.
void gaussian_nodes(std::vector<double> cuts, std::vector<double>& z, std::vector<double>& w) {
  cuts.push_back(-kCut);
  cuts.push_back(kCut);
  std::sort(cuts.begin(), cuts.end());
  const Rule& g = legendre();
  z.clear();
  w.clear();
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    const double a = std::max(cuts[c], -kCut), b = std::min(cuts[c + 1], kCut);
    if (!(b > a)) continue;
    const int panels = std::max(1, static_cast<int>(std::ceil((b - a) / kPanelWidth)));
    const double h = (b - a) / panels;
    for (int p = 0; p < panels; ++p)
      for (int k = 0; k < kOrder; ++k) {
        const double t = a + p * h + 0.5 * h * (g.x[k] + 1);
        z.push_back(t);
        w.push_back(0.5 * h * g.w[k] * std::exp(-0.5 * t * t) / std::sqrt(2 * std::numbers::pi));
      }
  }
}

// E[f(s Z1) g(s (r Z1 + q Z2))], q = sqrt(1 - r^2). The inner integral is cut where the second argument
// crosses zero, so kinked activations (ReLU) integrate to round-off; as a function of z1 it changes on the
// scale q near z1 = 0, so the outer mesh is graded there (breakpoints +-q 2^k).
double correlated_expectation(double (*f)(double), double (*g)(double), double s, double r) {
  r = std::clamp(r, -1.0, 1.0);
  const double q = std::sqrt(std::max(0.0, 1 - r * r));
  std::vector<double> outer_cuts{0.0};
  for (double c = q; c > 0 && c < kCut; c *= 2) outer_cuts.push_back(c), outer_cuts.push_back(-c);
  std::vector<double> z1, w1, z2, w2;
  gaussian_nodes(outer_cuts, z1, w1);
  double total = 0;
  for (std::size_t i = 0; i < z1.size(); ++i) {
    const double fi = f(s * z1[i]);
    if (fi == 0) continue;
    double inner;
    if (q < 1e-14) {
      inner = g(s * r * z1[i]);
    } else {
      gaussian_nodes({0.0, -r * z1[i] / q}, z2, w2);
      inner = 0;
      for (std::size_t j = 0; j < z2.size(); ++j) inner += w2[j] * g(s * (r * z1[i] + q * z2[j]));
    }
    total += w1[i] * fi * inner;
  }
  return total;
}

}  // namespace

double MlpKernel::kappa(double u) const {
  const double s2 = variance();
  return correlated_expectation(act->value, act->value, std::sqrt(s2), (u / d + sigma_u * sigma_u) / s2) +
         sigma_w * sigma_w;
}

double MlpKernel::kappa_prime(double u) const {
  const double s2 = variance();
  return correlated_expectation(act->derivative, act->derivative, std::sqrt(s2), (u / d + sigma_u * sigma_u) / s2) /
         d;
}

double relu_kappa(int d, double sigma_u, double sigma_w, double u) {
  const double s2 = 1.0 / d + sigma_u * sigma_u;
  const double r = std::clamp((u / d + sigma_u * sigma_u) / s2, -1.0, 1.0);
  const double th = std::acos(r);
  return s2 / (2 * std::numbers::pi) * (std::sin(th) + (std::numbers::pi - th) * std::cos(th)) + sigma_w * sigma_w;
}

double relu_kappa_prime(int d, double sigma_u, double u) {
  const double s2 = 1.0 / d + sigma_u * sigma_u;
  const double r = std::clamp((u / d + sigma_u * sigma_u) / s2, -1.0, 1.0);
  return (std::numbers::pi - std::acos(r)) / (2 * std::numbers::pi * d);
}

}  // namespace tokdyn
