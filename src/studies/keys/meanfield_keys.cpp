// [meanfield]: the solver, its discretisation and the initial law, and the MeanFieldSpec a solver takes.
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {

void add_meanfield_keys(DeckSchema& s) {
  s.add_choice("meanfield.solver", "grid", meanfield_solvers().names(), "mean-field solver");
  s.add_int("meanfield.cells", 1024, "grid: cells M of the circle", 8, std::int64_t(1) << 30);
  s.add_real("meanfield.cfl", 0.25, "grid: largest Courant number of a sub-step (<= 0.25 keeps the density positive)",
             0.0, 0.5, true);
  s.add_int("meanfield.max_refinement", 16, "grid: at most 2^r sub-steps per layer", 0, 30);
  s.add_int("meanfield.points", 4096, "quadrature: points M", 1, std::int64_t(1) << 40);
  s.add_int("meanfield.refinement", 0, "quadrature: 2^q Heun steps per layer (on the path of L 2^q steps)", 0, 30);
  s.add_choice("meanfield.density", "cosine", {"cosine", "von-mises"},
               "initial law relative to uniform: cosine 1 + a x_1, von-mises e^{c x_1}");
  s.add_real("meanfield.amplitude", 0.5, "cosine: amplitude a", 0.0, 1.0);
  s.add_real("meanfield.concentration", 1.0, "von-mises: concentration c", 0.0, 700.0);
}

MeanFieldSpec meanfield_spec_from_deck(const Deck& deck) {
  MeanFieldSpec m;
  m.solver = deck.get_text("meanfield.solver");
  m.d = static_cast<int>(deck.get_int("model.d"));
  m.layers = deck.get_int("model.L");
  m.horizon = deck.get_real("model.T");
  m.attention = attention_spec_from_deck(deck);
  m.noise = deck.get_bool("noise.enabled");
  m.field = field_params_from_deck(deck, m.d);
  m.cells = deck.get_int("meanfield.cells");
  m.cfl = deck.get_real("meanfield.cfl");
  m.max_refinement = static_cast<int>(deck.get_int("meanfield.max_refinement"));
  m.points = deck.get_int("meanfield.points");
  m.refinement = static_cast<int>(deck.get_int("meanfield.refinement"));
  m.density.kind = deck.get_text("meanfield.density");
  m.density.amplitude = deck.get_real("meanfield.amplitude");
  m.density.concentration = deck.get_real("meanfield.concentration");
  m.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  m.tile = static_cast<int>(deck.get_int("run.tile"));
  return m;
}

}  // namespace tokdyn
