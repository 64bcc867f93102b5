// Attention on the circle S^1 (d = 2) by Fourier summation, O(N p) instead of O(N^2): with
// Q^T K = c I, V = v I, x = (cos t, sin t) the logits are b cos(t - phi), b = beta c, and
// e^{b cos s} = sum_{n in Z} I_n(b) e^{i n s} (modified Bessel functions) turns every sum over keys
// into p + 2 global moments C_n = sum_j w_j e^{i n phi_j}. Tokens are read as angles (x / |x|).
// Accuracy: Z(t) = sum_j w_j e^{b cos(t - phi_j)} comes out with an absolute error ~ p eps e^{|b|}, so SA at
// token i is good to ~ p eps e^{|b|} / Z(t_i) relative. A token of mass w_i sees itself (Z >= w_i e^{|b|}
// for b > 0): ~ p eps / w_i. Only zero-mass points far from all mass at large b lose digits.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/bessel_series.hpp"

namespace tokdyn {

// Global moments C_n = sum_j w_j e^{i n phi_j}, n = 0..n_max, as [n_max + 1, 2] (re, im), of this
// rank's points x [n_local, 2] with masses [n_local]: local sums in index order, one MPI_Allreduce.
std::vector<double> circle_moments(MPI_Comm comm, std::int64_t n_local, const double* x, const double* masses,
                                   int n_max);

// Interaction energy and mean of weighted points on S^1 in O(N p):
//   E_beta = (1/2) sum_ij w_i w_j (e^beta - e^{beta <x_i, x_j>}) = (1/2)(e^beta - sum_{n in Z} I_n(beta) |C_n|^2).
struct CircleStatistics {
  double energy = 0;
  double mean[2] = {0, 0};     // sum_i w_i x_i = (Re C_1, Im C_1)
  double order_parameter = 0;  // |sum_i w_i x_i|
  int terms = 0;               // the truncation p
};
// x: this rank's points [n_local, 2]; masses [n_local] (validated), or null for uniform 1/N. Collective.
CircleStatistics circle_statistics(MPI_Comm comm, std::int64_t n_local, const double* x, const double* masses,
                                   double beta);

// The attention styles "fourier" (SA, normalized) and "fourier-unnormalized" (USA).
class FourierAttention final : public AttentionStyle {
 public:
  // InputError unless d = 2 (model.d), one head, no causal mask (tokens on the circle have no order) and Q, K,
  // V multiples of the identity (attention.query/key/value).
  FourierAttention(const AttentionContext& context, bool normalized);
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;
  void set_weights(const AttentionWeights& weights) override;

 private:
  bool normalized_;
  double b_ = 0, value_scale_ = 0;  // b = beta c, v
  std::vector<double> bessel_;      // [p + 1]: e^{-|b|} I_n(b), signs of b < 0 included
  std::vector<double> masses_;      // [n_local]
};

}  // namespace tokdyn
