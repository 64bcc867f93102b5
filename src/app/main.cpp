// tokdyn: transformers as dynamical systems.
//   mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [run options] [PETSc/SLEPc options]
#include <slepcsys.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/error_exit.hpp"
#include "tokdyn/core/petsc_options.hpp"
#include "tokdyn/core/signals.hpp"
#include "tokdyn/core/version.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace {

void print_usage() {
  std::printf("usage: mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [options]\n\ncommands:\n");
  for (const auto& c : tokdyn::commands()) std::printf("  %-12s %s\n", c.name.c_str(), c.summary.c_str());
  std::printf(
      "\noptions:\n"
      "  --help            keys of a command's deck, with defaults and meaning, and the run options it takes\n"
      "                    (--resume, --restart FILE, --status, --force: see tokdyn <command> --help)\n"
      "  --version         version, git revision and libraries\n"
      "  -petsc_option     passed to PETSc/SLEPc (refused when no PETSc/SLEPc object of the command uses it)\n");
}

void print_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  std::printf("tokdyn %s (git %s)\nPETSc %d.%d.%d, SLEPc %d.%d.%d, HDF5 %u.%u.%u, MPI %d.%d\n", tokdyn::version_string(),
              tokdyn::git_revision(), PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR,
              SLEPC_VERSION_MAJOR, SLEPC_VERSION_MINOR, SLEPC_VERSION_SUBMINOR, maj, min, rel, MPI_VERSION,
              MPI_SUBVERSION);
}

const tokdyn::Command* find_command(const std::string& name) {
  for (const auto& c : tokdyn::commands())
    if (c.name == name) return &c;
  return nullptr;
}

int rank_of_world() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any work: a signal during start-up is recorded (and acted on at the first step), not fatal.
  tokdyn::install_signal_handlers();
  std::vector<std::string> args(argv + 1, argv + argc);
  // Commands and flags are tokdyn's; only single-dash options reach PETSc.
  tokdyn::Arguments parsed;
  std::string bad_arguments;
  const std::string command = args.empty() ? "" : args.front();
  if (!args.empty()) {
    try {
      parsed = tokdyn::split_arguments(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const tokdyn::InputError& e) {
      bad_arguments = e.what();
    }
  }
  std::vector<char*> petsc_argv{argv[0]};
  for (auto& s : parsed.petsc) petsc_argv.push_back(s.data());
  petsc_argv.push_back(nullptr);
  int petsc_argc = static_cast<int>(petsc_argv.size()) - 1;
  char** petsc_args = petsc_argv.data();
  PetscCall(SlepcInitialize(&petsc_argc, &petsc_args, nullptr, nullptr));
  // PETSc installed its own handlers (SIGTERM, SIGUSR1 among them) and would put back the default ones in
  // SlepcFinalize, where a second SIGTERM would then kill the process: tokdyn's are the only ones.
  PetscCall(PetscPopSignalHandler());
  tokdyn::install_signal_handlers();
  tokdyn::init_error_exit(
      PETSC_COMM_WORLD, [] { return static_cast<int>(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE)); },
      [] { SlepcFinalize(); });
  tokdyn::install_petsc_error_handler();
  tokdyn::h5::silence_errors();
  tokdyn::set_blas_threads(1);

  int rc = 0;
  try {
    const tokdyn::Comm comm(PETSC_COMM_WORLD);
    if (!bad_arguments.empty()) throw tokdyn::InputError(bad_arguments);
    if (command.empty() || command == "--help" || command == "-h" || command == "help") {
      if (comm.root()) print_usage();
    } else if (command == "--version") {
      if (comm.root()) print_version();
    } else {
      const tokdyn::Command* cmd = find_command(command);
      if (!cmd) throw tokdyn::InputError("unknown command '" + command + "' (see tokdyn --help)");
      const tokdyn::DeckSchema schema = cmd->schema();
      if (parsed.help) {
        if (comm.root())
          std::printf("tokdyn %s: %s\n\nusage: mpiexec -n P tokdyn %s [deck.ini] [--section.key=value ...] [run options]\n"
                      "\n%s\ndeck keys (key = default  meaning):\n%s",
                      cmd->name.c_str(), cmd->summary.c_str(), cmd->name.c_str(), run_options_help(*cmd).c_str(),
                      schema.help_text().c_str());
      } else {
        tokdyn::check_run_options(*cmd, parsed.request);
        tokdyn::refuse_unused_petsc_options(comm, cmd->name, cmd->petsc_components, parsed.petsc, schema);
        rc = cmd->run(comm, schema, parsed.request);
      }
    }
  } catch (const tokdyn::InputError& e) {
    // What a user can fix (the deck, a file, the disk): exit code 2.
    tokdyn::exit_on_error(tokdyn::kExitInput, e.what());
  } catch (const std::bad_alloc&) {
    tokdyn::exit_on_error(tokdyn::kExitInput, "rank " + std::to_string(rank_of_world()) +
                                                  ": out of memory (a run this size needs more than this rank can get; "
                                                  "see run.max_memory)");
  } catch (const std::exception& e) {
    // A failed library call: a full disk is the user's to fix; anything else is ours.
    const std::string full = tokdyn::full_disk_message();
    if (!full.empty()) tokdyn::exit_on_error(tokdyn::kExitInput, full);
    tokdyn::exit_on_error(tokdyn::kExitInternal,
                          "rank " + std::to_string(rank_of_world()) + ": internal error: " + std::string(e.what()));
  }
  std::fflush(stdout);
  PetscCall(SlepcFinalize());
  return rc;
}
