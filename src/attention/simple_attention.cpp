#include "tokdyn/attention/simple_attention.hpp"

#include <algorithm>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/gather.hpp"
#include "tokdyn/pairs/masses.hpp"

namespace tokdyn {

void UniformAttention::set_masses(const double* masses) {
  const bool uniform = validate_masses(context_.comm, n_local_, context_.partition.n_global, masses);
  if (uniform)
    masses_.clear();
  else
    masses_.assign(masses, masses + n_local_);
}

void UniformAttention::apply(const double* x, double* out) {
  const AttentionWeights& w = context_.weights;
  const int n = static_cast<int>(n_local_), d = w.d, D = w.width();
  const bool weighted = !masses_.empty();
  // V x_j [n, D] in out, then this rank's total sum_j w_j V x_j [D] (and sum_j w_j, weighted only).
  if (n > 0) gemm_nt(n, D, d, 1.0, x, d, w.value.data(), d, 0.0, out, D);
  const int columns = weighted ? D + 1 : D;
  std::vector<double> total(columns, 0.0);
  for (int i = 0; i < n; ++i) {
    const double wi = weighted ? masses_[i] : 1.0;
    for (int a = 0; a < D; ++a) total[a] += weighted ? wi * out[static_cast<std::size_t>(i) * D + a]
                                                     : out[static_cast<std::size_t>(i) * D + a];
    if (weighted) total[D] += wi;
  }
  // Every rank's total [P, columns], summed in rank order (the same on every rank).
  const Partition one_each(context_.partition.ranks, context_.partition.ranks);
  const std::vector<double> totals = allgather_rows(context_.comm, one_each, total, columns);
  std::vector<double> acc(columns, 0.0);
  if (!context_.causal) {
    for (int r = 0; r < context_.partition.ranks; ++r)
      for (int a = 0; a < columns; ++a) acc[a] += totals[static_cast<std::size_t>(r) * columns + a];
    // sum_j w_j = 1 (validated), so the weighted sum is the mean already.
    const double inv_n = weighted ? 1.0 : 1.0 / static_cast<double>(context_.partition.n_global);
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < D; ++a) out[static_cast<std::size_t>(i) * D + a] = acc[a] * inv_n;
    return;
  }
  // Causal: out_i = sum_{j <= i} w_j V x_j / sum_{j <= i} w_j, the ranks before this one's totals first.
  for (int r = 0; r < rank_; ++r)
    for (int a = 0; a < columns; ++a) acc[a] += totals[static_cast<std::size_t>(r) * columns + a];
  for (int i = 0; i < n; ++i) {
    double* oi = out + static_cast<std::size_t>(i) * D;
    if (weighted) acc[D] += masses_[i];
    // A token whose prefix has no mass yet sees nothing (0), rather than 0/0.
    const double inv = weighted ? (acc[D] > 0 ? 1.0 / acc[D] : 0.0) : 1.0 / static_cast<double>(begin_ + i + 1);
    for (int a = 0; a < D; ++a) {
      acc[a] += weighted ? masses_[i] * oi[a] : oi[a];
      oi[a] = acc[a] * inv;
    }
  }
}

void IdentityAttention::set_masses(const double* masses) {
  validate_masses(context_.comm, n_local_, context_.partition.n_global, masses);
}

void IdentityAttention::apply(const double* x, double* out) {
  const AttentionWeights& w = context_.weights;
  const int n = static_cast<int>(n_local_), d = w.d, D = w.width();
  // out_i = V x_i [n, D] = x [n, d] V^T (V [D, d])
  if (n > 0) gemm_nt(n, D, d, 1.0, x, d, w.value.data(), d, 0.0, out, D);
}

}  // namespace tokdyn
