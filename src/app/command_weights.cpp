// tokdyn weights: converts any registered weight source (a safetensors model, synthetic weights, ...)
// into tokdyn's HDF5 layout (weights/hdf5_weights.hpp) and prints its shape.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/weights/hdf5_weights.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

DeckSchema weights_schema() {
  DeckSchema s;
  add_weight_keys(s);
  s.add_text("convert.output", "weights.h5", "the HDF5 weights file to write (read back with weights.format = hdf5)");
  return s;
}

int run_weights(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  // One output written at once: the run's lock, file checks and --force, no steps.
  Run run(comm, schema, request, "weights", "convert.output");
  const Deck& deck = run.deck();
  const std::unique_ptr<WeightSource> source = weights_from_deck(deck, comm.get());
  MemoryEstimate memory;  // a rank holds one layer at a time, and blocks of 4096 embedding rows
  memory.add("a layer's Q, K, V, O [D, d] x 4", 4.0 * source->heads() * source->head_dim() * source->d());
  memory.add("embedding rows [4096, d] x 2", 2 * 4096.0 * source->d());
  run.require_memory(memory);
  comm.print("tokdyn weights: " + source->describe());
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.6g", source->score_scale());
  comm.print("  d = " + std::to_string(source->d()) + ", H = " + std::to_string(source->heads()) +
             ", d_h = " + std::to_string(source->head_dim()) + ", layers = " + std::to_string(source->layers()) +
             (source->shared() ? " (one shared layer)" : "") + ", score scale = " + scale + ", embedding: " +
             (source->has_embedding() ? std::to_string(source->vocab_size()) + " x " + std::to_string(source->d())
                                      : std::string("none")));
  run.write_once([&](const std::string& output) { write_hdf5_weights(output, *source, comm.get()); });
  return 0;
}

}  // namespace tokdyn
