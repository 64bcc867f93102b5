// The weight formats, in one list, and the [weights] deck keys.
#include <fstream>

#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/spectral/layer_weights.hpp"
#include "tokdyn/spectral/synthetic_weights.hpp"

namespace tokdyn {

namespace {

std::unique_ptr<WeightSource> make_synthetic(const Deck& deck, MPI_Comm) {
  SyntheticSpec spec = synthetic_spec_from_deck(deck);
  const std::int64_t layers = deck.get_int("weights.layers");
  if (layers > 0) {
    if (!spec.shared && layers > spec.layers)
      throw InputError("weights.layers = " + std::to_string(layers) + " exceeds the " + std::to_string(spec.layers) +
                       " layer-varying synthetic layers (synthetic.layers)");
    spec.layers = layers;
  }
  return std::make_unique<SyntheticWeights>(spec);
}

}  // namespace

const WeightFormatRegistry& weight_formats() {
  static const WeightFormatRegistry registry = [] {
    WeightFormatRegistry r("weight format");
    r.add("synthetic", "synthetic layers with a prescribed spectrum ([synthetic] keys)", make_synthetic);
    return r;
  }();
  return registry;
}

void add_weight_keys(DeckSchema& s) {
  s.add_text("weights.format", "synthetic",
             "weight format: gpt2, bert, albert, gpt-neo (safetensors), hdf5 (tokdyn's layout), synthetic");
  s.add_text("weights.file", "", "safetensors or HDF5 weights file (every format but synthetic)");
  s.add_text("weights.prefix", "auto",
             "key prefix of a safetensors model: auto (none, or the model's usual one), or the prefix itself");
  s.add_int("weights.heads", 0, "heads H; 0 = the source's own (safetensors files need it given)", 0);
  s.add_int("weights.layers", 0, "layers used; 0 = all the source has (ALBERT: 12 applications)", 0);
  add_synthetic_keys(s);
}

std::unique_ptr<WeightSource> weights_from_deck(const Deck& deck, MPI_Comm comm) {
  const std::string& format = deck.get_text("weights.format");
  if (format != "synthetic") {
    const std::string& file = deck.get_text("weights.file");
    if (file.empty()) throw InputError("weights.format = " + format + " needs weights.file");
    if (!std::ifstream(file).good()) throw InputError("weights.file '" + file + "' cannot be opened");
  }
  std::unique_ptr<WeightSource> source = weight_formats().make(format, deck, comm);
  const std::int64_t heads = deck.get_int("weights.heads");
  if (heads > 0 && source->heads() != heads)
    throw InputError("weights.heads = " + std::to_string(heads) + " disagrees with the " +
                     std::to_string(source->heads()) + " heads of " + source->describe());
  return source;
}

}  // namespace tokdyn
