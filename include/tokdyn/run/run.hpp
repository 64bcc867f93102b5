// The life of a run, one for every command: its deck (fresh, or the checkpoint's it continues), its
// files (OUTPUT, OUTPUT.part while it is written, the checkpoint, OUTPUT.lock), what --resume, --restart,
// --status and --force ask, the lock, the memory and free-space checks, and the step loop: one collective
// poll per step (NaN or Inf in the state or in what was recorded, SIGTERM/SIGUSR1/SIGINT, checkpoint
// cadence), checkpoints written to a temporary name and renamed, progress, and completion (status
// complete, OUTPUT.part renamed to OUTPUT, the checkpoint and the lock removed, a summary line).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/io/checkpoint.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/inputs.hpp"
#include "tokdyn/run/lock.hpp"
#include "tokdyn/run/memory.hpp"
#include "tokdyn/run/paths.hpp"
#include "tokdyn/run/state.hpp"

namespace tokdyn {

// What the command line asks beyond deck keys.
struct RunRequest {
  std::string deck_path;
  std::vector<std::string> overrides;
  std::string restart;  // --restart FILE: continue that checkpoint
  bool resume = false;  // --resume: continue the run's checkpoint when it has one, else start (or nothing to do)
  bool force = false;   // --force: replace an existing output, checkpoint or partial file (never a running run's)
  bool status = false;  // --status: say what the run's files are and what --resume would do
  bool dry_run = false;  // --dry-run: the resolved deck, the memory estimate and the planned run; nothing written
  bool check = false;    // tokdyn rerun --check: compare the rerun with the file bit for bit
  // A deck given as text (tokdyn rerun: the one stored in a run file) instead of deck_path; origin names it.
  std::string deck_text, deck_origin;
  // The input files (run/inputs.hpp) that run read: this run is refused unless its files are the same.
  std::string inputs_record, inputs_origin;
};

class Run {
 public:
  // Collective. Resolves the deck and the run's files, answers --status, takes the lock, and decides
  // whether the run starts, continues a checkpoint, or has nothing to do (done()). InputError on every
  // rank for anything it refuses.
  // output_key: the deck key of the output (run.output, or a command's own).
  Run(const Comm& comm, const DeckSchema& schema, const RunRequest& request, const std::string& command,
      const std::string& output_key = "run.output");
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // True when there is nothing to run: --status was answered, or --resume found the run finished.
  bool done() const { return done_; }
  // --dry-run: the deck and the run's files were checked, no lock taken; the driver reports and stops.
  bool dry_run() const { return dry_run_; }
  // What --dry-run prints after the resolved deck: the memory estimate against the limit per rank, the run
  // (banner: its parameters) and its files. Collective.
  void print_dry_run(const MemoryEstimate& estimate, const std::string& banner, const std::string& plan) const;
  const Deck& deck() const { return *deck_; }
  const RunPaths& paths() const { return paths_; }
  const Comm& comm() const { return comm_; }
  bool resuming() const { return checkpoint_ != nullptr; }
  void print(const std::string& line) const { comm_.print(line); }
  const std::string& command() const { return command_; }

  // Collective: refuses (InputError) a run whose estimate exceeds what a rank may use; prints it.
  void require_memory(const MemoryEstimate& estimate);

  // Collective: runs `state` from step 0 or from the checkpoint to the end, a stop (run.stop_at) or a
  // signal. info gives the run file's seed and token shape (the run fills in the rest). Returns 0.
  int execute(RunState& state, RunInfo info);

  // A command without steps (tokdyn weights): write(path) writes the output's partial file, which is
  // then renamed to the output. Collective.
  void write_once(const std::function<void(const std::string& partial)>& write);

 private:
  void resolve(const DeckSchema& schema, const RunRequest& request, const std::string& command);
  std::string status_line(const DeckSchema& schema, const Deck& given, const std::string& command) const;
  void checkpoint(RunState& state, RunFile& file, std::int64_t step);
  [[noreturn]] void fail(RunState& state, RunFile& file, const std::string& message);
  void finish_files();
  void release_locks();
  // The run's summary: loop time, time per phase (core/console/phases.hpp), memory, the state's own lines.
  void print_summary(const RunState& state, double elapsed, double steps, double peak) const;

  const Comm& comm_;
  std::string command_, output_key_;
  std::unique_ptr<Deck> deck_;
  RunPaths paths_;
  RunLock lock_, checkpoint_lock_;
  std::unique_ptr<CheckpointReader> checkpoint_;  // the one this run continues
  std::string checkpoint_path_;
  std::string run_id_;
  std::vector<InputFile> inputs_;  // as they are at the start (or continuation) of this run
  bool done_ = false;
  bool dry_run_ = false;
  bool force_ = false;
  // Step loop bookkeeping.
  std::int64_t steps_ = 0, checkpoints_ = 0;
  std::string unit_ = "layer";
  double checkpoint_seconds_ = 0, state_bytes_ = 0, estimate_ = 0;
  double last_checkpoint_time_ = 0;
  int cleanup_ = -1;
};

}  // namespace tokdyn
