// The deck parser: an INI deck (the input up to its first NUL) and command-line overrides (the lines after
// it) against a schema with every kind of key. Success or InputError; and a deck that parses gives a
// resolved text that parses back to the same deck (what a restart and `tokdyn rerun` rely on).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"

using namespace tokdyn;

namespace {

DeckSchema make_schema() {
  DeckSchema s;
  s.add_int("run.seed", 1, "seed", 0);
  s.add_int("model.N", 64, "tokens", 1, 1 << 20);
  s.add_real("model.beta", 1.0, "beta", 0, 100, true);
  s.add_real("model.dt", 0.1, "step", 0, 1, true).max_exclusive = true;
  s.add_bool("run.progress", true, "progress");
  s.add_text("run.output", "out.h5", "output");
  s.add_file("markov.text_file", "", "a text");
  s.add_choice("flow.method", "rk", {"rk", "gd"}, "method");
  s.add_text("markov.pi", "", "a comma list of reals");
  s.add_text("power.layers", "", "a comma list of layer indices");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const DeckSchema schema = make_schema();
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    const std::string rest = text.substr(nul + 1);
    text.resize(nul);
    for (std::size_t k = 0; k <= rest.size();) {
      const std::size_t end = std::min(rest.find('\n', k), rest.size());
      overrides.push_back(rest.substr(k, end - k));
      k = end + 1;
    }
  }
  const fuzz::TempFile deck(text, ".ini");
  try {
    const Deck d = Deck::parse(schema, deck.path(), overrides);
    const std::string resolved = d.resolved_text();
    const Deck again = Deck::from_text(schema, resolved, "the resolved deck");
    if (again.resolved_text() != resolved || again.hash() != d.hash()) std::abort();
    (void)d.input_files();
    try {
      (void)parse_real_list("markov.pi", d.get_text("markov.pi"), true);
    } catch (const InputError&) {
    }
    try {
      (void)parse_index_list("power.layers", d.get_text("power.layers"), "a layer");
    } catch (const InputError&) {
    }
  } catch (const InputError&) {
  }
  (void)deck_declared_command(deck.path());
  return 0;
}
