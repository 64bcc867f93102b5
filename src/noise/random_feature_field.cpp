#include <cmath>

#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/noise/gaussian_field.hpp"

namespace tokdyn {

const KeyTable<FieldParams>& RandomFeatureField::keys() {
  static const KeyTable<FieldParams> table = KeyTable<FieldParams>("noise").integer(
      "features", &FieldParams::features, 1024, "features: number M of random features", 1, 1 << 24);
  return table;
}

RandomFeatureField::RandomFeatureField(const FieldParams& p)
    : GaussianField(p.kernel.d), act_(p.kernel.act), m_(p.features), sigma_w_(p.kernel.sigma_w) {
  const RandomStream stream(p.seed, Purpose::field_u);
  u_.resize(static_cast<std::size_t>(m_) * d_);
  b_.resize(m_);
  for (std::int64_t k = 0; k < m_; ++k) {
    // Row k: d normals for U_k, then one more block for b_k (step 0 = U, step 1 = b).
    stream.normals(0, k, u_.data() + k * d_, d_);
    b_[k] = p.kernel.sigma_u * stream.normal4(1, k, 0)[0];
  }
}

void RandomFeatureField::evaluate(const double* x, std::int64_t n, double* phi) const {
  const std::int64_t K = modes();
  const double in = 1 / std::sqrt(static_cast<double>(d_)), out = 1 / std::sqrt(static_cast<double>(m_));
  for (std::int64_t i = 0; i < n; ++i) {
    const double* xi = x + i * d_;
    double* p = phi + i * K;
    for (std::int64_t k = 0; k < m_; ++k) {
      double s = 0;
      for (int a = 0; a < d_; ++a) s += u_[k * d_ + a] * xi[a];
      p[k] = out * act_->value(in * s + b_[k]);
    }
    p[m_] = sigma_w_;
  }
}

void RandomFeatureField::variance(const double* x, std::int64_t n, double* v, double* grad_v) const {
  // v = sum_k sigma_k^2 + sigma_W^2, grad v = 2 sum_k sigma_k sigma_k' U_k / (sqrt d sqrt M).
  const double in = 1 / std::sqrt(static_cast<double>(d_)), inv_m = 1 / static_cast<double>(m_);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* xi = x + i * d_;
    double* g = grad_v + i * d_;
    for (int a = 0; a < d_; ++a) g[a] = 0;
    double total = 0;
    for (std::int64_t k = 0; k < m_; ++k) {
      double s = 0;
      for (int a = 0; a < d_; ++a) s += u_[k * d_ + a] * xi[a];
      const double z = in * s + b_[k], f = act_->value(z), fp = act_->derivative(z);
      total += f * f;
      for (int a = 0; a < d_; ++a) g[a] += 2 * f * fp * in * u_[k * d_ + a];
    }
    v[i] = total * inv_m + sigma_w_ * sigma_w_;
    for (int a = 0; a < d_; ++a) g[a] *= inv_m;
  }
}

}  // namespace tokdyn
