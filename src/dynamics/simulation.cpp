#include "tokdyn/dynamics/simulation.hpp"

#include <cmath>
#include <filesystem>

#include "tokdyn/core/blas.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/dynamics/initial_tokens.hpp"
#include "tokdyn/core/signals.hpp"
#include "tokdyn/core/progress.hpp"

namespace fs = std::filesystem;

namespace tokdyn {
namespace {

std::string default_checkpoint(const std::string& output) {
  const std::string ext = ".h5";
  if (output.size() > ext.size() && output.compare(output.size() - ext.size(), ext.size(), ext) == 0)
    return output.substr(0, output.size() - ext.size()) + ".ckpt.h5";
  return output + ".ckpt.h5";
}

// Rank 0 looks at the file system and every rank acts on its answer.
bool exists_on_root(const Comm& comm, const std::string& path) {
  int e = comm.root() ? (fs::exists(path) ? 1 : 0) : 0;
  TOKDYN_MPI_CHECK(MPI_Bcast(&e, 1, MPI_INT, 0, comm.get()));
  return e != 0;
}

bool any_nonfinite(const std::vector<double>& x) {
  for (double v : x)
    if (!std::isfinite(v)) return true;
  return false;
}

}  // namespace

void add_run_keys(DeckSchema& s) {
  s.add_text("run.output", "run.h5", "run file (HDF5); written as OUTPUT.part until complete");
  s.add_int("run.seed", 1, "seed of every random stream (tokens, MLP weights)", 0);
  s.add_text("run.checkpoint", "", "checkpoint file (default: OUTPUT with .h5 -> .ckpt.h5)").run_control = true;
  s.add_int("run.checkpoint_every", 0, "checkpoint every c layers (0: only on SIGTERM/SIGUSR1)", 0).run_control = true;
  s.add_int("run.stop_at_layer", 0, "checkpoint and exit after this layer (0: run to the end)", 0).run_control = true;
  s.add_real("run.progress_interval", 10.0, "seconds between progress lines on rank 0", 0.0).run_control = true;
  s.add_int("run.tile", 256, "rows per BLAS tile in the all-pairs passes", 1, 1 << 16);
  s.add_int("run.blas_threads", 1, "BLAS threads per rank", 1, 1024).run_control = true;
  s.add_int("diagnostics.every", 1, "diagnostics every k layers (and at the last)", 1);
  s.add_int("diagnostics.snapshot_every", 0, "token snapshots every k' layers (0: first and last only)", 0);
  s.add_int("diagnostics.bins", 50, "bins of the pairwise-cosine histogram on [-1, 1]", 1, 100000);
}

void add_model_keys(DeckSchema& s) {
  s.add_int("model.N", 64, "number of tokens N", 1, std::int64_t(1) << 40);
  s.add_int("model.d", 4, "dimension d (tokens on S^{d-1})", 2, 1 << 20);
  s.add_int("model.L", 100, "depth L: layers, or time steps of the SDE (step T/L)", 1);
  s.add_real("model.T", 1.0, "horizon T", 0.0, std::numeric_limits<double>::infinity(), true);
}

RunControl run_control_from_deck(const Deck& deck) {
  RunControl c;
  c.output = deck.get_text("run.output");
  if (c.output.empty()) throw InputError("deck key 'run.output' is empty");
  c.partial = c.output + ".part";
  c.checkpoint = deck.get_text("run.checkpoint").empty() ? default_checkpoint(c.output) : deck.get_text("run.checkpoint");
  c.diagnostics_every = deck.get_int("diagnostics.every");
  c.snapshot_every = deck.get_int("diagnostics.snapshot_every");
  c.checkpoint_every = deck.get_int("run.checkpoint_every");
  c.stop_at_layer = deck.get_int("run.stop_at_layer");
  c.progress_interval = deck.get_real("run.progress_interval");
  if (deck.has("diagnostics.bins")) c.bins = static_cast<int>(deck.get_int("diagnostics.bins"));
  c.tile = static_cast<int>(deck.get_int("run.tile"));
  c.beta = deck.get_real("attention.beta");
  return c;
}

ResolvedRun resolve_run(const Comm& comm, const DeckSchema& schema, const RunRequest& request,
                        const std::string& command) {
  const bool deck_given = !request.deck_path.empty() || !request.overrides.empty();
  Deck given = Deck::parse(schema, request.deck_path, request.overrides);
  std::string ckpt = request.restart;
  if (ckpt.empty() && request.resume) {
    const std::string path = run_control_from_deck(given).checkpoint;
    if (exists_on_root(comm, path)) ckpt = path;
  }
  if (ckpt.empty()) return ResolvedRun{given, std::nullopt, ""};

  CheckpointInfo info = read_checkpoint_info(ckpt, comm.get());
  if (info.command != command)
    throw InputError("checkpoint '" + ckpt + "' belongs to command '" + info.command + "', not '" + command + "'");
  Deck stored = Deck::from_text(schema, info.deck_text, ckpt);
  if (!deck_given) return ResolvedRun{stored, info, ckpt};
  const auto diff = given.differences(stored);
  if (!diff.empty())
    throw InputError("deck key '" + diff.front() + "' differs from checkpoint '" + ckpt + "' (" +
                     given.get_text(diff.front()) + " here, " + stored.get_text(diff.front()) + " there)");
  return ResolvedRun{given, info, ckpt};
}

std::string run_status(const Comm& comm, const RunControl& control) {
  auto status_of = [&](const std::string& path) {
    if (!h5::is_hdf5_file(path)) return std::string("unreadable");
    h5::Handle f = h5::open_file(path, comm.get(), false);
    return h5::has_attribute(f, "status") ? h5::read_string_attribute(f, "status") : std::string("unknown");
  };
  if (exists_on_root(comm, control.checkpoint)) return "checkpointed";
  if (exists_on_root(comm, control.output)) return status_of(control.output);
  if (exists_on_root(comm, control.partial)) return status_of(control.partial);
  return "absent";
}

bool prepare_run(const Comm& comm, const DeckSchema& schema, const RunRequest& request, bool status_only,
                 const std::string& command, std::optional<RunSetup>& setup) {
  ResolvedRun resolved = resolve_run(comm, schema, request, command);
  RunControl control = run_control_from_deck(resolved.deck);
  control.force = request.force;
  control.resume = request.resume;
  if (status_only) {
    comm.print(run_status(comm, control));
    return false;
  }
  set_blas_threads(static_cast<int>(resolved.deck.get_int("run.blas_threads")));
  setup.emplace(RunSetup{std::move(resolved), control});
  return true;
}

std::string Simulation::run(const RunSetup& setup) {
  std::vector<double> x(static_cast<std::size_t>(partition_.count(comm_.rank())) * info_.d);
  if (setup.resolved.checkpoint) return resume(setup.resolved.checkpoint_path, *setup.resolved.checkpoint, x);
  initial_tokens(setup.resolved.deck, comm_, partition_, info_.d, x);
  return start(x);
}

Simulation::Simulation(const Comm& comm, const RunControl& control, const RunInfo& info, std::int64_t layers,
                       const Partition& partition, Dynamics& dynamics, PairStatisticsPass& statistics)
    : comm_(comm), control_(control), info_(info), layers_(layers), partition_(partition), dynamics_(dynamics),
      statistics_(statistics) {}

void add_study_run_keys(DeckSchema& s, const std::string& default_output) {
  s.add_text("run.output", default_output, "result file (HDF5)");
  s.add_int("run.seed", 1, "seed; replica r uses its own streams derived from it", 0);
  s.add_int("run.tile", 256, "rows per BLAS tile of the attention and pair passes", 1, 1 << 16);
  s.add_real("run.progress_interval", 10.0, "seconds between progress lines (replicas of rank 0)", 0.0);
}

void complete_study(const Comm& comm, const RunControl& control, RunFile& file) {
  file.set_status("complete");
  file.close();
  finish_output(comm, control);
  comm.print("wrote '" + control.output + "'");
}

RunControl study_control(const std::string& output, const RunRequest& request) {
  if (output.empty()) throw InputError("deck key 'run.output' is empty");
  RunControl c;
  c.output = output;
  c.partial = output + ".part";
  c.checkpoint = default_checkpoint(output);
  c.force = request.force;
  c.resume = request.resume;
  return c;
}

bool prepare_output(const Comm& comm, const RunControl& control) {
  const fs::path dir = fs::path(control.output).parent_path();
  require_all(comm.get(), !comm.root() || dir.empty() || fs::is_directory(dir),
              "output directory '" + dir.string() + "' does not exist");
  if (!control.force) {
    if (control.resume && exists_on_root(comm, control.output)) {
      // Resubmitting a finished job (a sweep run again) is not an error.
      comm.print("'" + control.output + "' exists and there is no checkpoint: nothing to do");
      return false;
    }
    require_all(comm.get(), !exists_on_root(comm, control.output),
                "output '" + control.output + "' exists (pass --force to replace it)");
    require_all(comm.get(), !exists_on_root(comm, control.checkpoint),
                "checkpoint '" + control.checkpoint + "' exists: continue it with --resume, or pass --force");
    // With --resume, a partial file without a checkpoint (killed before its first one) starts again.
    require_all(comm.get(), control.resume || !exists_on_root(comm, control.partial),
                "'" + control.partial + "' exists (an interrupted run?): continue with --resume, or pass --force");
  }
  if (control.force && exists_on_root(comm, control.checkpoint)) remove_collectively(control.checkpoint, comm.get());
  return true;
}

void finish_output(const Comm& comm, const RunControl& control) {
  rename_collectively(control.partial, control.output, comm.get());
  if (exists_on_root(comm, control.checkpoint)) remove_collectively(control.checkpoint, comm.get());
}

std::string Simulation::start(std::vector<double>& x) {
  if (!prepare_output(comm_, control_)) return "complete";
  run_file_.emplace(RunFile::create(control_.partial, comm_.get(), info_));
  run_file_->write_diagnostics_constant("cosine_bin_edges", statistics_.bin_edges());
  run_file_->set_diagnostics_attribute("beta", control_.beta);
  record(0, x);
  return loop(0, x);
}

std::string Simulation::resume(const std::string& checkpoint_path, const CheckpointInfo& info, std::vector<double>& x) {
  if (info.n != partition_.n_global || info.d != info_.d)
    throw InputError("checkpoint '" + checkpoint_path + "' holds " + std::to_string(info.n) + " x " +
                     std::to_string(info.d) + " tokens, the deck asks for " + std::to_string(partition_.n_global) +
                     " x " + std::to_string(info_.d));
  if (info.layer >= layers_) throw InputError("checkpoint '" + checkpoint_path + "' is already at the last layer");
  read_checkpoint_tokens(checkpoint_path, comm_.get(), partition_, info_.d, x.data());
  run_file_.emplace(RunFile::reopen(info.run_file, comm_.get(), info.diagnostics_rows, info.snapshot_rows));
  comm_.print("restart from '" + checkpoint_path + "' at layer " + std::to_string(info.layer) + "/" +
              std::to_string(layers_) + " (written on " + std::to_string(info.ranks) + " ranks)");
  return loop(info.layer, x);
}

void Simulation::record(std::int64_t layer, const std::vector<double>& x) {
  const bool last = (layer == layers_);
  if (layer % control_.diagnostics_every == 0 || last) {
    const PairStatistics s = statistics_.compute(x.data());
    DiagnosticsRow row;
    row.layer = layer;
    row.time = dynamics_.time(layer);
    row.scalars = {{"energy", s.energy},
                   {"order_parameter", s.order_parameter},
                   {"mean_cosine", s.mean_cosine},
                   {"min_cosine", s.min_cosine}};
    row.counts = {{"cosine_histogram", s.histogram}};
    run_file_->write_diagnostics(row);
  }
  const bool snap = control_.snapshot_every > 0 ? layer % control_.snapshot_every == 0 : layer == 0;
  if (snap || last)
    run_file_->write_snapshot(layer, dynamics_.time(layer), x.data(), partition_.begin(comm_.rank()),
                              partition_.count(comm_.rank()));
}

void Simulation::checkpoint(std::int64_t layer, const std::vector<double>& x) {
  run_file_->flush();  // the rows the checkpoint counts are on disk before it exists
  CheckpointInfo info;
  info.command = info_.command;
  info.deck_text = info_.deck_text;
  info.run_file = control_.partial;
  info.layer = layer;
  info.n = partition_.n_global;
  info.d = info_.d;
  info.diagnostics_rows = run_file_->diagnostics_rows();
  info.snapshot_rows = run_file_->snapshot_rows();
  info.ranks = comm_.size();
  write_checkpoint(control_.checkpoint, comm_.get(), info, x.data(), partition_);
}

std::string Simulation::loop(std::int64_t first_layer, std::vector<double>& x) {
  install_checkpoint_signal_handlers();
  Progress progress(comm_, first_layer, layers_, control_.progress_interval, dynamics_.work_per_step(),
                    dynamics_.work_unit());
  for (std::int64_t l = first_layer; l < layers_; ++l) {
    dynamics_.step(l, x.data());
    const std::int64_t layer = l + 1;
    // One collective check per layer: NaN on any rank, a checkpoint signal on any rank.
    int local[2] = {any_nonfinite(x) ? 1 : 0, checkpoint_signal_received() ? 1 : 0}, global[2];
    TOKDYN_MPI_CHECK(MPI_Allreduce(local, global, 2, MPI_INT, MPI_MAX, comm_.get()));
    if (global[0]) {
      const std::string message = "NaN or Inf in the token state after layer " + std::to_string(layer) +
                                  " (reduce model.T/model.L, attention.beta or the weight scales)";
      run_file_->set_attribute("error", message);
      run_file_->set_status("failed");
      run_file_->close();
      throw InputError(message);
    }
    record(layer, x);
    progress.update(layer);
    const bool stop = global[1] || layer == control_.stop_at_layer;
    if (layer < layers_ && (stop || (control_.checkpoint_every > 0 && layer % control_.checkpoint_every == 0)))
      checkpoint(layer, x);
    if (stop && layer < layers_) {
      run_file_->set_status("checkpointed");
      run_file_->close();
      comm_.print("checkpointed at layer " + std::to_string(layer) + "/" + std::to_string(layers_) + " to '" +
                  control_.checkpoint + "'" + (global[1] ? " (signal)" : "") + "; continue with --resume");
      return "checkpointed";
    }
  }
  run_file_->set_status("complete");
  run_file_->close();
  finish_output(comm_, control_);
  comm_.print("complete: '" + control_.output + "' (" + format_seconds(progress.elapsed()) + ")");
  return "complete";
}

}  // namespace tokdyn
