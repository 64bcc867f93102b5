// tokdyn: transformers as dynamical systems.
//   mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [run options] [PETSc/SLEPc options]
#include <petscsys.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/error_exit.hpp"
#include "tokdyn/core/petsc_options.hpp"
#include "tokdyn/core/signals.hpp"
#include "tokdyn/run/session.hpp"
#include "tokdyn/studies/petsc_components.hpp"

int main(int argc, char** argv) {
  // Before any work: a signal during start-up is recorded (and acted on at the first step), not fatal.
  tokdyn::install_signal_handlers();
  std::vector<std::string> args(argv + 1, argv + argc);
  tokdyn::Arguments parsed;  // commands and flags are tokdyn's; only single-dash options reach PETSc
  std::string bad_arguments;
  const std::string command = args.empty() ? "" : args.front();
  if (!args.empty()) {
    try {
      parsed = tokdyn::split_arguments(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const tokdyn::InputError& e) {
      bad_arguments = e.what();
    }
  }
  std::vector<std::string> petsc_argv{argv[0]};
  petsc_argv.insert(petsc_argv.end(), parsed.petsc.begin(), parsed.petsc.end());
  const tokdyn::Session session(petsc_argv);
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
        tokdyn::refuse_unused_petsc_options(comm, cmd->name, tokdyn::petsc_components(cmd->petsc_components),
                                            parsed.petsc, schema);
        rc = cmd->run(comm, schema, parsed.request);
      }
    }
  } catch (...) {
    tokdyn::exit_on_exception(std::current_exception());
  }
  std::fflush(stdout);
  return rc;
}
