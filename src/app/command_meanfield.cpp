// tokdyn meanfield: the mean-field SPDE of spec section 4 (conditional on the common noise) by a solver
// chosen by name; diagnostics every k layers (mass, E_beta, mean token, positivity) and snapshots.
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "commands.hpp"
#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/progress.hpp"
#include "tokdyn/core/signals.hpp"
#include "tokdyn/io/checkpoint.hpp"
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
  const ResolvedRun resolved = resolve_run(comm, schema, args.request, "meanfield");
  const Deck& deck = resolved.deck;
  RunControl control = run_control_from_deck(deck);
  control.force = args.request.force;
  control.resume = args.request.resume;
  if (args.status) {
    comm.print(run_status(comm, control));
    return 0;
  }
  const std::int64_t layers = deck.get_int("model.L");
  const std::int64_t every = control.diagnostics_every, snapshot_every = control.snapshot_every;
  const double horizon = deck.get_real("model.T"), beta = control.beta;
  const int d = static_cast<int>(deck.get_int("model.d"));
  MeanFieldSetup setup{&deck, comm.get(), std::nullopt};
  auto solver = meanfield_solvers().make(deck.get_text("meanfield.solver"), setup);
  const Partition rows(solver->state_rows(), comm.size());

  // Snapshots at layer 0, every k' layers and the last: which rows a checkpoint at `layer` has written.
  auto snapshot_at = [&](std::int64_t l) { return l == 0 || l == layers || (snapshot_every > 0 && l % snapshot_every == 0); };
  auto time_of = [&](std::int64_t l) { return static_cast<double>(l) * horizon / static_cast<double>(layers); };
  std::int64_t first = 0;
  std::optional<RunFile> file;
  std::uint64_t snapshot_row = 0;
  hid_t group = -1;
  if (resolved.checkpoint) {
    const CheckpointInfo& info = *resolved.checkpoint;
    if (info.n != rows.n_global || info.d != solver->state_width())
      throw InputError("checkpoint '" + resolved.checkpoint_path + "' holds a state of " + std::to_string(info.n) + " x " +
                       std::to_string(info.d) + ", the deck asks for " + std::to_string(rows.n_global) + " x " +
                       std::to_string(solver->state_width()));
    std::vector<double> state(rows.count(comm.rank()) * info.d);
    read_checkpoint_tokens(resolved.checkpoint_path, comm.get(), rows, info.d, state.data());
    solver->restore(state, info.counter);
    first = info.layer;
    file.emplace(RunFile::reopen(control.partial, comm.get(), info.diagnostics_rows, info.snapshot_rows));
    group = file->study_group("meanfield");
    snapshot_row = info.snapshot_rows;
    solver->resume_snapshots(group, snapshot_row);
    comm.print("restart from '" + resolved.checkpoint_path + "' at layer " + std::to_string(first) + "/" +
               std::to_string(layers));
  } else {
    if (!prepare_output(comm, control)) return 0;
    file.emplace(RunFile::create(control.partial, comm.get(),
                                 RunInfo{"meanfield", deck.resolved_text(), static_cast<std::uint64_t>(deck.get_int("run.seed")), 0, d}));
    file->set_diagnostics_attribute("beta", beta);
    group = file->study_group("meanfield");
    h5::write_attribute(group, "solver", deck.get_text("meanfield.solver"));
    h5::write_attribute(group, "size", solver->size());
    file->write_diagnostics(observables_row(0, 0.0, solver->observe(beta)));
    solver->write_snapshot(group, snapshot_row++);
  }
  char line[256];
  std::snprintf(line, sizeof line, "tokdyn meanfield (%s, %lld %s): d = %d, L = %lld, T = %g on %d rank%s -> %s",
                deck.get_text("meanfield.solver").c_str(), static_cast<long long>(solver->size()),
                solver->size_unit().c_str(), d, static_cast<long long>(layers), horizon, comm.size(),
                comm.size() == 1 ? "" : "s", control.output.c_str());
  comm.print(line);

  install_checkpoint_signal_handlers();
  // Throughput in cell-layers (point-layers) per second: "cells" -> "cell-layers".
  const std::string unit = solver->size_unit();
  Progress progress(comm, first, layers, control.progress_interval, static_cast<double>(solver->size()),
                    unit.substr(0, unit.size() - 1) + "-layers");
  for (std::int64_t l = first; l < layers; ++l) {
    solver->step(l);
    const std::int64_t layer = l + 1;
    MeanFieldObservables o;
    const bool record = layer % every == 0 || layer == layers;
    if (record) o = solver->observe(beta);
    int signal = checkpoint_signal_received() ? 1 : 0;  // one collective check per layer
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &signal, 1, MPI_INT, MPI_MAX, comm.get()));
    if (!solver->finite() || (record && !finite(o))) {
      const std::string message = "NaN or Inf in the mean-field state after layer " + std::to_string(layer) +
                                  " (increase model.L or reduce attention.beta)";
      file->set_attribute("error", message);
      file->set_status("failed");
      file->close();
      throw InputError(message);
    }
    if (record) file->write_diagnostics(observables_row(layer, time_of(layer), o));
    if (snapshot_at(layer)) solver->write_snapshot(group, snapshot_row++);
    progress.update(layer);
    const bool stop = signal || layer == control.stop_at_layer;
    if (layer < layers && (stop || (control.checkpoint_every > 0 && layer % control.checkpoint_every == 0))) {
      file->flush();  // the rows the checkpoint counts are on disk before it exists
      CheckpointInfo info;
      info.command = "meanfield";
      info.deck_text = deck.resolved_text();
      info.run_file = control.partial;
      info.layer = layer;
      info.n = rows.n_global;
      info.d = solver->state_width();
      info.diagnostics_rows = file->diagnostics_rows();
      info.snapshot_rows = snapshot_row;
      info.ranks = comm.size();
      info.counter = solver->counter();
      const std::vector<double> state = solver->state();
      write_checkpoint(control.checkpoint, comm.get(), info, state.data(), rows);
    }
    if (stop && layer < layers) {
      file->set_status("checkpointed");
      file->close();
      comm.print("checkpointed at layer " + std::to_string(layer) + "/" + std::to_string(layers) + " to '" +
                 control.checkpoint + "'" + (signal ? " (signal)" : "") + "; continue with --resume");
      return 0;
    }
  }
  std::vector<double> snapshot_times;
  for (std::int64_t l = 0; l <= layers; ++l)
    if (snapshot_at(l)) snapshot_times.push_back(time_of(l));
  h5::write_vector(group, "snapshot_time", snapshot_times, comm.get());
  file->set_status("complete");
  file->close();
  finish_output(comm, control);
  comm.print("complete: '" + control.output + "' (" + format_seconds(progress.elapsed()) + ")");
  return 0;
}

}  // namespace tokdyn
