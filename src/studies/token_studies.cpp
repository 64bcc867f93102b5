#include "tokdyn/studies/token_studies.hpp"

#include <algorithm>
#include <cstdio>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/dynamics/transformer.hpp"
#include "tokdyn/run/keys.hpp"
#include "tokdyn/studies/keys.hpp"

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
  add_attention_layout_keys(s);
  return s;
}

}  // namespace

TokenStudy::TokenStudy(const Comm& comm, const Deck& deck)
    : comm_(comm), n_(deck.get_int("model.N")), layers_(deck.get_int("model.L")),
      d_(static_cast<int>(deck.get_int("model.d"))), tile_(static_cast<int>(deck.get_int("run.tile"))),
      bins_(static_cast<int>(deck.get_int("diagnostics.bins"))), horizon_(deck.get_real("model.T")),
      beta_(deck.get_real("attention.beta")), partition_(n_, comm.size()), attention_(attention_spec_from_deck(deck)),
      tokens_(token_source_from_deck(deck)), cadence_(token_cadence_from_deck(deck)),
      sampling_(pair_sampling_from_deck(deck)) {}

MemoryEstimate TokenStudy::token_memory() const {
  MemoryEstimate memory;
  tokdyn::token_memory(memory, attention_.on() ? &attention_ : nullptr, partition_, d_, tile_);
  return memory;
}

std::string TokenStudy::plan() const {
  // Layers observed with cadence k: 0, k, 2k, ... and the last (TokenRun::observe).
  const auto observed = [&](std::int64_t k) { return layers_ / k + 1 + (layers_ % k != 0 ? 1 : 0); };
  const double n = static_cast<double>(n_), ranks = comm_.size();
  char line[512];
  std::string s = std::to_string(layers_) + " layers";
  if (attention_.on()) {
    if (attention_styles().traits(attention_.style).ring) {
      std::snprintf(line, sizeof line, "; attention (%s): N^2 = %.3g pairs a layer, %.3g in all (%.3g per rank)",
                    attention_.style.c_str(), n * n, n * n * layers_, n * n * layers_ / ranks);
      s += line;
    } else {
      s += "; attention (" + attention_.style + "): O(N) a layer, no pairs";
    }
  } else {
    s += "; attention off";
  }
  const std::int64_t diagnostic_layers = observed(cadence_.every);
  std::snprintf(line, sizeof line, "; diagnostics on %lld layers, pair statistics %s",
                static_cast<long long>(diagnostic_layers), pairs_mode_name(sampling_.mode));
  s += line;
  if (sampling_.mode != PairsMode::off) {
    // exact: the unordered pairs i < j; sampled: those of a subset of about sample_tokens tokens.
    const double m = sampling_.mode == PairsMode::exact ? n : std::min(n, static_cast<double>(sampling_.sample_tokens));
    std::snprintf(line, sizeof line, " (%.3g pairs each)", m * (m - 1) / 2);
    s += line;
  }
  const std::int64_t snapshots = cadence_.snapshot_every > 0 ? observed(cadence_.snapshot_every) : (layers_ > 0 ? 2 : 1);
  std::snprintf(line, sizeof line, "; %lld token snapshots of %.3g MB", static_cast<long long>(snapshots),
                n * d_ * sizeof(double) / 1e6);
  return s + line;
}

RunState& TokenStudy::setup() {
  dynamics_ = dynamics();
  statistics_ = std::make_unique<PairStatisticsPass>(comm_.get(), partition_, d_, beta_, bins_, tile_);
  statistics_->set_sampling(sampling_);
  state_ = std::make_unique<TokenRun>(comm_, partition_, d_, layers_, *dynamics_, *statistics_, cadence_, beta_,
                                      [this](std::vector<double>& x) { initial_tokens(tokens_, comm_, partition_, d_, x); });
  return *state_;
}

DeckSchema TransformerStudy::schema() {
  DeckSchema s = token_schema();
  s.add_choice("model.norm", "post", {"post", "pre", "peri", "ngpt"},
               "normalisation of each sub-step x <- x + h F(x): post LN(x + h F(x)); pre x + h F(LN(x)) (tokens leave "
               "the sphere; the diagnostics see their directions); peri x + h LN(F(LN(x))); ngpt LN(x + h alpha * "
               "(LN(F(x)) - x)) (doc/science.md section 1.3)");
  s.add_text("model.ngpt_alpha", "1",
             "norm = ngpt: the step sizes alpha, one value for every coordinate or d values (comma-separated, >= 0)");
  add_mlp_keys(s);
  return s;
}

