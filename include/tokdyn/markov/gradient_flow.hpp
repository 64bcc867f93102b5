// The gradient flow d theta / dt = -grad loss(theta) of the one-layer model (doc/science.md section 8.2),
// integrated by PETSc TS on the flat parameter Vec (distributed over the ranks: every rank evaluates the
// whole gradient from its items, the same bits everywhere, and keeps its slice): adaptive Runge-Kutta
// (TSRK 5dp with TSAdapt, tolerances rtol and atol) by default, or plain gradient descent as forward
// Euler with the fixed step lr (time = steps x lr). -ts_* options are honoured (TSSetFromOptions).
// Records at fixed times: the step is shortened to land on each (output "match", exact), or the
// integrator steps on freely and each record is interpolated in its step (output "dense", TSInterpolate:
// the trajectory does not depend on how often it is recorded).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <exception>
#include <string>
#include <vector>

#include "tokdyn/core/petsc/petsc_owned.hpp"
#include "tokdyn/markov/one_layer.hpp"

namespace tokdyn {

// The TS set-up before TSSetFromOptions: a nonlinear problem, forward Euler without adaptivity (gd) or
// adaptive RK 5(4) Dormand-Prince. The one set-up: the flow and the probe that checks single-dash options
// (studies/petsc_components.cpp) share it.
PetscErrorCode set_up_flow_ts(TS ts, bool gd);

struct FlowSettings {
  std::string method = "rk";  // rk: TSRK 5dp, adaptive | gd: forward Euler, step lr
  double lr = 0.01;           // gd: the step
  double rtol = 1e-8, atol = 1e-12;
  double first_step = 1e-3;   // rk: the first trial step (TSAdapt takes over)
  bool dense = false;         // rk: records interpolated in the step that covers them (else steps land on them)
};

// What a checkpoint holds to go on bit for bit. Dense output: the state before the last step, which a
// resume takes again (every dense step starts afresh, no first-same-as-last stage, so the replay gives
// the same bits and the same interpolant); replay = false when no step was taken yet.
struct FlowCheckpoint {
  std::vector<double> theta;  // [size] the integrator's state
  double time = 0, step = 0;  // its time and next (trial) step
  std::int64_t steps = 0;
  bool replay = false;
  double record_time = 0;     // dense: the last record's time
};

class GradientFlow {
 public:
  GradientFlow(MPI_Comm comm, const OneLayerShape& shape, const SequenceItems& items, const FlowSettings& settings);
  GradientFlow(const GradientFlow&) = delete;
  GradientFlow& operator=(const GradientFlow&) = delete;

  // The state the integrator goes on from: theta [size] (every rank the whole vector), time, the next
  // step size and the steps taken. Collective.
  void set_state(const std::vector<double>& theta, double time, double step, std::int64_t steps);
  // Collective: integrates to time t_end (rk: the last step shortened to land on it, or with dense
  // output past it and interpolated) or, for gd, by `steps` more steps of lr. False when the interrupt
  // poll stopped it between two steps (the state is then where the steps got to).
  bool advance_to(double t_end);
  bool advance_steps(std::int64_t steps);
  // A collective poll asked after every step (a signal waiting: a record of many steps need not finish).
  void set_interrupt(std::function<bool()> poll) { interrupt_ = std::move(poll); }
  // Collective: what a checkpoint keeps, and going on from it (dense output: the last step replayed).
  FlowCheckpoint checkpoint() const;
  void resume(const FlowCheckpoint& c);

  std::vector<double> theta() const;  // collective: the whole vector on every rank (dense: at the record)
  double time() const;                // dense: the last record's time
  double step() const;                // the next step size
  std::int64_t steps() const;
  std::int64_t evaluations() const { return evaluations_; }
  void set_evaluations(std::int64_t n) { evaluations_ = n; }  // a resumed run's count so far

 private:
  static PetscErrorCode rhs(TS ts, PetscReal t, Vec x, Vec f, void* self);
  static PetscErrorCode post_step(TS ts);
  bool solve();  // false: interrupted
  void check(PetscErrorCode rc);  // after TSSolve or TSStep: an RHS exception, a PETSc error, a failed step
  void dense_step();  // one step from x_, kept in prev_ first
  std::vector<double> gather(Vec v) const;
  double integrator_time() const;

  MPI_Comm comm_;
  OneLayerShape shape_;
  const SequenceItems& items_;
  FlowSettings settings_;
  std::int64_t evaluations_ = 0;
  std::exception_ptr error_;  // thrown in the RHS or the poll, rethrown after TSSolve returns
  std::function<bool()> interrupt_;
  bool interrupted_ = false;
  OwnedVec x_, all_;
  OwnedVec prev_, record_;  // dense: the state before the last step; the last record
  double prev_time_ = 0, prev_step_ = 0, record_time_ = 0;
  bool stepped_ = false;  // dense: a step was taken (prev_ holds its start)
  OwnedVecScatter to_all_;
  OwnedTS ts_;
};

}  // namespace tokdyn
