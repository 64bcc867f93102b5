// A test-only attention style, "test-dense-softmax": softmax attention the naive way (every token on every
// rank, plain loops, the logits of a row all at once). It is what the recipe "add an attention style" of
// doc/architecture.md asks for, and it is the reference the ring pass's online softmax must agree with in every command.
#pragma once

#include <vector>

#include "tokdyn/attention/attention.hpp"

namespace tokdyn {

class DenseSoftmaxAttention final : public AttentionStyle {
 public:
  explicit DenseSoftmaxAttention(const AttentionContext& context);
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;

 private:
  std::vector<double> masses_;  // [N]: every token's mass, on every rank
};

}  // namespace tokdyn
