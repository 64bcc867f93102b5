#include "tokdyn/pairs/online_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/pairs/softmax_kernels.hpp"

namespace tokdyn {

namespace {
constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
}

OnlineSoftmax::OnlineSoftmax(std::int64_t n, int heads, int head_dim, int tile, bool single)
    : n_(n), heads_(heads), head_dim_(head_dim), width_(heads * head_dim), tile_size_(tile), single_(single) {
  acc_.resize(static_cast<std::size_t>(n_) * width_);
  max_.resize(static_cast<std::size_t>(n_) * heads_);
  sum_.resize(max_.size());
  tile_.resize(static_cast<std::size_t>(tile_size_) * tile_size_);
  if (single_) {
    queries32_.resize(acc_.size());
    tile32_.resize(tile_.size());
    sums32_.resize(static_cast<std::size_t>(tile_size_) * head_dim_);
  }
}

void OnlineSoftmax::reset() {
  std::fill(acc_.begin(), acc_.end(), 0.0);
  std::fill(max_.begin(), max_.end(), kMinusInf);
  std::fill(sum_.begin(), sum_.end(), 0.0);
  queries32_ready_ = false;
}

void OnlineSoftmax::visit(const double* queries, const double* block, std::int64_t rows, const double* log_mass,
                          bool causal, std::int64_t query_begin, std::int64_t key_begin) {
  const int D = width_, H = heads_, dh = head_dim_, stride = 2 * D, tile = tile_size_;
  if (single_) {
    // float copies of the queries (once per pass: every visit of a pass has the same ones) and of this
    // visit's block: O(rows D), against the visit's O(n rows D).
    if (!queries32_ready_) std::copy(queries, queries + n_ * D, queries32_.begin());
    queries32_ready_ = true;
    block32_.assign(block, block + rows * stride);
  }
  for (std::int64_t i0 = 0; i0 < n_; i0 += tile) {
    const int bq = static_cast<int>(std::min<std::int64_t>(tile, n_ - i0));
    const std::int64_t last_query = query_begin + i0 + bq - 1;  // global index of the tile's last query
    for (std::int64_t j0 = 0; j0 < rows; j0 += tile) {
      if (causal && key_begin + j0 > last_query) break;  // every key of this and later tiles is masked
      const int bk = static_cast<int>(std::min<std::int64_t>(tile, rows - j0));
      for (int h = 0; h < H; ++h) {
        const double* keys = block + j0 * stride + static_cast<std::size_t>(h) * dh;  // [bk, dh], stride 2D
        const double* values = keys + D;                                              // [bk, dh], stride 2D
        double* s = tile_.data();                                                     // [bq, bk]
        // s_ij = <q_i^h, K_h x_j> (+ log(N w_j))
        const std::size_t head = static_cast<std::size_t>(h) * dh;
        if (single_) {
          gemm_nt(bq, bk, dh, 1.0f, queries32_.data() + i0 * D + head, D, block32_.data() + j0 * stride + head,
                   stride, 0.0f, tile32_.data(), bk);
          std::copy(tile32_.begin(), tile32_.begin() + static_cast<std::size_t>(bq) * bk, s);
        } else {
          gemm_nt(bq, bk, dh, 1.0, queries + i0 * D + head, D, keys, stride, 0.0, s, bk);
        }
        if (log_mass)
          for (int i = 0; i < bq; ++i)
            for (int j = 0; j < bk; ++j) s[static_cast<std::size_t>(i) * bk + j] += log_mass[j0 + j];
        for (int i = 0; i < bq; ++i) {
          double* si = s + static_cast<std::size_t>(i) * bk;
          if (causal) {
            // keys with a global index above the query's get weight exp(-inf) = 0
            const std::int64_t first_masked = query_begin + i0 + i + 1 - (key_begin + j0);
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
            double* acc = acc_.data() + static_cast<std::size_t>(i0 + i) * D + static_cast<std::size_t>(h) * dh;
            for (int a = 0; a < dh; ++a) acc[a] *= scale;
            m = tile_max;
          }
          if (m == kMinusInf) {
            // Every key so far masked or of zero mass: no weight yet, and s - m would be NaN.
            std::fill(si, si + bk, 0.0);
            continue;
          }
          l += shifted_exp_sum(si, bk, m);
        }
        // acc^h[i0:i0+bq] += weights [bq, bk] * values_h [bk, dh]
        double* acc = acc_.data() + i0 * D + head;
        if (single_) {
          std::copy(s, s + static_cast<std::size_t>(bq) * bk, tile32_.begin());
          gemm_nn(bq, dh, bk, 1.0f, tile32_.data(), bk, block32_.data() + j0 * stride + D + head, stride, 0.0f,
                   sums32_.data(), dh);
          for (int i = 0; i < bq; ++i)
            for (int a = 0; a < dh; ++a) acc[static_cast<std::size_t>(i) * D + a] += sums32_[i * dh + a];
        } else {
          gemm_nn(bq, dh, bk, 1.0, s, bk, values, stride, 1.0, acc, D);
        }
      }
    }
  }
}

void OnlineSoftmax::normalized(double* out) const {
  const int D = width_, H = heads_, dh = head_dim_;
  for (std::int64_t i = 0; i < n_; ++i)
    for (int h = 0; h < H; ++h) {
      const double l = sum_[static_cast<std::size_t>(i) * H + h];
      const std::size_t at = static_cast<std::size_t>(i) * D + static_cast<std::size_t>(h) * dh;
      // l = 0: every key masked or massless (a causal prefix of zero mass): the row sees nothing, not 0/0.
      for (int a = 0; a < dh; ++a) out[at + a] = l > 0 ? acc_[at + a] / l : 0.0;
    }
}

void OnlineSoftmax::unnormalized(double scale, double* out) const {
  const int D = width_, H = heads_, dh = head_dim_;
  for (std::int64_t i = 0; i < n_; ++i)
    for (int h = 0; h < H; ++h) {
      const double factor = std::exp(max_[static_cast<std::size_t>(i) * H + h]) * scale;
      const std::size_t at = static_cast<std::size_t>(i) * D + static_cast<std::size_t>(h) * dh;
      for (int a = 0; a < dh; ++a) out[at + a] = acc_[at + a] * factor;
    }
}

}  // namespace tokdyn
