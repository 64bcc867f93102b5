#include "tokdyn/attention/ring_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/pairs/masses.hpp"
#include "tokdyn/pairs/pair_kernels.hpp"

namespace tokdyn {

const KeyTable<AttentionSpec>& RingAttention::keys() {
  static const KeyTable<AttentionSpec> table = KeyTable<AttentionSpec>("attention").either(
      "precision", &AttentionSpec::single_tiles, {"float64", "float32"}, false,
      "exact styles: the tiles' products (logits, value sums) in float64 or float32 (general ring: the "
      "exponentials, the running maximum and the sums across tiles stay float64; half ring: the pair weights in "
      "float32 too, the sums across tiles in float64)");
  return table;
}

namespace {

// The side of a tile's buffers: run.tile, or the token count when it is smaller (a tile never spans more than the N
// tokens, so the tiles are the same; a few tokens need no tile-sized buffers: tokdyn mlmc builds one attention per
// sample).
int tile_side(const AttentionContext& context) {
  const std::int64_t n = context.partition.n_global;
  return n > 0 ? static_cast<int>(std::min<std::int64_t>(context.tile, n)) : context.tile;
}

}  // namespace

RingAttention::RingAttention(const AttentionContext& context, bool normalized)
    : AttentionStyle(context, normalized ? "softmax" : "unnormalized"),
      normalized_(normalized),
      ring_(context.comm, context.partition, 2 * context.weights.width() + 1),
      width_(context.weights.width()),
      softmax_(n_local_, context.weights.heads, context.weights.head_dim(), tile_side(context), context.single_tiles) {
  const std::size_t n = n_local_, D = width_;
  queries_.resize(n * D);
  keys_values_.assign(n * (2 * D + 1), 0.0);  // log masses 0: uniform
  find_symmetric_logits();
}

void RingAttention::find_symmetric_logits() {
  scale_.reset();
  root_.clear();
  const AttentionWeights& w = context_.weights;
  if (!context_.symmetric || context_.causal || w.heads != 1) return;
  const int d = w.d, D = w.width();
  // Q = q I and K = k I exactly: the logits are c <x_i, x_j>, c = beta q k.
  bool multiples = D == d;
  for (int a = 0; a < d && multiples; ++a)
    for (int b = 0; b < d; ++b) {
      const std::size_t at = static_cast<std::size_t>(a) * d + b;
      if (w.query[at] != (a == b ? w.query[0] : 0.0) || w.key[at] != (a == b ? w.key[0] : 0.0)) multiples = false;
    }
  if (multiples) {
    const double c = w.beta * w.query[0] * w.key[0];
    if (c >= 0 && std::isfinite(c)) scale_ = c;
    return;
  }
  // Otherwise M = beta Q^T K [d, d]: symmetric (to 1e-14 of its largest entry) and positive semi-definite (its
  // most negative eigenvalue within 1e-12 of the largest) makes the logits <R x_i, R x_j> with R = M^{1/2}.
  std::vector<double> m(static_cast<std::size_t>(d) * d);
  gemm_tn(d, d, D, w.beta, w.query.data(), d, w.key.data(), d, 0.0, m.data(), d);
  double largest = 0, asymmetry = 0;
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b)
      largest = std::max(largest, std::abs(m[a * d + b])),
      asymmetry = std::max(asymmetry, std::abs(m[a * d + b] - m[b * d + a]));
  if (!(largest > 0) || !std::isfinite(largest) || asymmetry > 1e-14 * largest) return;
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < a; ++b) m[a * d + b] = m[b * d + a] = 0.5 * (m[a * d + b] + m[b * d + a]);
  std::vector<double> root(m.size());
  if (symmetric_sqrt(d, m.data(), root.data()) < -1e-12 * largest) return;  // indefinite: e^{s_ij} unbounded
  root_ = std::move(root);
  scale_ = 1.0;
}

void RingAttention::set_weights(const AttentionWeights& weights) {
  AttentionStyle::set_weights(weights);
  find_symmetric_logits();
}

