// Every weight format in one list (the registry weight_formats()), the [weights] deck keys, and
// weights_from_deck: the one way a command gets its layers.
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/weights/hdf5_weights.hpp"
#include "tokdyn/weights/layer_weights.hpp"
#include "tokdyn/weights/model_weights.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"

namespace tokdyn {
namespace {

// weights.file of a format that reads one: set, an existing regular file, readable.
std::string weights_file(const Deck& deck) {
  const std::string path = deck.get_text("weights.file");
  const std::string format = deck.get_text("weights.format");
  if (path.empty()) throw InputError("weights.format = " + format + " needs weights.file");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError("weights file '" + path + "' (weights.file) does not exist");
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError("weights file '" + path + "' (weights.file) is not a regular file");
  if (::access(path.c_str(), R_OK) != 0) throw InputError("weights file '" + path + "' (weights.file) is not readable");
  return path;
}

std::unique_ptr<WeightSource> safetensors_model(const std::string& model, const Deck& deck) {
  ModelWeightsOptions o;
  o.model = model;
  o.path = weights_file(deck);
  o.prefix = deck.get_text("weights.prefix");
  o.heads = static_cast<int>(deck.get_int("weights.heads"));
  o.layers = deck.get_int("weights.layers");
  return open_model_weights(o);
}

std::unique_ptr<WeightSource> synthetic(const Deck& deck) {
  SyntheticSpec spec = synthetic_spec_from_deck(deck);
  const std::int64_t layers = deck.get_int("weights.layers");
  if (layers > 0) {
    if (!spec.shared && layers > spec.layers)
      throw InputError("weights.layers = " + std::to_string(layers) + " exceeds the " + std::to_string(spec.layers) +
                       " layer-varying synthetic layers (synthetic.layers)");
    spec.layers = layers;
  }
  const std::int64_t heads = deck.get_int("weights.heads");
  if (heads > 0 && heads != spec.heads)
    throw InputError("weights.heads = " + std::to_string(heads) + " disagrees with synthetic.heads = " +
                     std::to_string(spec.heads));
  return std::make_unique<SyntheticWeights>(spec);
}

}  // namespace

void add_weight_keys(DeckSchema& s) {
  s.add_text("weights.format", "synthetic",
             "weight format: gpt2, bert, albert, gpt-neo (safetensors files), hdf5 (tokdyn's layout, from "
             "`tokdyn weights`), synthetic (prescribed spectra, no file)");
  s.add_file("weights.file", "", "the safetensors or HDF5 weights file (every format but synthetic)");
  s.add_text("weights.prefix", "auto",
             "key prefix of a safetensors model: auto = none, or the model's usual one (transformer., bert., "
             "albert.) when the bare names are absent; any other value as given (empty: none)");
  s.add_int("weights.heads", 0, "heads H; 0 = the source's own (safetensors files do not store it: set it)", 0,
            1 << 24);
  s.add_int("weights.layers", 0, "layers to use; 0 = all the source has (ALBERT: 12 applications of its shared layer)",
            0, std::int64_t(1) << 40);
  add_synthetic_keys(s);
}

const WeightFormatRegistry& weight_formats() {
  static const WeightFormatRegistry registry = [] {
    WeightFormatRegistry r("weight format");
    for (const char* model : {"gpt2", "bert", "albert", "gpt-neo"})
      r.add(model, std::string(model) + " safetensors file (HuggingFace names, optional prefix)",
            [model](const Deck& deck, MPI_Comm) { return safetensors_model(model, deck); });
    r.add("hdf5", "tokdyn's HDF5 layout (/weights/query, key, value, output, embedding)",
          [](const Deck& deck, MPI_Comm) {
            return open_hdf5_weights(weights_file(deck), static_cast<int>(deck.get_int("weights.heads")),
                                     deck.get_int("weights.layers"));
          });
    r.add("synthetic", "synthetic layers with a prescribed spectrum ([synthetic] keys)",
          [](const Deck& deck, MPI_Comm) { return synthetic(deck); });
    return r;
  }();
  return registry;
}

std::unique_ptr<WeightSource> weights_from_deck(const Deck& deck, MPI_Comm comm) {
  // Every rank opens the source itself; a problem any rank sees stops all of them with its message.
  return read_collectively(comm, [&] { return weight_formats().make(deck.get_text("weights.format"), deck, comm); });
}

std::int64_t first_nonfinite(const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace tokdyn
