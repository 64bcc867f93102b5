#include "tokdyn/attention/feature_attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"
#include "tokdyn/pairs/masses.hpp"

namespace tokdyn {
namespace {

// e [rows, M] <- exp(e - shift_i): shift_i = 0 for keys (their exponents -|s k - w|^2 / 2 are <= 0), the row
// maximum for queries (which row_max_shift returns). min(., 0) absorbs round-off above 0.
TOKDYN_VECTOR_CLONES void exp_shifted(int rows, int m, double* e, const double* shift) {
  for (int i = 0; i < rows; ++i) {
    double* row = e + static_cast<std::size_t>(i) * m;
    const double c = shift ? shift[i] : 0.0;
    for (int k = 0; k < m; ++k) row[k] = exp_nonpositive(std::min(row[k] - c, 0.0));
  }
}

}  // namespace

const KeyTable<AttentionSpec>& FeatureAttention::keys() {
  static const KeyTable<AttentionSpec> table = KeyTable<AttentionSpec>("attention").integer(
      "features", &AttentionSpec::features, 1024, "random-features styles: the number M of random features", 2,
      1 << 24);
  return table;
}

FeatureAttention::FeatureAttention(const AttentionContext& context, bool normalized)
    : AttentionStyle(context, "random-features"), normalized_(normalized) {
  const AttentionWeights& w = context_.weights;
  if (w.heads != 1)
    throw InputError("attention style random-features has one head, not " + std::to_string(w.heads));
  if (context_.causal)
    throw InputError("attention style random-features has no causal mask: its sums are over all tokens");
  if (context_.features < 2)
    throw InputError("attention style random-features needs attention.features >= 2 (its standard error needs two), "
                     "not " + std::to_string(context_.features));
  features_ = context_.features;
  width_ = w.width();
  // w_m ~ N(0, I_D) by feature index: the same features on every rank, whatever the partition.
  const RandomStream stream(context_.seed, Purpose::attention_features);
  w_.resize(static_cast<std::size_t>(features_) * width_);
  half_w2_.resize(features_);
  for (int m = 0; m < features_; ++m) {
    double* f = w_.data() + static_cast<std::size_t>(m) * width_;
    stream.normals(0, static_cast<std::uint64_t>(m), f, static_cast<std::size_t>(width_));
    double n2 = 0;
    for (int a = 0; a < width_; ++a) n2 += f[a] * f[a];
    half_w2_[m] = 0.5 * n2;
  }
  const int tile = std::max(1, context_.tile);
  r_.resize(static_cast<std::size_t>(tile) * width_);
  v_.resize(static_cast<std::size_t>(tile) * (width_ + 1));
  e_.resize(static_cast<std::size_t>(tile) * features_);
  sums_.resize(v_.size());
  set_weights(w);
  masses_.assign(n_local_, 1.0 / static_cast<double>(context_.partition.n_global));
}

void FeatureAttention::set_weights(const AttentionWeights& w) {
  AttentionStyle::set_weights(w);
  s_ = std::sqrt(std::abs(w.beta));
  key_sign_ = w.beta < 0 ? -1.0 : 1.0;  // e^{beta <q, k>} = e^{|beta| <q, -k>}
}

void FeatureAttention::set_masses(const double* masses) {
  validate_masses(context_.comm, n_local_, context_.partition.n_global, masses);
  std::copy(masses, masses + n_local_, masses_.begin());
}

void FeatureAttention::exponents(int rows, const double* r, double sign, double* e) const {
  const int M = features_, D = width_;
  gemm_nt(rows, M, D, s_, r, D, w_.data(), D, 0.0, e, M);  // s <r_i, w_m>
  for (int i = 0; i < rows; ++i) {
    double r2 = 0;
    for (int a = 0; a < D; ++a) r2 += r[i * D + a] * r[i * D + a];
    double* row = e + static_cast<std::size_t>(i) * M;
    for (int m = 0; m < M; ++m) row[m] += sign * half_w2_[m] - 0.5 * s_ * s_ * r2;
  }
}

void FeatureAttention::apply(const double* x, double* out) {
  const AttentionWeights& w = context_.weights;
  const int M = features_, D = width_, d = w.d, tile = std::max(1, context_.tile);
  // Keys: phi_m(k) e^{-|w_m|^2 / 2} = e^{-|s k - w_m|^2 / 2} <= 1 (no overflow at any beta), and
  // moments [M, D + 1] = sum_j that times w_j (V x_j, 1).
  std::vector<double> moments(static_cast<std::size_t>(M) * (D + 1), 0.0), global(moments.size());
  for (std::int64_t j0 = 0; j0 < n_local_; j0 += tile) {
    const int rows = static_cast<int>(std::min<std::int64_t>(tile, n_local_ - j0));
    const double* xj = x + j0 * d;
    gemm_nt(rows, D, d, key_sign_, xj, d, w.key.data(), d, 0.0, r_.data(), D);      // +-K x [rows, D]
    gemm_nt(rows, D, d, 1.0, xj, d, w.value.data(), d, 0.0, sums_.data(), D);        // V x [rows, D]
    for (int i = 0; i < rows; ++i) {
      const double wj = masses_[j0 + i];
      for (int a = 0; a < D; ++a) v_[i * (D + 1) + a] = wj * sums_[i * D + a];
      v_[i * (D + 1) + D] = wj;
    }
    exponents(rows, r_.data(), -1.0, e_.data());
    exp_shifted(rows, M, e_.data(), nullptr);
    gemm_tn(M, D + 1, rows, 1.0, e_.data(), M, v_.data(), D + 1, 1.0, moments.data(), D + 1);
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(moments.data(), global.data(), static_cast<int>(global.size()), MPI_DOUBLE, MPI_SUM,
                                 context_.comm));
  // Queries: phi_m(q) e^{|w_m|^2 / 2}, shifted by its row maximum c_i (<= 1 after the shift); then
  // (U_i, Z_i) = (e^{c_i} / M) sum_m shifted_im moments_m, and the terms t_m = shifted_im Z-moment_m give
  // Z_i's standard error: var(mean) = (mean(t^2) - mean(t)^2) / (M - 1).
  std::vector<double> shift(tile);
  double stderr2 = 0;
  for (std::int64_t i0 = 0; i0 < n_local_; i0 += tile) {
    const int rows = static_cast<int>(std::min<std::int64_t>(tile, n_local_ - i0));
    gemm_nt(rows, D, d, 1.0, x + i0 * d, d, w.query.data(), d, 0.0, r_.data(), D);  // Q x [rows, D]
    exponents(rows, r_.data(), 1.0, e_.data());
    for (int i = 0; i < rows; ++i) {
      const double* row = e_.data() + static_cast<std::size_t>(i) * M;
      shift[i] = *std::max_element(row, row + M);
    }
    exp_shifted(rows, M, e_.data(), shift.data());
    gemm_nn(rows, D + 1, M, 1.0, e_.data(), M, global.data(), D + 1, 0.0, sums_.data(), D + 1);
    for (int i = 0; i < rows; ++i) {
      const double* s = sums_.data() + i * (D + 1);
      const double* row = e_.data() + static_cast<std::size_t>(i) * M;
      double t2 = 0;
      for (int m = 0; m < M; ++m) {
        const double t = row[m] * global[static_cast<std::size_t>(m) * (D + 1) + D];
        t2 += t * t;
      }
      const double mean = s[D] / M, var = std::max(0.0, t2 / M - mean * mean) / (M - 1);
      stderr2 += mean > 0 ? var / (mean * mean) : 0.0;
      double* o = out + (i0 + i) * D;
      const double usa = std::exp(shift[i]) / M;
      for (int a = 0; a < D; ++a) o[a] = normalized_ ? s[a] / s[D] : usa * s[a];
    }
  }
  double totals[2] = {stderr2, static_cast<double>(n_local_)}, sum[2];
  TOKDYN_MPI_CHECK(MPI_Allreduce(totals, sum, 2, MPI_DOUBLE, MPI_SUM, context_.comm));
  relative_stderr_ = std::sqrt(sum[0] / std::max(1.0, sum[1]));
}

}  // namespace tokdyn
