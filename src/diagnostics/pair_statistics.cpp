#include "tokdyn/diagnostics/pair_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/pairs/energy.hpp"
#include "tokdyn/pairs/masses.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"

namespace tokdyn {

PairStatisticsPass::PairStatisticsPass(MPI_Comm comm, const Partition& partition, int d, double beta, int bins,
                                       int tile, double cluster_cosine)
    : comm_(comm), ring_(comm, partition, d + 1), d_(d), bins_(bins), tile_(tile), beta_(beta),
      cluster_cosine_(cluster_cosine) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  n_local_ = partition.count(rank);
  local_begin_ = partition.begin(rank);
  gram_.resize(static_cast<std::size_t>(tile_) * tile_);
  counts_.resize(bins_ + 2);  // the histogram, then the aligned and antipodal pairs
  mass_counts_.resize(bins_ + 2);  // the histogram, then the aligned and antipodal pairs
  packed_.resize(static_cast<std::size_t>(n_local_) * (d_ + 1));
  std::fill(packed_.begin() + n_local_ * d_, packed_.end(), 1.0 / static_cast<double>(partition.n_global));
}

std::vector<double> PairStatisticsPass::bin_edges() const {
  std::vector<double> e(bins_ + 1);
  for (int b = 0; b <= bins_; ++b) e[b] = -1.0 + 2.0 * b / bins_;
  return e;
}

void PairStatisticsPass::set_masses(const double* masses) {
  uniform_ = validate_masses(comm_, n_local_, ring_.partition().n_global, masses);
  std::copy(masses, masses + n_local_, packed_.begin() + n_local_ * d_);
}

PairStatistics PairStatisticsPass::compute(const double* x) {
  energy_sum_ = cosine_sum_ = pair_mass_ = 0;
  cosine_min_ = std::numeric_limits<double>::infinity();
  std::fill(counts_.begin(), counts_.end(), 0);
  std::fill(mass_counts_.begin(), mass_counts_.end(), 0.0);
  std::copy(x, x + n_local_ * d_, packed_.begin());
  const double* w = packed_.data() + n_local_ * d_;  // [n_local] own masses
  // Each unordered pair of blocks is visited once (a half ring): the own block counts its pairs i < j,
  // blocks at distances 1 .. ceil(P/2) - 1 count every pair, and the block pair at distance P/2
  // (P even) is split: the lower rank takes the first half of its rows, the upper rank the rest of
  // them. Every rank does about N^2 / (2P) pairs.
  const int p = ring_.size(), rank = ring_.rank();
  ring_.run(
      packed_.data(),
      [&](const double* block, std::int64_t rows, std::int64_t begin, int step) {
        const double* masses = block + rows * d_;  // [rows], after the block's tokens
        if (step == 0)
          visit(x, 0, n_local_, block, masses, 0, rows, begin, true);
        else if (2 * step < p)
          visit(x, 0, n_local_, block, masses, 0, rows, begin, false);
        else if (rank < p / 2)
          visit(x, 0, n_local_ / 2, block, masses, 0, rows, begin, false);
        else
          visit(x, 0, n_local_, block, masses, rows / 2, rows, begin, false);
      },
      p / 2 + 1);

  // Diagonal terms of E_beta e^{-beta} (zero up to round-off for unit tokens) and the local (weighted) sum of x.
  double diagonal = 0;
  std::vector<double> sum_x(d_, 0.0);
  for (std::int64_t i = 0; i < n_local_; ++i) {
    double sq = 0;
    if (uniform_) {
      for (int a = 0; a < d_; ++a) sq += x[i * d_ + a] * x[i * d_ + a], sum_x[a] += x[i * d_ + a];
      diagonal += -std::expm1(beta_ * (sq - 1));
    } else {
      for (int a = 0; a < d_; ++a) sq += x[i * d_ + a] * x[i * d_ + a], sum_x[a] += w[i] * x[i * d_ + a];
      diagonal += w[i] * w[i] * -std::expm1(beta_ * (sq - 1));
    }
  }
  double sums[4] = {energy_sum_, cosine_sum_, diagonal, pair_mass_}, total[4];
  TOKDYN_MPI_CHECK(MPI_Allreduce(sums, total, 4, MPI_DOUBLE, MPI_SUM, comm_));
  std::vector<double> mean_x(d_);
  TOKDYN_MPI_CHECK(MPI_Allreduce(sum_x.data(), mean_x.data(), d_, MPI_DOUBLE, MPI_SUM, comm_));
  double min_cos = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&cosine_min_, &min_cos, 1, MPI_DOUBLE, MPI_MIN, comm_));
  PairStatistics out;
  out.histogram.resize(bins_ + 2);
  TOKDYN_MPI_CHECK(MPI_Allreduce(counts_.data(), out.histogram.data(), bins_ + 2, MPI_INT64_T, MPI_SUM, comm_));
  out.antipodal_pairs = out.histogram.back();
  out.histogram.pop_back();
  out.aligned_pairs = out.histogram.back();
  out.histogram.pop_back();
  out.mass_histogram.resize(bins_);

  const double n = static_cast<double>(ring_.partition().n_global);
  const double pairs = n * (n - 1) / 2;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double norm2 = 0;
  if (uniform_) {
    out.energy = energy_from_scaled(beta_, (2 * total[0] + total[2]) / (2 * n * n));
    for (double& m : mean_x) m /= n, norm2 += m * m;
    out.mean_cosine = pairs > 0 ? total[1] / pairs : nan;
    out.min_cosine = pairs > 0 ? min_cos : nan;
    for (int b = 0; b < bins_; ++b) out.mass_histogram[b] = static_cast<double>(out.histogram[b]);
  } else {
    TOKDYN_MPI_CHECK(MPI_Allreduce(mass_counts_.data(), out.mass_histogram.data(), bins_, MPI_DOUBLE, MPI_SUM, comm_));
    out.energy = energy_from_scaled(beta_, (2 * total[0] + total[2]) / 2);
    for (double m : mean_x) norm2 += m * m;
    // total[3] = sum_{i<j} w_i w_j: the mean over i != j has the same ratio.
    const double pair_mass = total[3];
    out.mean_cosine = pair_mass > 0 ? total[1] / pair_mass : nan;
    out.min_cosine = std::isfinite(min_cos) ? min_cos : nan;
    for (double& h : out.mass_histogram) h = pair_mass > 0 ? h * (pairs / pair_mass) : 0.0;
  }
  out.order_parameter = std::sqrt(norm2);
  return out;
}

