#include "tokdyn/attention/ring_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/attention/masses.hpp"
#include "tokdyn/attention/softmax_kernels.hpp"

namespace tokdyn {

RingAttention::RingAttention(const AttentionContext& context)
    : context_(context), ring_(context.comm, context.partition, 2 * context.weights.d + 1) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(context_.comm, &rank));
  n_local_ = context_.partition.count(rank);
  const std::size_t d = context_.weights.d, n = n_local_;
  queries_.resize(n * d);
  keys_values_.assign(n * (2 * d + 1), 0.0);  // log masses 0: uniform
  acc_.resize(n * d);
  max_.resize(n);
  sum_.resize(n);
  tile_.resize(static_cast<std::size_t>(context_.tile) * context_.tile);
}

void RingAttention::apply(const double* x, double* out) {
  const int dd = d();
  const int n = static_cast<int>(n_local_);
  const AttentionWeights& w = context_.weights;
  if (n > 0) {
    // queries = beta x Q^T [n, d]; keys = x K^T and values = x V^T side by side [n, 2d].
    gemm_nt(n, dd, dd, w.beta, x, dd, w.query.data(), dd, 0.0, queries_.data(), dd);
    gemm_nt(n, dd, dd, 1.0, x, dd, w.key.data(), dd, 0.0, keys_values_.data(), 2 * dd);
    gemm_nt(n, dd, dd, 1.0, x, dd, w.value.data(), dd, 0.0, keys_values_.data() + dd, 2 * dd);
  }
  std::fill(acc_.begin(), acc_.end(), 0.0);
  std::fill(max_.begin(), max_.end(), -std::numeric_limits<double>::infinity());
  std::fill(sum_.begin(), sum_.end(), 0.0);
  ring_.run(keys_values_.data(), [this](const double* block, std::int64_t rows, std::int64_t, int) { visit(block, rows); });
  normalize(n_local_, acc_.data(), max_.data(), sum_.data(), out);
}

void RingAttention::set_masses(const double* masses) {
  uniform_ = validate_masses(context_.comm, n_local_, n_global(), masses);
  // log(N w_j): 0 for w_j = 1/N, -inf for w_j = 0 (its exp is 0, the token drops out).
  double* log_mass = keys_values_.data() + n_local_ * 2 * d();
  const double n = static_cast<double>(n_global());
  for (std::int64_t j = 0; j < n_local_; ++j) log_mass[j] = std::log(n * masses[j]);
}

void RingAttention::visit(const double* block, std::int64_t rows) {
  const int dd = d(), width = 2 * dd, tile = context_.tile;
  const double* log_mass = block + rows * width;  // [rows], after the rows of the block
  for (std::int64_t i0 = 0; i0 < n_local_; i0 += tile) {
    const int bq = static_cast<int>(std::min<std::int64_t>(tile, n_local_ - i0));
    for (std::int64_t j0 = 0; j0 < rows; j0 += tile) {
      const int bk = static_cast<int>(std::min<std::int64_t>(tile, rows - j0));
      const double* keys = block + j0 * width;  // [bk, d] with stride 2d
      const double* values = keys + dd;         // [bk, d] with stride 2d
      double* s = tile_.data();                 // [bq, bk]
      gemm_nt(bq, bk, dd, 1.0, queries_.data() + i0 * dd, dd, keys, width, 0.0, s, bk);
      if (!uniform_)
        for (int i = 0; i < bq; ++i)
          for (int j = 0; j < bk; ++j) s[static_cast<std::size_t>(i) * bk + j] += log_mass[j0 + j];
      for (int i = 0; i < bq; ++i) {
        double* si = s + static_cast<std::size_t>(i) * bk;
        double* acc = acc_.data() + (i0 + i) * dd;
        double& m = max_[i0 + i];
        double& l = sum_[i0 + i];
        const double tile_max = row_max(si, bk);
        if (tile_max > m) {
          // Rescale what was accumulated under the old maximum (exp(-inf) = 0 on the first tile).
          const double scale = std::exp(m - tile_max);
          l *= scale;
          for (int a = 0; a < dd; ++a) acc[a] *= scale;
          m = tile_max;
        }
        if (m == -std::numeric_limits<double>::infinity()) {
          // Only zero-mass keys so far (every logit -inf): their weights are 0, and s - m would be NaN.
          std::fill(si, si + bk, 0.0);
          continue;
        }
        l += shifted_exp_sum(si, bk, m);
      }
      // acc[i0:i0+bq] += weights [bq, bk] * values [bk, d]
      gemm_nn(bq, dd, bk, 1.0, s, bk, values, width, 1.0, acc_.data() + i0 * dd, dd);
    }
  }
}

void SoftmaxAttention::normalize(std::int64_t n_local, const double* acc, const double*,
                                 const double* running_sum, double* out) const {
  const int dd = d();
  for (std::int64_t i = 0; i < n_local; ++i)
    for (int a = 0; a < dd; ++a) out[i * dd + a] = acc[i * dd + a] / running_sum[i];
}

void UnnormalizedAttention::normalize(std::int64_t n_local, const double* acc, const double* running_max,
                                      const double*, double* out) const {
  const int dd = d();
  const double inv_n = 1.0 / static_cast<double>(n_global());
  for (std::int64_t i = 0; i < n_local; ++i) {
    const double scale = std::exp(running_max[i]) * inv_n;
    for (int a = 0; a < dd; ++a) out[i * dd + a] = acc[i * dd + a] * scale;
  }
}

}  // namespace tokdyn
