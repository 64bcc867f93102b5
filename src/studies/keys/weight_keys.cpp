// [weights] and [synthetic]: which layer weights a command reads, and the WeightSpec they describe.
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/weights/weight_formats.hpp"

namespace tokdyn {

void add_weight_keys(DeckSchema& s) {
  s.add_text("weights.format", "synthetic",
             "weight format: gpt2, bert, albert, gpt-neo (safetensors files), hdf5 (tokdyn's layout, from "
             "`tokdyn weights`), train (a tokdyn train run file's GPT), synthetic (prescribed spectra, no file)");
  s.add_file("weights.file", "", "the safetensors or HDF5 weights file, or train run file (every format but synthetic)");
  s.add_text("weights.step", "last",
             "train: the parameters at the end (last) or after this optimizer step (a step the run stored: "
             "train.parameters_every)");
  s.add_text("weights.prefix", "auto",
             "key prefix of a safetensors model: auto = none, or the model's usual one (transformer., bert., "
             "albert.) when the bare names are absent; any other value as given (empty: none)");
  s.add_int("weights.heads", 0, "heads H; 0 = the source's own (safetensors files do not store it: set it)", 0,
            1 << 24);
  s.add_int("weights.layers", 0, "layers to use; 0 = all the source has (ALBERT: 12 applications of its shared layer)",
            0, std::int64_t(1) << 40);
  add_synthetic_keys(s);
}

// The synthetic format's keys, declared by its class.
void add_synthetic_keys(DeckSchema& s) { SyntheticWeights::keys().declare(s); }

SyntheticSpec synthetic_spec_from_deck(const Deck& deck) { return SyntheticWeights::keys().read(deck); }

WeightSpec weight_spec_from_deck(const Deck& deck) {
  WeightSpec w;
  w.format = deck.get_text("weights.format");
  w.file = deck.get_text("weights.file");
  w.prefix = deck.get_text("weights.prefix");
  w.heads = static_cast<int>(deck.get_int("weights.heads"));
  w.layers = deck.get_int("weights.layers");
  w.step = deck.get_text("weights.step");
  w.synthetic = synthetic_spec_from_deck(deck);
  return w;
}

std::unique_ptr<WeightSource> weights_from_deck(const Deck& deck, MPI_Comm comm) {
  return open_weights(weight_spec_from_deck(deck), comm);
}

}  // namespace tokdyn
