#include "tokdyn/spectral/power_layer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/attention/softmax_kernels.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/gather.hpp"

namespace tokdyn {

namespace {
constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
}

PowerAttention power_attention(const std::string& name) {
  if (name == "softmax") return PowerAttention::softmax;
  if (name == "uniform") return PowerAttention::uniform;
  if (name == "identity") return PowerAttention::identity;
  throw InputError("power.attention = '" + name + "' is not one of softmax, uniform, identity");
}

const char* power_attention_name(PowerAttention kind) {
  switch (kind) {
    case PowerAttention::softmax: return "softmax";
    case PowerAttention::uniform: return "uniform";
    case PowerAttention::identity: return "identity";
  }
  return "?";
}

PowerLayer::PowerLayer(MPI_Comm comm, const Partition& partition, int d, int width, const PowerLayerOptions& options)
    : comm_(comm), partition_(partition), d_(d), width_(width), options_(options), ring_(comm, partition, 2 * width) {
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  begin_ = partition_.begin(rank_);
  n_local_ = partition_.count(rank_);
  const std::size_t n = n_local_, D = width_;
  z_.resize(n * D);
  y_.resize(n * d_);
  if (options_.attention == PowerAttention::softmax) {
    queries_.resize(n * D);
    keys_values_.resize(n * 2 * D);
    tile_.resize(static_cast<std::size_t>(options_.tile) * options_.tile);
  }
}

void PowerLayer::apply(const LayerWeights& w, std::int64_t layer, double* x) {
  if (w.d != d_ || w.width() != width_)
    throw InputError("layer " + std::to_string(layer) + " has d = " + std::to_string(w.d) + ", D = " +
                     std::to_string(w.width()) + "; the run was set up for d = " + std::to_string(d_) + ", D = " +
                     std::to_string(width_));
  const int n = static_cast<int>(n_local_), d = d_, D = width_;
  switch (options_.attention) {
    case PowerAttention::softmax: softmax_sums(w, x); break;
    case PowerAttention::uniform: uniform_sums(w, x); break;
    case PowerAttention::identity:
      // z_i = V x_i [n, D] = x [n, d] V^T (V [D, d])
      if (n > 0) gemm_nt(n, D, d, 1.0, x, d, w.value.data(), d, 0.0, z_.data(), D);
      break;
  }
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

void PowerLayer::uniform_sums(const LayerWeights& w, const double* x) {
  const int n = static_cast<int>(n_local_), d = d_, D = width_;
  // V x_j [n, D] in z_, then this rank's total sum_j V x_j [D].
  if (n > 0) gemm_nt(n, D, d, 1.0, x, d, w.value.data(), d, 0.0, z_.data(), D);
  std::vector<double> total(D, 0.0);
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < D; ++a) total[a] += z_[static_cast<std::size_t>(i) * D + a];
  // Every rank's total [P, D], summed in rank order (the same on every rank).
  const Partition one_each(partition_.ranks, partition_.ranks);
  const std::vector<double> totals = allgather_rows(comm_, one_each, total, D);
  std::vector<double> acc(D, 0.0);
  if (!options_.causal) {
    for (int r = 0; r < partition_.ranks; ++r)
      for (int a = 0; a < D; ++a) acc[a] += totals[static_cast<std::size_t>(r) * D + a];
    const double inv_n = 1.0 / static_cast<double>(partition_.n_global);
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < D; ++a) z_[static_cast<std::size_t>(i) * D + a] = acc[a] * inv_n;
    return;
  }
  // Causal: z_i = (1/(i+1)) sum_{j <= i} V x_j, the ranks before this one's totals first.
  for (int r = 0; r < rank_; ++r)
    for (int a = 0; a < D; ++a) acc[a] += totals[static_cast<std::size_t>(r) * D + a];
  for (int i = 0; i < n; ++i) {
    double* zi = z_.data() + static_cast<std::size_t>(i) * D;
    const double inv = 1.0 / static_cast<double>(begin_ + i + 1);
    for (int a = 0; a < D; ++a) {
      acc[a] += zi[a];
      zi[a] = acc[a] * inv;
    }
  }
}

