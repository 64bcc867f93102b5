// tokdyn transformer: the discrete model of doc/science.md section 1 as a run of L layers.
#include <cstdio>

#include "commands.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/token_run.hpp"
#include "tokdyn/dynamics/transformer.hpp"
#include "tokdyn/run/keys.hpp"

namespace tokdyn {

DeckSchema transformer_schema() {
  DeckSchema s;
  add_run_keys(s, "run.h5");
  add_tile_key(s);
  add_diagnostics_keys(s);
  add_model_keys(s);
  add_token_keys(s);
  add_attention_keys(s);
  add_mlp_keys(s);
  return s;
}

int run_transformer(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  Run run(comm, schema, request, "transformer");
  if (run.done()) return 0;
  const Deck& deck = run.deck();
  TransformerParams p;
  p.n = deck.get_int("model.N");
  p.d = static_cast<int>(deck.get_int("model.d"));
  p.layers = deck.get_int("model.L");
  p.horizon = deck.get_real("model.T");
  p.factor = deck.get_real("attention.factor");
  const Partition partition(p.n, comm.size());
  const int tile = static_cast<int>(deck.get_int("run.tile"));
  const bool mlp_on = deck.get_bool("mlp.enabled");
  MemoryEstimate memory;
  token_memory(memory, deck, partition, p.d, tile);
  if (mlp_on) mlp_memory(memory, deck.get_int("mlp.width"), p.d);
  run.require_memory(memory);

  std::optional<RandomMlp> mlp;
  if (mlp_on) mlp.emplace(mlp_params_from_deck(deck), p.d);
  Transformer model(p, partition.count(comm.rank()), attention_from_deck(deck, comm.get(), partition, p.d, tile),
                    std::move(mlp));
  const double beta = deck.get_real("attention.beta");
  PairStatisticsPass statistics(comm.get(), partition, p.d, beta, static_cast<int>(deck.get_int("diagnostics.bins")),
                                tile);
  TokenRun state(comm, partition, p.d, p.layers, model, statistics, token_cadence_from_deck(deck), beta,
                 [&](std::vector<double>& x) { initial_tokens(deck, comm, partition, p.d, x); });
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn transformer: N = %lld, d = %d, L = %lld, T = %g on %d rank%s -> %s",
                static_cast<long long>(p.n), p.d, static_cast<long long>(p.layers), p.horizon, comm.size(),
                comm.size() == 1 ? "" : "s", run.paths().output.c_str());
  run.print(line);
  return run.execute(state, RunInfo{"", "", static_cast<std::uint64_t>(deck.get_int("run.seed")), p.n, p.d, ""});
}

}  // namespace tokdyn
