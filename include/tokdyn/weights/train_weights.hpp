// weights.format = train: the attention weights of the GPT of a `tokdyn train` run file, at the end
// (train/final_parameters) or at a stored step (a row of train/parameters, train.parameters_every), read as
// `tokdyn spectrum`, `power` and `lens` read any GPT-2 model (doc/science.md section 10.8).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// What a train run file says about itself, read on the calling rank (InputError when it is no train run file).
struct TrainRunInfo {
  std::vector<std::int64_t> stored_steps;  // train/parameters_step (empty: none stored)
  std::int64_t last_step = 0;              // train.steps: the step of train/final_parameters
  std::string label;                       // the optimizer and symmetry setting: "ecd, b_Q + b_V"
};
TrainRunInfo train_run_info(const std::string& path);

// The model of run file `path` after optimizer step `step` ("last": train/final_parameters; a number: the row
// of train/parameters stored at that step), opened and read on the calling rank. heads: 0 or the model's;
// layers: 0 = all. InputError naming the file and what is wrong (not a train run, no such step, a shape
// that is no GPT of the stored deck, NaN or Inf).
std::unique_ptr<WeightSource> open_train_weights(const std::string& path, const std::string& step, int heads,
                                                 std::int64_t layers);

}  // namespace tokdyn
