// tokdyn weights: converts any registered weight source (a safetensors model, synthetic weights, ...)
// into tokdyn's HDF5 layout (spectral/hdf5_weights.hpp) and prints its shape.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "tokdyn/spectral/hdf5_weights.hpp"
#include "tokdyn/spectral/layer_weights.hpp"

namespace tokdyn {

DeckSchema weights_schema() {
  DeckSchema s;
  add_weight_keys(s);
  s.add_text("convert.output", "weights.h5", "the HDF5 weights file to write (read back with weights.format = hdf5)");
  return s;
}

int run_weights(const Comm& comm, const DeckSchema& schema, const Arguments& args) {
  const Deck deck = Deck::parse(schema, args.request.deck_path, args.request.overrides);
  const std::string output = deck.get_text("convert.output");
  if (output.empty()) throw InputError("deck key 'convert.output' is empty");
  const std::unique_ptr<WeightSource> source = weights_from_deck(deck, comm.get());
  const RunControl control = study_control(output, args.request);
  if (!prepare_output(comm, control)) return 0;
  comm.print("tokdyn weights: " + source->describe());
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.6g", source->score_scale());
  comm.print("  d = " + std::to_string(source->d()) + ", H = " + std::to_string(source->heads()) +
             ", d_h = " + std::to_string(source->head_dim()) + ", layers = " + std::to_string(source->layers()) +
             (source->shared() ? " (one shared layer)" : "") + ", score scale = " + scale + ", embedding: " +
             (source->has_embedding() ? std::to_string(source->vocab_size()) + " x " + std::to_string(source->d())
                                      : std::string("none")));
  write_hdf5_weights(control.output, *source, comm.get());
  comm.print("wrote '" + control.output + "'");
  return 0;
}

}  // namespace tokdyn
