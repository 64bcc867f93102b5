// The Gaussian-field representations, and their deck keys: a new one is its class plus one line here.
#include "tokdyn/core/deck.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/run/memory.hpp"

namespace tokdyn {

const FieldRegistry& field_styles() {
  static const FieldRegistry registry = [] {
    FieldRegistry r("noise field");
    r.add("fourier", "truncated Karhunen-Loeve (Fourier) modes of the exact kernel on S^1 (d = 2)",
          [](const FieldParams& p) { return std::make_unique<FourierField>(p); });
    r.add("features", "quenched random features (any d): M fixed hidden units, Brownian output weights",
          [](const FieldParams& p) { return std::make_unique<RandomFeatureField>(p); });
    return r;
  }();
  return registry;
}

void add_field_keys(DeckSchema& s) {
  s.add_choice("noise.field", "features", field_styles().names(), "representation of the Gaussian field");
  s.add_real("noise.kl_tolerance", 1e-6, "fourier: neglected variance / kappa(1) of the truncation", 0.0, 1.0, true);
  s.add_int("noise.features", 1024, "features: number M of random features", 1, 1 << 24);
}

FieldParams field_params_from_deck(const Deck& deck, int d) {
  FieldParams p;
  p.kernel = MlpKernel{&activation(deck.get_text("mlp.activation")), d, deck.get_real("mlp.sigma_u"),
                       deck.get_real("mlp.sigma_w")};
  p.kl_tolerance = deck.get_real("noise.kl_tolerance");
  p.features = deck.get_int("noise.features");
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  return p;
}

}  // namespace tokdyn

namespace tokdyn {

void field_memory(MemoryEstimate& memory, const Deck& deck, std::int64_t n_local, int d) {
  // Random features hold U [M, d]; either field evaluates phi [n_local, K] and increments [K, d] per step.
  const double modes = deck.get_text("noise.field") == "features" ? double(deck.get_int("noise.features")) + 1 : 1024.0;
  if (deck.get_text("noise.field") == "features") memory.add("random features U [M, d]", modes * d);
  memory.add("noise modes phi [N/P, K] x 2 and increments [K, d]", modes * (2.0 * static_cast<double>(n_local) + d));
}

}  // namespace tokdyn
