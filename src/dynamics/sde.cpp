#include "tokdyn/dynamics/sde.hpp"

#include <algorithm>
#include <cmath>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/dynamics/schemes/euler_maruyama.hpp"
#include "tokdyn/dynamics/schemes/heun.hpp"
#include "tokdyn/dynamics/schemes/projected.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {
namespace {
constexpr std::int64_t kFeatureChunk = 256;  // token rows per feature chunk
constexpr std::int64_t kIncrementBlock = 64;  // steps of Brownian increments filled at once
}

// The list of SDE schemes: adding a scheme is its class (dynamics/schemes/) plus one line here.
const SdeRegistry& sde_schemes() {
  static const SdeRegistry registry = [] {
    SdeRegistry r("SDE scheme");
    r.add("euler-maruyama", "Euler-Maruyama on the Ito form (radial drift included)",
          [](SdeSetup& s) { return std::make_unique<EulerMaruyama>(s); });
    r.add("heun", "stochastic Heun on the Stratonovich tangent form",
          [](SdeSetup& s) { return std::make_unique<StratonovichHeun>(s); });
    r.add("projected", "LN-projected step: the transformer layer with the Gaussian field",
          [](SdeSetup& s) { return std::make_unique<ProjectedStep>(s); });
    return r;
  }();
  return registry;
}

SdeScheme::SdeScheme(SdeSetup& s)
    : params_(s.params), n_local_(s.n_local), attention_(std::move(s.attention)), field_(std::move(s.field)) {
  if (!params_.noise) field_.reset();
  const std::size_t nd = static_cast<std::size_t>(n_local_) * params_.d;
  work_.resize(nd);
  if (field_) {
    path_ = std::make_unique<BrownianPath>(s.seed, params_.steps, params_.horizon, field_->modes() * params_.d);
    db_.resize(static_cast<std::size_t>(field_->modes()) * params_.d);
    phi_.resize(static_cast<std::size_t>(std::min(kFeatureChunk, std::max<std::int64_t>(n_local_, 1))) * field_->modes());
  }
}

double SdeScheme::work_per_step() const {
  const double n = static_cast<double>(params_.n);
  return attention_ ? n * n : n;
}

// The path's bridge costs J normals per point when points come one by one, one when a block is filled top-down
// (the same bits): increments come from blocks of up to kIncrementBlock steps.
const std::vector<double>& SdeScheme::increments(std::int64_t step) {
  if (!path_) return db_;
  const std::int64_t block = std::min(kIncrementBlock, std::int64_t(1) << path_->levels());
  if (block_.empty() || step < block_first_ || step >= block_first_ + block) {
    block_.resize(static_cast<std::size_t>(block) * db_.size());
    block_first_ = step - step % block;
    path_->increments_block(block_first_, block, block_.data());
  }
  std::copy_n(block_.begin() + static_cast<std::ptrdiff_t>((step - block_first_) * db_.size()), db_.size(), db_.begin());
  return db_;
}

void SdeScheme::tangent_drift(const double* x, double* out, StepStatistics* statistics) {
  const std::size_t nd = static_cast<std::size_t>(n_local_) * params_.d;
  if (!attention_) {
    std::fill(out, out + nd, 0.0);
    return;
  }
  {
    PhaseScope timed(Phase::attention);
    if (statistics) statistics->attention(*attention_, x, out);
    else attention_->apply(x, out);
  }
  for (std::size_t k = 0; k < nd; ++k) out[k] *= params_.factor;
  tangent_project(x, out, n_local_, params_.d);
}

void SdeScheme::field_increment(const double* x, const double* dB, double* out, bool project) {
  const int d = params_.d;
  if (!field_) {
    std::fill(out, out + n_local_ * d, 0.0);
    return;
  }
  PhaseScope timed(Phase::noise);
  const int K = static_cast<int>(field_->modes());
  for (std::int64_t i0 = 0; i0 < n_local_; i0 += kFeatureChunk) {
    const int rows = static_cast<int>(std::min(kFeatureChunk, n_local_ - i0));
    field_->evaluate(x + i0 * d, rows, phi_.data());                     // phi [rows, K]
    gemm_nn(rows, d, K, 1.0, phi_.data(), K, dB, d, 0.0, out + i0 * d, d);  // phi dB [K, d]
  }
  if (project) tangent_project(x, out, n_local_, d);
}

void SdeScheme::ito_correction(const double* x, double* out) const {
  const int d = params_.d;
  PhaseScope timed(Phase::noise);
  std::vector<double> v(n_local_);
  field_->variance(x, n_local_, v.data(), out);  // out <- grad v
  tangent_project(x, out, n_local_, d);
  for (std::int64_t i = 0; i < n_local_; ++i)
    for (int a = 0; a < d; ++a) out[i * d + a] = 0.25 * out[i * d + a] - 0.5 * (d - 1) * v[i] * x[i * d + a];
}

}  // namespace tokdyn
