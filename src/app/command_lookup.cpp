// Finding the command a user meant (by name, with suggestions, from a deck's "# command:" line) and running it.
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/petsc/petsc_options.hpp"
#include "tokdyn/core/errors/suggest.hpp"
#include "tokdyn/studies/petsc_components.hpp"

namespace tokdyn {

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::string unknown_command_message(const std::string& name) {
  const std::string message = "unknown command '" + name + "'";
  if (is_deck_name(name) || std::filesystem::is_regular_file(name))
    return message + " (the command comes first: tokdyn " + deck_command(name) + " " + name + " ...)";
  std::vector<std::string> names;
  for (const auto& c : commands()) names.push_back(c.name);
  const std::string hint = did_you_mean(name, names);
  return message + (hint.empty() ? " (see tokdyn --help)" : hint);
}

std::string deck_command(const std::string& deck_path) {
  const std::string declared = deck_declared_command(deck_path);
  return declared.empty() ? "transformer" : declared;
}

void check_deck_command(const Command& command, const std::string& deck_path) {
  if (deck_path.empty()) return;
  const std::string declared = deck_declared_command(deck_path);
  if (!declared.empty() && declared != command.name)
    throw InputError("deck '" + deck_path + "' is for tokdyn " + declared + " (its '# command:' line), not tokdyn " +
                     command.name);
}

int run_command(const Comm& comm, const std::string& name, const Arguments& arguments) {
  const Command* command = find_command(name);
  if (!command) throw InputError(unknown_command_message(name));
  if (command->name != "rerun") check_deck_command(*command, arguments.request.deck_path);
  const DeckSchema schema = command->schema();
  if (arguments.help) {
    if (comm.root()) print_command_help(*command, schema);
    return 0;
  }
  check_run_options(*command, arguments.request);
  refuse_unused_petsc_options(comm, command->name, petsc_components(command->petsc_components), arguments.petsc,
                              schema);
  return command->run(comm, schema, arguments.request);
}

}  // namespace tokdyn
