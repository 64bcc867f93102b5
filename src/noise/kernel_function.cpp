#include "tokdyn/noise/kernel_function.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "tokdyn/core/numerics/lapack.hpp"

namespace tokdyn {
namespace {
constexpr int kHermitePoints = 96;
constexpr int kChebyshevOrder = 128;
}  // namespace

void gauss_hermite(int n, std::vector<double>& nodes, std::vector<double>& weights) {
  // He_{k+1} = z He_k - k He_{k-1}: Jacobi matrix with zero diagonal and off-diagonal sqrt(k).
  nodes.assign(n, 0.0);
  std::vector<double> off(std::max(1, n - 1)), first(n);
  for (int k = 1; k < n; ++k) off[k - 1] = std::sqrt(static_cast<double>(k));
  tridiagonal_eigensolve(n, nodes.data(), off.data(), first.data());
  weights.resize(n);
  for (int k = 0; k < n; ++k) weights[k] = first[k] * first[k];
}

KernelFunction::KernelFunction(const MlpKernel& kernel) : kernel_(kernel), relu_(std::string(kernel.act->name) == "relu") {
  if (relu_) return;
  gauss_hermite(kHermitePoints, nodes_, weights_);
  // Chebyshev coefficients from the values at u_j = cos(pi j / n) (discrete cosine transform).
  const int n = kChebyshevOrder;
  std::vector<double> f(n + 1);
  for (int j = 0; j <= n; ++j) f[j] = gauss_hermite_kappa(std::cos(std::numbers::pi * j / n));
  chebyshev_.assign(n + 1, 0.0);
  for (int k = 0; k <= n; ++k) {
    double s = 0;
    for (int j = 0; j <= n; ++j) s += (j == 0 || j == n ? 0.5 : 1.0) * f[j] * std::cos(std::numbers::pi * j * k / n);
    chebyshev_[k] = 2 * s / n;  // halved for k = 0 and k = n when summed
  }
}

double KernelFunction::gauss_hermite_kappa(double u) const {
  const double s2 = kernel_.variance(), s = std::sqrt(s2);
  const double r = std::clamp((u / kernel_.d + kernel_.sigma_u * kernel_.sigma_u) / s2, -1.0, 1.0);
  const double q = std::sqrt(std::max(0.0, 1 - r * r));
  double total = 0;
  for (int i = 0; i < kHermitePoints; ++i) {
    double inner = 0;
    for (int j = 0; j < kHermitePoints; ++j) inner += weights_[j] * kernel_.act->value(s * (r * nodes_[i] + q * nodes_[j]));
    total += weights_[i] * kernel_.act->value(s * nodes_[i]) * inner;
  }
  return total + kernel_.sigma_w * kernel_.sigma_w;
}

double KernelFunction::operator()(double u) const {
  if (relu_) return relu_kappa(kernel_.d, kernel_.sigma_u, kernel_.sigma_w, u);
  // Clenshaw on sum_k' a_k T_k(u) (first and last coefficient halved).
  const int n = kChebyshevOrder;
  u = std::clamp(u, -1.0, 1.0);
  double b1 = 0, b2 = 0;
  for (int k = n; k >= 1; --k) {
    const double a = (k == n ? 0.5 : 1.0) * chebyshev_[k];
    const double b0 = a + 2 * u * b1 - b2;
    b2 = b1;
    b1 = b0;
  }
  return 0.5 * chebyshev_[0] + u * b1 - b2;
}

}  // namespace tokdyn
