#include "tokdyn/diagnostics/pair_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/pairs/energy.hpp"
#include "tokdyn/pairs/masses.hpp"
#include "tokdyn/pairs/pair_kernels.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

PairsMode pairs_mode(const std::string& name, std::int64_t n) {
  if (name == "auto") return n <= kExactPairsLimit ? PairsMode::exact : PairsMode::sampled;
  if (name == "exact") return PairsMode::exact;
  if (name == "sampled") return PairsMode::sampled;
  if (name == "off") return PairsMode::off;
  throw InputError("diagnostics.pairs must be auto, exact, sampled or off, not '" + name + "'");
}

const char* pairs_mode_name(PairsMode mode) {
  return mode == PairsMode::exact ? "exact" : mode == PairsMode::sampled ? "sampled" : "off";
}

PairStatisticsPass::PairStatisticsPass(MPI_Comm comm, const Partition& partition, int d, double beta, int bins,
                                       int tile, double cluster_cosine)
    : comm_(comm), ring_(comm, partition, d + 2, 0), d_(d), bins_(bins), tile_(tile), beta_(beta),
      cluster_cosine_(cluster_cosine) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  n_local_ = partition.count(rank);
  local_begin_ = partition.begin(rank);
  gram_.resize(static_cast<std::size_t>(tile_) * tile_);
  bin_scratch_.resize(tile_);
  counts_.resize(kHistogramCopies * bins_ + 2);  // the histogram's copies, then the aligned and antipodal pairs
  mass_counts_.resize(bins_);
  packed_.resize(static_cast<std::size_t>(n_local_) * (d_ + 2));
  std::fill(packed_.begin() + n_local_ * d_, packed_.begin() + n_local_ * (d_ + 1),
            1.0 / static_cast<double>(partition.n_global));
}

std::vector<double> PairStatisticsPass::bin_edges() const {
  std::vector<double> e(bins_ + 1);
  for (int b = 0; b <= bins_; ++b) e[b] = -1.0 + 2.0 * b / bins_;
  return e;
}

void PairStatisticsPass::set_masses(const double* masses) {
  uniform_ = validate_masses(comm_, n_local_, ring_.partition().n_global, masses);
  if (!uniform_ && sampling_.mode == PairsMode::sampled)
    throw InputError("diagnostics.pairs = sampled needs uniform token masses");
  std::copy(masses, masses + n_local_, packed_.begin() + n_local_ * d_);
}

void PairStatisticsPass::set_sampling(const PairSampling& sampling) {
  sampling_ = sampling;
  sample_local_.clear();
  sample_counts_.clear();
  if (sampling_.mode != PairsMode::sampled) return;
  if (!uniform_) throw InputError("diagnostics.pairs = sampled needs uniform token masses");
  if (sampling_.sample_tokens < 2) throw InputError("diagnostics.sample_tokens must be at least 2");
  const double n = static_cast<double>(ring_.partition().n_global);
  const double keep = std::min(1.0, static_cast<double>(sampling_.sample_tokens) / n);
  const RandomStream stream(sampling_.seed, Purpose::pair_sample);
  for (std::int64_t i = 0; i < n_local_; ++i)
    if (stream.uniform4(0, static_cast<std::uint64_t>(local_begin_ + i), 0)[0] <= keep) sample_local_.push_back(i);
  sample_counts_.resize(ring_.size());
  const int mine = static_cast<int>(sample_local_.size());
  TOKDYN_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, sample_counts_.data(), 1, MPI_INT, comm_));
  std::int64_t total = 0;
  for (int c : sample_counts_) total += c;
  sample_.resize(static_cast<std::size_t>(total) * d_);
  if (total * d_ > std::numeric_limits<int>::max()) throw InputError("diagnostics.sample_tokens is too large");
}

std::int64_t PairStatisticsPass::sample_size() const {
  if (sampling_.mode == PairsMode::exact) return ring_.partition().n_global;
  return static_cast<std::int64_t>(sample_.size()) / d_;
}