bool RingAttention::apply_symmetric(const double* x, double* out, PairStatisticsPass* statistics) {
  const std::int64_t n = n_local_;
  const int d = context_.weights.d, D = width_, A = D + 1, tile = context_.tile;
  const double c = *scale_;
  if (!half_) {
    half_.emplace(context_.comm, context_.partition, d + 1 + A, A);
    packed_.resize(static_cast<std::size_t>(n) * (d + 1 + A));
    rows_acc_.resize(static_cast<std::size_t>(n) * A);
    home_acc_.resize(rows_acc_.size());
    const std::size_t side = static_cast<std::size_t>(tile_side(context_));
    gram_.resize(side * side);
    weights_.resize(gram_.size());
  }
  double* y = packed_.data();  // [n, d]: the tokens, or R x_i when the logits are <R x_i, R x_j> (then c = 1)
  double* h = y + n * d;       // [n]
  double* uv = h + n;          // [n, A]
  if (root_.empty())
    std::copy(x, x + n * d, y);
  else if (n > 0)
    gemm_nn(static_cast<int>(n), d, d, 1.0, x, d, root_.data(), d, 0.0, y, d);  // R symmetric: y = x R
  half_beta_norms(y, n, d, c, h);
  double range[2] = {-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}, all[2];
  for (std::int64_t i = 0; i < n; ++i) range[0] = std::max(range[0], h[i]), range[1] = std::max(range[1], -h[i]);
  TOKDYN_MPI_CHECK(MPI_Allreduce(range, all, 2, MPI_DOUBLE, MPI_MAX, context_.comm));
  const double top = all[0];
  // u_j = e^{h_j - M} >= e^{-600} keeps every row's own term (weight 1) far from underflow.
  if (!(top + all[1] <= 600)) return false;
  if (n > 0) gemm_nt(static_cast<int>(n), D, d, 1.0, x, d, context_.weights.value.data(), d, 0.0, uv, A);
  for (std::int64_t j = 0; j < n; ++j) {
    const double u = std::exp(h[j] - top);
    for (int a = 0; a < D; ++a) uv[j * A + a] *= u;
    uv[j * A + D] = u;
  }
  std::copy(uv, uv + n * A, rows_acc_.begin());  // the own terms, weight e^0 = 1
  if (statistics) statistics->reset_sums();
  if (context_.single_tiles) {
    visit_single(y, h, uv);
  } else {
    half_->run(
        packed_.data(),
        [&](const double* block, double* block_acc, std::int64_t rows, std::int64_t block_begin, const PairRange& r) {
          const double* block_h = block + rows * d;
          const double* block_uv = block_h + rows;
          gram_tiles(y, block, d, r, begin_, block_begin, tile, gram_.data(),
                     [&](std::int64_t i0, int bi, std::int64_t j0, int bj, const double* g) {
                       double* w = weights_.data();  // [bi, bj]
                       for (int i = 0; i < bi; ++i) {
                         const int first = first_column(r, begin_, i0, i, block_begin, j0, bj);
                         double* wr = w + static_cast<std::size_t>(i) * bj;
                         std::fill(wr, wr + first, 0.0);
                         const double* gr = g + static_cast<std::size_t>(i) * bj + first;
                         if (statistics)
                           statistics->add_pairs(gr, block_h + j0 + first, bj - first, h[i0 + i], wr + first);
                         else
                           pair_row_weights(gr, block_h + j0 + first, bj - first, c, h[i0 + i], wr + first);
                       }
                       // row i += sum_j w_ij (u_j V x_j, u_j); row j += sum_i w_ij (u_i V x_i, u_i)
                       gemm_nn(bi, A, bj, 1.0, w, bj, block_uv + j0 * A, A, 1.0, rows_acc_.data() + i0 * A, A);
                       gemm_tn(bj, A, bi, 1.0, w, bj, uv + i0 * A, A, 1.0, block_acc + j0 * A, A);
                     });
        },
        home_acc_.data());
  }
  const double n_global = static_cast<double>(context_.partition.n_global);
  for (std::int64_t i = 0; i < n; ++i) {
    const double* r = rows_acc_.data() + i * A;
    const double* o = home_acc_.data() + i * A;
    if (normalized_) {
      const double l = r[D] + o[D];
      for (int a = 0; a < D; ++a) out[i * D + a] = (r[a] + o[a]) / l;
    } else {
      // sum_j e^{s_ij} V x_j = e^{h_i + M} (row sums)
      const double factor = std::exp(h[i] + top) / n_global;
      for (int a = 0; a < D; ++a) out[i * D + a] = (r[a] + o[a]) * factor;
    }
  }
  return true;
}