void PowerLayer::softmax_sums(const LayerWeights& w, const double* x) {
  const int n = static_cast<int>(n_local_), d = d_, D = width_, H = w.heads, dh = w.head_dim;
  if (n > 0) {
    // queries = score_scale x Q^T [n, D]; keys x K^T and values x V^T side by side [n, 2D].
    gemm_nt(n, D, d, w.score_scale, x, d, w.query.data(), d, 0.0, queries_.data(), D);
    gemm_nt(n, D, d, 1.0, x, d, w.key.data(), d, 0.0, keys_values_.data(), 2 * D);
    gemm_nt(n, D, d, 1.0, x, d, w.value.data(), d, 0.0, keys_values_.data() + D, 2 * D);
  }
  std::fill(z_.begin(), z_.end(), 0.0);
  max_.assign(static_cast<std::size_t>(n) * H, kMinusInf);
  sum_.assign(static_cast<std::size_t>(n) * H, 0.0);
  ring_.run(keys_values_.data(), [&](const double* block, std::int64_t rows, std::int64_t global_begin, int) {
    visit(block, rows, global_begin, H, dh);
  });
  for (int i = 0; i < n; ++i)
    for (int h = 0; h < H; ++h) {
      const double inv = 1.0 / sum_[static_cast<std::size_t>(i) * H + h];
      double* zi = z_.data() + static_cast<std::size_t>(i) * D + static_cast<std::size_t>(h) * dh;
      for (int a = 0; a < dh; ++a) zi[a] *= inv;
    }
}

void PowerLayer::visit(const double* block, std::int64_t rows, std::int64_t global_begin, int H, int dh) {
  const int D = width_, width = 2 * D, tile = options_.tile;
  const bool causal = options_.causal;
  for (std::int64_t i0 = 0; i0 < n_local_; i0 += tile) {
    const int bq = static_cast<int>(std::min<std::int64_t>(tile, n_local_ - i0));
    const std::int64_t last_query = begin_ + i0 + bq - 1;  // global index of the tile's last query
    for (std::int64_t j0 = 0; j0 < rows; j0 += tile) {
      if (causal && global_begin + j0 > last_query) break;  // every key of this and later tiles is masked
      const int bk = static_cast<int>(std::min<std::int64_t>(tile, rows - j0));
      for (int h = 0; h < H; ++h) {
        const double* keys = block + j0 * width + static_cast<std::size_t>(h) * dh;  // [bk, dh], stride 2D
        const double* values = keys + D;                                             // [bk, dh], stride 2D
        double* s = tile_.data();                                                    // [bq, bk]
        // s_ij = score_scale <Q_h x_i, K_h x_j>
        gemm_nt(bq, bk, dh, 1.0, queries_.data() + i0 * D + static_cast<std::size_t>(h) * dh, D, keys, width, 0.0,
                s, bk);
        for (int i = 0; i < bq; ++i) {
          double* si = s + static_cast<std::size_t>(i) * bk;
          if (causal) {
            // keys j with global index > the query's are masked out (weight exp(-inf) = 0)
            const std::int64_t first_masked = begin_ + i0 + i + 1 - (global_begin + j0);
            for (std::int64_t j = std::max<std::int64_t>(first_masked, 0); j < bk; ++j) si[j] = kMinusInf;
          }
          const std::size_t slot = static_cast<std::size_t>(i0 + i) * H + h;
          double& m = max_[slot];
          double& l = sum_[slot];
          const double tile_max = row_max(si, bk);
          if (tile_max > m) {
            // Rescale what was accumulated under the old maximum (exp(-inf) = 0 on the first tile).
            const double scale = std::exp(m - tile_max);
            l *= scale;
            double* zi = z_.data() + static_cast<std::size_t>(i0 + i) * D + static_cast<std::size_t>(h) * dh;
            for (int a = 0; a < dh; ++a) zi[a] *= scale;
            m = tile_max;
          }
          if (m == kMinusInf) {
            // Every key so far masked: no weight yet, and s - m would be NaN.
            std::fill(si, si + bk, 0.0);
            continue;
          }
          l += shifted_exp_sum(si, bk, m);
        }
        // z^h[i0:i0+bq] += weights [bq, bk] * values_h [bk, dh]
        gemm_nn(bq, dh, bk, 1.0, s, bk, values, width, 1.0,
                z_.data() + i0 * D + static_cast<std::size_t>(h) * dh, D);
      }
    }
  }
}

}  // namespace tokdyn
