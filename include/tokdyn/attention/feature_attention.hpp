// Attention in any dimension by positive random features, O(N M D) instead of O(N^2 D): for w ~ N(0, I_D),
//   E_w[ e^{s <w, q> - s^2 |q|^2 / 2} e^{s <w, k> - s^2 |k|^2 / 2} ] = e^{s^2 <q, k>},
// so with s = sqrt(beta), q = Q x_i, k = K x_j and M features w_1..w_M the kernel e^{beta <Q x_i, K x_j>} is the
// average of M positive products, and every sum over keys becomes M (D + 1) global moments. The numerator
// and denominator of SA are unbiased (their ratio only to O(1/M)); USA is unbiased. The standard error of
// Z_i = sum_j w_j e^{s_ij}, estimated from the M terms themselves, is kept (relative_stderr): it grows like
// e^{beta |q| |k|}-ish, so the style suits small beta or large M. Features are drawn once from the stream
// (attention.seed, attention_features, feature index): the same on every rank and after a restart.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tokdyn/attention/attention.hpp"

namespace tokdyn {

// The attention styles "random-features" (SA) and "random-features-unnormalized" (USA).
class FeatureAttention final : public AttentionStyle {
 public:
  // InputError unless one head, no causal mask, attention.features >= 2.
  FeatureAttention(const AttentionContext& context, bool normalized);
  // attention.features (AttentionSpec::features).
  static const KeyTable<AttentionSpec>& keys();
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;
  void set_weights(const AttentionWeights& weights) override;
  // The root mean square over tokens of the estimated standard error of Z_i relative to Z_i, of the last apply.
  double relative_stderr() const { return relative_stderr_; }

 private:
  // e [rows, M] = exponents of tile rows r = Q x or K x [rows, D]: s <w_m, r> - s^2 |r|^2 / 2 + sign |w_m|^2 / 2.
  void exponents(int rows, const double* r, double sign, double* e) const;
  bool normalized_;
  int features_ = 0, width_ = 0;
  double s_ = 0, key_sign_ = 1;       // s = sqrt(|beta|); beta < 0 reads keys as -K x
  std::vector<double> w_, half_w2_;   // [M, D] features, [M] |w_m|^2 / 2
  std::vector<double> masses_;        // [n_local]
  std::vector<double> r_, v_, e_, sums_;  // tile buffers [tile, D], [tile, D + 1], [tile, M], [tile, D + 1]
  double relative_stderr_ = 0;
};

}  // namespace tokdyn
