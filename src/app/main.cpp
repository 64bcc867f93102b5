// tokdyn: transformers as dynamical systems.
//   mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [run options] [PETSc/SLEPc options]
#include <slepcsys.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/error_exit.hpp"
#include "tokdyn/core/petsc_options.hpp"
#include "tokdyn/core/signals.hpp"
#include "tokdyn/io/hdf5.hpp"

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
    if (command.empty()) {
      // A usage error, not a request for help: the usage on stderr and exit 2.
      if (comm.root()) tokdyn::print_usage(stderr);
      throw tokdyn::InputError("no command given: tokdyn <command> [deck.ini] [--section.key=value ...]");
    } else if (command == "--help" || command == "-h" || command == "help") {
      if (comm.root()) tokdyn::print_usage(stdout);
    } else if (command == "--version") {
      if (comm.root()) tokdyn::print_version();
    } else {
      const tokdyn::Command* cmd = tokdyn::find_command(command);
      if (!cmd) throw tokdyn::InputError(tokdyn::unknown_command_message(command));
      if (cmd->name != "rerun") tokdyn::check_deck_command(*cmd, parsed.request.deck_path);
      const tokdyn::DeckSchema schema = cmd->schema();
      if (parsed.help) {
        if (comm.root()) tokdyn::print_command_help(*cmd, schema);
      } else {
        tokdyn::check_run_options(*cmd, parsed.request);
        tokdyn::refuse_unused_petsc_options(comm, cmd->name, cmd->petsc_components, parsed.petsc, schema);
        rc = cmd->run(comm, schema, parsed.request);
      }
    }
  } catch (...) {
    tokdyn::exit_on_exception(std::current_exception());
  }
  std::fflush(stdout);
  PetscCall(SlepcFinalize());
  return rc;
}
