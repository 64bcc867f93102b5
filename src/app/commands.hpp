// tokdyn's commands, by name: each has a deck schema (for --help and parsing) and a run function.
#pragma once

#include <cstdio>

#include <functional>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

// What a command writes, and so which run options it takes: none (bench); one output written at once
// (weights: --force); or a run file with checkpoints (--resume, --restart FILE, --status, --force).
enum class Outputs { none, once, run };

struct Command {
  std::string name;
  std::string summary;
  std::function<DeckSchema()> schema;
  std::function<int(const Comm&, const DeckSchema&, const RunRequest&)> run;
  Outputs outputs = Outputs::run;
  // The PETSc objects it configures from single-dash options (studies/petsc_components.hpp): others are
  // refused.
  std::vector<std::string> petsc_components = {};
};

// The run options a command takes, for its --help; InputError when the request uses one it does not.
std::string run_options_help(const Command& command);
void check_run_options(const Command& command, const RunRequest& request);

// A command that is a study (studies/study.hpp): the study's schema, run by the one driver of run files.
template <class S>
Command study_command(const std::string& name, const std::string& summary, std::vector<std::string> petsc = {}) {
  return Command{name, summary, [] { return S::schema(); },
                 [name](const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
                   return run_study<S>(comm, schema, request, name);
                 },
                 Outputs::run, std::move(petsc)};
}

// The command list (src/app/commands.cpp): a study is one line there (study_command), another command its
// file and one line.
const std::vector<Command>& commands();
const Command* find_command(const std::string& name);  // null when there is none of that name
// "unknown command 'X'" with the commands close to X, or, when X is a deck, the command line it meant.
std::string unknown_command_message(const std::string& name);
// The command a deck is for: its "# command:" line, transformer when it has none.
std::string deck_command(const std::string& deck_path);
// InputError when the deck names another command in its "# command:" line.
void check_deck_command(const Command& command, const std::string& deck_path);

// The command's run (src/app/command_lookup.cpp): its deck checks, --help, run options and PETSc options, then
// its run function. Returns the exit code.
int run_command(const Comm& comm, const std::string& name, const Arguments& arguments);

// What --help, --version and --outputs print (src/app/help.cpp). print_general_help: false when `command` is
// none of them; no command at all is a usage error (InputError, the usage on stderr).
bool print_general_help(const Comm& comm, const std::string& command);
void print_usage(std::FILE* out);
void print_version();
void print_command_help(const Command& command, const DeckSchema& schema);

DeckSchema bench_schema();
int run_bench(const Comm& comm, const DeckSchema& schema, const RunRequest& request);
DeckSchema rerun_schema();
int run_rerun(const Comm& comm, const DeckSchema& schema, const RunRequest& request);
DeckSchema decks_schema();
int run_decks(const Comm& comm, const DeckSchema& schema, const RunRequest& request);
DeckSchema weights_schema();
int run_weights(const Comm& comm, const DeckSchema& schema, const RunRequest& request);

}  // namespace tokdyn
