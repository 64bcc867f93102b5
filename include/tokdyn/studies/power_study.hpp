// tokdyn power: tokens through the simplified layers of doc/science.md section 7.2 (one power-method step
// each), their alignment with every layer's leading eigenvector, the final state, and a steering sweep.
// A run of L layers: the checkpoint holds the tokens, the per-layer series so far and the final-state
// detector; the leading directions of the first and last layers are recomputed on a restart.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/power/power_layer.hpp"
#include "tokdyn/studies/study.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// Every deck key of tokdyn power but the weight source's (weights_from_deck reads those).
struct PowerParams {
  PowerLayerOptions layer;                 // power.attention, power.causal, power.residual, run.tile
  std::string tokens;                      // power.tokens: random, file or embedding
  std::int64_t n = 0;                      // power.N (random)
  std::string token_file, token_dataset;   // (file)
  std::vector<std::int64_t> token_ids;     // (embedding)
  std::string eigensolver;                 // auto, lapack or krylovschur
  std::int64_t dense_max = 0;              // spectrum.dense_max: the d up to which auto means LAPACK
  double tol = 0;                          // radians, of the final-state detection
  std::int64_t window = 0;                 // layers a limit cycle must persist
  std::string target;                      // steer.target; empty: no steering
  std::vector<double> strengths;           // c of each sweep point (when steering)
  std::string steer_layers;                // last or all
  std::int64_t snapshot_every = 0;         // run.snapshot_every
  std::uint64_t seed = 0;                  // run.seed: the random tokens
};
PowerParams power_params(const Deck& deck);

class PowerLayers;
class PowerRun;

class PowerStudy : public Study {
 public:
  static DeckSchema schema();
  PowerStudy(const Comm& comm, const Deck& deck);
  ~PowerStudy() override;
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  std::int64_t snapshot_tokens() const override { return n_; }
  int width() const override { return d_; }

 private:
  const Comm& comm_;
  PowerParams p_;
  std::unique_ptr<WeightSource> source_;
  int d_;
  std::int64_t layers_;  // weights.layers (the source honours it; shared weights repeat any number of times)
  bool krylov_;          // leading directions by Krylov-Schur on the operator (LAPACK where it fails, for auto)
  std::int64_t n_ = 0;   // tokens N, known once setup() has them
  std::unique_ptr<PowerLayers> model_;
  std::unique_ptr<PowerRun> state_;
};

}  // namespace tokdyn
