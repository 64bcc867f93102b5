// The gradient flow d theta / dt = -grad loss(theta) of the one-layer model (doc/science.md section 8.2),
// integrated by PETSc TS on the flat parameter Vec (distributed over the ranks: every rank evaluates the
// whole gradient from its items, the same bits everywhere, and keeps its slice): adaptive Runge-Kutta
// (TSRK 5dp with TSAdapt, tolerances rtol and atol) by default, or plain gradient descent as forward
// Euler with the fixed step lr (time = steps x lr). -ts_* options are honoured (TSSetFromOptions).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "tokdyn/core/petsc_owned.hpp"
#include "tokdyn/markov/one_layer.hpp"

namespace tokdyn {

struct FlowSettings {
  std::string method = "rk";  // rk: TSRK 5dp, adaptive | gd: forward Euler, step lr
  double lr = 0.01;           // gd: the step
  double rtol = 1e-8, atol = 1e-12;
  double first_step = 1e-3;   // rk: the first trial step (TSAdapt takes over)
};

class GradientFlow {
 public:
  GradientFlow(MPI_Comm comm, const OneLayerShape& shape, const SequenceItems& items, const FlowSettings& settings);
  GradientFlow(const GradientFlow&) = delete;
  GradientFlow& operator=(const GradientFlow&) = delete;

  // The state the integrator goes on from: theta [size] (every rank the whole vector), time, the next
  // step size and the steps taken. Collective.
  void set_state(const std::vector<double>& theta, double time, double step, std::int64_t steps);
  // Collective: integrates to time t_end (rk: the last step shortened to land on it) or, for gd, by
  // `steps` more steps of lr.
  void advance_to(double t_end);
  void advance_steps(std::int64_t steps);

  std::vector<double> theta() const;  // collective: the whole vector on every rank
  double time() const;
  double step() const;                // the next step size
  std::int64_t steps() const;
  std::int64_t evaluations() const { return evaluations_; }
  void set_evaluations(std::int64_t n) { evaluations_ = n; }  // a resumed run's count so far

 private:
  static PetscErrorCode rhs(TS ts, PetscReal t, Vec x, Vec f, void* self);
  void solve();

  MPI_Comm comm_;
  OneLayerShape shape_;
  const SequenceItems& items_;
  FlowSettings settings_;
  std::int64_t evaluations_ = 0;
  std::exception_ptr error_;  // thrown in the RHS, rethrown after TSSolve returns
  OwnedVec x_, all_;
  OwnedVecScatter to_all_;
  OwnedTS ts_;
};

}  // namespace tokdyn