void PairStatisticsPass::visit(const double* x, std::int64_t i_lo, std::int64_t i_hi, const double* block,
                               const double* block_masses, std::int64_t j_lo, std::int64_t j_hi,
                               std::int64_t block_begin, bool own_block) {
  for (std::int64_t i0 = i_lo; i0 < i_hi; i0 += tile_) {
    const int bi = static_cast<int>(std::min<std::int64_t>(tile_, i_hi - i0));
    const std::int64_t gi0 = local_begin_ + i0;
    for (std::int64_t j0 = j_lo; j0 < j_hi; j0 += tile_) {
      const int bj = static_cast<int>(std::min<std::int64_t>(tile_, j_hi - j0));
      const std::int64_t gj0 = block_begin + j0;
      if (own_block && gj0 + bj - 1 <= gi0) continue;  // within the own block only pairs i < j count
      double* g = gram_.data();           // [bi, bj] = x_i . x_j
      gemm_nt(bi, bj, d_, 1.0, x + i0 * d_, d_, block + j0 * d_, d_, 0.0, g, bj);
      for (int i = 0; i < bi; ++i) {
        const std::int64_t gi = gi0 + i;
        const int j_first = own_block ? static_cast<int>(std::clamp<std::int64_t>(gi + 1 - gj0, 0, bj)) : 0;
        const double* gr = g + static_cast<std::size_t>(i) * bj;
        if (uniform_) {
          for (int j = j_first; j < bj; ++j) {
            const double c = gr[j];
            // e^beta - e^{beta c} = -e^beta expm1(beta (c - 1)): no cancellation near a cluster; the
            // factor e^beta is applied once to the total (energy_from_scaled), so no sum of terms overflows.
            energy_sum_ += -std::expm1(beta_ * (c - 1));
            cosine_sum_ += c;
            cosine_min_ = std::min(cosine_min_, c);
            const int b = static_cast<int>(std::floor((c + 1) * 0.5 * bins_));
            ++counts_[std::clamp(b, 0, bins_ - 1)];
            counts_[bins_] += c > cluster_cosine_;
            counts_[bins_ + 1] += c < -cluster_cosine_;
          }
        } else {
          const double wi = packed_[n_local_ * d_ + i0 + i];
          const double* wj = block_masses + j0;
          for (int j = j_first; j < bj; ++j) {
            const double c = gr[j], wij = wi * wj[j];
            energy_sum_ += wij * -std::expm1(beta_ * (c - 1));
            cosine_sum_ += wij * c;
            pair_mass_ += wij;
            // A pair with a zero mass is not in the measure: it takes no part in the minimum.
            if (wi > 0 && wj[j] > 0) cosine_min_ = std::min(cosine_min_, c);
            const int b = std::clamp(static_cast<int>(std::floor((c + 1) * 0.5 * bins_)), 0, bins_ - 1);
            ++counts_[b];
            counts_[bins_] += c > cluster_cosine_;
            counts_[bins_ + 1] += c < -cluster_cosine_;
            mass_counts_[b] += wij;
          }
        }
      }
    }
  }
}

}  // namespace tokdyn
