// Where a run's time goes. Each phase of tokdyn's work is a PETSc log event (so `-log_view` lists
// tokdyn's events, with counts, times and flops beside PETSc's own) and a wall-clock total on every rank
// for the run summary. The totals are exclusive: a phase inside another (a snapshot written while the
// diagnostics run) pauses the outer one, so the phases of a run add up to at most its time.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace tokdyn {

enum class Phase : int {
  attention,    // the attention pass of a layer (with the statistics fused into it)
  mlp,          // the random MLP of a layer
  noise,        // the noise field's increments (SDE, projected steps)
  diagnostics,  // pair statistics and other observables of a recorded step
  output,       // rows and snapshots written to the run file
  checkpoint,   // a checkpoint written (file flushed, state saved, renamed)
  eigensolve,   // SLEPc or LAPACK eigen-solves of layer matrices
  gradient,     // loss and gradient of a model (markov, train)
  optimizer,    // an optimizer's or integrator's update of the parameters
  meanfield,    // a step of the mean-field solvers
  count
};
inline constexpr int kPhases = static_cast<int>(Phase::count);

// "attention", "mlp", ... (the PETSc events: TokAttention, TokMLP, ...).
const char* phase_name(Phase phase);

// Times the enclosing block as `phase`. Cheap (two clock reads, PETSc's event calls) and meant for blocks of
// a layer's size, not for inner loops.
class PhaseScope {
 public:
  explicit PhaseScope(Phase phase);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Phase phase_;
  int outer_;  // the phase this one interrupted (-1: none)
};

struct PhaseTotals {
  std::array<double, kPhases> seconds{};
  std::array<std::int64_t, kPhases> calls{};
};
// This rank's totals since the process started (or the last reset).
PhaseTotals phase_totals();
void reset_phase_totals();

// PETSc's log stage for a command's run ("tokdyn transformer"), pushed while it runs so that -log_view
// shows the run apart from the set-up. No-ops before PETSc is initialised (unit tests).
void push_run_stage(const std::string& command);
void pop_run_stage();

}  // namespace tokdyn
