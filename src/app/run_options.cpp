// The run options each command takes (--resume, --restart, --status, --dry-run, --force, --check): its
// --help text, and the refusal of one it does not take.
#include "commands.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

std::string run_options_help(const Command& c) {
  if (c.outputs == Outputs::none) return "run options: none (" + c.name + " writes no file)\n";
  if (c.name == "rerun")
    return "usage: mpiexec -n P tokdyn rerun FILE.h5 [--check] [--run.output=NEW.h5] [--force]\n"
           "  P must be the run's rank count (its root attribute ranks); the binary must be the one that wrote FILE\n"
           "  (tokdyn_version and git_revision). The rerun goes to FILE with .h5 -> .rerun.h5 unless --run.output\n"
           "  names another file.\n"
           "  --check           compare every dataset of the two files byte for byte; exit 1 when any differs\n"
           "  --force           replace an existing rerun output\n";
  std::string s = "run options:\n";
  if (c.outputs == Outputs::run)
    s += "  --resume          continue the run's checkpoint if it has one; else start it (a finished run with this deck:\n"
         "                    nothing to do; with another deck: refused, naming the first differing key)\n"
         "  --restart FILE    continue the run of checkpoint FILE (its deck, unless a deck is given: it must agree)\n"
         "  --status          what the run's files are (absent, running, checkpointed, damaged, interrupted, failed,\n"
         "                    complete) and what --resume would do\n"
         "  --dry-run         the run's checks (files, lock, memory) and exit code, the resolved deck, the memory\n"
         "                    estimate per rank and the planned run; writes nothing\n";
  s += "  --force           replace an existing output" +
       std::string(c.outputs == Outputs::run ? ", checkpoint or partial file (never a running run's)" : "") + "\n";
  return s;
}

void check_run_options(const Command& c, const RunRequest& r) {
  const char* flag = r.resume            ? "--resume"
                     : !r.restart.empty() ? "--restart"
                     : r.status           ? "--status"
                     : r.dry_run          ? "--dry-run"
                                          : nullptr;
  if (flag && c.outputs != Outputs::run)
    throw InputError("tokdyn " + c.name + " keeps no run file or checkpoints: " + flag + " does not apply (see tokdyn " +
                     c.name + " --help)");
  if (r.check && c.name != "rerun")
    throw InputError("--check belongs to tokdyn rerun FILE --check, not to tokdyn " + c.name);
  if (r.force && c.outputs == Outputs::none)
    throw InputError("tokdyn " + c.name + " writes no file: --force does not apply");
}

}  // namespace tokdyn
