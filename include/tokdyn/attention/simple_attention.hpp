// The two attention styles whose matrix A does not depend on the logits, O(N D) with no pair sum:
// uniform (the mean of the values, what softmax attention becomes at beta = 0) and identity (A = I).
#pragma once

#include <vector>

#include "tokdyn/attention/attention.hpp"

namespace tokdyn {

// A_ij = w_j (masses; 1/N by default): out_i = sum_j w_j V x_j; causal: sum_{j<=i} w_j V x_j / sum_{j<=i} w_j,
// i.e. 1/(i+1) sum_{j<=i} V x_j for uniform masses. The rank totals are summed in rank order.
class UniformAttention final : public AttentionStyle {
 public:
  explicit UniformAttention(const AttentionContext& context) : AttentionStyle(context, "uniform") {}
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;

 private:
  std::vector<double> masses_;  // [n_local]; empty while uniform
};

// A = I: out_i = V x_i (masses are checked and play no part).
class IdentityAttention final : public AttentionStyle {
 public:
  explicit IdentityAttention(const AttentionContext& context) : AttentionStyle(context, "identity") {}
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;
};

}  // namespace tokdyn
