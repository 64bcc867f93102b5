// The list of attention styles: adding a style is its class plus one line here.
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/attention/ring_attention.hpp"

namespace tokdyn {

const AttentionRegistry& attention_styles() {
  static const AttentionRegistry registry = [] {
    AttentionRegistry r("attention style");
    r.add("softmax", "SA: exact softmax attention, ring pass with online softmax",
          [](const AttentionContext& c) { return std::make_unique<SoftmaxAttention>(c); });
    r.add("unnormalized", "USA: (1/N) sum_j exp(beta <Qx, K x_j>) V x_j, ring pass",
          [](const AttentionContext& c) { return std::make_unique<UnnormalizedAttention>(c); });
    r.add("fourier", "SA on the circle (d = 2, Q, K, V multiples of I) by Fourier-Bessel sums, O(N p)",
          [](const AttentionContext& c) { return std::make_unique<FourierAttention>(c, true); });
    r.add("fourier-unnormalized", "USA on the circle (d = 2, Q, K, V multiples of I) by Fourier-Bessel sums, O(N p)",
          [](const AttentionContext& c) { return std::make_unique<FourierAttention>(c, false); });
    return r;
  }();
  return registry;
}

std::unique_ptr<Attention> replica_attention(const std::string& style, const AttentionWeights& weights,
                                             std::int64_t n, int tile, double factor) {
  if (factor == 0) return nullptr;
  AttentionContext c;
  c.comm = MPI_COMM_SELF;
  c.partition = Partition(n, 1);
  c.weights = weights;
  c.tile = tile;
  return attention_styles().make(style, c);
}

}  // namespace tokdyn
