// Exact attention by the ring pass with an online softmax (running max, running sum per query),
// BLAS tiles for the logits and the value sums. Memory O((N/P) d) plus one tile. Token masses enter as
// log(N w_j) added to the logits, so uniform masses (log 1 = 0) take the unweighted path unchanged.
#pragma once

#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/ring_pass.hpp"

namespace tokdyn {

class RingAttention : public Attention {
 public:
  explicit RingAttention(const AttentionContext& context);
  void apply(const double* x, double* out) override;
  void set_masses(const double* masses) override;

 protected:
  // Turns the accumulated exp-weighted value sums into Attn: acc = sum_j e^{s_ij - m_i} V x_j,
  // running_max m_i, running_sum l_i = sum_j e^{s_ij - m_i}; out [n_local, d].
  virtual void normalize(std::int64_t n_local, const double* acc, const double* running_max,
                         const double* running_sum, double* out) const = 0;
  std::int64_t n_global() const { return context_.partition.n_global; }
  int d() const { return context_.weights.d; }

 private:
  void visit(const double* block, std::int64_t rows);

  AttentionContext context_;
  RingPass ring_;
  std::int64_t n_local_;
  std::vector<double> queries_;      // [n_local, d]: beta Q x_i
  // The travelling block: [n_local, 2d] rows (K x_j, V x_j), then [n_local] log masses log(N w_j).
  // The log masses follow the rows rather than forming a column, so the BLAS calls keep stride 2d.
  std::vector<double> keys_values_;
  bool uniform_ = true;  // every log mass is 0 (decided collectively): no add to the logits
  std::vector<double> acc_;          // [n_local, d]
  std::vector<double> max_, sum_;    // [n_local]
  std::vector<double> tile_;         // [tile, tile] logits, then weights
};

// Softmax self-attention (SA): sum_j e^{s_ij} V x_j / sum_k e^{s_ik}.
class SoftmaxAttention final : public RingAttention {
 public:
  using RingAttention::RingAttention;

 protected:
  void normalize(std::int64_t n_local, const double* acc, const double* running_max, const double* running_sum,
                 double* out) const override;
};

// Unnormalised self-attention (USA): (1/N) sum_j e^{s_ij} V x_j.
class UnnormalizedAttention final : public RingAttention {
 public:
  using RingAttention::RingAttention;

 protected:
  void normalize(std::int64_t n_local, const double* acc, const double* running_max, const double* running_sum,
                 double* out) const override;
};

}  // namespace tokdyn
