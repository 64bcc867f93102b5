// tokdyn: transformers as dynamical systems.
//   mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [run options] [PETSc/SLEPc options]
#include <petscsys.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/errors/error_exit.hpp"
#include "tokdyn/core/console/signals.hpp"
#include "tokdyn/run/session.hpp"

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
    if (!tokdyn::print_general_help(comm, command)) rc = tokdyn::run_command(comm, command, parsed);
  } catch (...) {
    tokdyn::exit_on_exception(std::current_exception());
  }
  std::fflush(stdout);
  return rc;
}
