// tokdyn transformer: the discrete model of spec section 1 through the shared run driver.
#include <cstdio>

#include "commands.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/dynamics/simulation.hpp"
#include "tokdyn/dynamics/transformer.hpp"

namespace tokdyn {

DeckSchema transformer_schema() {
  DeckSchema s;
  add_run_keys(s);
  add_model_keys(s);
  add_token_keys(s);
  add_attention_keys(s);
  add_mlp_keys(s);
  return s;
}

int run_transformer(const Comm& comm, const DeckSchema& schema, const Arguments& args) {
  std::optional<RunSetup> setup;
  if (!prepare_run(comm, schema, args.request, args.status, "transformer", setup)) return 0;
  const Deck& deck = setup->resolved.deck;
  const RunControl& control = setup->control;

  TransformerParams p;
  p.n = deck.get_int("model.N");
  p.d = static_cast<int>(deck.get_int("model.d"));
  p.layers = deck.get_int("model.L");
  p.horizon = deck.get_real("model.T");
  p.factor = deck.get_real("attention.factor");
  const Partition partition(p.n, comm.size());
  std::optional<RandomMlp> mlp;
  if (deck.get_bool("mlp.enabled")) mlp.emplace(mlp_params_from_deck(deck), p.d);
  Transformer model(p, partition.count(comm.rank()), attention_from_deck(deck, comm.get(), partition, p.d, control.tile),
                    std::move(mlp));
  PairStatisticsPass statistics(comm.get(), partition, p.d, control.beta, control.bins, control.tile);

  RunInfo info{"transformer", deck.resolved_text(), static_cast<std::uint64_t>(deck.get_int("run.seed")), p.n, p.d};
  Simulation simulation(comm, control, info, p.layers, partition, model, statistics);
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn transformer: N = %lld, d = %d, L = %lld, T = %g on %d rank%s -> %s",
                static_cast<long long>(p.n), p.d, static_cast<long long>(p.layers), p.horizon, comm.size(),
                comm.size() == 1 ? "" : "s", control.output.c_str());
  comm.print(line);
  simulation.run(*setup);
  return 0;
}

}  // namespace tokdyn
