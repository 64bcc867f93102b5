#include "tokdyn/train/symmetry_biases.hpp"

#include <cmath>
#include <cstdlib>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

std::vector<double> parse_head_vector(const std::string& key, const std::string& text, int head_dim) {
  const std::size_t dots = text.find("..");
  if (dots != std::string::npos) {
    const std::vector<double> ends =
        parse_real_list(key, text.substr(0, dots) + "," + text.substr(dots + 2), true);
    if (ends.size() != 2) throw InputError("deck key '" + key + "' = '" + text + "': expected a..b");
    std::vector<double> v(head_dim);
    for (int e = 0; e < head_dim; ++e)
      v[e] = head_dim == 1 ? ends[0] : ends[0] + (ends[1] - ends[0]) * e / static_cast<double>(head_dim - 1);
    return v;
  }
  std::vector<double> v = parse_real_list(key, text, true);
  if (v.size() == 1) v.assign(head_dim, v[0]);
  if (static_cast<int>(v.size()) != head_dim)
    throw InputError("deck key '" + key + "' = '" + text + "': expected 1 or d_h = " + std::to_string(head_dim) +
                     " values, or a..b; got " + std::to_string(v.size()));
  return v;
}

namespace {

// [L, d_h]: mu + sigma z per layer (z from (step, 3 l + kind)), or mu when step < 0.
std::vector<double> draw(const BiasLaw& law, int kind, int layers, std::uint64_t seed, std::int64_t step) {
  if (!law.on) return {};
  const std::size_t D = law.mu.size();
  std::vector<double> b(static_cast<std::size_t>(layers) * D), z(D, 0.0);
  const RandomStream stream(seed, Purpose::symmetry_biases);
  for (int l = 0; l < layers; ++l) {
    if (step >= 0) stream.normals(static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(3 * l + kind), z.data(), D);
    for (std::size_t e = 0; e < D; ++e) b[l * D + e] = law.mu[e] + law.sigma[e] * z[e];
  }
  return b;
}

}  // namespace

SymmetryBiases sample_biases(const SymmetryBiasLaws& laws, int layers, std::uint64_t seed, std::int64_t step) {
  if (step < 0) throw InputError("sample_biases: a negative step");
  return {draw(laws.query, 0, layers, seed, step), draw(laws.key, 1, layers, seed, step),
          draw(laws.value, 2, layers, seed, step)};
}

SymmetryBiases mean_biases(const SymmetryBiasLaws& laws, int layers) {
  return {draw(laws.query, 0, layers, 0, -1), draw(laws.key, 1, layers, 0, -1), draw(laws.value, 2, layers, 0, -1)};
}

}  // namespace tokdyn
