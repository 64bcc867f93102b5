// Attention on the sphere S^2 (d = 3) by spherical-harmonic summation, O(N p^2) instead of O(N^2): with
// Q^T K = c I, V = v I and unit tokens, the kernel e^{b <x, y>} (b = beta c) is by Funk-Hecke and the
// addition theorem
//   e^{b <x, y>} = sum_{l >= 0} i_l(b) sum_{m = -l..l} H_lm(x) H_lm(y),
// with H_lm the real spherical harmonics normalised to mean square 1 on the sphere (sum_m H_lm^2 = 2l + 1)
// and i_l the modified spherical Bessel functions. Truncated at l <= p where the neglected tail is below
// attention.tolerance e^{|b|}, every sum over keys becomes 4 (p + 1)^2 global moments
// M_lm = sum_j w_j H_lm(x_j) (1, x_j): one pass over the tokens, one MPI_Allreduce, one pass to evaluate.
// Tokens are read as directions (x / |x|; 0 as the north pole). Accuracy: Z(x) = sum_j w_j e^{b <x, x_j>} comes
// out with an absolute error below (tolerance + ~(p + 1)^2 eps) e^{|b|}, so SA is good to that over
// e^{-|b|} Z(x_i) relative (~2|b| (tolerance + ...) for tokens spread over the sphere).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/bessel_series.hpp"

namespace tokdyn {

// The table of the real spherical harmonics H_lm, l <= p, at unit points, ordered m-major: for m = 0..p, for
// l = m..p: the cos(m phi) harmonic and (m > 0) the sin(m phi) one. (p + 1)^2 rows.
class SphericalHarmonics {
 public:
  explicit SphericalHarmonics(int p);
  int degree() const { return p_; }
  int count() const { return (p_ + 1) * (p_ + 1); }
  // The degree l of every row [count()].
  const std::vector<int>& row_degree() const { return degree_; }
  // table [count(), stride]: column b is H(u_b) of the unit point u [b] = (ux[b], uy[b], uz[b]), b < n; n <= stride.
  void evaluate(int n, const double* ux, const double* uy, const double* uz, double* table, int stride) const;

 private:
  int p_;
  std::vector<int> degree_;
  std::vector<double> diagonal_;  // [p + 1]: H_mm / Re (x + i y)^m, a constant
  std::vector<double> a_, b_;     // [rows of m-major (l, m) pairs]: H_lm = a z H_{l-1,m} - b H_{l-2,m}
};

// Interaction energy of N unit points on S^2 (uniform masses) in O(N p^2) by the same series:
//   E_beta = (1/2)(e^beta - sum_l i_l(beta) sum_m M_lm^2),  M_lm = (1/N) sum_j H_lm(x_j),
// truncated at tolerance; error_bound = (tolerance + (p + 1)^2 eps) e^beta bounds its absolute error. Collective.
struct SphereStatistics {
  double energy = 0, error_bound = 0;
  int terms = 0;  // the truncation p
};
SphereStatistics sphere_statistics(MPI_Comm comm, std::int64_t n_local, const double* x, double beta,
                                   double tolerance = 1e-15);

// The attention styles "harmonic" (SA, normalized) and "harmonic-unnormalized" (USA).
class HarmonicAttention final : public AttentionStyle {
 public:
  // InputError unless d = 3 (model.d), one head, no causal mask and Q, K, V multiples of the identity.
  HarmonicAttention(const AttentionContext& context, bool normalized);
  // attention.tolerance (AttentionSpec::tolerance).
  static const KeyTable<AttentionSpec>& keys();
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;
  void set_weights(const AttentionWeights& weights) override;
  int degree() const { return harmonics_.degree(); }  // the truncation p

 private:
  // Unit directions of tokens [begin, begin + n) into the block's columns (padding: mass 0 at the pole).
  void load_block(const double* x, std::int64_t begin, int n);
  bool normalized_;
  double b_ = 0, value_scale_ = 0;
  std::vector<double> series_;  // [p + 1]: e^{-|b|} i_l(b)
  SphericalHarmonics harmonics_{0};
  int block_ = 8;                               // points per table
  std::vector<double> masses_;                  // [n_local]
  std::vector<double> ux_, uy_, uz_, table_;    // [block], [block], [block], [count, block]
  std::vector<double> values_, moments_, sums_; // [block, 4], [count, 4], [block, 4]
};

}  // namespace tokdyn