void PairStatisticsPass::compute_linear(const double* x, PairStatistics& out) const {
  // |sum x|^2 and sum |x|^2: the mean cosine over i != j is their difference over N (N - 1).
  std::vector<double> sums(d_ + 1, 0.0), total(d_ + 1);
  for (std::int64_t i = 0; i < n_local_; ++i)
    for (int a = 0; a < d_; ++a) sums[a] += x[i * d_ + a], sums[d_] += x[i * d_ + a] * x[i * d_ + a];
  TOKDYN_MPI_CHECK(MPI_Allreduce(sums.data(), total.data(), d_ + 1, MPI_DOUBLE, MPI_SUM, comm_));
  const double n = static_cast<double>(ring_.partition().n_global);
  double norm2 = 0;
  for (int a = 0; a < d_; ++a) norm2 += total[a] * total[a];
  out.order_parameter = std::sqrt(norm2) / n;
  out.mean_cosine = n > 1 ? (norm2 - total[d_]) / (n * (n - 1)) : std::numeric_limits<double>::quiet_NaN();
}

void PairStatisticsPass::compute_sample(PairStatistics& out) {
  // Every pair of the subset S (s tokens) on every rank: the histogram, minimum and cluster counts of its
  // s (s - 1) / 2 pairs, and the U-statistic U = mean_{i<j} (1 - e^{-beta |x_i - x_j|^2 / 2}), whose
  // standard error is sqrt((4 sigma_1^2 / s) (1 - s/N)) with sigma_1^2 the variance over i of token i's mean
  // term (Hoeffding's first-order term, the second-order one is O(1/s^2); 1 - s/N: the subset is drawn
  // without replacement from the N tokens).
  const std::int64_t s = sample_size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> h(s), row(s, 0.0);
  half_beta_norms(sample_.data(), s, d_, beta_, h.data());
  double upper_energy = 0, cosine_min = std::numeric_limits<double>::infinity();
  std::int64_t aligned = 0, antipodal = 0;
  for (std::int64_t i0 = 0; i0 < s; i0 += tile_) {
    const int bi = static_cast<int>(std::min<std::int64_t>(tile_, s - i0));
    for (std::int64_t j0 = 0; j0 < s; j0 += tile_) {
      const int bj = static_cast<int>(std::min<std::int64_t>(tile_, s - j0));
      double* g = gram_.data();  // [bi, bj]
      gemm_nt(bi, bj, d_, 1.0, sample_.data() + i0 * d_, d_, sample_.data() + j0 * d_, d_, 0.0, g, bj);
      for (int i = 0; i < bi; ++i) {
        const std::int64_t gi = i0 + i;
        const int split = static_cast<int>(std::clamp<std::int64_t>(gi - j0, 0, bj));  // columns j < i
        const int after = static_cast<int>(std::clamp<std::int64_t>(gi + 1 - j0, 0, bj));  // first j > i
        const double* gr = g + static_cast<std::size_t>(i) * bj;
        // j < i: only E_beta's term (token i's row sum for the standard error); the pair itself counts at j > i.
        const double lower = pair_row_energy(gr, h.data() + j0, split, beta_, h[gi]);
        const PairRowStatistics upper =
            pair_row_statistics(gr + after, h.data() + j0 + after, bj - after, beta_, h[gi], bins_, cluster_cosine_,
                                counts_.data(), bin_scratch_.data());
        row[gi] += lower + upper.energy;
        upper_energy += upper.energy;
        cosine_min = std::min(cosine_min, upper.min);
        aligned += upper.aligned;
        antipodal += upper.antipodal;
      }
    }
  }
  const double pairs = 0.5 * static_cast<double>(s) * static_cast<double>(s - 1);
  const double n = static_cast<double>(ring_.partition().n_global);
  out.histogram = folded_counts();
  out.histogram.resize(bins_);
  out.mass_histogram.assign(out.histogram.begin(), out.histogram.end());
  out.histogram_pairs = s * (s - 1) / 2;
  out.aligned_pairs = aligned;
  out.antipodal_pairs = antipodal;
  if (s < 2) {
    out.energy = out.energy_stderr = out.min_cosine = nan;
    return;
  }
  const double u = upper_energy / pairs;
  double var = 0;
  for (std::int64_t i = 0; i < s; ++i) {
    const double dev = row[i] / static_cast<double>(s - 1) - u;
    var += dev * dev;
  }
  var = s > 2 ? var / static_cast<double>(s - 1) : 0.0;
  // E_beta = e^beta (N - 1) / (2N) mean_{i != j} (1 - e^{-beta |x_i - x_j|^2 / 2})
  const double factor = (n - 1) / (2 * n);
  out.energy = energy_from_scaled(beta_, u * factor);
  out.energy_stderr = energy_from_scaled(beta_, std::sqrt(4 * var / static_cast<double>(s) * std::max(0.0, 1 - s / n)) * factor);
  out.min_cosine = cosine_min;
}

