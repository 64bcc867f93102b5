// [mlp] and [noise]: the random MLP, its kernel kappa, and the Gaussian field with that kernel.
#include "tokdyn/studies/keys.hpp"

namespace tokdyn {

void add_mlp_keys(DeckSchema& s) {
  s.add_bool("mlp.enabled", true, "apply the random-MLP sub-step (the common noise)");
  s.add_int("mlp.width", 2048, "MLP width m", 1, 1 << 24);
  add_kernel_keys(s);
}

// The keys that fix the kernel kappa (shared by the MLP and the SDE's field).
void add_kernel_keys(DeckSchema& s) {
  s.add_choice("mlp.activation", "relu", activation_names(), "activation sigma");
  s.add_real("mlp.sigma_u", 0.0, "standard deviation sigma_U of the hidden bias b_U", 0.0);
  s.add_real("mlp.sigma_w", 0.0, "standard deviation sigma_W of the output bias b_W", 0.0);
}

MlpParams mlp_params_from_deck(const Deck& deck) {
  MlpParams p;
  p.width = deck.get_int("mlp.width");
  p.activation = deck.get_text("mlp.activation");
  p.sigma_u = deck.get_real("mlp.sigma_u");
  p.sigma_w = deck.get_real("mlp.sigma_w");
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  return p;
}

void add_field_keys(DeckSchema& s) {
  s.add_choice("noise.field", "features", field_styles().names(), "representation of the Gaussian field");
  field_styles().declare_keys(s);  // noise.kl_tolerance, noise.features: declared by the field classes
}

FieldParams field_params_from_deck(const Deck& deck, int d) {
  FieldParams p;
  p.style = deck.get_text("noise.field");
  p.kernel = MlpKernel{&activation(deck.get_text("mlp.activation")), d, deck.get_real("mlp.sigma_u"),
                       deck.get_real("mlp.sigma_w")};
  field_styles().read_keys(deck, p);
  p.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  return p;
}

}  // namespace tokdyn
