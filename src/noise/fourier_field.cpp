#include <cmath>
#include <numbers>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/kernel_function.hpp"

namespace tokdyn {
namespace {
constexpr int kMaxOrder = 2048;
constexpr int kPoints = 16384;  // trapezoidal points on [0, pi]
}  // namespace

const KeyTable<FieldParams>& FourierField::keys() {
  static const KeyTable<FieldParams> table = KeyTable<FieldParams>("noise").real(
      "kl_tolerance", &FieldParams::kl_tolerance, 1e-6, "fourier: neglected variance / kappa(1) of the truncation",
      0.0, 1.0, true);
  return table;
}

FourierField::FourierField(const FieldParams& p) : GaussianField(p.kernel.d) {
  if (d_ != 2) throw InputError("noise.field = fourier needs model.d = 2 (Fourier modes are the KL basis of S^1)");
  // c_n = (2 - [n = 0]) / pi * int_0^pi kappa(cos t) cos(n t) dt by the trapezoidal rule, spectrally accurate
  // for this periodic integrand (error decays like the coefficients beyond kPoints / 2). Positive-definite
  // kernels have c_n >= 0 (Schoenberg): tiny negative round-off is clipped.
  const KernelFunction kappa(p.kernel);
  std::vector<double> values(kPoints + 1), cosines(kPoints + 1);
  for (int j = 0; j <= kPoints; ++j) values[j] = kappa(std::cos(std::numbers::pi * j / kPoints));
  const double k1 = values[0];
  double total = 0;
  for (int n = 0; n <= kMaxOrder; ++n) {
    double s = 0;
    for (int j = 0; j <= kPoints; ++j)
      s += (j == 0 || j == kPoints ? 0.5 : 1.0) * values[j] * std::cos(static_cast<double>(n) * std::numbers::pi * j / kPoints);
    c_.push_back(std::max(0.0, (n == 0 ? 1.0 : 2.0) * s / kPoints));
    total += c_.back();
    if (k1 - total <= p.kl_tolerance * k1) break;
  }
  neglected_ = k1 - total;
  if (neglected_ > p.kl_tolerance * k1)
    throw InputError("noise.kl_tolerance = " + std::to_string(p.kl_tolerance) + " needs more than " +
                     std::to_string(kMaxOrder) + " Fourier modes: loosen it");
  order_ = static_cast<std::int64_t>(c_.size()) - 1;
  root_c_.resize(c_.size());
  for (std::size_t n = 0; n < c_.size(); ++n) root_c_[n] = std::sqrt(c_[n]);
}

void FourierField::evaluate(const double* x, std::int64_t n, double* phi) const {
  const std::int64_t K = modes();
  for (std::int64_t i = 0; i < n; ++i) {
    // cos(n theta), sin(n theta) by the angle-addition recurrence from the point's own angle.
    const double r = std::hypot(x[2 * i], x[2 * i + 1]);
    const double c1 = x[2 * i] / r, s1 = x[2 * i + 1] / r;
    double* p = phi + i * K;
    p[0] = root_c_[0];
    double cn = 1, sn = 0;
    for (std::int64_t m = 1; m <= order_; ++m) {
      const double c = cn * c1 - sn * s1, s = sn * c1 + cn * s1;
      cn = c, sn = s;
      p[2 * m - 1] = root_c_[m] * cn;
      p[2 * m] = root_c_[m] * sn;
    }
  }
}

void FourierField::variance(const double* x, std::int64_t n, double* v, double* grad_v) const {
  // sum_k sigma_k(x)^2 = sum_n c_n at every point: the truncated kernel is exactly zonal.
  double total = 0;
  for (double c : c_) total += c;
  for (std::int64_t i = 0; i < n; ++i) v[i] = total, grad_v[2 * i] = grad_v[2 * i + 1] = 0;
}

}  // namespace tokdyn
