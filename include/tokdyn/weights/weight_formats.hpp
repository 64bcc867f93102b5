// Every weight format in one list (the registry weight_formats()) and open_weights: the one way a
// command gets its layers.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tokdyn/core/deck/registry.hpp"
#include "tokdyn/weights/layer_weights.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"

namespace tokdyn {

// Which weights (the [weights] and [synthetic] deck keys, read in studies/keys.hpp).
struct WeightSpec {
  std::string format = "synthetic";  // a name of weight_formats()
  std::string file;                  // every format but synthetic
  std::string prefix = "auto";       // safetensors: key prefix (auto: none, or the model's usual one)
  int heads = 0;                     // 0: the source's own
  std::int64_t layers = 0;           // 0: all the source has
  std::string step = "last";         // train: the optimizer step of the stored parameters (last: the end)
  SyntheticSpec synthetic;
};

using WeightFormatRegistry = Registry<WeightSource, const WeightSpec&, MPI_Comm>;
// gpt2, bert, albert, gpt-neo (safetensors), hdf5 (the project's layout), train (a train run file's GPT),
// synthetic (prescribed spectra).
const WeightFormatRegistry& weight_formats();

// The weight source of spec.format; every rank of comm opens it, and an error any rank sees stops all.
std::unique_ptr<WeightSource> open_weights(const WeightSpec& spec, MPI_Comm comm);

}  // namespace tokdyn
