// What tokdyn prints for --help, --version, --outputs and tokdyn <command> --help.
#include <slepcsys.h>

#include <cstdio>
#include <string>

#include "commands.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/version.hpp"
#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/outputs.hpp"

namespace tokdyn {

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [options]\n\ncommands:\n");
  for (const auto& c : commands()) std::fprintf(out, "  %-12s %s\n", c.name.c_str(), c.summary.c_str());
  std::fprintf(out,
      "\noptions:\n"
      "  --help            keys of a command's deck, with defaults and meaning, and the run options it takes\n"
      "                    (--resume, --restart FILE, --status, --force: see tokdyn <command> --help)\n"
      "  --version         version, git revision and libraries\n"
      "  --outputs         every dataset and attribute a run file can hold: type, axes, units, meaning\n"
      "  -petsc_option     passed to PETSc/SLEPc (refused when no PETSc/SLEPc object of the command uses it)\n");
}

bool print_general_help(const Comm& comm, const std::string& command) {
  if (command.empty()) {
    // A usage error, not a request for help: the usage on stderr and exit 2.
    if (comm.root()) print_usage(stderr);
    throw InputError("no command given: tokdyn <command> [deck.ini] [--section.key=value ...]");
  }
  if (command != "--help" && command != "-h" && command != "help" && command != "--version" && command != "--outputs")
    return false;
  if (!comm.root()) return true;
  if (command == "--version") print_version();
  else if (command == "--outputs") std::fputs(outputs_listing().c_str(), stdout);
  else print_usage(stdout);
  return true;
}

void print_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  std::printf("tokdyn %s (git %s)\nPETSc %d.%d.%d, SLEPc %d.%d.%d, HDF5 %u.%u.%u, MPI %d.%d\n", version_string(),
              git_revision(), PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, SLEPC_VERSION_MAJOR,
              SLEPC_VERSION_MINOR, SLEPC_VERSION_SUBMINOR, maj, min, rel, MPI_VERSION, MPI_SUBVERSION);
}

void print_command_help(const Command& c, const DeckSchema& schema) {
  if (schema.keys().empty()) {  // tokdyn rerun: no deck of its own
    std::printf("tokdyn %s: %s\n\n%s", c.name.c_str(), c.summary.c_str(), run_options_help(c).c_str());
    return;
  }
  std::printf("tokdyn %s: %s\n\nusage: mpiexec -n P tokdyn %s [deck.ini] [--section.key=value ...] [run options]\n"
              "\n%s\ndeck keys (key = default  meaning):\n%s",
              c.name.c_str(), c.summary.c_str(), c.name.c_str(), run_options_help(c).c_str(), schema.help_text().c_str());
}

}  // namespace tokdyn
