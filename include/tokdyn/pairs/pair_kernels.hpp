// The per-pair steps of the cosine statistics over one row of a Gram tile (E_beta's term, cosine sum and
// minimum, histogram bin, pairs beyond the cluster cosine), written so the compiler vectorises them:
// reductions over 8 interleaved partial results in a fixed order, the same bits at every vector width.
// The one kernel of the standalone statistics pass and of the statistics fused into attention.
#pragma once

#include <cstdint>

namespace tokdyn {

struct PairRowStatistics {
  double energy = 0;     // sum_j -expm1(beta c_j - h_row - h_j) = sum_j 1 - e^{-beta |x_i - x_j|^2 / 2}
  double cosine = 0;     // sum_j c_j
  double min = 0;        // min_j c_j (+inf for an empty row)
  std::int64_t aligned = 0, antipodal = 0;  // c_j > cluster_cosine, c_j < -cluster_cosine
};

// h = beta |x|^2 / 2 of each of n tokens x [n, d]: the shift that makes beta <x_i, x_j> - h_i - h_j
// = -beta |x_i - x_j|^2 / 2 <= 0, one formula wherever a pair term is formed.
void half_beta_norms(const double* x, std::int64_t n, int d, double beta, double* h);

// Copies of the histogram that consecutive pairs count into in turn, so that runs of pairs in one bin do
// not wait on each other's increments; the caller adds them up.
inline constexpr int kHistogramCopies = 4;

// c [n]: <x_i, x_j> of one row i against n columns j; h [n] the columns' half_beta_norms, h_row row i's.
// Adds 1 to counts[(j mod kHistogramCopies) bins + b] for each c_j's bin b of `bins` equal bins on [-1, 1]
// (values outside, and NaN, go to the end bins) and returns the row's sums. counts: [kHistogramCopies,
// bins]; scratch: [n] ints.
PairRowStatistics pair_row_statistics(const double* c, const double* h, int n, double beta, double h_row, int bins,
                                      double cluster_cosine, std::int64_t* counts, int* scratch);
// E_beta's term of the same pairs alone, sum_j -expm1(beta c_j - h_row - h_j) (the same bits as
// pair_row_statistics' energy).
double pair_row_energy(const double* c, const double* h, int n, double beta, double h_row);

// The same pairs with masses, w_row w_j per pair (one pair after another, not vectorised: the mass histogram
// is a scatter): sums += the mass-weighted E_beta term, cosine, mass and minimum over pairs of positive mass;
// counts[bin] += 1 (one histogram copy), counts[kHistogramCopies bins + 0, 1] += aligned, antipodal pairs,
// mass_counts[bin] += w_row w_j.
struct WeightedPairSums {
  double energy = 0, cosine = 0, mass = 0, min = 0;
};
void weighted_pair_row(const double* c, const double* h, int n, double beta, double h_row, double w_row,
                       const double* w, int bins, double cluster_cosine, std::int64_t* counts, double* mass_counts,
                       WeightedPairSums& sums);

// The attention weights of the same pairs, w_j = e^{beta c_j - h_row - h_j} = e^{-beta |x_i - x_j|^2 / 2},
// formed as 1 + expm1 of the same argument (so E_beta's term comes free): weights only, or weights and the
// statistics of pair_row_statistics, the same bits either way.
void pair_row_weights(const double* c, const double* h, int n, double beta, double h_row, double* weights);
// The same weights in float, the half ring's float32 tiles: w_j = e^{(beta g_j - h_row) - h_j} from a float Gram
// row g by exp_nonpositive_float (no E_beta term: the statistics keep their float64 pass). weights may be g.
void pair_row_weights(const float* g, const float* h, int n, float beta, float h_row, float* weights);
PairRowStatistics pair_row_weights_statistics(const double* c, const double* h, int n, double beta, double h_row,
                                              int bins, double cluster_cosine, std::int64_t* counts, int* scratch,
                                              double* weights);

}  // namespace tokdyn
