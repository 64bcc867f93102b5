// The per-layer random MLP of width m (doc/science.md section 1.2), common to all tokens:
//   G^m_l(y) = (1/sqrt m) W^l sigma(U^l y / sqrt d + b_U^l) + b_W^l,
// fresh weights every layer, drawn on every rank from the stream keyed by (seed, purpose, layer, row):
// identical everywhere without any broadcast.
#pragma once

#include <cstdint>
#include <vector>

#include "tokdyn/noise/activation.hpp"

namespace tokdyn {

class MemoryEstimate;

struct MlpParams {
  std::int64_t width = 2048;  // m
  std::string activation = "relu";
  double sigma_u = 0, sigma_w = 0;  // bias scales
  std::uint64_t seed = 1;
};

// The MLP's weights U [m, d], W [d, m] and hidden chunk, for the memory check.
void mlp_memory(MemoryEstimate& memory, std::int64_t width, int d);

class RandomMlp {
 public:
  RandomMlp(const MlpParams& params, int d);

  // Draws (U^l, W^l, b_U^l, b_W^l) of layer l (l >= 1). `system` keys independent MLPs of independent systems
  // (tokdyn phase): row r of system k is counter (layer, k m + r); system 0 is the one MLP of a single system.
  void draw(std::int64_t layer, std::uint64_t system = 0);
  // g = G^m_l(y); y, g: [n, d]. Rows go through in chunks, so memory is O(chunk * m).
  void apply(const double* y, std::int64_t n, double* g);

  const MlpParams& params() const { return params_; }

 private:
  MlpParams params_;
  const Activation* act_;
  int d_;
  std::vector<double> u_;        // [m, d]
  std::vector<double> w_;        // [d, m]
  std::vector<double> bias_u_;   // [m]
  std::vector<double> bias_w_;   // [d]
  std::vector<double> hidden_;   // [chunk, m]
};

}  // namespace tokdyn
