// tokdyn synchronize: synchronization by noise (doc/science.md section 6.4, Thm 1.4) over replicas.
#include "commands.hpp"
#include "tokdyn/studies/synchronize_study.hpp"

namespace tokdyn {

DeckSchema synchronize_schema() { return SynchronizeStudy::schema(); }

int run_synchronize(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<SynchronizeStudy>(comm, schema, request, "synchronize");
}

}  // namespace tokdyn
