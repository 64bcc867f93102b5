// Observables of the token cloud (doc/science.md sections 5.1, 5.2): interaction energy
//   E_beta = (1/(2N^2)) sum_ij (e^beta - e^{beta <x_i, x_j>}),
// order parameter |mean x|, mean and minimum pairwise cosine over i != j, and a histogram of the
// cosines of the N(N-1)/2 unordered pairs, and the pairs in one cluster (cos > c) or in antipodal
// clusters (cos < -c) for a cluster cosine c (doc/science.md section 6.4, odd fields). All O(N^2) sums go through the
// ring pass. With token masses w_i (set_masses) every pair counts with w_i w_j:
// E_beta = (1/2) sum_ij w_i w_j (e^beta - e^{beta <x_i,x_j>}).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/pairs/ring_pass.hpp"

namespace tokdyn {

struct PairStatistics {
  double energy = 0;           // E_beta
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

  // Equispaced bin edges on [-1, 1], [bins + 1].
  std::vector<double> bin_edges() const;

 private:
  // Pairs of local rows [i_lo, i_hi) with block rows [j_lo, j_hi); own_block: only global i < j.
  // block: [rows, d] tokens, block_masses: their [rows] masses.
  void visit(const double* x, std::int64_t i_lo, std::int64_t i_hi, const double* block, const double* block_masses,
             std::int64_t j_lo, std::int64_t j_hi, std::int64_t block_begin, bool own_block);

  MPI_Comm comm_;
  RingPass ring_;
  int d_, bins_, tile_;
  double beta_, cluster_cosine_;
  std::int64_t n_local_, local_begin_;
  std::vector<double> gram_;  // [tile, tile]
  // The travelling block: [n_local, d] tokens, then [n_local] masses (stride d kept for the BLAS calls).
  std::vector<double> packed_;
  bool uniform_ = true;  // every mass 1/N (decided collectively): the unweighted sums, bit for bit
  // Accumulators of one compute(): sums over pairs i < j (weighted by w_i w_j unless uniform_); energy_sum_
  // of -expm1(beta (c - 1)), E_beta e^{-beta} in pieces (energy_from_scaled applies e^beta once).
  double energy_sum_ = 0, cosine_sum_ = 0, cosine_min_ = 0, pair_mass_ = 0;
  std::vector<std::int64_t> counts_;  // [bins, then aligned, antipodal]
  std::vector<double> mass_counts_;  // [bins] pair mass per bin
};

}  // namespace tokdyn
