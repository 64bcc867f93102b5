// What a run drives: the state of a long computation, advanced step by step (a layer of a model, a
// round of replicas, a layer's spectrum), observed into the run file, saved into checkpoints and
// restored from them. The token dynamics, both mean-field solvers and every long study implement it;
// the run (run.hpp) does the rest: files, lock, signals, NaN checks, cadence, progress, completion.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/io/checkpoint.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {

// steps() of a run that decides its length as it goes (tokdyn mlmc's adaptive sampling): planned_steps() says
// how many steps its current plan makes.
inline constexpr std::int64_t kOpenEnded = std::int64_t(1) << 62;

// "step/steps", or the step alone for an open-ended run.
std::string step_of(std::int64_t step, std::int64_t steps);

class RunState {
 public:
  virtual ~RunState() = default;
  // Steps of the whole run, and what one is ("layer", "replica"); kOpenEnded for a run that plans as it goes.
  virtual std::int64_t steps() const = 0;
  // The steps the run now plans in all: steps(), or an open-ended run's current plan (the run ends at it).
  virtual std::int64_t planned_steps() const { return steps(); }
  virtual std::string unit() const { return "layer"; }
  // A fresh run, before its run file exists: the initial state from the deck and its input files (an
  // input error then leaves no file behind). Collective.
  virtual void start() {}
  // A fresh run: the study's datasets and constants, and what is recorded at step 0. Collective.
  virtual void begin(RunFile& file) = 0;
  // From `step` to the step returned (step + 1, or further for a round of replicas). Collective.
  virtual std::int64_t advance(std::int64_t step) = 0;
  // What is recorded after `step` (diagnostics rows, snapshots). Collective. Returns "" or, when a
  // recorded value is NaN or Inf, what it is (the run then fails).
  virtual std::string observe(std::int64_t step, RunFile& file) = 0;
  // The line of the last record observed ("record 7/250: t = 14, loss ..."), or "": the run prints it with
  // the progress line, at its cadence, and writes every one to the log.
  virtual std::string record_line() const { return ""; }
  // False when this rank's part of the state holds NaN or Inf (the run agrees over ranks).
  virtual bool finite() const = 0;
  // The message of a state that is not finite after `step`.
  virtual std::string nonfinite_message(std::int64_t step) const;
  // Checkpoints: everything advance() needs to go on from the current step, bit for bit. Collective.
  virtual void save(CheckpointWriter& out) const = 0;
  // From a checkpoint; `file` is the run file restored with it (its series hold the rows up to there).
  virtual void restore(const CheckpointReader& in, RunFile& file) = 0;
  // Lets go of every dataset of the run file it holds, before the run closes the file. Collective.
  virtual void release(RunFile& file) {}
  // After the last step: results of the whole run (fits, summaries) into the file, summary lines. Collective.
  virtual void finish(RunFile& file) {}
  // Throughput of the progress line: work per step and its unit ("pairs").
  virtual double work_per_step() const { return 1; }
  virtual std::string work_unit() const { return unit() + "s"; }
  // Lines for the run's closing summary: the key observables at the end ("E_beta 0.31 at layer 200").
  virtual std::vector<std::string> summary() const { return {}; }
  // Bytes of state a checkpoint adds to the run file, over all ranks (for the free-space check).
  virtual double state_bytes() const { return 0; }
};

}  // namespace tokdyn
