#include "tokdyn/pairs/pair_kernels.hpp"

#include <cmath>
#include <limits>

#include "tokdyn/core/fast_exp.hpp"
#include "tokdyn/core/vector_clones.hpp"

namespace tokdyn {
namespace {
constexpr int kLanes = 8;
}

void half_beta_norms(const double* x, std::int64_t n, int d, double beta, double* h) {
  for (std::int64_t i = 0; i < n; ++i) {
    double sq = 0;
    for (int a = 0; a < d; ++a) sq += x[i * d + a] * x[i * d + a];
    h[i] = 0.5 * (beta * sq);
  }
}

namespace {

// One row: weights (kWeights) and/or statistics (kStats; kEnergy: E_beta's term only) from the same
// e = expm1(beta c - h_row - h_j).
template <bool kWeights, bool kStats, bool kEnergy = kStats>
inline __attribute__((always_inline)) PairRowStatistics pair_row(const double* c, const double* h, int n, double beta,
                                                                 double h_row, int bins, double cluster_cosine,
                                                                 std::int64_t* counts, int* scratch, double* weights) {
  const double inf = std::numeric_limits<double>::infinity(), half_bins = 0.5 * bins, last_bin = bins - 1;
  double energy[kLanes], cosine[kLanes], least[kLanes], aligned[kLanes], antipodal[kLanes];
  for (int k = 0; k < kLanes; ++k) energy[k] = cosine[k] = aligned[k] = antipodal[k] = 0, least[k] = inf;
  // One pair: E_beta's term, the cosine's sums, its bin (NaN fails both comparisons and lands in bin 0).
  auto pair = [&](int j, int k) {
    const double x = c[j];
    const double e = expm1_nonpositive((beta * x - h_row) - h[j]);
    if constexpr (kWeights) weights[j] = 1.0 + e;
    if constexpr (kEnergy) energy[k] -= e;
    if constexpr (kStats) {
      cosine[k] += x;
      least[k] = x < least[k] ? x : least[k];
      aligned[k] += x > cluster_cosine ? 1.0 : 0.0;
      antipodal[k] += x < -cluster_cosine ? 1.0 : 0.0;
      double b = std::floor((x + 1.0) * half_bins);
      b = b > 0.0 ? b : 0.0;
      b = b < last_bin ? b : last_bin;
      scratch[j] = static_cast<int>(b);
    }
  };
  int j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) pair(j + k, k);
  for (int k = 0; j < n; ++j, ++k) pair(j, k);  // the tail, lane by lane
  PairRowStatistics out;
  if constexpr (kEnergy)
    for (int k = 0; k < kLanes; ++k) out.energy += energy[k];
  if constexpr (kStats) {
    out.min = inf;
    for (int k = 0; k < kLanes; ++k) {
      out.cosine += cosine[k];
      out.min = least[k] < out.min ? least[k] : out.min;
      out.aligned += static_cast<std::int64_t>(aligned[k]);
      out.antipodal += static_cast<std::int64_t>(antipodal[k]);
    }
    for (j = 0; j + kHistogramCopies <= n; j += kHistogramCopies)
      for (int k = 0; k < kHistogramCopies; ++k) ++counts[k * bins + scratch[j + k]];
    for (int k = 0; j < n; ++j, ++k) ++counts[k * bins + scratch[j]];
  }
  return out;
}

}  // namespace

TOKDYN_VECTOR_CLONES PairRowStatistics pair_row_statistics(const double* c, const double* h, int n, double beta,
                                                           double h_row, int bins, double cluster_cosine,
                                                           std::int64_t* counts, int* scratch) {
  return pair_row<false, true>(c, h, n, beta, h_row, bins, cluster_cosine, counts, scratch, nullptr);
}

TOKDYN_VECTOR_CLONES double pair_row_energy(const double* c, const double* h, int n, double beta, double h_row) {
  return pair_row<false, false, true>(c, h, n, beta, h_row, 1, 0.0, nullptr, nullptr, nullptr).energy;
}

TOKDYN_VECTOR_CLONES void weighted_pair_row(const double* c, const double* h, int n, double beta, double h_row,
                                            double w_row, const double* w, int bins, double cluster_cosine,
                                            std::int64_t* counts, double* mass_counts, WeightedPairSums& sums) {
  for (int j = 0; j < n; ++j) {
    const double x = c[j], wij = w_row * w[j];
    sums.energy += wij * -expm1_nonpositive((beta * x - h_row) - h[j]);
    sums.cosine += wij * x;
    sums.mass += wij;
    // A pair with a zero mass is not in the measure: it takes no part in the minimum.
    if (w_row > 0 && w[j] > 0) sums.min = x < sums.min ? x : sums.min;
    int b = static_cast<int>(std::floor((x + 1) * 0.5 * bins));
    b = b < 0 ? 0 : b > bins - 1 ? bins - 1 : b;
    ++counts[b];
    counts[kHistogramCopies * bins] += x > cluster_cosine;
    counts[kHistogramCopies * bins + 1] += x < -cluster_cosine;
    mass_counts[b] += wij;
  }
}

TOKDYN_VECTOR_CLONES void pair_row_weights(const double* c, const double* h, int n, double beta, double h_row,
                                           double* weights) {
  pair_row<true, false>(c, h, n, beta, h_row, 1, 0.0, nullptr, nullptr, weights);
}

TOKDYN_VECTOR_CLONES PairRowStatistics pair_row_weights_statistics(const double* c, const double* h, int n,
                                                                   double beta, double h_row, int bins,
                                                                   double cluster_cosine, std::int64_t* counts,
                                                                   int* scratch, double* weights) {
  return pair_row<true, true>(c, h, n, beta, h_row, bins, cluster_cosine, counts, scratch, weights);
}

}  // namespace tokdyn
