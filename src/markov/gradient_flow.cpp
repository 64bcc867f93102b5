#include "tokdyn/markov/gradient_flow.hpp"

#include <limits>
#include <utility>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/phases.hpp"

namespace tokdyn {

PetscErrorCode set_up_flow_ts(TS ts, bool gd) {
  PetscFunctionBeginUser;
  PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
  if (gd) {
    PetscCall(TSSetType(ts, TSEULER));
    TSAdapt adapt = nullptr;
    PetscCall(TSGetAdapt(ts, &adapt));
    PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
  } else {
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK5DP));
  }
  PetscFunctionReturn(0);
}

GradientFlow::GradientFlow(MPI_Comm comm, const OneLayerShape& shape, const SequenceItems& items,
                           const FlowSettings& settings)
    : comm_(comm), shape_(shape), items_(items), settings_(settings) {
  TOKDYN_PETSC_CHECK(VecCreateMPI(comm, PETSC_DECIDE, static_cast<PetscInt>(shape.size()), x_.out()));
  TOKDYN_PETSC_CHECK(VecScatterCreateToAll(x_, to_all_.out(), all_.out()));
  TOKDYN_PETSC_CHECK(TSCreate(comm, ts_.out()));
  TOKDYN_PETSC_CHECK(set_up_flow_ts(ts_, settings.method == "gd"));
  TOKDYN_PETSC_CHECK(TSSetRHSFunction(ts_, nullptr, &GradientFlow::rhs, this));
  TOKDYN_PETSC_CHECK(TSSetApplicationContext(ts_, this));
  TOKDYN_PETSC_CHECK(TSSetPostStep(ts_, &GradientFlow::post_step));
  TOKDYN_PETSC_CHECK(TSSetSolution(ts_, x_));
  if (settings.method == "gd") {
    TOKDYN_PETSC_CHECK(TSSetTimeStep(ts_, settings.lr));  // gradient descent: the fixed step lr
  } else {
    TOKDYN_PETSC_CHECK(TSSetTolerances(ts_, settings.atol, nullptr, settings.rtol, nullptr));
    TOKDYN_PETSC_CHECK(TSSetTimeStep(ts_, settings.first_step));
  }
  TOKDYN_PETSC_CHECK(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_MATCHSTEP));
  TOKDYN_PETSC_CHECK(TSSetMaxSteps(ts_, std::numeric_limits<PetscInt>::max()));
  TOKDYN_PETSC_CHECK(TSSetFromOptions(ts_));
  TSExactFinalTimeOption final_time = TS_EXACTFINALTIME_MATCHSTEP;
  TOKDYN_PETSC_CHECK(TSGetExactFinalTime(ts_, &final_time));
  // TSSolve's own interpolation would leave the state at the record but the time at the step's end.
  if (final_time != TS_EXACTFINALTIME_MATCHSTEP)
    throw InputError(
        "markov: -ts_exact_final_time must stay matchstep (records by interpolation: flow.output = dense)");
  if (settings.dense) {
    if (settings.method != "rk")
      throw InputError("flow.output = dense needs flow.method = rk (gd records at whole steps)");
    TOKDYN_PETSC_CHECK(VecDuplicate(x_, prev_.out()));
    TOKDYN_PETSC_CHECK(VecDuplicate(x_, record_.out()));
    // TSStep wants a bound; the records stop the steps, not it (PETSC_MAX_REAL counts as unset).
    TOKDYN_PETSC_CHECK(TSSetMaxTime(ts_, 1e300));
  }
}

