// Refusing single-dash options nothing reads: PETSc marks every option it looks up as used, so after
// SlepcInitialize and the SetFromOptions of tiny instances of the command's PETSc objects, what is still
// unused would be ignored by the run too.
#include "tokdyn/core/petsc/petsc_options.hpp"

#include <petscviewer.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {
namespace {

// Read by PetscFinalize, not by PetscInitialize.
const char* const read_at_finalize[] = {"options_left", "options_view"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// Options the objects query only when they solve or view (EPSSolve: -eps_view, -eps_converged_reason,
// -eps_error_relative; monitors are created at SetFromOptions, which ran with viewers off).
bool queried_later(const std::string& name, const std::vector<const PetscComponent*>& used) {
  for (const PetscComponent* c : used)
    for (const std::string& p : c->prefixes)
      if (starts_with(name, p + "_view") || name == p + "_converged_reason" || starts_with(name, p + "_error_") ||
          starts_with(name, p + "_monitor"))
        return true;
  return false;
}

// A deck key given with one dash: -model.N=32, -model.N 32, -model_N.
bool looks_like_deck_key(const std::string& name, const DeckSchema& schema) {
  if (name.find('.') != std::string::npos) return true;
  const std::string head = name.substr(0, name.find_first_of("_="));
  for (const KeySpec& k : schema.keys())
    if (lower(k.name.substr(0, k.name.find('.'))) == head) return true;
  return false;
}

}  // namespace

void refuse_unused_petsc_options(const Comm& comm, const std::string& command,
                                 const std::vector<const PetscComponent*>& used, const std::vector<std::string>& given,
                                 const DeckSchema& schema) {
  // Configure the tiny objects with viewers off (-dm_view, -eps_monitor would print or watch objects that
  // are never used) and with PETSc's own error printout off: a value PETSc rejects is reported in one line.
  PetscErrorCode rc = 0;
  TOKDYN_PETSC_CHECK(PetscOptionsPushGetViewerOff(PETSC_TRUE));
  TOKDYN_PETSC_CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  for (const PetscComponent* c : used)
    if (!rc) rc = c->probe(comm.get());
  TOKDYN_PETSC_CHECK(PetscPopErrorHandler());
  TOKDYN_PETSC_CHECK(PetscOptionsPopGetViewerOff());
  std::string rejected;
  if (rc) {
    const char* text = nullptr;
    char* specific = nullptr;
    TOKDYN_PETSC_CHECK(PetscErrorMessage(rc, &text, &specific));
    rejected = "PETSc/SLEPc option refused in tokdyn " + command + ": " + std::string(specific ? specific : "") + " (" +
               std::string(text ? text : "error " + std::to_string(rc)) + ")";
  }
  require_all(comm.get(), rc == 0, rejected);

  // Only what was given on the command line is judged (not PETSC_OPTIONS or a .petscrc a site may set).
  std::set<std::string> on_line;
  for (const std::string& s : given)
    if (starts_with(s, "-")) on_line.insert(lower(s.substr(1)));
  PetscInt n = 0;
  char** names = nullptr;
  char** values = nullptr;
  TOKDYN_PETSC_CHECK(PetscOptionsLeftGet(nullptr, &n, &names, &values));
  std::vector<std::pair<std::string, std::string>> left;  // (name as given, value or "")
  for (PetscInt i = 0; i < n; ++i) left.emplace_back(names[i], values[i] ? values[i] : "");
  TOKDYN_PETSC_CHECK(PetscOptionsLeftRestore(nullptr, &n, &names, &values));

  std::string refused, deck_hint;
  int count = 0;
  for (const auto& [name, value] : left) {
    const std::string key = lower(name);
    if (!on_line.count(key) || queried_later(key, used) ||
        std::find(std::begin(read_at_finalize), std::end(read_at_finalize), key) != std::end(read_at_finalize))
      continue;
    refused += std::string(count++ ? ", " : "") + "'-" + name + "'";
    if (deck_hint.empty() && looks_like_deck_key(key, schema))
      deck_hint = name.find('.') == std::string::npos
                      ? "--section.key=value"
                      : "--" + name + (value.empty() || name.find('=') != std::string::npos ? "" : "=" + value);
  }
  std::string reads = "this command uses no PETSc/SLEPc solver, so only PETSc's global options (-log_view, ...) apply";
  if (!used.empty()) {
    reads = "this command configures ";
    for (std::size_t i = 0; i < used.size(); ++i) reads += std::string(i ? " and " : "") + used[i]->what;
  }
  const std::string message = (count == 1 ? "option " : "options ") + refused + (count == 1 ? " is" : " are") +
                              " not read by PETSc/SLEPc in tokdyn " + command + " (" +
                              (deck_hint.empty() ? reads : "deck keys take two dashes: " + deck_hint) + ")";
  require_all(comm.get(), count == 0, message);
}

bool is_petsc_option_value(const std::string& arg) {
  return !arg.empty() &&
         (arg[0] != '-' || (arg.size() > 1 && (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.')));
}

}  // namespace tokdyn
