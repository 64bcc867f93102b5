// The list of attention styles: adding a style is its class (with the keys it reads) plus one line here.
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/attention/feature_attention.hpp"
#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/attention/harmonic_attention.hpp"
#include "tokdyn/attention/ring_attention.hpp"
#include "tokdyn/attention/simple_attention.hpp"

namespace tokdyn {
namespace {

AttentionRegistry& registry() {
  static AttentionRegistry r = [] {
    AttentionRegistry r("attention style");
    const AttentionTraits sa{true, true}, usa{false, true}, stochastic{true, false}, sa_ring{true, true, true},
        usa_ring{false, true, true};
    r.add("softmax", "SA: exact softmax attention, ring pass with online softmax", sa_ring,
          [](const AttentionContext& c) { return std::make_unique<SoftmaxAttention>(c); }, &RingAttention::keys());
    r.add("unnormalized", "USA: (1/N) sum_j exp(beta <Qx, K x_j>) V x_j, ring pass", usa_ring,
          [](const AttentionContext& c) { return std::make_unique<UnnormalizedAttention>(c); }, &RingAttention::keys());
    r.add("fourier", "SA on the circle (d = 2, Q, K, V multiples of I) by Fourier-Bessel sums, O(N p)", sa,
          [](const AttentionContext& c) { return std::make_unique<FourierAttention>(c, true); });
    r.add("fourier-unnormalized", "USA on the circle (d = 2, Q, K, V multiples of I) by Fourier-Bessel sums, O(N p)",
          usa, [](const AttentionContext& c) { return std::make_unique<FourierAttention>(c, false); });
    r.add("harmonic",
          "SA on the sphere S^2 (d = 3, Q, K, V multiples of I) by spherical-harmonic sums to attention.tolerance, "
          "O(N p^2)",
          sa, [](const AttentionContext& c) { return std::make_unique<HarmonicAttention>(c, true); },
          &HarmonicAttention::keys());
    r.add("harmonic-unnormalized",
          "USA on the sphere S^2 (d = 3, Q, K, V multiples of I) by spherical-harmonic sums, O(N p^2)", usa,
          [](const AttentionContext& c) { return std::make_unique<HarmonicAttention>(c, false); },
          &HarmonicAttention::keys());
    r.add("random-features",
          "SA in any d (one head, any Q, K, V) by attention.features positive random features, O(N M D); "
          "unbiased sums, standard error reported",
          sa, [](const AttentionContext& c) { return std::make_unique<FeatureAttention>(c, true); },
          &FeatureAttention::keys());
    r.add("random-features-unnormalized", "USA in any d by attention.features positive random features, O(N M D)",
          usa, [](const AttentionContext& c) { return std::make_unique<FeatureAttention>(c, false); },
          &FeatureAttention::keys());
    r.add("uniform", "A_ij = w_j (1/N): every token sees the mean of V x_j (causal: over j <= i), O(N)", stochastic,
          [](const AttentionContext& c) { return std::make_unique<UniformAttention>(c); });
    r.add("identity", "A = I: each token sees only V x_i", stochastic,
          [](const AttentionContext& c) { return std::make_unique<IdentityAttention>(c); });
    return r;
  }();
  return r;
}

}  // namespace

void AttentionRegistry::add(const std::string& name, const std::string& help, const AttentionTraits& traits,
                            Factory factory, const KeyTable<AttentionSpec>* keys) {
  KeyedRegistry::add(name, help, std::move(factory), keys);
  traits_[name] = traits;
}

const AttentionTraits& AttentionRegistry::traits(const std::string& name) const {
  require(name);
  return traits_.at(name);
}

const AttentionRegistry& attention_styles() { return registry(); }

bool add_attention_style(const std::string& name, const std::string& help, const AttentionTraits& traits,
                         AttentionRegistry::Factory factory, const KeyTable<AttentionSpec>* keys) {
  registry().add(name, help, traits, std::move(factory), keys);
  return true;
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
