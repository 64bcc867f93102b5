#include "tokdyn/meanfield/meanfield_run.hpp"

#include <cmath>

#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {
namespace {

// What /meanfield holds (io/outputs.hpp): declared here, beside the code that writes it (the snapshots through the
// solvers, circle_grid.cpp and quadrature.cpp).
constexpr OutputDecl kMeanFieldOutputs[] = {
    {"meanfield/density", OutputType::real, "1/radian", "snapshot, cell",
     "grid solver: the cell averages rho_i of the density in the angle theta (sum_i rho_i dtheta = 1) at each snapshot."},
    {"meanfield/masses", OutputType::real, "1", "point",
     "quadrature solver: mass of each point, proportional to the initial density relative to uniform at its initial position, summing to 1 (constant in time)."},
    {"meanfield/points", OutputType::real, "1", "snapshot, point, coordinate",
     "quadrature solver: positions on S^{d-1} of the weighted quadrature points at each snapshot."},
    {"meanfield/snapshot_time", OutputType::real, "model time t", "snapshot",
     "Model time of each snapshot of density or points (layers 0, every diagnostics.snapshot_every, and L)."},
    {"meanfield/theta", OutputType::real, "radians", "cell",
     "grid solver: the angle of each cell centre, (i + 1/2) 2 pi / meanfield.cells."},
    {"meanfield@size", OutputType::integer, "count", "",
     "Size of the discretisation: the grid's cells M (meanfield.cells) or the quadrature points M (meanfield.points)."},
    {"meanfield@solver", OutputType::text, "", "",
     "The solver, meanfield.solver: grid (Eulerian finite volumes on the circle) or quadrature (Lagrangian weighted points on S^{d-1})."},
};
const DeclaredOutputs kMeanFieldDeclared("meanfield", kMeanFieldOutputs);

DiagnosticsRow observables_row(std::int64_t layer, double time, const MeanFieldObservables& o) {
  DiagnosticsRow row;
  row.layer = layer;
  row.time = time;
  double norm2 = 0;
  for (double m : o.mean) norm2 += m * m;
  row.scalars = {{"mass", o.mass},
                 {"energy", o.energy},
                 {"order_parameter", std::sqrt(norm2)},
                 {"min_density", o.min_density},
                 {"substeps", static_cast<double>(o.substeps)}};
  for (std::size_t a = 0; a < o.mean.size(); ++a) row.scalars.emplace_back("mean_" + std::to_string(a), o.mean[a]);
  return row;
}

bool finite_observables(const MeanFieldObservables& o) {
  bool ok = std::isfinite(o.mass) && std::isfinite(o.energy);
  for (double m : o.mean) ok = ok && std::isfinite(m);
  return ok;
}

}  // namespace

MeanFieldRun::MeanFieldRun(const Comm& comm, MeanFieldSolver& solver, const std::string& solver_name,
                           std::int64_t layers, double horizon, std::int64_t every, std::int64_t snapshot_every,
                           double beta)
    : comm_(comm), solver_(solver), solver_name_(solver_name), layers_(layers), every_(every),
      snapshot_every_(snapshot_every), horizon_(horizon), beta_(beta), rows_(solver.state_rows(), comm.size()) {}

bool MeanFieldRun::snapshot_at(std::int64_t l) const {
  return l == 0 || l == layers_ || (snapshot_every_ > 0 && l % snapshot_every_ == 0);
}

double MeanFieldRun::time_of(std::int64_t l) const { return static_cast<double>(l) * horizon_ / static_cast<double>(layers_); }

std::string MeanFieldRun::work_unit() const {
  // Throughput in cell-layers (point-layers) per second: "cells" -> "cell-layers".
  const std::string unit = solver_.size_unit();
  return unit.substr(0, unit.size() - 1) + "-layers";
}

void MeanFieldRun::begin(RunFile& file) {
  file.set_diagnostics_attribute("beta", beta_);
  RunGroup group = file.group("meanfield");
  group.attribute("solver", solver_name_);
  group.attribute("size", solver_.size());
  observe(0, file);
}

std::int64_t MeanFieldRun::advance(std::int64_t layer) {
  PhaseScope timed(Phase::meanfield);
  solver_.step(layer);
  return layer + 1;
}

std::string MeanFieldRun::observe(std::int64_t layer, RunFile& file) {
  std::string problem;
  if (layer % every_ == 0 || layer == layers_) {
    const MeanFieldObservables o = solver_.observe(beta_);
    if (!finite_observables(o)) problem = "the mass, E_beta or the mean token is NaN or Inf after layer " + std::to_string(layer);
    file.write_diagnostics(observables_row(layer, time_of(layer), o));
  }
  if (snapshot_at(layer)) solver_.write_snapshot(file.group("meanfield"), snapshot_row_++);
  return problem;
}

std::string MeanFieldRun::nonfinite_message(std::int64_t layer) const {
  return "NaN or Inf in the mean-field state after layer " + std::to_string(layer) +
         " (increase model.L or reduce attention.beta)";
}

void MeanFieldRun::save(CheckpointWriter& out) const {
  const std::vector<double> state = solver_.state();
  out.rows("state", state.data(), rows_, solver_.state_width());
  out.attribute("counter", solver_.counter());
}

void MeanFieldRun::restore(const CheckpointReader& in, RunFile& file) {
  std::vector<double> state(static_cast<std::size_t>(rows_.count(comm_.rank())) * solver_.state_width());
  in.rows("state", state.data(), rows_, solver_.state_width());
  solver_.restore(state, in.int_attribute("counter"));
  const std::int64_t layer = in.identity().step;
  snapshot_row_ = 0;
  for (std::int64_t l = 0; l <= layer; ++l) snapshot_row_ += snapshot_at(l) ? 1 : 0;
  solver_.resume_snapshots(file.group("meanfield"));
}

void MeanFieldRun::finish(RunFile& file) {
  std::vector<double> times;
  for (std::int64_t l = 0; l <= layers_; ++l)
    if (snapshot_at(l)) times.push_back(time_of(l));
  file.group("meanfield").write("snapshot_time", times);
}

}  // namespace tokdyn
