// tokdyn markov: the gradient flow of a one-layer transformer on Markov data (doc/science.md section 8).
#include "commands.hpp"
#include "tokdyn/studies/markov_study.hpp"

namespace tokdyn {

DeckSchema markov_schema() { return MarkovStudy::schema(); }

int run_markov(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<MarkovStudy>(comm, schema, request, "markov");
}

}  // namespace tokdyn
