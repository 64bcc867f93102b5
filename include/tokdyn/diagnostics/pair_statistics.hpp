// Observables of the token cloud (doc/science.md sections 5.1, 5.2): interaction energy
//   E_beta = (1/(2N^2)) sum_ij (e^beta - e^{beta <x_i, x_j>}),
// summed as (e^beta/(2N^2)) sum_ij (1 - e^{-beta |x_i - x_j|^2 / 2}) (the same on the sphere; no cancellation
// near a cluster, and exactly 0 on the diagonal),
// order parameter |mean x|, mean and minimum pairwise cosine over i != j, and a histogram of the
// cosines of the N(N-1)/2 unordered pairs, and the pairs in one cluster (cos > c) or in antipodal
// clusters (cos < -c) for a cluster cosine c (doc/science.md section 6.4, odd fields). All O(N^2) sums go through the
// ring pass. With token masses w_i (set_masses) every pair counts with w_i w_j:
// E_beta = (1/2) sum_ij w_i w_j (e^beta - e^{beta <x_i,x_j>}).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/pairs/half_ring.hpp"
#include "tokdyn/pairs/pair_kernels.hpp"

namespace tokdyn {

// How the O(N^2) statistics are formed (diagnostics.pairs). exact: every pair. sampled: the pairs among a
// fixed random subset of about sample_tokens tokens (each token in it with probability sample_tokens / N,
// drawn from the stream (seed, pair_sample, token index), so the subset does not depend on the ranks), a
// U-statistic: E_beta with its standard error, the histogram, minimum and cluster counts of the sample's
// pairs. off: no pair is formed. In every mode |mean x| and the mean cosine are exact, in O(N d) for
// sampled and off (mean cosine = (|sum x|^2 - sum |x|^2) / (N (N - 1))).
enum class PairsMode { exact, sampled, off };
struct PairSampling {
  PairsMode mode = PairsMode::exact;
  std::int64_t sample_tokens = 4096;
  std::uint64_t seed = 1;
};
// "auto" -> exact up to N = kExactPairsLimit tokens, sampled above; exact, sampled, off as named.
inline constexpr std::int64_t kExactPairsLimit = 65536;
PairsMode pairs_mode(const std::string& name, std::int64_t n);
const char* pairs_mode_name(PairsMode mode);

struct PairStatistics {
  double energy = 0;           // E_beta (NaN when off)
  double energy_stderr = 0;    // its standard error: 0 when exact, NaN when off
  std::int64_t histogram_pairs = 0;  // the pairs the histogram, the minimum and the cluster counts saw
  double order_parameter = 0;  // |sum_i w_i x_i|
  double mean_cosine = 0;      // over i != j, weighted by w_i w_j (NaN without a pair of positive mass)
  double min_cosine = 0;       // over i != j with w_i, w_j > 0 (NaN without such a pair)
  std::vector<std::int64_t> histogram;  // [bins] counts of pairs i < j, whatever their masses
  // [bins] pair mass sum w_i w_j of the pairs i < j in each bin, scaled to the total N(N-1)/2 of the
  // counts: equal to the counts for uniform masses.
  std::vector<double> mass_histogram;
  std::int64_t aligned_pairs = 0;       // pairs i < j with cos > cluster_cosine (counts, whatever the masses)
  std::int64_t antipodal_pairs = 0;     // pairs i < j with cos < -cluster_cosine
};

class PairStatisticsPass {
 public:
  PairStatisticsPass(MPI_Comm comm, const Partition& partition, int d, double beta, int bins, int tile,
                     double cluster_cosine = 0.99);
  // x: this rank's tokens [n_local, d]. Collective; every rank gets the same result.
  PairStatistics compute(const double* x);
  // Masses of this rank's tokens [n_local] (finite, >= 0, global sum 1; InputError otherwise) for every
  // later compute. Until it is called the masses are uniform, 1/N. Collective.
  void set_masses(const double* masses);

  // The mode for every later compute (exact until called). sampled: draws the subset (collective); uniform
  // masses only (InputError otherwise).
  void set_sampling(const PairSampling& sampling);
  const PairSampling& sampling() const { return sampling_; }
  // Tokens in the sampled subset (after set_sampling with sampled; N for exact, 0 for off).
  std::int64_t sample_size() const;

  // The exact statistics formed elsewhere (attention with logits beta <x_i, x_j> fused with them): reset_sums,
  // then add_row for each row of pairs i < j that pair_row_statistics (with this pass's beta, bins and
  // cluster cosine) went through, each pair once over all ranks, then finish(x) (collective). Uniform masses.
  void reset_sums();
  void add_row(const PairRowStatistics& row);
  // One row of pairs through pair_row_weights_statistics with this pass's beta, bins and cluster cosine
  // (the attention's weights written to weights [n]), added.
  void add_pairs(const double* c, const double* h, int n, double h_row, double* weights);
  // Whether an attention with logit scale c and tile `tile` can form these statistics: exact mode,
  // uniform masses, beta = c and the same tile.
  bool fusable(double c, int tile) const;
  PairStatistics finish(const double* x);
  double beta() const { return beta_; }
  int bins() const { return bins_; }
  double cluster_cosine() const { return cluster_cosine_; }
  bool uniform() const { return uniform_; }

  // Equispaced bin edges on [-1, 1], [bins + 1].
  std::vector<double> bin_edges() const;

 private:
  // The pairs of a range of the half ring: block [rows, d] tokens, block_masses and block_h their [rows]
  // masses and half_beta_norms.
  void visit(const double* x, const double* block, const double* block_masses, const double* block_h,
             const PairRange& range, std::int64_t block_begin);
  // The statistics of the sampled subset (every rank, the same bits), and the O(N d) ones (every mode).
  void compute_sample(PairStatistics& out);
  void compute_linear(const double* x, PairStatistics& out) const;

  MPI_Comm comm_;
  HalfRing ring_;
  PairSampling sampling_;
  std::vector<std::int64_t> sample_local_;  // local row indices of this rank's tokens in the subset
  std::vector<int> sample_counts_;          // [P] subset tokens per rank
  std::vector<double> sample_;              // [subset, d] the subset's tokens, gathered in global order
  int d_, bins_, tile_;
  double beta_, cluster_cosine_;
  std::int64_t n_local_, local_begin_;
  std::vector<double> gram_;  // [tile, tile]
  // The travelling block: [n_local, d] tokens, then [n_local] masses and [n_local] half_beta_norms (stride d
  // kept for the BLAS calls).
  std::vector<double> packed_;
  bool uniform_ = true;  // every mass 1/N (decided collectively): the unweighted sums, bit for bit
  // Accumulators of one compute(): sums over pairs i < j (weighted by w_i w_j unless uniform_); energy_sum_
  // of 1 - e^{-beta |x_i - x_j|^2 / 2}, E_beta e^{-beta} in pieces (energy_from_scaled applies e^beta once).
  double energy_sum_ = 0, cosine_sum_ = 0, cosine_min_ = 0, pair_mass_ = 0;
  // [kHistogramCopies, bins] (pair_row_statistics' copies), then the aligned and antipodal pairs.
  std::vector<std::int64_t> counts_;
  std::vector<std::int64_t> folded_counts() const;  // [bins, then aligned, antipodal]
  std::vector<double> mass_counts_;  // [bins] pair mass per bin
  std::vector<int> bin_scratch_;     // [tile] bins of one tile row
};

}  // namespace tokdyn
