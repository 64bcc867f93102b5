// The laws of the symmetry-breaking biases of tokdyn train (doc/science.md section 10.3): per layer and
// forward pass one b ~ N(mu, diag sigma^2) in R^{d_h} for each of query, key and value that is on,
// shared by the layer's heads, the positions and the batch, drawn from the stream (seed,
// symmetry_biases, step, 3 layer + kind): a batch's biases do not depend on the ranks or on a restart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/train/gpt.hpp"

namespace tokdyn {

struct BiasLaw {
  bool on = false;
  std::vector<double> mu, sigma;  // [d_h]
};

struct SymmetryBiasLaws {
  BiasLaw query, key, value;
  bool any() const { return query.on || key.on || value.on; }
};

// A deck's list of d_h reals: one value (every entry), d_h comma-separated values, or "a..b" (d_h values
// equally spaced from a to b, numpy's linspace). InputError naming the key otherwise.
std::vector<double> parse_head_vector(const std::string& key, const std::string& text, int head_dim);

// The biases of training step `step` (each entry mu + sigma z), for the layers [L, d_h] of each kind on.
SymmetryBiases sample_biases(const SymmetryBiasLaws& laws, int layers, std::uint64_t seed, std::int64_t step);
// The means (evaluation with means).
SymmetryBiases mean_biases(const SymmetryBiasLaws& laws, int layers);

}  // namespace tokdyn
