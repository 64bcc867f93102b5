#include "tokdyn/power/power_layer.hpp"

#include <algorithm>
#include <cmath>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

PowerLayer::PowerLayer(MPI_Comm comm, const Partition& partition, int d, int width, const PowerLayerOptions& options)
    : comm_(comm), partition_(partition), d_(d), width_(width), options_(options) {
  attention_styles().require(options_.attention);
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  begin_ = partition_.begin(rank);
  n_local_ = partition_.count(rank);
  z_.resize(static_cast<std::size_t>(n_local_) * width_);
  y_.resize(static_cast<std::size_t>(n_local_) * d_);
}

void PowerLayer::apply(const LayerWeights& w, std::int64_t layer, double* x) {
  if (w.d != d_ || w.width() != width_)
    throw InputError("layer " + std::to_string(layer) + " has d = " + std::to_string(w.d) + ", D = " +
                     std::to_string(w.width()) + "; the run was set up for d = " + std::to_string(d_) + ", D = " +
                     std::to_string(width_));
  AttentionWeights aw;
  aw.d = w.d;
  aw.heads = w.heads;
  aw.beta = w.score_scale;
  aw.query = w.query;
  aw.key = w.key;
  aw.value = w.value;
  if (!attention_) {
    AttentionContext c;
    c.comm = comm_;
    c.partition = partition_;
    c.weights = std::move(aw);
    c.tile = options_.tile;
    c.causal = options_.causal;
    attention_ = attention_styles().make(options_.attention, c);
  } else {
    attention_->set_weights(aw);
  }
  const int n = static_cast<int>(n_local_), d = d_, D = width_;
  attention_->apply(x, z_.data());
  // y = r x + z O^T: [n, d] = [n, D] [d, D]^T, i.e. y_i = r x_i + sum_h O_h z_i^h.
  const bool residual = options_.residual;
  if (residual) std::copy(x, x + static_cast<std::size_t>(n) * d, y_.begin());
  if (n > 0) gemm_nt(n, d, D, 1.0, z_.data(), D, w.output.data(), D, residual ? 1.0 : 0.0, y_.data(), d);

  // N(y) = y / |y|; the first token (global index) with a zero or non-finite output is reported.
  std::int64_t bad = partition_.n_global;
  for (int i = 0; i < n; ++i) {
    double* yi = y_.data() + static_cast<std::size_t>(i) * d;
    double s = 0;
    for (int a = 0; a < d; ++a) s += yi[a] * yi[a];
    if (!(s > 0) || !std::isfinite(s)) {
      bad = std::min(bad, begin_ + i);
      continue;
    }
    const double inv = 1.0 / std::sqrt(s);
    for (int a = 0; a < d; ++a) x[static_cast<std::size_t>(i) * d + a] = yi[a] * inv;
  }
  std::int64_t first_bad = bad;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&bad, &first_bad, 1, MPI_INT64_T, MPI_MIN, comm_));
  if (first_bad < partition_.n_global)
    throw InputError("layer " + std::to_string(layer) + ": the output of token " + std::to_string(first_bad) +
                     " is zero or not finite (NaN/Inf in the weights or tokens?)");
}

}  // namespace tokdyn
