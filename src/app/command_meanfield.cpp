// tokdyn meanfield: the mean-field SPDE of doc/science.md section 4 (conditional on the common noise) by a solver
// chosen by name, as a run of L layers.
#include "commands.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/studies/meanfield_study.hpp"

namespace tokdyn {

DeckSchema meanfield_schema() { return MeanFieldStudy::schema(); }

int run_meanfield(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<MeanFieldStudy>(comm, schema, request, "meanfield");
}

}  // namespace tokdyn
