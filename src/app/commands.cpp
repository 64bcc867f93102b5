#include "commands.hpp"

#include "tokdyn/core/error.hpp"
#include "tokdyn/studies/converge_study.hpp"
#include "tokdyn/studies/lyapunov_study.hpp"
#include "tokdyn/studies/markov_study.hpp"
#include "tokdyn/studies/meanfield_study.hpp"
#include "tokdyn/studies/power_study.hpp"
#include "tokdyn/studies/spectrum_study.hpp"
#include "tokdyn/studies/synchronize_study.hpp"
#include "tokdyn/studies/token_studies.hpp"
#include "tokdyn/studies/train_study.hpp"

namespace tokdyn {
namespace {

// A command that is a study (studies/study.hpp): the study's schema, run by the one driver of run files.
template <class S>
Command study_command(const std::string& name, const std::string& summary, std::vector<std::string> petsc = {}) {
  return Command{name, summary, [] { return S::schema(); },
                 [name](const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
                   return run_study<S>(comm, schema, request, name);
                 },
                 Outputs::run, std::move(petsc)};
}

}  // namespace

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
         "  --dry-run         print the resolved deck, the memory estimate per rank and the planned run; write nothing\n";
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

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      study_command<TransformerStudy>("transformer",
          "discrete random transformer: N tokens through L layers of attention and random MLPs"),
      study_command<SdeStudy>("sde",
          "limit SDE with common noise: Ito Euler-Maruyama, Stratonovich Heun or LN-projected steps"),
      study_command<LyapunovStudy>("lyapunov",
          "kernel constants and Lyapunov exponents of the noise: predicted and measured on token pairs"),
      study_command<ConvergeStudy>("converge",
          "coupled convergence studies in depth L and width m over replicas (doc/science.md section 6)",
          {"dmda"}),
      study_command<MeanFieldStudy>("meanfield",
          "mean-field SPDE conditional on the common noise: grid (S^1) or weighted quadrature points",
          {"dmda"}),
      study_command<SynchronizeStudy>("synchronize",
          "synchronization by noise (Thm 1.4) over replicas: E[E_beta(t)] against its bound, clusters"),
      {"weights", "checks model weights (safetensors, HDF5, synthetic) and converts them to tokdyn's HDF5 layout",
       weights_schema, run_weights, Outputs::once},
      study_command<SpectrumStudy>("spectrum",
          "leading eigenpairs of the layer matrices F = O V (SLEPc Krylov-Schur or LAPACK), gap, real plane",
          {"eps"}),
      study_command<PowerStudy>("power",
          "tokens through power-method layers (doc/science.md section 7): alignment with each layer's v_1, steering",
          {"eps"}),
      study_command<MarkovStudy>("markov",
          "gradient flow of a one-layer transformer on Markov data or a text (doc/science.md section 8)",
          {"ts"}),
      study_command<TrainStudy>("train",
          "a small GPT trained by ECD, ECDSep, SGDM or AdamW with symmetry-breaking biases and "
          "the charges of its heads"),
      {"bench",
       "throughput of the attention and pair-statistics passes (pairs/s, points/s), the MLP and the markov model",
       bench_schema, run_bench, Outputs::none},
      {"rerun", "runs a run file's command again from its stored deck, seed, options and ranks; --check: bit for bit",
       rerun_schema, run_rerun, Outputs::once},
      {"decks", "the shipped decks (input/*.ini): the command each is for and what it runs", decks_schema, run_decks,
       Outputs::none},
  };
  return list;
}

}  // namespace tokdyn
