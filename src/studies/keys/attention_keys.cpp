// [attention]: the keys common to every style, those each style declares, and the AttentionSpec they describe.
#include "tokdyn/pairs/energy.hpp"
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {

void add_attention_keys(DeckSchema& s) {
  s.add_bool("attention.enabled", true, "apply the attention sub-step");
  std::string styles;
  for (const std::string& name : attention_styles().names())
    styles += (styles.empty() ? "" : "; ") + name + " = " + attention_styles().help(name);
  s.add_choice("attention.style", "softmax", attention_styles().names(), "attention kernel: " + styles);
  s.add_real("attention.factor", 1.0, "attention factor a multiplying the step (+1 attractive, -1 repulsive, 0 off)");
  s.add_real("attention.beta", 1.0, "inverse temperature beta in exp(beta <Qx, Ky>); also the beta of E_beta", 0.0,
             max_energy_beta())
      .range_reason = "the interaction energy E_beta reaches e^beta, which overflows a double above log(DBL_MAX)";
  const char* names[3] = {"Q", "K", "V"};
  for (int t = 0; t < 3; ++t) {
    const std::string k = kAttentionMatrixKeys[t];
    s.add_choice(k, "identity", {"identity", "gaussian", "file"},
                 std::string(names[t]) + ": scale * I, Gaussian entries N(0, scale^2/d), or dataset '" + names[t] +
                     "' of attention.weights_file");
    s.add_real(k + "_scale", 1.0, std::string("scale of ") + names[t]);
  }
  s.add_file("attention.weights_file", "", "HDF5 file with datasets Q, K, V of shape [d, d] (for type file)");
  s.add_int("attention.seed", 7, "seed of the Gaussian Q, K, V and of the random features", 0);
  // The keys of the styles themselves (attention.precision, tolerance, features), declared by their classes.
  attention_styles().declare_keys(s);
}

void add_attention_layout_keys(DeckSchema& s) {
  s.add_int("attention.heads", 1,
            "heads H: head h takes rows [h d/H, (h+1) d/H) of Q, K and V, its outputs side by side (H divides d; the "
            "ring styles)", 1, 1 << 20);
  s.add_bool("attention.causal", false, "token i attends to tokens j <= i only, by global index (the ring styles)");
}

AttentionSpec attention_spec_from_deck(const Deck& deck) {
  AttentionSpec a;
  a.enabled = deck.get_bool("attention.enabled");
  a.factor = deck.get_real("attention.factor");
  a.style = deck.get_text("attention.style");
  AttentionWeightSpec& w = a.weights;
  w.beta = deck.get_real("attention.beta");
  w.seed = static_cast<std::uint64_t>(deck.get_int("attention.seed"));
  w.file = deck.get_text("attention.weights_file");
  if (deck.has("attention.heads")) w.heads = static_cast<int>(deck.get_int("attention.heads"));
  if (deck.has("attention.causal")) a.causal = deck.get_bool("attention.causal");
  attention_styles().read_keys(deck, a);
  for (int t = 0; t < 3; ++t) {
    const std::string k = kAttentionMatrixKeys[t];
    w.matrices[t] = {deck.get_text(k), deck.get_real(k + "_scale")};
  }
  return a;
}

AttentionWeights attention_weights_from_deck(const Deck& deck, int d, MPI_Comm comm) {
  return make_attention_weights(attention_spec_from_deck(deck).weights, d, comm);
}

std::unique_ptr<Attention> attention_from_deck(const Deck& deck, MPI_Comm comm, const Partition& partition, int d,
                                               int tile, const std::string& style) {
  return make_attention(attention_spec_from_deck(deck), comm, partition, d, tile, style);
}

}  // namespace tokdyn