PairStatistics PairStatisticsPass::compute(const double* x) {
  if (sampling_.mode != PairsMode::exact) {
    PairStatistics out;
    compute_linear(x, out);
    std::fill(counts_.begin(), counts_.end(), 0);
    if (sampling_.mode == PairsMode::off) {
      out.energy = out.energy_stderr = out.min_cosine = std::numeric_limits<double>::quiet_NaN();
      out.histogram.assign(bins_, 0);
      out.mass_histogram.assign(bins_, 0.0);
      return out;
    }
    // Gather the subset's tokens in global order (the same array on every rank, whatever their number).
    std::vector<double> mine(sample_local_.size() * d_);
    for (std::size_t k = 0; k < sample_local_.size(); ++k)
      std::copy(x + sample_local_[k] * d_, x + (sample_local_[k] + 1) * d_, mine.begin() + k * d_);
    std::vector<int> counts(sample_counts_.size()), displacements(sample_counts_.size(), 0);
    for (std::size_t r = 0; r < counts.size(); ++r) {
      counts[r] = sample_counts_[r] * d_;
      if (r > 0) displacements[r] = displacements[r - 1] + counts[r - 1];
    }
    TOKDYN_MPI_CHECK(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, sample_.data(),
                                    counts.data(), displacements.data(), MPI_DOUBLE, comm_));
    compute_sample(out);
    return out;
  }
  std::copy(x, x + n_local_ * d_, packed_.begin());
  half_beta_norms(x, n_local_, d_, beta_, packed_.data() + n_local_ * (d_ + 1));
  reset_sums();
  ring_.run(
      packed_.data(),
      [&](const double* block, double*, std::int64_t rows, std::int64_t begin, const PairRange& range) {
        const double* masses = block + rows * d_;  // [rows] masses, then [rows] half_beta_norms
        visit(x, block, masses, masses + rows, range, begin);
      },
      nullptr);
  return finish(x);
}

std::vector<std::int64_t> PairStatisticsPass::folded_counts() const {
  std::vector<std::int64_t> out(bins_ + 2, 0);
  for (int k = 0; k < kHistogramCopies; ++k)
    for (int b = 0; b < bins_; ++b) out[b] += counts_[k * bins_ + b];
  out[bins_] = counts_[kHistogramCopies * bins_];
  out[bins_ + 1] = counts_[kHistogramCopies * bins_ + 1];
  return out;
}

void PairStatisticsPass::reset_sums() {
  energy_sum_ = cosine_sum_ = pair_mass_ = 0;
  cosine_min_ = std::numeric_limits<double>::infinity();
  std::fill(counts_.begin(), counts_.end(), 0);
  std::fill(mass_counts_.begin(), mass_counts_.end(), 0.0);
}

void PairStatisticsPass::add_row(const PairRowStatistics& r) {
  energy_sum_ += r.energy;
  cosine_sum_ += r.cosine;
  cosine_min_ = std::min(cosine_min_, r.min);
  counts_[kHistogramCopies * bins_] += r.aligned;
  counts_[kHistogramCopies * bins_ + 1] += r.antipodal;
}

void PairStatisticsPass::add_pairs(const double* c, const double* h, int n, double h_row, double* weights) {
  add_row(pair_row_weights_statistics(c, h, n, beta_, h_row, bins_, cluster_cosine_, counts_.data(),
                                      bin_scratch_.data(), weights));
}

bool PairStatisticsPass::fusable(double c, int tile) const {
  return sampling_.mode == PairsMode::exact && uniform_ && c == beta_ && tile == tile_;
}

