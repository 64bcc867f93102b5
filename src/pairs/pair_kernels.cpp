#include "tokdyn/pairs/pair_kernels.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"

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

// Four doubles, and their comparisons and bins, as GCC/Clang vectors, two of them per block of kLanes (lanes
// 0-3 and 4-7): the cosine statistics are compares, selects and a conversion, which the auto-vectoriser leaves
// scalar when they sit beside the expm1 loop (2.2 ns/pair instead of 0.4). 32 bytes because that is AVX2's
// register: vectors of eight doubles had their compares scalarised through the stack on AVX2 (5x slower than on
// AVX-512). Element-wise operations only, so every vector width gives the same bits.
constexpr int kQuad = 4;
typedef double Lanes __attribute__((vector_size(kQuad * sizeof(double))));
typedef std::int64_t LaneCounts __attribute__((vector_size(kQuad * sizeof(std::int64_t))));
typedef int LaneBins __attribute__((vector_size(kQuad * sizeof(int))));

// The cosine statistics of one row c [n] into out (cosine, min, aligned, antipodal) and each pair's bin into
// scratch [n] (NaN fails both comparisons and lands in bin 0), then the bins counted into counts.
inline __attribute__((always_inline)) void cosine_statistics(const double* c, int n, int bins, double cluster_cosine,
                                                            std::int64_t* counts, int* scratch,
                                                            PairRowStatistics& out) {
  static_assert(kLanes == 2 * kQuad);
  const double inf = std::numeric_limits<double>::infinity();
  const Lanes zero = {}, one = zero + 1.0, half_bins = zero + 0.5 * bins, last_bin = zero + (bins - 1.0),
              above = zero + cluster_cosine, below = zero - cluster_cosine;
  Lanes cosine[2] = {zero, zero}, least[2] = {zero + inf, zero + inf};
  LaneCounts aligned[2] = {}, antipodal[2] = {};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int q = 0; q < 2; ++q) {
      Lanes x;
      std::memcpy(&x, c + j + q * kQuad, sizeof x);
      cosine[q] += x;
      least[q] = x < least[q] ? x : least[q];
      aligned[q] -= x > above;  // a true comparison is -1
      antipodal[q] -= x < below;
      // floor((x + 1) bins / 2) clamped to [0, bins - 1]: the clamp first, then truncation (= floor, b >= 0)
      Lanes b = (x + one) * half_bins;
      b = b > zero ? b : zero;
      b = b < last_bin ? b : last_bin;
      const LaneBins bin = __builtin_convertvector(b, LaneBins);
      std::memcpy(scratch + j + q * kQuad, &bin, sizeof bin);
    }
  double sum[kLanes], low[kLanes];
  std::int64_t up[kLanes], down[kLanes];
  std::memcpy(sum, cosine, sizeof sum);
  std::memcpy(low, least, sizeof low);
  std::memcpy(up, aligned, sizeof up);
  std::memcpy(down, antipodal, sizeof down);
  for (int k = 0; j < n; ++j, ++k) {  // the tail, lane by lane
    const double x = c[j];
    sum[k] += x;
    low[k] = x < low[k] ? x : low[k];
    up[k] += x > cluster_cosine;
    down[k] += x < -cluster_cosine;
    double b = (x + 1.0) * (0.5 * bins);
    b = b > 0.0 ? b : 0.0;
    b = b < bins - 1.0 ? b : bins - 1.0;
    scratch[j] = static_cast<int>(b);
  }
  out.min = inf;
  for (int k = 0; k < kLanes; ++k) {
    out.cosine += sum[k];
    out.min = low[k] < out.min ? low[k] : out.min;
    out.aligned += up[k];
    out.antipodal += down[k];
  }
  for (j = 0; j + kHistogramCopies <= n; j += kHistogramCopies)
    for (int k = 0; k < kHistogramCopies; ++k) ++counts[k * bins + scratch[j + k]];
  for (int k = 0; j < n; ++j, ++k) ++counts[k * bins + scratch[j]];
}

// One row: weights (kWeights) and/or E_beta's term (kEnergy) from the same e = expm1(beta c - h_row - h_j),
// then the cosine statistics (kStats) over the same row, still in L1.
template <bool kWeights, bool kStats, bool kEnergy = kStats>
inline __attribute__((always_inline)) PairRowStatistics pair_row(const double* c, const double* h, int n, double beta,
                                                                 double h_row, int bins, double cluster_cosine,
                                                                 std::int64_t* counts, int* scratch, double* weights) {
  double energy[kLanes];
  for (int k = 0; k < kLanes; ++k) energy[k] = 0;
  auto pair = [&](int j, int k) {
    const double e = expm1_nonpositive((beta * c[j] - h_row) - h[j]);
    if constexpr (kWeights) weights[j] = 1.0 + e;
    if constexpr (kEnergy) energy[k] -= e;
  };
  int j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) pair(j + k, k);
  for (int k = 0; j < n; ++j, ++k) pair(j, k);  // the tail, lane by lane
  PairRowStatistics out;
  if constexpr (kEnergy)
    for (int k = 0; k < kLanes; ++k) out.energy += energy[k];
  if constexpr (kStats) cosine_statistics(c, n, bins, cluster_cosine, counts, scratch, out);
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

TOKDYN_VECTOR_CLONES void pair_row_weights(const float* g, const float* h, int n, float beta, float h_row,
                                           float* weights) {
  for (int j = 0; j < n; ++j) weights[j] = exp_nonpositive_float((beta * g[j] - h_row) - h[j]);
}

TOKDYN_VECTOR_CLONES PairRowStatistics pair_row_weights_statistics(const double* c, const double* h, int n,
                                                                   double beta, double h_row, int bins,
                                                                   double cluster_cosine, std::int64_t* counts,
                                                                   int* scratch, double* weights) {
  return pair_row<true, true>(c, h, n, beta, h_row, bins, cluster_cosine, counts, scratch, weights);
}

}  // namespace tokdyn