TransformerStudy::TransformerStudy(const Comm& comm, const Deck& deck)
    : TokenStudy(comm, deck), mlp_on_(deck.get_bool("mlp.enabled")), mlp_(mlp_params_from_deck(deck)),
      norm_(deck.get_text("model.norm")) {
  ngpt_alpha_ = parse_real_list("model.ngpt_alpha", deck.get_text("model.ngpt_alpha"));
  if (ngpt_alpha_.size() == 1) ngpt_alpha_.assign(d_, ngpt_alpha_[0]);
  if (static_cast<int>(ngpt_alpha_.size()) != d_)
    throw InputError("deck key 'model.ngpt_alpha' = '" + deck.get_text("model.ngpt_alpha") + "': one value or d = " +
                     std::to_string(d_) + " values, not " + std::to_string(ngpt_alpha_.size()));
}

MemoryEstimate TransformerStudy::memory() const {
  MemoryEstimate memory = token_memory();
  if (mlp_on_) mlp_memory(memory, mlp_.width, d_);
  return memory;
}

std::unique_ptr<Dynamics> TransformerStudy::dynamics() {
  TransformerParams p;
  p.n = n_;
  p.d = d_;
  p.layers = layers_;
  p.horizon = horizon_;
  p.factor = attention_.factor;
  p.norm = norm_;
  p.ngpt_alpha = ngpt_alpha_;
  std::optional<RandomMlp> mlp;
  if (mlp_on_) mlp.emplace(mlp_, d_);
  return std::make_unique<Transformer>(p, partition_.count(comm_.rank()),
                                       make_attention(attention_, comm_.get(), partition_, d_, tile_), std::move(mlp));
}

std::string TransformerStudy::banner() const {
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn transformer: N = %lld, d = %d, L = %lld, T = %g", static_cast<long long>(n_),
                d_, static_cast<long long>(layers_), horizon_);
  return norm_ == "post" ? std::string(line) : std::string(line) + ", " + norm_ + "-LN";
}

std::string TransformerStudy::plan() const {
  if (!mlp_on_) return TokenStudy::plan();
  char line[128];
  std::snprintf(line, sizeof line, "; MLP (%s, m = %lld): %.3g token-neurons a layer", mlp_.activation.c_str(),
                static_cast<long long>(mlp_.width), static_cast<double>(n_) * mlp_.width);
  return TokenStudy::plan() + line;
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

SdeStudy::SdeStudy(const Comm& comm, const Deck& deck)
    : TokenStudy(comm, deck), scheme_(deck.get_text("sde.scheme")), field_(field_params_from_deck(deck, d_)),
      seed_(static_cast<std::uint64_t>(deck.get_int("run.seed"))) {
  params_.n = n_;
  params_.d = d_;
  params_.steps = layers_;
  params_.horizon = horizon_;
  params_.factor = attention_.factor;
  params_.project = deck.get_bool("sde.project");
  params_.radial_drift = deck.get_bool("sde.radial_drift");
  params_.noise = deck.get_bool("noise.enabled");
}

MemoryEstimate SdeStudy::memory() const {
  MemoryEstimate memory = token_memory();
  if (params_.noise) field_memory(memory, field_, partition_.count(comm_.rank()), d_);
  return memory;
}

std::unique_ptr<Dynamics> SdeStudy::dynamics() {
  SdeSetup setup;
  setup.params = params_;
  setup.n_local = partition_.count(comm_.rank());
  setup.seed = seed_;
  setup.attention = make_attention(attention_, comm_.get(), partition_, d_, tile_);
  if (params_.noise) setup.field = make_field(field_);
  modes_ = setup.field ? setup.field->modes() : 0;
  return sde_schemes().make(scheme_, setup);
}

std::string SdeStudy::banner() const {
  char noise[128] = "no noise", line[384];
  if (params_.noise) {
    // --dry-run asks before setup(): the field's modes (a Fourier order set by its tolerance) from a field of its own.
    const std::int64_t modes = modes_ > 0 ? modes_ : make_field(field_)->modes();
    std::snprintf(noise, sizeof noise, "%s field, %lld modes", field_.style.c_str(), static_cast<long long>(modes));
  }
  std::snprintf(line, sizeof line, "tokdyn sde (%s, %s): N = %lld, d = %d, L = %lld, T = %g", scheme_.c_str(), noise,
                static_cast<long long>(n_), d_, static_cast<long long>(layers_), horizon_);
  return line;
}

}  // namespace tokdyn
