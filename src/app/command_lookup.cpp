// Finding the command a user meant: by name, with suggestions, and from a deck's "# command:" line.
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/suggest.hpp"

namespace tokdyn {

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::string unknown_command_message(const std::string& name) {
  const std::string message = "unknown command '" + name + "'";
  if (is_deck(name) || std::filesystem::is_regular_file(name))
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

}  // namespace tokdyn
