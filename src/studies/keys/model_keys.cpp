// [model], [diagnostics], [tokens]: the keys of the token studies and what they describe.
#include <limits>

#include "tokdyn/studies/keys.hpp"

namespace tokdyn {

void add_model_keys(DeckSchema& s, const ModelKeys& k) {
  if (k.tokens) s.add_int("model.N", k.n, "number of tokens N", 1, std::int64_t(1) << 40);
  s.add_int("model.d", k.d, k.d_help, 2, 1 << 20);
  s.add_int("model.L", k.layers, k.layers_help, 1);
  s.add_real("model.T", k.horizon, "horizon T", 0.0, std::numeric_limits<double>::infinity(), true);
}

void add_diagnostics_keys(DeckSchema& s) {
  s.add_int("diagnostics.every", 1, "diagnostics every k layers (and at the last)", 1);
  s.add_int("diagnostics.snapshot_every", 0, "token snapshots every k' layers (0: first and last only)", 0);
  s.add_int("diagnostics.bins", 50, "bins of the pairwise-cosine histogram on [-1, 1]", 1, 100000);
  s.add_choice("diagnostics.pairs", "auto", {"auto", "exact", "sampled", "off"},
               "pair statistics (E_beta, minimum cosine, histogram): every pair, the pairs of a random token subset "
               "(with E_beta's standard error), or none; auto: exact up to N = 65536, sampled above. |mean x| and the "
               "mean cosine are exact in every mode");
  s.add_int("diagnostics.sample_tokens", 4096, "sampled: expected size of the token subset (its pairs are counted)",
            2, 1 << 20);
}

TokenCadence token_cadence_from_deck(const Deck& deck) {
  return TokenCadence{deck.get_int("diagnostics.every"), deck.get_int("diagnostics.snapshot_every")};
}

PairSampling pair_sampling_from_deck(const Deck& deck) {
  PairSampling p;
  p.mode = pairs_mode(deck.get_text("diagnostics.pairs"), deck.get_int("model.N"));
  p.sample_tokens = deck.get_int("diagnostics.sample_tokens");
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  return p;
}

void add_token_keys(DeckSchema& s) {
  s.add_choice("tokens.init", "uniform", {"uniform", "file"}, "initial tokens: iid uniform on S^{d-1}, or from tokens.file");
  s.add_file("tokens.file", "", "HDF5 file with the initial tokens (for init = file)");
  s.add_text("tokens.dataset", "X", "dataset [N, d] in tokens.file");
}

TokenSource token_source_from_deck(const Deck& deck) {
  return TokenSource{deck.get_text("tokens.init"), deck.get_text("tokens.file"), deck.get_text("tokens.dataset"),
                     static_cast<std::uint64_t>(deck.get_int("run.seed"))};
}

}  // namespace tokdyn