PetscErrorCode GradientFlow::rhs(TS, PetscReal, Vec x, Vec f, void* ctx) {
  auto* self = static_cast<GradientFlow*>(ctx);
  PetscFunctionBeginUser;
  // No exception may cross PETSc's C frames: kept, PETSc told of an error, rethrown after TSSolve.
  try {
    PetscCall(VecScatterBegin(self->to_all_, x, self->all_, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(self->to_all_, x, self->all_, INSERT_VALUES, SCATTER_FORWARD));
    const PetscScalar* theta = nullptr;
    PetscCall(VecGetArrayRead(self->all_, &theta));
    std::vector<double> grad(self->shape_.size());
    PhaseScope timed(Phase::gradient);
    evaluate_one_layer(self->shape_, theta, self->items_, grad.data(), self->comm_);
    PetscCall(VecRestoreArrayRead(self->all_, &theta));
    ++self->evaluations_;
    PetscInt begin = 0, end = 0;
    PetscCall(VecGetOwnershipRange(f, &begin, &end));
    PetscScalar* out = nullptr;
    PetscCall(VecGetArray(f, &out));
    for (PetscInt k = begin; k < end; ++k) out[k - begin] = -grad[k];
    PetscCall(VecRestoreArray(f, &out));
  } catch (...) {
    self->error_ = std::current_exception();
    PetscFunctionReturn(PETSC_ERR_USER);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode GradientFlow::post_step(TS ts) {
  void* ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(TSGetApplicationContext(ts, &ctx));
  auto* self = static_cast<GradientFlow*>(ctx);
  try {
    if (self->interrupt_ && self->interrupt_()) {
      self->interrupted_ = true;
      PetscCall(TSSetConvergedReason(ts, TS_CONVERGED_USER));
    }
  } catch (...) {
    self->error_ = std::current_exception();
    PetscFunctionReturn(PETSC_ERR_USER);
  }
  PetscFunctionReturn(0);
}

void GradientFlow::set_state(const std::vector<double>& theta, double time, double step, std::int64_t steps) {
  stepped_ = false;
  record_time_ = time;
  PetscInt begin = 0, end = 0;
  TOKDYN_PETSC_CHECK(VecGetOwnershipRange(x_, &begin, &end));
  PetscScalar* x = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArray(x_, &x));
  for (PetscInt k = begin; k < end; ++k) x[k - begin] = theta[k];
  TOKDYN_PETSC_CHECK(VecRestoreArray(x_, &x));
  TOKDYN_PETSC_CHECK(TSSetTime(ts_, time));
  TOKDYN_PETSC_CHECK(TSSetTimeStep(ts_, step));
  TOKDYN_PETSC_CHECK(TSSetStepNumber(ts_, static_cast<PetscInt>(steps)));
}

bool GradientFlow::solve() {
  // Every record interval starts afresh (FSAL stage recomputed): what a resumed run does after its
  // set_state, so that both go on bit for bit.
  TOKDYN_PETSC_CHECK(TSRestartStep(ts_));
  interrupted_ = false;
  check(TSSolve(ts_, x_));
  return !interrupted_;
}

void GradientFlow::check(PetscErrorCode rc) {
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  TOKDYN_PETSC_CHECK(rc);
  TSConvergedReason reason = TS_CONVERGED_ITERATING;
  TOKDYN_PETSC_CHECK(TSGetConvergedReason(ts_, &reason));
  if (reason < 0)
    throw InputError(std::string("markov: the integrator failed (") + TSConvergedReasons[reason] +
                     "); loosen flow.rtol or shorten flow.first_step");
}

bool GradientFlow::advance_to(double t_end) {
  if (!settings_.dense) {
    TOKDYN_PETSC_CHECK(TSSetMaxTime(ts_, t_end));
    return solve() || integrator_time() >= t_end;  // a poll after the record's last step stops nothing
  }
  while (integrator_time() < t_end) {
    dense_step();
    if (integrator_time() < t_end && interrupt_ && interrupt_()) return false;
  }
  // t_end lies in the last step [prev_time_, time]: the method's interpolant there.
  TOKDYN_PETSC_CHECK(TSInterpolate(ts_, t_end, record_));
  record_time_ = t_end;
  return true;
}

void GradientFlow::dense_step() {
  TOKDYN_PETSC_CHECK(VecCopy(x_, prev_));
  prev_time_ = integrator_time();
  prev_step_ = step();
  // Every step afresh (its first stage evaluated, not carried over): a resume replays the last step
  // from prev_ alone, bit for bit.
  TOKDYN_PETSC_CHECK(TSRestartStep(ts_));
  const std::function<bool()> poll = std::exchange(interrupt_, nullptr);  // TSStep runs the post-step too
  check(TSStep(ts_));
  interrupt_ = poll;
  stepped_ = true;
}

FlowCheckpoint GradientFlow::checkpoint() const {
  FlowCheckpoint c;
  c.record_time = record_time_;
  if (settings_.dense && stepped_) {
    c.theta = gather(prev_);
    c.time = prev_time_;
    c.step = prev_step_;
    c.steps = steps() - 1;
    c.replay = true;
  } else {
    c.theta = gather(x_);
    c.time = integrator_time();
    c.step = step();
    c.steps = steps();
  }
  return c;
}

void GradientFlow::resume(const FlowCheckpoint& c) {
  set_state(c.theta, c.time, c.step, c.steps);
  if (!c.replay) return;
  if (!settings_.dense)
    throw InputError("markov: a checkpoint of dense output resumed without flow.output = dense");
  dense_step();
  TOKDYN_PETSC_CHECK(TSInterpolate(ts_, c.record_time, record_));
  record_time_ = c.record_time;
}

bool GradientFlow::advance_steps(std::int64_t steps) {
  TOKDYN_PETSC_CHECK(TSSetMaxTime(ts_, std::numeric_limits<double>::max()));
  const std::int64_t target = this->steps() + steps;
  TOKDYN_PETSC_CHECK(TSSetMaxSteps(ts_, static_cast<PetscInt>(target)));
  return solve() || this->steps() >= target;
}

std::vector<double> GradientFlow::theta() const {
  return gather(settings_.dense && stepped_ ? record_.get() : x_.get());
}

std::vector<double> GradientFlow::gather(Vec v) const {
  TOKDYN_PETSC_CHECK(VecScatterBegin(to_all_, v, all_, INSERT_VALUES, SCATTER_FORWARD));
  TOKDYN_PETSC_CHECK(VecScatterEnd(to_all_, v, all_, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar* a = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArrayRead(all_, &a));
  std::vector<double> out(a, a + shape_.size());
  TOKDYN_PETSC_CHECK(VecRestoreArrayRead(all_, &a));
  return out;
}

double GradientFlow::time() const { return settings_.dense ? record_time_ : integrator_time(); }

double GradientFlow::integrator_time() const {
  PetscReal t = 0;
  TOKDYN_PETSC_CHECK(TSGetTime(ts_, &t));
  return t;
}

double GradientFlow::step() const {
  PetscReal dt = 0;
  TOKDYN_PETSC_CHECK(TSGetTimeStep(ts_, &dt));
  return dt;
}

std::int64_t GradientFlow::steps() const {
  PetscInt n = 0;
  TOKDYN_PETSC_CHECK(TSGetStepNumber(ts_, &n));
  return n;
}

}  // namespace tokdyn
