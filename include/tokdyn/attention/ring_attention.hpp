// Exact attention by the ring pass with an online softmax (pairs/online_softmax.hpp), BLAS tiles for the
// logits and the value sums, H heads, optionally causal. Memory O((N/P) D) plus one tile. Token masses
// enter as log(N w_j) added to the logits, so uniform masses (log 1 = 0) take the unweighted path unchanged.
#pragma once

#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/pairs/online_softmax.hpp"
#include "tokdyn/pairs/ring_pass.hpp"

namespace tokdyn {

class RingAttention : public AttentionStyle {
 public:
  // normalized: SA (acc / l per head), else USA ((1/N) e^m acc per head).
  RingAttention(const AttentionContext& context, bool normalized);
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;

 private:
  bool normalized_;
  RingPass ring_;
  int width_;                        // D
  std::vector<double> queries_;      // [n_local, D]: beta Q x_i
  // The travelling block: [n_local, 2D] rows (K x_j, V x_j), then [n_local] log masses log(N w_j).
  // The log masses follow the rows rather than forming a column, so the BLAS calls keep stride 2D.
  std::vector<double> keys_values_;
  bool uniform_ = true;  // every log mass is 0 (decided collectively): no add to the logits
  OnlineSoftmax softmax_;
};

// Softmax self-attention (SA): sum_j e^{s_ij} V x_j / sum_k e^{s_ik}.
class SoftmaxAttention final : public RingAttention {
 public:
  explicit SoftmaxAttention(const AttentionContext& context) : RingAttention(context, true) {}
};

// Unnormalised self-attention (USA): (1/N) sum_j e^{s_ij} V x_j.
class UnnormalizedAttention final : public RingAttention {
 public:
  explicit UnnormalizedAttention(const AttentionContext& context) : RingAttention(context, false) {}
};

}  // namespace tokdyn
