#include "tokdyn/studies/token_studies.hpp"

#include <cstdio>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/dynamics/transformer.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"

namespace tokdyn {
namespace {

// The keys every token study has: run, tiles, diagnostics, model, initial tokens, attention.
DeckSchema token_schema() {
  DeckSchema s;
  add_run_keys(s, "run.h5");
  add_tile_key(s);
  add_diagnostics_keys(s);
  add_model_keys(s);
  add_token_keys(s);
  add_attention_keys(s);
  return s;
}

}  // namespace

TokenStudy::TokenStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), deck_(deck), n_(deck.get_int("model.N")), layers_(deck.get_int("model.L")),
      d_(static_cast<int>(deck.get_int("model.d"))), tile_(static_cast<int>(deck.get_int("run.tile"))),
      horizon_(deck.get_real("model.T")), beta_(deck.get_real("attention.beta")), partition_(n_, comm.size()) {}

MemoryEstimate TokenStudy::token_memory() const {
  MemoryEstimate memory;
  tokdyn::token_memory(memory, deck_, partition_, d_, tile_);
  return memory;
}

RunState& TokenStudy::setup() {
  dynamics_ = dynamics();
  statistics_ = std::make_unique<PairStatisticsPass>(comm_.get(), partition_, d_, beta_,
                                                     static_cast<int>(deck_.get_int("diagnostics.bins")), tile_);
  state_ = std::make_unique<TokenRun>(comm_, partition_, d_, layers_, *dynamics_, *statistics_,
                                      token_cadence_from_deck(deck_), beta_,
                                      [this](std::vector<double>& x) { initial_tokens(deck_, comm_, partition_, d_, x); });
  return *state_;
}

DeckSchema TransformerStudy::schema() {
  DeckSchema s = token_schema();
  add_mlp_keys(s);
  return s;
}

TransformerStudy::TransformerStudy(const Comm& comm, const Deck& deck)
    : TokenStudy(comm, deck), mlp_(deck.get_bool("mlp.enabled")) {}

MemoryEstimate TransformerStudy::memory() const {
  MemoryEstimate memory = token_memory();
  if (mlp_) mlp_memory(memory, deck_.get_int("mlp.width"), d_);
  return memory;
}

std::unique_ptr<Dynamics> TransformerStudy::dynamics() {
  TransformerParams p;
  p.n = n_;
  p.d = d_;
  p.layers = layers_;
  p.horizon = horizon_;
  p.factor = deck_.get_real("attention.factor");
  std::optional<RandomMlp> mlp;
  if (mlp_) mlp.emplace(mlp_params_from_deck(deck_), d_);
  return std::make_unique<Transformer>(p, partition_.count(comm_.rank()),
                                       attention_from_deck(deck_, comm_.get(), partition_, d_, tile_), std::move(mlp));
}

std::string TransformerStudy::banner() const {
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn transformer: N = %lld, d = %d, L = %lld, T = %g", static_cast<long long>(n_),
                d_, static_cast<long long>(layers_), horizon_);
  return line;
}

DeckSchema SdeStudy::schema() {
  DeckSchema s = token_schema();
  add_kernel_keys(s);
  add_field_keys(s);
  s.add_bool("noise.enabled", true, "apply the common noise");
  s.add_choice("sde.scheme", "heun", sde_schemes().names(), "time stepping scheme");
  s.add_bool("sde.project", false, "euler-maruyama, heun: renormalise onto the sphere after each step (heun: and its predictor)");
  s.add_bool("sde.radial_drift", true, "euler-maruyama: include the Ito correction -(d-1)/2 v X (+ P grad v / 4)");
  return s;
}

SdeStudy::SdeStudy(const Comm& comm, const Deck& deck) : TokenStudy(comm, deck) {}

MemoryEstimate SdeStudy::memory() const {
  MemoryEstimate memory = token_memory();
  if (deck_.get_bool("noise.enabled")) field_memory(memory, deck_, partition_.count(comm_.rank()), d_);
  return memory;
}

std::unique_ptr<Dynamics> SdeStudy::dynamics() {
  SdeSetup setup;
  SdeParams& p = setup.params;
  p.n = n_;
  p.d = d_;
  p.steps = layers_;
  p.horizon = horizon_;
  p.factor = deck_.get_real("attention.factor");
  p.project = deck_.get_bool("sde.project");
  p.radial_drift = deck_.get_bool("sde.radial_drift");
  p.noise = deck_.get_bool("noise.enabled");
  setup.n_local = partition_.count(comm_.rank());
  setup.seed = static_cast<std::uint64_t>(deck_.get_int("run.seed"));
  setup.attention = attention_from_deck(deck_, comm_.get(), partition_, d_, tile_);
  if (p.noise) setup.field = field_styles().make(deck_.get_text("noise.field"), field_params_from_deck(deck_, d_));
  modes_ = setup.field ? setup.field->modes() : 0;
  return sde_schemes().make(deck_.get_text("sde.scheme"), setup);
}

std::string SdeStudy::banner() const {
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn sde (%s, %s field, %lld modes): N = %lld, d = %d, L = %lld, T = %g",
                deck_.get_text("sde.scheme").c_str(), deck_.get_text("noise.field").c_str(),
                static_cast<long long>(modes_), static_cast<long long>(n_), d_, static_cast<long long>(layers_),
                horizon_);
  return line;
}

}  // namespace tokdyn
