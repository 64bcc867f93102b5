// tokdyn transformer: the discrete model of doc/science.md section 1 as a run of L layers.
#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/studies/token_studies.hpp"

namespace tokdyn {

DeckSchema transformer_schema() { return TransformerStudy::schema(); }

int run_transformer(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<TransformerStudy>(comm, schema, request, "transformer");
}

}  // namespace tokdyn
