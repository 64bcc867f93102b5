#include "tokdyn/attention/ring_attention.hpp"

#include <cmath>

#include "tokdyn/core/blas.hpp"
#include "tokdyn/pairs/masses.hpp"

namespace tokdyn {

RingAttention::RingAttention(const AttentionContext& context, bool normalized)
    : AttentionStyle(context, normalized ? "softmax" : "unnormalized"),
      normalized_(normalized),
      ring_(context.comm, context.partition, 2 * context.weights.width() + 1),
      width_(context.weights.width()),
      softmax_(n_local_, context.weights.heads, context.weights.head_dim(), context.tile) {
  const std::size_t n = n_local_, D = width_;
  queries_.resize(n * D);
  keys_values_.assign(n * (2 * D + 1), 0.0);  // log masses 0: uniform
}

void RingAttention::apply(const double* x, double* out) {
  const int n = static_cast<int>(n_local_), d = context_.weights.d, D = width_;
  const AttentionWeights& w = context_.weights;
  if (n > 0) {
    // queries = beta x Q^T [n, D]; keys = x K^T and values = x V^T side by side [n, 2D].
    gemm_nt(n, D, d, w.beta, x, d, w.query.data(), d, 0.0, queries_.data(), D);
    gemm_nt(n, D, d, 1.0, x, d, w.key.data(), d, 0.0, keys_values_.data(), 2 * D);
    gemm_nt(n, D, d, 1.0, x, d, w.value.data(), d, 0.0, keys_values_.data() + D, 2 * D);
  }
  softmax_.reset();
  ring_.run(keys_values_.data(), [&](const double* block, std::int64_t rows, std::int64_t key_begin, int) {
    const double* log_mass = uniform_ ? nullptr : block + rows * 2 * D;  // [rows], after the block's rows
    softmax_.visit(queries_.data(), block, rows, log_mass, context_.causal, begin_, key_begin);
  });
  if (normalized_)
    softmax_.normalized(out);
  else
    softmax_.unnormalized(1.0 / static_cast<double>(context_.partition.n_global), out);
}

void RingAttention::set_masses(const double* masses) {
  const std::int64_t n_global = context_.partition.n_global;
  uniform_ = validate_masses(context_.comm, n_local_, n_global, masses);
  // log(N w_j): 0 for w_j = 1/N, -inf for w_j = 0 (its exp is 0, the token drops out).
  double* log_mass = keys_values_.data() + n_local_ * 2 * width_;
  const double n = static_cast<double>(n_global);
  for (std::int64_t j = 0; j < n_local_; ++j) log_mass[j] = std::log(n * masses[j]);
}

}  // namespace tokdyn
