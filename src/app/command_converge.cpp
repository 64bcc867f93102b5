// tokdyn converge: the depth, width and tokens convergence studies of doc/science.md section 6 over replicas.
#include "commands.hpp"
#include "tokdyn/studies/converge_study.hpp"

namespace tokdyn {

DeckSchema converge_schema() { return ConvergeStudy::schema(); }

int run_converge(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<ConvergeStudy>(comm, schema, request, "converge");
}

}  // namespace tokdyn
