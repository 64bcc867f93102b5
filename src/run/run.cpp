#include "tokdyn/run/run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/console_log.hpp"
#include "tokdyn/core/errors/error_exit.hpp"
#include "tokdyn/core/errors/fault.hpp"
#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/core/console/progress.hpp"
#include "tokdyn/core/console/signals.hpp"
#include "tokdyn/run/keys.hpp"

namespace fs = std::filesystem;

namespace tokdyn {
namespace {

// Rank 0 looks at the file system and every rank acts on its answer.
bool exists_on_root(const Comm& comm, const std::string& path) {
  int e = 0;
  if (comm.root()) {
    std::error_code ec;
    e = fs::exists(path, ec) ? 1 : 0;
  }
  TOKDYN_MPI_CHECK(MPI_Bcast(&e, 1, MPI_INT, 0, comm.get()));
  return e != 0;
}

double size_on_root(const Comm& comm, const std::string& path) {
  double s = 0;
  if (comm.root()) {
    std::error_code ec;
    const auto n = fs::file_size(path, ec);
    s = ec ? 0.0 : static_cast<double>(n);
  }
  TOKDYN_MPI_CHECK(MPI_Bcast(&s, 1, MPI_DOUBLE, 0, comm.get()));
  return s;
}

// 128 random bits from rank 0 as hex: tells one run from another (its files, its checkpoints, its lock).
std::string new_run_id(const Comm& comm) {
  char id[33] = {0};
  if (comm.root()) {
    unsigned char bytes[16] = {0};
    const int fd = ::open("/dev/urandom", O_RDONLY);
    const bool ok = fd >= 0 && ::read(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes);
    if (fd >= 0) ::close(fd);
    if (!ok) {  // no /dev/urandom: time and pid still tell runs apart
      const unsigned long long t = static_cast<unsigned long long>(std::time(nullptr)) ^ (static_cast<unsigned long long>(::getpid()) << 32);
      for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(t >> (8 * i));
    }
    for (int i = 0; i < 16; ++i) std::snprintf(id + 2 * i, 3, "%02x", bytes[i]);
  }
  TOKDYN_MPI_CHECK(MPI_Bcast(id, sizeof id, MPI_CHAR, 0, comm.get()));
  return id;
}

std::string now_text() {
  char buf[32] = {0};
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// "deck key 'K' differs from WHAT (A here, B there)", or "" when the decks agree on every key that fixes results.
std::string first_difference(const Deck& here, const Deck& there, const std::string& what) {
  const auto diff = here.differences(there);
  if (diff.empty()) return "";
  const std::string& k = diff.front();
  return "deck key '" + k + "' differs from " + what + " (" + here.get_text(k) + " here, " + there.get_text(k) + " there)";
}

// "model.L differs (200 here, 400 there)" for --status, or "".
std::string differing_key(const Deck& here, const Deck& there) {
  const auto diff = here.differences(there);
  if (diff.empty()) return "";
  const std::string& k = diff.front();
  return "deck key " + k + " differs (" + here.get_text(k) + " here, " + there.get_text(k) + " there)";
}

// A checkpoint belongs to this run when it names this run file, or when the run file and the checkpoint
// moved together (the same relative place, as when a run directory is moved or copied whole).
bool same_run(const CheckpointIdentity& id, const std::string& checkpoint_path, const std::string& output) {
  const std::string here = absolute_path(output);
  if (id.output == here) return true;
  const fs::path then = fs::path(id.output).lexically_relative(fs::path(id.checkpoint).parent_path());
  const fs::path now = fs::path(here).lexically_relative(fs::path(absolute_path(checkpoint_path)).parent_path());
  return !then.empty() && then == now;
}

// What a run file (complete or partial) says (status, error, run id, deck). Collective.
RunFileHeader read_facts(const Comm& comm, const std::string& path) {
  h5::Handle file = h5::open_input_file(path, comm.get(), "run file");
  return read_run_file_header(file);
}

}  // namespace

std::string step_of(std::int64_t step, std::int64_t steps) {
  return std::to_string(step) + (steps >= kOpenEnded ? " (the length is planned as the run goes)" : "/" + std::to_string(steps));
}

std::string RunState::nonfinite_message(std::int64_t step) const {
  return "NaN or Inf in the state after " + unit() + " " + std::to_string(step);
}

Run::Run(const Comm& comm, const DeckSchema& schema, const RunRequest& request, const std::string& command,
         const std::string& output_key)
    : comm_(comm), command_(command), output_key_(output_key) {
  resolve(schema, request, command);
  if (!done_ && deck_->has("run.blas_threads")) set_blas_threads(static_cast<int>(deck_->get_int("run.blas_threads")));
}

Run::~Run() {
  if (cleanup_ >= 0) remove_exit_cleanup(cleanup_);
}

void Run::resolve(const DeckSchema& schema, const RunRequest& request, const std::string& command) {
  force_ = request.force;
  Deck given = request.deck_text.empty()
                   ? Deck::parse(schema, request.deck_path, request.overrides)
                   : Deck::from_text(schema, request.deck_text, request.deck_origin).with_overrides(request.overrides);
  paths_ = run_paths(given, output_key_);
  if (request.status) {
    comm_.print(status_line(schema, given, command));
    done_ = true;
    return;
  }
  // The checkpoint this run continues: --restart FILE, or with --resume the run's own when it exists.
  std::string ckpt = request.restart;
  if (ckpt.empty() && request.resume && exists_on_root(comm_, paths_.checkpoint)) ckpt = paths_.checkpoint;
  std::unique_ptr<CheckpointReader> reader;
  std::unique_ptr<Deck> deck;
  if (!ckpt.empty()) {
    reader = std::make_unique<CheckpointReader>(ckpt, comm_.get());
    const CheckpointIdentity& id = reader->identity();
    if (id.command != command)
      throw InputError("checkpoint '" + ckpt + "' belongs to command '" + id.command + "', not '" + command + "'");
    const Deck stored = Deck::from_text(schema, id.deck, ckpt);
    // Without a deck file the run is the checkpoint's, with the command line's overrides on top.
    deck = std::make_unique<Deck>(request.deck_path.empty() ? stored.with_overrides(request.overrides) : given);
    const std::string diff = first_difference(*deck, stored, "checkpoint '" + ckpt + "'");
    if (!diff.empty()) throw InputError(diff);
    paths_ = run_paths(*deck, output_key_);
    if (!same_run(id, ckpt, paths_.output))
      throw InputError("checkpoint '" + ckpt + "' belongs to the run of '" + id.output + "', not '" +
                       absolute_path(paths_.output) + "' (continue it from its own directory, or give that run.output)");
  } else {
    deck = std::make_unique<Deck>(given);
  }
  check_run_files(comm_, *deck, request.deck_path, paths_, output_key_);
  // Every input is a regular file; a continuation (or a rerun) reads the same files as the run it continues.
  inputs_ = input_files(comm_, *deck, !request.dry_run);
  if (reader) {
    const std::string changed = changed_input(parse_inputs(reader->identity().inputs, ckpt), inputs_,
                                              "the checkpoint '" + ckpt + "'");
    if (!changed.empty()) throw InputError(changed);
  }
  if (!request.inputs_record.empty()) {
    const std::string changed =
        changed_input(parse_inputs(request.inputs_record, request.inputs_origin), inputs_, request.inputs_origin);
    if (!changed.empty()) throw InputError(changed);
  }
  // A dry run makes every check the run makes (files, locks, the output's state; the study adds memory) and
  // changes nothing: it exits as the run would.
  dry_run_ = request.dry_run;
  if (!request.restart.empty())
    for (const std::string& mine : {paths_.output, paths_.partial})
      require_all(comm_.get(), absolute_path(mine) != absolute_path(request.restart),
                  "--restart '" + request.restart + "' is the same file as the run's output '" + mine + "'");
  run_id_ = reader ? reader->identity().run_id : new_run_id(comm_);
  if (dry_run_) {
    RunLock::check(comm_, paths_.lock);
    if (!paths_.checkpoint.empty()) RunLock::check(comm_, paths_.checkpoint + ".lock", "checkpoint");
  } else {
    lock_.acquire(comm_, paths_.lock, run_id_);
  }
  // The checkpoint has a lock of its own: a run whose run.checkpoint names a running run's checkpoint
  // (or its output: the same lock) is refused instead of deleting it.
  if (!paths_.checkpoint.empty() && !dry_run_) {
    try {
      checkpoint_lock_.acquire(comm_, paths_.checkpoint + ".lock", run_id_, "checkpoint");
    } catch (...) {
      lock_.release();
      throw;
    }
  }

  const bool output_exists = exists_on_root(comm_, paths_.output);
  if (reader) {
    if (output_exists) {
      const RunFileHeader out = read_facts(comm_, paths_.output);
      if (out.run_id == run_id_) {
        // The run finished after this checkpoint (its removal was cut short): nothing is left to do.
        if (absolute_path(ckpt) == absolute_path(paths_.checkpoint) && !dry_run_)
          remove_collectively(paths_.checkpoint, comm_.get());
        comm_.print("'" + paths_.output + "' is this run, finished: nothing to do");
        release_locks();
        done_ = true;
        return;
      }
      require_all(comm_.get(), force_,
                  "output '" + paths_.output + "' exists and holds another run (run id " + out.run_id +
                      "): pass --force to replace it when this one completes");
    }
    checkpoint_ = std::move(reader);
    checkpoint_path_ = ckpt;
  } else if (request.resume && output_exists) {
    const RunFileHeader out = read_facts(comm_, paths_.output);
    const Deck stored = Deck::from_text(schema, out.deck, paths_.output);
    const std::string diff = first_difference(*deck, stored, "the finished run '" + paths_.output + "'");
    if (diff.empty()) {
      // Resubmitting a finished job (a sweep run again) is not an error.
      comm_.print("'" + paths_.output + "' is complete with this deck: nothing to do");
      release_locks();
      done_ = true;
      return;
    }
    require_all(comm_.get(), force_, diff + ": pass --force to replace it, or choose another run.output");
  } else if (!request.resume) {
    if (!force_) {
      require_all(comm_.get(), !output_exists, "output '" + paths_.output + "' exists (pass --force to replace it)");
      require_all(comm_.get(), !exists_on_root(comm_, paths_.checkpoint),
                  "checkpoint '" + paths_.checkpoint + "' exists: continue it with --resume, or pass --force");
      require_all(comm_.get(), !exists_on_root(comm_, paths_.partial),
                  "'" + paths_.partial + "' exists (an interrupted run?): continue with --resume, or pass --force");
    }
  }
  if (!checkpoint_) {
    // A fresh start: a checkpoint of an earlier run at this place would be mistaken for this run's.
    if (exists_on_root(comm_, paths_.checkpoint) && !dry_run_) remove_collectively(paths_.checkpoint, comm_.get());
    if (request.resume && exists_on_root(comm_, paths_.partial))
      comm_.print("'" + paths_.partial + "' has no checkpoint: starting the run again");
  }
  deck_ = std::move(deck);
  if (dry_run_) return;
  watch_directory(directory_of(paths_.output));
  watch_directory(directory_of(paths_.checkpoint));
  if (comm_.root())
    cleanup_ = add_exit_cleanup([p = paths_] {
      std::remove((p.checkpoint + ".tmp").c_str());
      std::remove((p.partial + ".tmp").c_str());
    });
}

std::string Run::status_line(const DeckSchema& schema, const Deck& given, const std::string& command) const {
  bool alive = false;
  std::string holder;
  if (comm_.root()) holder = RunLock::describe(paths_.lock, alive);
  int live = alive ? 1 : 0;
  TOKDYN_MPI_CHECK(MPI_Bcast(&live, 1, MPI_INT, 0, comm_.get()));
  if (live) {
    // Only rank 0 read the lock: its text is what every rank prints (rank 0 prints).
    return "running: " + holder + "; --resume and --force are refused while it runs";
  }
  auto against = [&](const std::string& deck_text, const std::string& origin) {
    return differing_key(given, Deck::from_text(schema, deck_text, origin));
  };
  const bool output_exists = exists_on_root(comm_, paths_.output);
  if (exists_on_root(comm_, paths_.checkpoint)) {
    std::unique_ptr<CheckpointReader> reader;
    try {  // every rank reads the same file and fails alike
      reader = std::make_unique<CheckpointReader>(paths_.checkpoint, comm_.get());
    } catch (const InputError& e) {
      return "damaged: " + std::string(e.what()) + "; --resume refuses it; --force starts the run again";
    }
    const CheckpointIdentity& id = reader->identity();
    if (output_exists && read_facts(comm_, paths_.output).run_id == id.run_id)
      return "complete: '" + paths_.output + "' (and a leftover checkpoint of it); --resume has nothing to do";
    std::string s = "checkpointed: " + id.unit + " " + step_of(id.step, id.steps) + " in '" +
                    paths_.checkpoint + "' (run id " + id.run_id + ", " + std::to_string(id.ranks) + " ranks, written " +
                    id.written + ")";
    if (id.command != command) return s + "; it is a checkpoint of command '" + id.command + "': --resume refuses it";
    const std::string diff = against(id.deck, paths_.checkpoint);
    if (!same_run(id, paths_.checkpoint, paths_.output))
      return s + "; it belongs to the run of '" + id.output + "': --resume refuses it";
    return diff.empty() ? s + "; --resume continues it" : s + "; " + diff + ": --resume refuses; --force starts again";
  }
  if (output_exists) {
    const RunFileHeader out = read_facts(comm_, paths_.output);
    const std::string diff = against(out.deck, paths_.output);
    std::string s = "complete: '" + paths_.output + "' (run id " + out.run_id + ")";
    if (!diff.empty()) return s + "; " + diff + ": --resume refuses; --force replaces it";
    return s + "; --resume has nothing to do";
  }
  if (exists_on_root(comm_, paths_.partial)) {
    const RunFileHeader part = read_facts(comm_, paths_.partial);
    if (part.status == "failed") return "failed: " + part.error + "; --resume starts the run again";
    return "interrupted: '" + paths_.partial + "' (status " + part.status +
           ") has no checkpoint; --resume starts the run again";
  }
  return "absent: no run file or checkpoint for '" + paths_.output + "'; --resume starts it";
}

namespace {

// When the run would checkpoint, from its deck (the step loop's rules in Run::execute).
std::string checkpoint_plan(const Deck& deck) {
  const std::int64_t every = deck.get_int("run.checkpoint_every"), stop_at = deck.get_int("run.stop_at");
  const double interval = deck.get_real("run.checkpoint_interval");
  std::string when;
  if (every > 0) when += "every " + std::to_string(every) + " steps, ";
  if (interval > 0) when += "every " + format_seconds(interval) + " of run time, ";
  if (stop_at > 0) when += "at step " + std::to_string(stop_at) + " where it stops (run.stop_at), ";
  return "(" + when + "on SIGTERM/SIGINT/SIGUSR1)";
}

}  // namespace

void Run::print_dry_run(const MemoryEstimate& estimate, const std::string& banner, const std::string& plan) const {
  const double limit = memory_per_rank(comm_, deck_->has("run.max_memory") ? max_memory_from_deck(*deck_) : 0.0);
  const MemoryEstimate need = with_process(estimate);
  double worst = need.total();
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, comm_.get()));
  comm_.print("dry run of tokdyn " + command_ + " (nothing is written)\n\n# resolved deck\n" + deck_->resolved_text() +
              "\n# memory per rank: about " + format_bytes(worst) + " of " + format_bytes(limit) + " available" +
              (worst > limit ? " (the run would be refused)" : "") + "; largest: " + need.largest() + "\n# run: " + banner +
              " on " + std::to_string(comm_.size()) + (comm_.size() == 1 ? " rank" : " ranks") +
              (plan.empty() ? "" : "\n# work: " + plan) + "\n# writes '" + paths_.output + "' (as '" + paths_.partial +
              "' until complete), checkpoints '" + paths_.checkpoint + "' " + checkpoint_plan(*deck_));
}