PairStatistics PairStatisticsPass::finish(const double* x) {
  const double* w = packed_.data() + n_local_ * d_;  // [n_local] own masses
  // The local (weighted) sum of x; the diagonal terms of E_beta are 0 (1 - e^{-beta |x_i - x_i|^2 / 2}).
  std::vector<double> sum_x(d_, 0.0);
  for (std::int64_t i = 0; i < n_local_; ++i)
    for (int a = 0; a < d_; ++a) sum_x[a] += (uniform_ ? 1.0 : w[i]) * x[i * d_ + a];
  double sums[3] = {energy_sum_, cosine_sum_, pair_mass_}, total[3];
  TOKDYN_MPI_CHECK(MPI_Allreduce(sums, total, 3, MPI_DOUBLE, MPI_SUM, comm_));
  std::vector<double> mean_x(d_);
  TOKDYN_MPI_CHECK(MPI_Allreduce(sum_x.data(), mean_x.data(), d_, MPI_DOUBLE, MPI_SUM, comm_));
  double min_cos = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&cosine_min_, &min_cos, 1, MPI_DOUBLE, MPI_MIN, comm_));
  PairStatistics out;
  out.histogram.resize(bins_ + 2);
  const std::vector<std::int64_t> counts = folded_counts();
  TOKDYN_MPI_CHECK(MPI_Allreduce(counts.data(), out.histogram.data(), bins_ + 2, MPI_INT64_T, MPI_SUM, comm_));
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
    out.energy = energy_from_scaled(beta_, total[0] / (n * n));
    for (double& m : mean_x) m /= n, norm2 += m * m;
    out.mean_cosine = pairs > 0 ? total[1] / pairs : nan;
    out.min_cosine = pairs > 0 ? min_cos : nan;
    for (int b = 0; b < bins_; ++b) out.mass_histogram[b] = static_cast<double>(out.histogram[b]);
  } else {
    TOKDYN_MPI_CHECK(MPI_Allreduce(mass_counts_.data(), out.mass_histogram.data(), bins_, MPI_DOUBLE, MPI_SUM, comm_));
    out.energy = energy_from_scaled(beta_, total[0]);
    for (double m : mean_x) norm2 += m * m;
    // total[2] = sum_{i<j} w_i w_j: the mean over i != j has the same ratio.
    const double pair_mass = total[2];
    out.mean_cosine = pair_mass > 0 ? total[1] / pair_mass : nan;
    out.min_cosine = std::isfinite(min_cos) ? min_cos : nan;
    for (double& h : out.mass_histogram) h = pair_mass > 0 ? h * (pairs / pair_mass) : 0.0;
  }
  out.order_parameter = std::sqrt(norm2);
  out.histogram_pairs = static_cast<std::int64_t>(pairs);
  return out;
}

void PairStatisticsPass::visit(const double* x, const double* block, const double* block_masses,
                               const double* block_h, const PairRange& range, std::int64_t block_begin) {
  const double* h_own = packed_.data() + n_local_ * (d_ + 1);  // [n_local]
  gram_tiles(x, block, d_, range, local_begin_, block_begin, tile_, gram_.data(),
             [&](std::int64_t i0, int bi, std::int64_t j0, int bj, const double* g) {
               for (int i = 0; i < bi; ++i) {
                 const int j_first = first_column(range, local_begin_, i0, i, block_begin, j0, bj);
                 const double* gr = g + static_cast<std::size_t>(i) * bj;
                 const double* h = block_h + j0;
                 if (uniform_) {
                   add_row(pair_row_statistics(gr + j_first, h + j_first, bj - j_first, beta_, h_own[i0 + i], bins_,
                                               cluster_cosine_, counts_.data(), bin_scratch_.data()));
                   continue;
                 }
                 WeightedPairSums sums{energy_sum_, cosine_sum_, pair_mass_, cosine_min_};
                 weighted_pair_row(gr + j_first, h + j_first, bj - j_first, beta_, h_own[i0 + i],
                                   packed_[n_local_ * d_ + i0 + i], block_masses + j0 + j_first, bins_,
                                   cluster_cosine_, counts_.data(), mass_counts_.data(), sums);
                 energy_sum_ = sums.energy, cosine_sum_ = sums.cosine, pair_mass_ = sums.mass, cosine_min_ = sums.min;
               }
             });
}

}  // namespace tokdyn
