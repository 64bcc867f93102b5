// tokdyn lens: a trained GPT through the power-method lens (doc/science.md section 10.8). For every point
// a train run stored (train/parameters at train.parameters_every, and the end), per layer the spectrum of
// F = O V and of each head's F_h = O_h V_h (|lambda_1|, the gap) and the alignment of the vocabulary's
// embeddings, sent through the model's attention layers as power-method layers, with each layer's leading
// eigenvector. A run of one step per stored point.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/power/power_layer.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

struct LensParams {
  std::string run;                   // lens.run: the train run file
  std::vector<std::int64_t> steps;   // the stored steps looked at, in order; -1: the end (final_parameters)
  PowerLayerOptions layer;           // lens.attention, lens.causal, lens.residual; run.tile
  std::string label;                 // the train run's optimizer and symmetry ("ecd, b_Q + b_V")
  std::int64_t last_step = 0;        // its last step (of the point "last")
};

class LensRun;

class LensStudy : public Study {
 public:
  static DeckSchema schema();
  LensStudy(const Comm& comm, const Deck& deck);
  ~LensStudy() override;
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return d_; }

 private:
  const Comm& comm_;
  LensParams p_;
  int d_ = 0, heads_ = 0, layers_ = 0;
  std::int64_t vocab_ = 0;
  std::unique_ptr<LensRun> state_;
};

}  // namespace tokdyn
