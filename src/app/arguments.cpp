#include "arguments.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/petsc/petsc_options.hpp"

namespace tokdyn {

// The run options that are flags (a const at namespace scope: internal linkage).
const std::pair<const char*, bool RunRequest::*> kFlags[] = {
    {"--force", &RunRequest::force}, {"--resume", &RunRequest::resume}, {"--status", &RunRequest::status},
    {"--dry-run", &RunRequest::dry_run}, {"--check", &RunRequest::check}};

Arguments split_arguments(const std::vector<std::string>& args) {
  Arguments a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    auto value_of = [&](const std::string& flag) -> std::string {
      if (s.size() > flag.size() && s[flag.size()] == '=') return s.substr(flag.size() + 1);
      if (i + 1 >= args.size()) throw InputError("option '" + flag + "' needs a value");
      return args[++i];
    };
    const auto flag = std::find_if(std::begin(kFlags), std::end(kFlags), [&](const auto& f) { return s == f.first; });
    if (s == "--help" || s == "-h") {
      a.help = true;
    } else if (flag != std::end(kFlags)) {
      a.request.*(flag->second) = true;
    } else if (s == "--restart" || s.starts_with("--restart=")) {
      a.request.restart = value_of("--restart");
    } else if (s.starts_with("--")) {
      // A deck key: --section.key=value or --section.key value.
      const std::string body = s.substr(2);
      if (body.find('.') == std::string::npos || body.find('.') > body.find('='))
        throw InputError("unknown option '" + s + "' (deck keys look like --section.key=value)");
      if (body.find('=') != std::string::npos) {
        a.request.overrides.push_back(s);
      } else {
        if (i + 1 >= args.size()) throw InputError("deck key '" + body + "' on the command line needs a value");
        a.request.overrides.push_back(s + "=" + args[++i]);
      }
    } else if (s.size() > 1 && s[0] == '-') {
      // PETSc/SLEPc option, with its value when one follows (a .ini file is always the deck).
      a.petsc.push_back(s);
      if (i + 1 < args.size() && is_petsc_option_value(args[i + 1]) && !is_deck_name(args[i + 1]))
        a.petsc.push_back(args[++i]);
    } else {
      if (!a.request.deck_path.empty())
        throw InputError("two decks given ('" + a.request.deck_path + "' and '" + s + "'): give one");
      a.request.deck_path = s;
    }
  }
  if (!a.request.restart.empty() && a.request.resume) throw InputError("give --restart FILE or --resume, not both");
  return a;
}

}  // namespace tokdyn
