// tokdyn meanfield: the mean-field SPDE of doc/science.md section 4 (conditional on the common noise) by a solver
// chosen by name, as a run of L layers.
#include <cstdio>

#include "commands.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/meanfield/meanfield_run.hpp"

namespace tokdyn {

int run_meanfield(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  Run run(comm, schema, request, "meanfield");
  if (run.done()) return 0;
  const Deck& deck = run.deck();
  const std::int64_t layers = deck.get_int("model.L");
  const double horizon = deck.get_real("model.T");
  const int d = static_cast<int>(deck.get_int("model.d"));
  MemoryEstimate memory;
  meanfield_memory(memory, deck, comm.size());
  run.require_memory(memory);
  MeanFieldSetup setup{&deck, comm.get(), std::nullopt};
  const std::string name = deck.get_text("meanfield.solver");
  auto solver = meanfield_solvers().make(name, setup);
  MeanFieldRun state(comm, *solver, name, layers, horizon, deck.get_int("diagnostics.every"),
                     deck.get_int("diagnostics.snapshot_every"), deck.get_real("attention.beta"));
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn meanfield (%s, %lld %s): d = %d, L = %lld, T = %g on %d rank%s -> %s",
                name.c_str(), static_cast<long long>(solver->size()), solver->size_unit().c_str(), d,
                static_cast<long long>(layers), horizon, comm.size(), comm.size() == 1 ? "" : "s",
                run.paths().output.c_str());
  run.print(line);
  return run.execute(state, RunInfo{"", "", static_cast<std::uint64_t>(deck.get_int("run.seed")), 0, d, ""});
}

}  // namespace tokdyn
