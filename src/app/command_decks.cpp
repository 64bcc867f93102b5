// tokdyn decks: the shipped decks (input/*.ini), each with the command it is for (its "# command:" line,
// transformer when it has none) and the first sentence of its description.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

std::string default_directory() {
  if (const char* env = std::getenv("TOKDYN_DECKS"); env && *env) return env;
  return TOKDYN_DECK_DIR;  // the source tree's input/, set by CMake
}

}  // namespace

DeckSchema decks_schema() {
  DeckSchema s;
  s.add_text("decks.dir", "", "directory of the decks to list (default: $TOKDYN_DECKS, else the source tree's input/)");
  return s;
}

int run_decks(const Comm& comm, const DeckSchema& schema, const RunRequest& request) {
  const Deck deck = Deck::parse(schema, request.deck_path, request.overrides);
  const std::string dir = deck.get_text("decks.dir").empty() ? default_directory() : deck.get_text("decks.dir");
  std::vector<std::filesystem::path> decks;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".ini") decks.push_back(entry.path());
  if (ec) throw InputError("deck directory '" + dir + "' cannot be listed (" + ec.message() + "; set TOKDYN_DECKS)");
  if (decks.empty()) throw InputError("deck directory '" + dir + "' holds no .ini deck");
  std::sort(decks.begin(), decks.end());
  if (!comm.root()) return 0;
  std::printf("%zu decks in %s (run one: mpiexec -n P tokdyn COMMAND %s/NAME.ini)\n", decks.size(), dir.c_str(),
              dir.c_str());
  for (const auto& p : decks) {
    std::printf("  %-28s %-12s %s\n", p.filename().c_str(), deck_command(p.string()).c_str(),
                deck_purpose(p.string()).c_str());
  }
  return 0;
}

}  // namespace tokdyn
