// Exact attention by the ring pass with an online softmax (pairs/online_softmax.hpp), BLAS tiles for the
// logits and the value sums, H heads, optionally causal. Memory O((N/P) D) plus one tile. Token masses
// enter as log(N w_j) added to the logits, so uniform masses (log 1 = 0) take the unweighted path unchanged.
// Symmetric logits c <x_i, x_j> (AttentionContext::symmetric; or <R x_i, R x_j> when beta Q^T K = R^2 is
// symmetric positive semi-definite: the same with R x for x and c = 1) take the half ring instead: with
// h_i = c |x_i|^2 / 2 and u_j = e^{h_j - M} (M = max h), e^{s_ij} = e^{h_i + M} e^{-c |x_i - x_j|^2 / 2} u_j,
// and the one weight e^{-c |x_i - x_j|^2 / 2} <= 1 of a pair serves row i (with u_j V x_j) and row j
// (with u_i V x_i): no running maximum, no rescaling, half the exponentials and logits.
#pragma once

#include <optional>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/pairs/half_ring.hpp"
#include "tokdyn/pairs/online_softmax.hpp"
#include "tokdyn/pairs/ring_pass.hpp"

namespace tokdyn {

class RingAttention : public AttentionStyle {
 public:
  // normalized: SA (acc / l per head), else USA ((1/N) e^m acc per head).
  RingAttention(const AttentionContext& context, bool normalized);
  // attention.precision (AttentionSpec::single_tiles).
  static const KeyTable<AttentionSpec>& keys();
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;
  void set_weights(const AttentionWeights& weights) override;
  bool apply_with_statistics(const double* x, double* out, PairStatisticsPass& statistics,
                             PairStatistics& result) override;
  // Whether the last apply took the half ring (for tests and the bench).
  bool took_symmetric() const { return took_symmetric_; }

 private:
  // When the context allows the half ring: scale_ = c for logits c <x_i, x_j> (Q, K multiples of I, c >= 0), or
  // scale_ = 1 and root_ = R = M^{1/2} for logits <R x_i, R x_j> (M = beta Q^T K symmetric positive semi-definite).
  void find_symmetric_logits();
  // The half-ring pass (out [n_local, D]); with statistics, their sums of the same tiles. False (nothing
  // written) when the tokens' norms are too far apart for one shift (max h - min h > 600). Collective.
  bool apply_symmetric(const double* x, double* out, PairStatisticsPass* statistics);
  // apply_symmetric's pass with float32 tiles (AttentionContext::single_tiles): h [n_local], uv [n_local, D + 1].
  void visit_single(const double* y, const double* h, const double* uv);

  bool normalized_;
  RingPass ring_;
  int width_;                        // D
  std::vector<double> queries_;      // [n_local, D]: beta Q x_i
  // The travelling block: [n_local, 2D] rows (K x_j, V x_j), then [n_local] log masses log(N w_j).
  // The log masses follow the rows rather than forming a column, so the BLAS calls keep stride 2D.
  std::vector<double> keys_values_;
  bool uniform_ = true;  // every log mass is 0 (decided collectively): no add to the logits
  OnlineSoftmax softmax_;
  // The half ring (symmetric logits): c, the pass, the travelling block [n_local, d] tokens, [n_local] h,
  // [n_local, D + 1] (u_j V x_j, u_j); the row sums [n_local, D + 1] of own visits and of the others'.
  std::optional<double> scale_;
  std::vector<double> root_;  // [d, d]; empty: the tokens themselves
  std::optional<HalfRing> half_;
  std::vector<double> packed_, rows_acc_, home_acc_;
  std::vector<double> gram_, weights_;  // [tile, tile]
  std::vector<float> x32_, h32_, uv32_, block32_, block_h32_, block_uv32_, tile32_, sums32_;  // float32 tiles' copies
  bool took_symmetric_ = false;
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
