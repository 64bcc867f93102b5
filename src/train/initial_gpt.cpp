// GPT-2's initial parameters (include/tokdyn/train/gpt.hpp), tensor by tensor as GptLayout::blocks()
// names them; tensor k's normals come from (seed, train_init, k).
#include <cmath>
#include <string>

#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/train/gpt.hpp"

namespace tokdyn {

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

template <class T>
std::vector<T> initial_gpt(const GptConfig& c, const GptInit& init, std::uint64_t seed) {
  const GptLayout layout(c);
  std::vector<T> theta(layout.size);
  const std::vector<ParameterBlock> blocks = layout.blocks();
  std::vector<double> z;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const ParameterBlock& b = blocks[k];
    double mean = 0, std = init.std;
    if (ends_with(b.name, "bias")) {
      std = 0;
    } else if (b.name.find("ln_") != std::string::npos) {
      mean = 1, std = 0;  // LayerNorm weights
    } else if (ends_with(b.name, "c_proj.weight")) {
      std = init.std / std::sqrt(2.0 * c.layers);  // the residual projections
    } else if (ends_with(b.name, "prelu.slope")) {
      mean = init.prelu_mean, std = init.prelu_std;
    }
    z.assign(b.size, 0.0);
    if (std != 0) RandomStream(seed, Purpose::train_init).normals(k, 0, z.data(), b.size);
    for (std::size_t i = 0; i < b.size; ++i) theta[b.begin + i] = static_cast<T>(mean + std * z[i]);
  }
  return theta;
}

template std::vector<float> initial_gpt<float>(const GptConfig&, const GptInit&, std::uint64_t);
template std::vector<double> initial_gpt<double>(const GptConfig&, const GptInit&, std::uint64_t);

}  // namespace tokdyn
