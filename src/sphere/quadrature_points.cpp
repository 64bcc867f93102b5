#include "tokdyn/sphere/quadrature_points.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {
namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;

// phi_k: the unique positive root of x^{k+1} = x + 1 (Roberts' R_k sequence uses alpha_i = phi_k^{-i}).
double generalized_golden_ratio(int k) {
  double x = 2;
  for (int it = 0; it < 60; ++it) x = std::pow(1 + x, 1.0 / (k + 1));  // a contraction: converges to the root
  return x;
}

}  // namespace

void quadrature_points(int d, std::int64_t n, std::int64_t begin, std::int64_t count, double* x) {
  if (d == 2) {
    // Equispaced: the trapezoidal rule, spectrally accurate for smooth periodic integrands.
    for (std::int64_t i = 0; i < count; ++i) {
      const double t = kTwoPi * (static_cast<double>(begin + i) + 0.5) / static_cast<double>(n);
      x[2 * i] = std::cos(t);
      x[2 * i + 1] = std::sin(t);
    }
    return;
  }
  if (d == 3) {
    // Spherical Fibonacci lattice: equal-area bands in z, golden-angle longitudes.
    const double golden_angle = std::numbers::pi * (3 - std::sqrt(5.0));
    for (std::int64_t i = 0; i < count; ++i) {
      const double j = static_cast<double>(begin + i);
      const double z = 1 - (2 * j + 1) / static_cast<double>(n), r = std::sqrt(std::max(0.0, 1 - z * z));
      const double phi = golden_angle * j;
      x[3 * i] = r * std::cos(phi);
      x[3 * i + 1] = r * std::sin(phi);
      x[3 * i + 2] = z;
    }
    return;
  }
  // R_k sequence in k = 2 ceil(d/2) dimensions, u_j = frac(1/2 + j alpha), then Box-Muller pairs give a
  // low-discrepancy Gaussian sample whose direction is uniform on the sphere.
  const int k = 2 * ((d + 1) / 2);
  const double g = generalized_golden_ratio(k);
  std::vector<double> alpha(k), u(k);
  for (int a = 0; a < k; ++a) alpha[a] = std::pow(g, -(a + 1));
  for (std::int64_t i = 0; i < count; ++i) {
    const double j = static_cast<double>(begin + i + 1);
    for (int a = 0; a < k; ++a) {
      const double v = 0.5 + j * alpha[a];
      u[a] = v - std::floor(v);
    }
    for (int a = 0; a < d; a += 2) {
      const double radius = std::sqrt(-2 * std::log(1 - u[a]));  // 1 - u in (0, 1]: finite
      x[i * d + a] = radius * std::cos(kTwoPi * u[a + 1]);
      if (a + 1 < d) x[i * d + a + 1] = radius * std::sin(kTwoPi * u[a + 1]);
    }
  }
  normalize_rows(x, count, d);
}

}  // namespace tokdyn