void Run::require_memory(const MemoryEstimate& estimate) {
  estimate_ = estimate.total() + peak_memory();
  tokdyn::require_memory(comm_, estimate, deck_->has("run.max_memory") ? max_memory_from_deck(*deck_) : 0.0);
}

int Run::execute(RunState& state, RunInfo info) {
  const Deck& deck = *deck_;
  steps_ = state.steps();
  unit_ = state.unit();
  state_bytes_ = state.state_bytes();
  info.command = command_;
  info.deck_text = deck.resolved_text();
  info.deck = &deck;
  info.run_id = run_id_;
  info.inputs = inputs_text(inputs_);
  const std::int64_t every = deck.get_int("run.checkpoint_every"), stop_at = deck.get_int("run.stop_at");
  checkpoint_seconds_ = deck.get_real("run.checkpoint_interval");

  if (comm_.root())
    open_console_log(log_path(paths_.output),
                     "== tokdyn " + command_ + " " + now_text() + (checkpoint_ ? " (continued)" : "") + " ==");
  push_run_stage(command_);
  reset_phase_totals();
  std::optional<RunFile> file;
  std::int64_t step = 0, saved = -1;  // saved: the step of the checkpoint on disk
  const Progress::Clock::time_point started = Progress::Clock::now();  // begin() may already compute step 1's forces
  if (checkpoint_) {
    const CheckpointIdentity& id = checkpoint_->identity();
    if (id.steps != steps_ || id.unit != unit_)
      throw InputError("checkpoint '" + checkpoint_path_ + "' holds a run of " + std::to_string(id.steps) + " " + id.unit +
                       "s, this deck makes " + std::to_string(steps_) + " " + unit_ + "s");
    checkpoint_->restore_run_file(paths_.partial);
    file.emplace(RunFile::reopen(paths_.partial, comm_.get()));
    state.restore(*checkpoint_, *file);
    step = saved = id.step;
    std::string ranks = "written on " + std::to_string(id.ranks) + " rank" + (id.ranks == 1 ? "" : "s");
    if (id.ranks != comm_.size())
      ranks += ", continued on " + std::to_string(comm_.size()) + ": equal to round-off, not bit for bit";
    comm_.print("restart from '" + checkpoint_path_ + "' at " + unit_ + " " + step_of(step, steps_) + " (" + ranks + ")");
    checkpoint_.reset();
  } else {
    state.start();
    file.emplace(RunFile::create(paths_.partial, comm_.get(), info));
    state.begin(*file);
  }
  const std::int64_t start = step;
  last_checkpoint_time_ = MPI_Wtime();
  Progress progress(comm_, start, state.planned_steps(), deck.get_real("run.progress_interval"), state.work_per_step(),
                    state.work_unit(), unit_, started);
  std::string observation;
  for (;;) {
    // One collective poll per step: the state or a recorded value not finite, a signal on any rank, and
    // rank 0's clock asking for a checkpoint.
    int flags[4] = {state.finite() ? 0 : 1, observation.empty() ? 0 : 1, stop_signal_received() ? last_signal() : 0,
                    comm_.root() && checkpoint_seconds_ > 0 && MPI_Wtime() - last_checkpoint_time_ >= checkpoint_seconds_};
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, flags, 4, MPI_INT, MPI_MAX, comm_.get()));
    if (flags[0]) fail(state, *file, state.nonfinite_message(step));
    if (flags[1]) {
      try {
        require_all(comm_.get(), observation.empty(), observation);
      } catch (const InputError& e) {
        fail(state, *file, e.what());
      }
    }
    if (step >= steps_ || step >= state.planned_steps()) break;
    const bool stop = flags[2] != 0 || (stop_at > 0 && step == stop_at && step > start);
    const bool due = flags[3] != 0 || (every > 0 && step % every == 0 && step > start);
    if ((stop || due) && step != saved) {
      checkpoint(state, *file, step);
      saved = step;
    }
    if (stop) {
      state.release(*file);
      file->set_status("checkpointed");
      file->close();
      release_locks();
      pop_run_stage();
      comm_.print("checkpointed at " + unit_ + " " + step_of(step, state.planned_steps()) + " to '" +
                  paths_.checkpoint + "'" + (flags[2] ? std::string(" (signal) after ") + signal_name(flags[2]) : "") +
                  "; continue with --resume");
      return 0;
    }
    try {
      const std::int64_t before = step;
      step = state.advance(step);
      // A step stopped by a signal (a long record): the next poll sees the signal and checkpoints it.
      if (step == before) {
        if (!stop_requested(comm_.get()))  // collective: every rank got the same step back
          throw SystemError("the state made no progress at " + unit_ + " " + std::to_string(step));
        continue;
      }
      inject_fault(comm_.rank(), step, unit_);
      observation = state.observe(step, *file);
      const std::string record = state.record_line();
      if (!record.empty() && progress.due(step))
        comm_.print(record);
      else if (!record.empty())
        comm_.log(record);
    } catch (const InputError& e) {
      // An error every rank raised at once (an input the step could not use): the partial file says so.
      if (e.agreed()) fail(state, *file, e.what());
      throw;
    }
    progress.update(step, state.planned_steps());
  }
  try {
    state.finish(*file);
  } catch (const InputError& e) {
    if (e.agreed()) fail(state, *file, e.what());
    throw;
  }
  state.release(*file);
  file->set_status("complete");
  file->close();
  finish_files();
  double peak = peak_memory();
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &peak, 1, MPI_DOUBLE, MPI_MAX, comm_.get()));
  const double elapsed = progress.elapsed(), done = static_cast<double>(step - start);
  char line[512];
  std::snprintf(line, sizeof line, "complete: '%s' (%lld %ss in %s%s; %lld checkpoint%s; peak memory %s per rank%s)",
                paths_.output.c_str(), static_cast<long long>(done), unit_.c_str(), format_seconds(elapsed).c_str(),
                start > 0 ? (", resumed at " + unit_ + " " + std::to_string(start)).c_str() : "",
                static_cast<long long>(checkpoints_), checkpoints_ == 1 ? "" : "s", format_bytes(peak).c_str(),
                estimate_ > 0 ? (", estimated " + format_bytes(estimate_)).c_str() : "");
  comm_.print(line);
  print_summary(state, elapsed, done, peak);
  pop_run_stage();
  close_console_log();
  return 0;
}

