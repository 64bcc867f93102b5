// The Gaussian-field representations: a new one is its class (with the keys it reads) plus one line here.
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/run/memory.hpp"

namespace tokdyn {

const FieldRegistry& field_styles() {
  static const FieldRegistry registry = [] {
    FieldRegistry r("noise field");
    r.add("fourier", "truncated Karhunen-Loeve (Fourier) modes of the exact kernel on S^1 (d = 2)",
          [](const FieldParams& p) { return std::make_unique<FourierField>(p); }, &FourierField::keys());
    r.add("features", "quenched random features (any d): M fixed hidden units, Brownian output weights",
          [](const FieldParams& p) { return std::make_unique<RandomFeatureField>(p); },
          &RandomFeatureField::keys());
    return r;
  }();
  return registry;
}

std::unique_ptr<GaussianField> make_field(const FieldParams& params) {
  return field_styles().make(params.style, params);
}

void field_memory(MemoryEstimate& memory, const FieldParams& params, std::int64_t n_local, int d) {
  // Random features hold U [M, d]; either field evaluates phi [n_local, K] and increments [K, d] per step.
  const bool features = params.style == "features";
  const double modes = features ? double(params.features) + 1 : 1024.0;
  if (features) memory.add("random features U [M, d]", modes * d);
  memory.add("noise modes phi [N/P, K] x 2 and increments [K, d]", modes * (2.0 * static_cast<double>(n_local) + d));
}

}  // namespace tokdyn
