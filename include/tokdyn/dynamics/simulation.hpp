// The run driver shared by every time-stepping command: the layer loop with diagnostics, snapshots,
// checkpoints (every c layers, on SIGTERM/SIGUSR1, at run.stop_at_layer), progress, the NaN check,
// and the life of the run file (PATH.part while unfinished, renamed to PATH when complete).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tokdyn/core/comm.hpp"
#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/partition.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/dynamics/dynamics.hpp"
#include "tokdyn/io/checkpoint.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {

// Keys of [run] and [diagnostics], shared by every command that runs a simulation.
void add_run_keys(DeckSchema& schema);
// [model] N, d, L (layers or time steps), T.
void add_model_keys(DeckSchema& schema);

struct RunControl {
  std::string output, partial, checkpoint;
  std::int64_t diagnostics_every = 1, snapshot_every = 0, checkpoint_every = 0, stop_at_layer = 0;
  double progress_interval = 10;
  int bins = 50, tile = 256;
  double beta = 1;  // of E_beta
  bool force = false;
  bool resume = false;  // --resume: a finished output is "nothing to do", a partial without checkpoint restarts
};
RunControl run_control_from_deck(const Deck& deck);

// What the user asked for on the command line, beyond deck keys.
struct RunRequest {
  std::string deck_path;
  std::vector<std::string> overrides;
  std::string restart;  // checkpoint to continue (--restart FILE)
  bool resume = false;  // continue from the deck's checkpoint when it exists (--resume)
  bool force = false;   // replace an existing output (--force)
};

// The deck a run uses: fresh from deck + overrides, or the checkpoint's (a deck given with it must
// agree on every key but run-control ones). checkpoint is set when the run continues one.
struct ResolvedRun {
  Deck deck;
  std::optional<CheckpointInfo> checkpoint;
  std::string checkpoint_path;
};
ResolvedRun resolve_run(const Comm& comm, const DeckSchema& schema, const RunRequest& request,
                        const std::string& command);

// [run] keys of a study command over replicas: output (default given), seed, tile, progress interval.
void add_study_run_keys(DeckSchema& schema, const std::string& default_output);

// Run control of a command without a layer loop (a study): its output file and the request's flags.
RunControl study_control(const std::string& output, const RunRequest& request);
// The output's life for commands without a layer loop: refuse to replace files unless --force
// (returns false for --resume on a finished output: nothing to do), and rename OUTPUT.part -> OUTPUT.
bool prepare_output(const Comm& comm, const RunControl& control);
void finish_output(const Comm& comm, const RunControl& control);
// A study's last step: the file marked complete and closed, OUTPUT.part renamed, "wrote 'OUTPUT'" printed.
void complete_study(const Comm& comm, const RunControl& control, RunFile& file);

// Status of the run a deck describes: absent | running | checkpointed | failed | complete.
std::string run_status(const Comm& comm, const RunControl& control);

// The common start of a time-stepping command: the resolved deck and its run control (with --force and
// --resume); sets the BLAS threads. Returns false after printing the status when only --status was asked.
struct RunSetup {
  ResolvedRun resolved;
  RunControl control;
};
bool prepare_run(const Comm& comm, const DeckSchema& schema, const RunRequest& request, bool status_only,
                 const std::string& command, std::optional<RunSetup>& setup);

class Simulation {
 public:
  Simulation(const Comm& comm, const RunControl& control, const RunInfo& info, std::int64_t layers,
             const Partition& partition, Dynamics& dynamics, PairStatisticsPass& statistics);

  // New run from the tokens x (this rank's rows); refuses to replace files unless control.force.
  // Returns the final status: complete or checkpointed.
  std::string start(std::vector<double>& x);
  // Continues a checkpoint: x is filled from it.
  std::string resume(const std::string& checkpoint_path, const CheckpointInfo& info, std::vector<double>& x);
  // Resumes the run's checkpoint if it has one, else starts from the deck's initial tokens.
  std::string run(const RunSetup& setup);

 private:
  std::string loop(std::int64_t first_layer, std::vector<double>& x);
  void record(std::int64_t layer, const std::vector<double>& x);
  void checkpoint(std::int64_t layer, const std::vector<double>& x);

  const Comm& comm_;
  RunControl control_;
  RunInfo info_;
  std::int64_t layers_;
  Partition partition_;
  Dynamics& dynamics_;
  PairStatisticsPass& statistics_;
  std::optional<RunFile> run_file_;
};

}  // namespace tokdyn