void Run::print_summary(const RunState& state, double elapsed, double steps, double peak) const {
  // LAMMPS's "loop time": where the time went, per phase, mean and max over ranks (exclusive times).
  const PhaseTotals mine = phase_totals();
  std::vector<double> sum(mine.seconds.begin(), mine.seconds.end()), max = sum;
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sum.data(), kPhases, MPI_DOUBLE, MPI_SUM, comm_.get()));
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, max.data(), kPhases, MPI_DOUBLE, MPI_MAX, comm_.get()));
  const double ranks = comm_.size();
  char line[256];
  const double rate = elapsed > 0 ? steps / elapsed : 0, work = state.work_per_step() * steps;
  // The work rate too when the work is not the steps themselves (pairs, token-layers; not markov's records).
  char work_rate[96] = "";
  if (state.work_unit() != unit_ + "s")
    std::snprintf(work_rate, sizeof work_rate, ", %.3g %s/s", elapsed > 0 ? work / elapsed : 0.0,
                  state.work_unit().c_str());
  std::snprintf(line, sizeof line, "loop time %s on %d rank%s for %.0f %ss: %.3g %ss/s%s",
                format_seconds(elapsed).c_str(), comm_.size(), comm_.size() == 1 ? "" : "s", steps, unit_.c_str(), rate,
                unit_.c_str(), work_rate);
  comm_.print(line);
  comm_.print("  phase         mean s     max s   %time      calls");
  double accounted = 0;
  for (int p = 0; p < kPhases; ++p) {
    if (mine.calls[p] == 0 && max[p] == 0) continue;
    const double mean = sum[p] / ranks;
    accounted += mean;
    std::snprintf(line, sizeof line, "  %-12s %7.3f  %8.3f  %6.1f  %9lld", phase_name(static_cast<Phase>(p)), mean, max[p],
                  elapsed > 0 ? 100 * mean / elapsed : 0.0, static_cast<long long>(mine.calls[p]));
    comm_.print(line);
  }
  const double other = std::max(0.0, elapsed - accounted);
  std::snprintf(line, sizeof line, "  %-12s %7.3f  %8s  %6.1f", "other", other, "", elapsed > 0 ? 100 * other / elapsed : 0.0);
  comm_.print(line);
  std::snprintf(line, sizeof line, "peak memory %s per rank (max over ranks)%s", format_bytes(peak).c_str(),
                estimate_ > 0 ? (", estimated " + format_bytes(estimate_)).c_str() : "");
  comm_.print(line);
  for (const std::string& s : state.summary()) comm_.print(s);
  comm_.print("log: '" + log_path(paths_.output) + "'");
}

