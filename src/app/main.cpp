// tokdyn: transformers as dynamical systems.
//   mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [--restart FILE | --resume] [--force]
//                                 [--status] [PETSc/SLEPc options]
#include <slepcsys.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/petsc_options.hpp"
#include "tokdyn/core/version.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace {

void print_usage() {
  std::printf("usage: mpiexec -n P tokdyn <command> [deck.ini] [--section.key=value ...] [options]\n\ncommands:\n");
  for (const auto& c : tokdyn::commands()) std::printf("  %-12s %s\n", c.name.c_str(), c.summary.c_str());
  std::printf(
      "\noptions:\n"
      "  --help            keys of a command's deck, with defaults and meaning\n"
      "  --restart FILE    continue the run of checkpoint FILE\n"
      "  --resume          continue from the deck's checkpoint if it exists, else start\n"
      "  --force           replace an existing output\n"
      "  --status          print absent|running|checkpointed|failed|complete for the deck's run\n"
      "  --version         version, git revision and libraries\n"
      "  -petsc_option     passed to PETSc/SLEPc untouched\n");
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

}  // namespace

int main(int argc, char** argv) {
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
  tokdyn::h5::silence_errors();
  tokdyn::set_blas_threads(1);

  const tokdyn::Comm comm(PETSC_COMM_WORLD);
  int rc = 0;
  try {
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
          std::printf("tokdyn %s: %s\n\nusage: mpiexec -n P tokdyn %s [deck.ini] [--section.key=value ...]\n"
                      "\ndeck keys (key = default  meaning):\n%s",
                      cmd->name.c_str(), cmd->summary.c_str(), cmd->name.c_str(), schema.help_text().c_str());
      } else {
        tokdyn::refuse_unused_petsc_options(comm, cmd->name, cmd->petsc_components, parsed.petsc, schema);
        rc = cmd->run(comm, schema, parsed);
      }
    }
  } catch (const tokdyn::InputError& e) {
    // Every rank sees the same input error; one line from rank 0, exit code 2 everywhere.
    if (comm.root()) std::fprintf(stderr, "tokdyn: error: %s\n", e.what());
    rc = 2;
  } catch (const std::exception& e) {
    // Only some ranks may know: abort the whole job rather than hang in a collective.
    std::fprintf(stderr, "tokdyn: internal error on rank %d: %s\n", comm.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(PETSC_COMM_WORLD, 1);
  }
  std::fflush(stdout);
  PetscCall(SlepcFinalize());
  return rc;
}
