// [weights] and [synthetic]: which layer weights a command reads, and the WeightSpec they describe.
#include <numbers>

#include "tokdyn/studies/keys.hpp"
#include "tokdyn/weights/weight_formats.hpp"

namespace tokdyn {

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

void add_synthetic_keys(DeckSchema& s) {
  s.add_choice("synthetic.kind", "dominant", {"dominant", "degenerate", "complex", "symmetric", "random"},
               "prescribed spectrum of synthetic layers: strictly dominant real lambda_1, near-degenerate "
               "lambda_1 ~ lambda_2, complex dominant pair, symmetric, or random Gaussian O and V");
  s.add_int("synthetic.d", 64, "model width d", 2, 1 << 20);
  s.add_int("synthetic.heads", 1, "heads H (divides d; head size d/H)", 1, 1 << 16);
  s.add_int("synthetic.layers", 12, "layers of the synthetic model", 1);
  s.add_bool("synthetic.shared", true, "one set of weights for every layer (ALBERT-like); false: drawn per layer");
  s.add_real("synthetic.lambda1", 1.0, "leading eigenvalue lambda_1 (modulus of the pair for kind = complex)");
  s.add_real("synthetic.gap", 0.3, "ratio step between outliers: lambda_{k+1} = lambda_k (1 - gap)", 0.0, 1.0, true);
  s.add_real("synthetic.angle", 0.5, "argument of the complex dominant pair lambda_1 e^{+-i angle} (radians)", 0.0,
             std::numbers::pi, true);
  s.add_real("synthetic.degeneracy", 1e-3, "kind = degenerate: lambda_2 = lambda_1 (1 - degeneracy)", 0.0, 1.0, true);
  s.add_int("synthetic.outliers", 3, "leading eigenvalues placed exactly (a complex pair counts 2)", 2);
  s.add_real("synthetic.bulk", 0.8, "radius of the bulk disk relative to the smallest outlier's modulus", 0.0, 1.0,
             true);
  s.add_real("synthetic.nonnormality", 0.1, "scale of T's strictly upper band relative to |lambda_1| (keep it small at large d: the bulk eigenvalues of a non-normal T are ill-conditioned)", 0.0);
  s.add_int("synthetic.reflectors", 8, "Householder reflectors in each orthogonal factor", 1, 64);
  s.add_int("synthetic.seed", 1, "seed of the synthetic weights (independent of run.seed)", 0);
  s.add_real("synthetic.qk_scale", 1.0, "Q, K entries ~ N(0, qk_scale^2 / d)", 0.0);
}

SyntheticSpec synthetic_spec_from_deck(const Deck& deck) {
  SyntheticSpec s;
  s.kind = deck.get_text("synthetic.kind");
  s.d = static_cast<int>(deck.get_int("synthetic.d"));
  s.heads = static_cast<int>(deck.get_int("synthetic.heads"));
  s.layers = deck.get_int("synthetic.layers");
  s.shared = deck.get_bool("synthetic.shared");
  s.lambda1 = deck.get_real("synthetic.lambda1");
  s.gap = deck.get_real("synthetic.gap");
  s.angle = deck.get_real("synthetic.angle");
  s.degeneracy = deck.get_real("synthetic.degeneracy");
  s.outliers = static_cast<int>(deck.get_int("synthetic.outliers"));
  s.bulk = deck.get_real("synthetic.bulk");
  s.nonnormality = deck.get_real("synthetic.nonnormality");
  s.reflectors = static_cast<int>(deck.get_int("synthetic.reflectors"));
  s.seed = static_cast<std::uint64_t>(deck.get_int("synthetic.seed"));
  s.qk_scale = deck.get_real("synthetic.qk_scale");
  return s;
}

WeightSpec weight_spec_from_deck(const Deck& deck) {
  WeightSpec w;
  w.format = deck.get_text("weights.format");
  w.file = deck.get_text("weights.file");
  w.prefix = deck.get_text("weights.prefix");
  w.heads = static_cast<int>(deck.get_int("weights.heads"));
  w.layers = deck.get_int("weights.layers");
  w.synthetic = synthetic_spec_from_deck(deck);
  return w;
}

std::unique_ptr<WeightSource> weights_from_deck(const Deck& deck, MPI_Comm comm) {
  return open_weights(weight_spec_from_deck(deck), comm);
}

}  // namespace tokdyn
