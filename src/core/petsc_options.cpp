// Refusing single-dash options nothing reads: PETSc marks every option it looks up as used, so after
// SlepcInitialize and the SetFromOptions of tiny instances of the command's PETSc objects, what is still
// unused would be ignored by the run too.
#include "tokdyn/core/petsc_options.hpp"

#include <petscdmda.h>
#include <slepceps.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/petsc_owned.hpp"

namespace tokdyn {
namespace {

// The tiny instances, destroyed in reverse order of declaration whether or not configuring them succeeded.
struct Probes {
  OwnedMat matrix;
  OwnedEps eps;
  OwnedDM grid;
  OwnedVec global, local, all;
  OwnedVecScatter to_all;
  OwnedVec state;
  OwnedTS ts;
};

// Set up as src/spectral/eigensolver.cpp sets up its EPS before EPSSetFromOptions: the same type and problem
// type, so that the same type-specific options (-eps_krylovschur_restart) are read. One row per rank.
PetscErrorCode configure_eps(MPI_Comm comm, Probes& p) {
  PetscFunctionBeginUser;
  PetscCall(MatCreateDense(comm, 1, 1, PETSC_DETERMINE, PETSC_DETERMINE, nullptr, p.matrix.out()));
  PetscCall(MatAssemblyBegin(p.matrix, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(p.matrix, MAT_FINAL_ASSEMBLY));
  PetscCall(EPSCreate(comm, p.eps.out()));
  PetscCall(EPSSetOperators(p.eps, p.matrix, nullptr));
  PetscCall(EPSSetProblemType(p.eps, EPS_NHEP));
  PetscCall(EPSSetType(p.eps, EPSKRYLOVSCHUR));
  PetscCall(EPSSetFromOptions(p.eps));
  PetscFunctionReturn(0);
}

// Built as src/meanfield/circle_grid.cpp builds the grid (8 cells per rank: the stencil is 2 wide).
PetscErrorCode configure_dmda(MPI_Comm comm, Probes& p) {
  PetscFunctionBeginUser;
  PetscMPIInt size = 1;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(DMDACreate1d(comm, DM_BOUNDARY_PERIODIC, 8 * size, 1, 2, nullptr, p.grid.out()));
  PetscCall(DMSetUp(p.grid));
  PetscCall(DMCreateGlobalVector(p.grid, p.global.out()));
  PetscCall(DMCreateLocalVector(p.grid, p.local.out()));
  PetscCall(VecScatterCreateToAll(p.global, p.to_all.out(), p.all.out()));
  PetscFunctionReturn(0);
}

// As src/markov/gradient_flow.cpp sets up its TS before TSSetFromOptions: adaptive RK 5dp on a Vec of one
// entry per rank.
PetscErrorCode configure_ts(MPI_Comm comm, Probes& p) {
  PetscFunctionBeginUser;
  PetscCall(VecCreateMPI(comm, 1, PETSC_DETERMINE, p.state.out()));
  PetscCall(TSCreate(comm, p.ts.out()));
  PetscCall(TSSetProblemType(p.ts, TS_NONLINEAR));
  PetscCall(TSSetType(p.ts, TSRK));
  PetscCall(TSRKSetType(p.ts, TSRK5DP));
  PetscCall(TSSetSolution(p.ts, p.state));
  PetscCall(TSSetFromOptions(p.ts));
  PetscFunctionReturn(0);
}

struct Component {
  const char* name;
  const char* what;                     // for the message: which options the command reads
  std::vector<std::string> prefixes;    // whose view, monitor, converged-reason and error options are accepted
  PetscErrorCode (*configure)(MPI_Comm, Probes&);
};

const Component components_table[] = {
    {"eps", "a SLEPc eigensolver: -eps_*, -st_*, -bv_*, -ds_*, -rg_*", {"eps", "st", "st_ksp", "bv", "ds", "rg", "mat"},
     configure_eps},
    {"dmda", "a PETSc DMDA grid: -dm_*, -sf_*", {"dm", "sf"}, configure_dmda},
    {"ts", "a PETSc TS integrator: -ts_*", {"ts", "ts_adapt", "snes", "ksp"}, configure_ts},
};

// Read by PetscFinalize, not by PetscInitialize.
const char* const read_at_finalize[] = {"options_left", "options_view"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// Options the objects query only when they solve or view (EPSSolve: -eps_view, -eps_converged_reason,
// -eps_error_relative; monitors are created at SetFromOptions, which ran with viewers off).
bool queried_later(const std::string& name, const std::vector<const Component*>& used) {
  for (const Component* c : used)
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
                                 const std::vector<std::string>& components, const std::vector<std::string>& given,
                                 const DeckSchema& schema) {
  std::vector<const Component*> used;
  for (const std::string& name : components) {
    const Component* found = nullptr;
    for (const Component& c : components_table)
      if (name == c.name) found = &c;
    if (!found) throw SystemError("refuse_unused_petsc_options: no PETSc component '" + name + "'");
    used.push_back(found);
  }

  // Configure the tiny objects with viewers off (-dm_view, -eps_monitor would print or watch objects that
  // are never used) and with PETSc's own error printout off: a value PETSc rejects is reported in one line.
  PetscErrorCode rc = 0;
  {
    Probes probes;
    TOKDYN_PETSC_CHECK(PetscOptionsPushGetViewerOff(PETSC_TRUE));
    TOKDYN_PETSC_CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
    for (const Component* c : used)
      if (!rc) rc = c->configure(comm.get(), probes);
    TOKDYN_PETSC_CHECK(PetscPopErrorHandler());
    TOKDYN_PETSC_CHECK(PetscOptionsPopGetViewerOff());
  }
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

}  // namespace tokdyn
