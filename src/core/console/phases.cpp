#include "tokdyn/core/console/phases.hpp"

#include <mpi.h>
#include <petscsys.h>

#include <map>

namespace tokdyn {
namespace {

constexpr const char* kNames[kPhases] = {"attention", "mlp",      "noise",     "diagnostics", "output",
                                         "checkpoint", "eigensolve", "gradient", "optimizer", "meanfield"};
// PETSc's names (its table's column is 16 characters wide; CamelCase as MatMult, EPSSolve).
constexpr const char* kEvents[kPhases] = {"TokAttention",  "TokMLP",        "TokNoise",    "TokDiagnostics",
                                          "TokOutput",     "TokCheckpoint", "TokEigensolve", "TokGradient",
                                          "TokOptimizer",  "TokMeanfield"};

struct Clock {
  PhaseTotals totals;
  int current = -1;      // the phase being timed
  double since = 0;      // when it (re)started
  bool registered = false;
  PetscLogEvent events[kPhases] = {};
};

Clock& clock() {
  static Clock c;
  return c;
}

bool petsc_up() {
  PetscBool up = PETSC_FALSE;
  PetscInitialized(&up);
  return up == PETSC_TRUE;
}

// Events are registered on first use, after PetscInitialize; a registration that fails leaves logging off.
bool events_ready() {
  Clock& c = clock();
  if (c.registered) return true;
  if (!petsc_up()) return false;
  PetscClassId id = 0;
  if (PetscClassIdRegister("tokdyn", &id)) return false;
  for (int p = 0; p < kPhases; ++p)
    if (PetscLogEventRegister(kEvents[p], id, &c.events[p])) return false;
  c.registered = true;
  return true;
}

}  // namespace

const char* phase_name(Phase phase) { return kNames[static_cast<int>(phase)]; }

PhaseScope::PhaseScope(Phase phase) : phase_(phase) {
  Clock& c = clock();
  const double now = MPI_Wtime();
  outer_ = c.current;
  if (outer_ >= 0) c.totals.seconds[outer_] += now - c.since;
  c.current = static_cast<int>(phase);
  c.since = now;
  ++c.totals.calls[c.current];
  if (events_ready()) PetscLogEventBegin(c.events[c.current], 0, 0, 0, 0);
}

PhaseScope::~PhaseScope() {
  Clock& c = clock();
  const double now = MPI_Wtime();
  const int p = static_cast<int>(phase_);
  c.totals.seconds[p] += now - c.since;
  if (c.registered) PetscLogEventEnd(c.events[p], 0, 0, 0, 0);
  c.current = outer_;
  c.since = now;
}

PhaseTotals phase_totals() {
  Clock& c = clock();
  PhaseTotals t = c.totals;
  if (c.current >= 0) t.seconds[c.current] += MPI_Wtime() - c.since;  // a phase still open counts to now
  return t;
}

void reset_phase_totals() {
  Clock& c = clock();
  c.totals = PhaseTotals{};
  c.since = MPI_Wtime();
}

int& pushed_stages() {
  static int n = 0;
  return n;
}

void push_run_stage(const std::string& command) {
  if (!petsc_up()) return;
  static std::map<std::string, PetscLogStage> stages;
  auto it = stages.find(command);
  if (it == stages.end()) {
    PetscLogStage stage = 0;
    if (PetscLogStageRegister(("tokdyn " + command).c_str(), &stage)) return;
    it = stages.emplace(command, stage).first;
  }
  if (!PetscLogStagePush(it->second)) ++pushed_stages();
}

void pop_run_stage() {
  if (pushed_stages() > 0 && petsc_up() && !PetscLogStagePop()) --pushed_stages();
}

}  // namespace tokdyn
