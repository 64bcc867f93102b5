#include "tokdyn/studies/study.hpp"

namespace tokdyn {

int drive_study(Run& run, Study& study) {
  if (run.dry_run()) {
    run.print_dry_run(study.memory(), study.banner(), study.plan());
    run.require_memory(study.memory());  // refused as the run would be
    return 0;
  }
  run.require_memory(study.memory());
  // Start-up (reading weights, building a model's matrices) can take seconds: say it has begun. A signal
  // from here on gives a checkpoint of step 0 once the state exists.
  run.print("tokdyn " + run.command() + ": setting up");
  RunState& state = study.setup();
  const Comm& comm = run.comm();
  run.print(study.banner() + " on " + std::to_string(comm.size()) + (comm.size() == 1 ? " rank" : " ranks") + " -> " +
            run.paths().output);
  RunInfo info;  // command, deck, run id and inputs: the run fills them in
  info.seed = static_cast<std::uint64_t>(run.deck().get_int("run.seed"));
  info.n = study.snapshot_tokens();
  info.d = study.width();
  return run.execute(state, info);
}

}  // namespace tokdyn