void Run::checkpoint(RunState& state, RunFile& file, std::int64_t step) {
  PhaseScope timed(Phase::checkpoint);
  file.flush();  // the run file on disk is whole before its bytes go into the checkpoint
  // Room for the new checkpoint next to the old one (which stays until the new one is complete).
  const double part = size_on_root(comm_, paths_.partial);
  const double need = 1.05 * (part + state_bytes_) + 64.0 * 1024;
  double free = comm_.root() ? free_bytes(directory_of(paths_.checkpoint)) : 0;
  TOKDYN_MPI_CHECK(MPI_Bcast(&free, 1, MPI_DOUBLE, 0, comm_.get()));
  if (free >= 0 && free < need) {
    release_locks();
    throw InputError("no space left on the device of '" + directory_of(paths_.checkpoint) + "' for the checkpoint of " +
                     unit_ + " " + std::to_string(step) + " (it needs about " + format_bytes(need) + ", " +
                     format_bytes(free) + " are free)" +
                     (checkpoints_ > 0 || checkpoint_path_ == paths_.checkpoint
                          ? "; the last checkpoint '" + paths_.checkpoint + "' is intact"
                          : std::string()));
  }
  CheckpointIdentity id;
  id.command = command_;
  id.run_id = run_id_;
  id.output = absolute_path(paths_.output);
  id.checkpoint = absolute_path(paths_.checkpoint);
  id.deck = deck_->resolved_text();
  id.deck_hash = deck_->hash();
  id.unit = unit_;
  id.written = now_text();
  id.step = step;
  id.steps = steps_;
  id.ranks = comm_.size();
  id.inputs = inputs_text(inputs_);
  const std::string tmp = paths_.checkpoint + ".tmp";
  CheckpointWriter out(tmp, comm_.get(), id);
  state.save(out);
  out.run_file(paths_.partial);
  out.close();
  rename_collectively(tmp, paths_.checkpoint, comm_.get());
  ++checkpoints_;
  last_checkpoint_time_ = MPI_Wtime();
}

void Run::fail(RunState& state, RunFile& file, const std::string& message) {
  // Every rank is here (the poll agreed): the partial file says why, collectively.
  state.release(file);
  file.set_attribute("error", message);
  file.set_status("failed");
  file.flush();  // before close: an unwinding may have left datasets open, and then the close fails
  file.close();
  release_locks();
  throw InputError(message, true);
}

void Run::release_locks() {
  checkpoint_lock_.release();
  lock_.release();
}

void Run::finish_files() {
  rename_collectively(paths_.partial, paths_.output, comm_.get());
  if (exists_on_root(comm_, paths_.checkpoint)) remove_collectively(paths_.checkpoint, comm_.get());
  release_locks();
}

void Run::write_once(const std::function<void(const std::string&)>& write) {
  write(paths_.output);
  release_locks();
  comm_.print("wrote '" + paths_.output + "'");
}

}  // namespace tokdyn