void RingAttention::visit_single(const double* y, const double* h, const double* uv) {
  // The half ring with float32 tiles: the Gram entries, the weights e^{-c |x_i - x_j|^2 / 2} (exp_nonpositive_float,
  // in the Gram tile's place) and the two value products in float (one copy of the own rows, one of each
  // visiting block); every sum across tiles in double.
  const std::int64_t n = n_local_;
  const int d = context_.weights.d, A = width_ + 1, tile = context_.tile;
  const float c = static_cast<float>(*scale_);
  x32_.assign(y, y + n * d);
  h32_.assign(h, h + n);
  uv32_.assign(uv, uv + n * A);
  const std::size_t side = static_cast<std::size_t>(tile_side(context_));
  tile32_.resize(side * side);
  sums32_.resize(static_cast<std::size_t>(tile) * A);
  half_->run(
      packed_.data(),
      [&](const double* block, double* block_acc, std::int64_t rows, std::int64_t block_begin, const PairRange& r) {
        const double* block_h = block + rows * d;
        block32_.assign(block, block + rows * d);                       // tokens [rows, d]
        block_h32_.assign(block_h, block_h + rows);                     // [rows]
        block_uv32_.assign(block_h + rows, block_h + rows + rows * A);  // (u_j V x_j, u_j) [rows, A]
        gram_tiles(x32_.data(), block32_.data(), d, r, begin_, block_begin, tile, tile32_.data(),
                   [&](std::int64_t i0, int bi, std::int64_t j0, int bj, const float*) {
                     float* w32 = tile32_.data();  // [bi, bj]: the Gram tile, turned into the weights in place
                     for (int i = 0; i < bi; ++i) {
                       const int first = first_column(r, begin_, i0, i, block_begin, j0, bj);
                       float* wr = w32 + static_cast<std::size_t>(i) * bj;
                       std::fill(wr, wr + first, 0.0f);
                       pair_row_weights(wr + first, block_h32_.data() + j0 + first, bj - first, c, h32_[i0 + i],
                                        wr + first);
                     }
                     gemm_nn(bi, A, bj, 1.0f, w32, bj, block_uv32_.data() + j0 * A, A, 0.0f, sums32_.data(), A);
                     double* rows_acc = rows_acc_.data() + i0 * A;
                     for (std::size_t k = 0; k < static_cast<std::size_t>(bi) * A; ++k) rows_acc[k] += sums32_[k];
                     gemm_tn(bj, A, bi, 1.0f, w32, bj, uv32_.data() + i0 * A, A, 0.0f, sums32_.data(), A);
                     double* acc = block_acc + j0 * A;
                     for (std::size_t k = 0; k < static_cast<std::size_t>(bj) * A; ++k) acc[k] += sums32_[k];
                   });
      },
      home_acc_.data());
}

bool RingAttention::apply_with_statistics(const double* x, double* out, PairStatisticsPass& statistics,
                                          PairStatistics& result) {
  // Float32 tiles: the statistics' cosines would be float32 too; they keep their own float64 pass.
  if (scale_ && root_.empty() && uniform_ && !context_.single_tiles && statistics.fusable(*scale_, context_.tile) &&
      apply_symmetric(x, out, &statistics)) {
    took_symmetric_ = true;
    result = statistics.finish(x);
    return true;
  }
  apply(x, out);
  return false;
}

void RingAttention::apply(const double* x, double* out) {
  const int n = static_cast<int>(n_local_), d = context_.weights.d, D = width_;
  took_symmetric_ = scale_ && uniform_ && apply_symmetric(x, out, nullptr);
  if (took_symmetric_) return;
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
