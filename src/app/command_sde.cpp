// tokdyn sde: the limit SDE of doc/science.md section 3 (Ito Euler-Maruyama, Stratonovich Heun, LN-projected)
// with a Gaussian field of kernel kappa, as a run of L steps.
#include <cstdio>

#include "commands.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/sde.hpp"
#include "tokdyn/dynamics/token_run.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/keys.hpp"

namespace tokdyn {

DeckSchema sde_schema() {
  DeckSchema s;
  add_run_keys(s, "run.h5");
  add_tile_key(s);
  add_diagnostics_keys(s);
  add_model_keys(s);
  add_token_keys(s);
  add_attention_keys(s);
  add_kernel_keys(s);
  add_field_keys(s);
  s.add_bool("noise.enabled", true, "apply the common noise");
  s.add_choice("sde.scheme", "heun", sde_schemes().names(), "time stepping scheme");
  s.add_bool("sde.project", false, "euler-maruyama, heun: renormalise onto the sphere after each step (heun: and its predictor)");
  s.add_bool("sde.radial_drift", true, "euler-maruyama: include the Ito correction -(d-1)/2 v X (+ P grad v / 4)");
  return s;
}

int run_sde(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  Run run(comm, schema, request, "sde");
  if (run.done()) return 0;
  const Deck& deck = run.deck();
  SdeSetup setup;
  SdeParams& p = setup.params;
  p.n = deck.get_int("model.N");
  p.d = static_cast<int>(deck.get_int("model.d"));
  p.steps = deck.get_int("model.L");
  p.horizon = deck.get_real("model.T");
  p.factor = deck.get_real("attention.factor");
  p.project = deck.get_bool("sde.project");
  p.radial_drift = deck.get_bool("sde.radial_drift");
  p.noise = deck.get_bool("noise.enabled");
  const Partition partition(p.n, comm.size());
  const int tile = static_cast<int>(deck.get_int("run.tile"));
  MemoryEstimate memory;
  token_memory(memory, deck, partition, p.d, tile);
  if (p.noise) field_memory(memory, deck, partition.count(comm.rank()), p.d);
  run.require_memory(memory);

  setup.n_local = partition.count(comm.rank());
  setup.seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  setup.attention = attention_from_deck(deck, comm.get(), partition, p.d, tile);
  if (p.noise) setup.field = field_styles().make(deck.get_text("noise.field"), field_params_from_deck(deck, p.d));
  const std::int64_t modes = setup.field ? setup.field->modes() : 0;
  auto scheme = sde_schemes().make(deck.get_text("sde.scheme"), setup);
  const double beta = deck.get_real("attention.beta");
  PairStatisticsPass statistics(comm.get(), partition, p.d, beta, static_cast<int>(deck.get_int("diagnostics.bins")),
                                tile);
  TokenRun state(comm, partition, p.d, p.steps, *scheme, statistics, token_cadence_from_deck(deck), beta,
                 [&](std::vector<double>& x) { initial_tokens(deck, comm, partition, p.d, x); });
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn sde (%s, %s field, %lld modes): N = %lld, d = %d, L = %lld, T = %g on %d rank%s",
                deck.get_text("sde.scheme").c_str(), deck.get_text("noise.field").c_str(), static_cast<long long>(modes),
                static_cast<long long>(p.n), p.d, static_cast<long long>(p.steps), p.horizon, comm.size(),
                comm.size() == 1 ? "" : "s");
  run.print(line);
  return run.execute(state, RunInfo{"", "", setup.seed, p.n, p.d, ""});
}

}  // namespace tokdyn
