// tokdyn power: tokens through the simplified layers of doc/science.md section 7.2 (one power-method step
// each), their alignment with every layer's leading eigenvector, the final state, and a steering sweep.
#include "commands.hpp"
#include "tokdyn/studies/power_study.hpp"

namespace tokdyn {

DeckSchema power_schema() { return PowerStudy::schema(); }

int run_power(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  return run_study<PowerStudy>(comm, schema, request, "power");
}

}  // namespace tokdyn
