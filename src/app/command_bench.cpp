// tokdyn bench: throughput of the attention and pair-statistics passes, the MLP and the markov model
// (studies/bench.cpp).
#include "commands.hpp"
#include "tokdyn/studies/bench.hpp"

namespace tokdyn {

int run_bench(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  run_bench(comm, Deck::parse(schema, request.deck_path, request.overrides));
  return 0;
}

}  // namespace tokdyn
