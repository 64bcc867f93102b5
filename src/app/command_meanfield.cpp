// tokdyn meanfield: the mean-field SPDE of spec section 4 (conditional on the common noise) by a solver
// chosen by name; diagnostics every k layers (mass, E_beta, mean token, positivity) and snapshots.
#include <cmath>
#include <cstdio>
#include <limits>

#include "commands.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/progress.hpp"
#include "tokdyn/dynamics/meanfield.hpp"
#include "tokdyn/dynamics/simulation.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/noise/gaussian_field.hpp"
#include "tokdyn/noise/random_mlp.hpp"

namespace tokdyn {
namespace {

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

bool finite(const MeanFieldObservables& o) {
  bool ok = std::isfinite(o.mass) && std::isfinite(o.energy);
  for (double m : o.mean) ok = ok && std::isfinite(m);
  return ok;
}

}  // namespace

int run_meanfield(const Comm& comm, const DeckSchema& schema, const Arguments& args) {
  const Deck deck = Deck::parse(schema, args.request.deck_path, args.request.overrides);
  RunControl control = study_control(deck.get_text("run.output"), args.request);
  if (args.status) {
    comm.print(run_status(comm, control));
    return 0;
  }
  const std::int64_t layers = deck.get_int("model.L");
  const std::int64_t every = deck.get_int("diagnostics.every"), snapshot_every = deck.get_int("diagnostics.snapshot_every");
  const double horizon = deck.get_real("model.T"), beta = deck.get_real("attention.beta");
  const int d = static_cast<int>(deck.get_int("model.d"));
  MeanFieldSetup setup{&deck, comm.get()};
  auto solver = meanfield_solvers().make(deck.get_text("meanfield.solver"), setup);
  if (!prepare_output(comm, control)) return 0;

  char line[256];
  std::snprintf(line, sizeof line, "tokdyn meanfield (%s, %lld %s): d = %d, L = %lld, T = %g on %d rank%s -> %s",
                deck.get_text("meanfield.solver").c_str(), static_cast<long long>(solver->size()),
                solver->size_unit().c_str(), d, static_cast<long long>(layers), horizon, comm.size(),
                comm.size() == 1 ? "" : "s", control.output.c_str());
  comm.print(line);

  const auto seed = static_cast<std::uint64_t>(deck.get_int("run.seed"));
  RunFile file = RunFile::create(control.partial, comm.get(), RunInfo{"meanfield", deck.resolved_text(), seed, 0, d});
  file.set_diagnostics_attribute("beta", beta);
  const hid_t group = file.study_group("meanfield");
  h5::write_attribute(group, "solver", deck.get_text("meanfield.solver"));
  h5::write_attribute(group, "size", solver->size());
  std::uint64_t snapshot_row = 0;
  std::vector<double> snapshot_times;
  auto time_of = [&](std::int64_t l) { return static_cast<double>(l) * horizon / static_cast<double>(layers); };
  auto snapshot = [&](std::int64_t l) {
    solver->write_snapshot(group, snapshot_row++);
    snapshot_times.push_back(time_of(l));
  };
  file.write_diagnostics(observables_row(0, 0.0, solver->observe(beta)));
  snapshot(0);

  Progress progress(comm, 0, layers, deck.get_real("run.progress_interval"), static_cast<double>(solver->size()),
                    solver->size_unit());
  for (std::int64_t l = 0; l < layers; ++l) {
    solver->step(l);
    const std::int64_t layer = l + 1;
    MeanFieldObservables o;
    const bool record = layer % every == 0 || layer == layers;
    if (record) o = solver->observe(beta);
    if (!solver->finite() || (record && !finite(o))) {
      const std::string message = "NaN or Inf in the mean-field state after layer " + std::to_string(layer) +
                                  " (increase model.L or reduce attention.beta)";
      file.set_attribute("error", message);
      file.set_status("failed");
      file.close();
      throw InputError(message);
    }
    if (record) file.write_diagnostics(observables_row(layer, time_of(layer), o));
    if ((snapshot_every > 0 && layer % snapshot_every == 0 && layer < layers) || layer == layers) snapshot(layer);
    progress.update(layer);
  }
  h5::write_vector(group, "snapshot_time", snapshot_times, comm.get());
  file.set_status("complete");
  file.close();
  finish_output(comm, control);
  comm.print("complete: '" + control.output + "' (" + format_seconds(progress.elapsed()) + ")");
  return 0;
}

}  // namespace tokdyn
