// The tokens of the discrete transformer or of an SDE scheme as a run state: x [n_local, d], one
// Dynamics step per layer; diagnostics every k layers (E_beta, |mean x|, mean and minimum pairwise cosine,
// the cosine histogram) and token snapshots every k' layers (and always at the first and the last).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/dynamics/dynamics.hpp"
#include "tokdyn/io/run_file.hpp"
#include "tokdyn/run/memory.hpp"
#include "tokdyn/run/state.hpp"

namespace tokdyn {

// The large arrays per rank of a token run (tokens, step buffers, attention weights and ring blocks, the
// pair statistics' travelling block), for the memory check. attention: the attention sub-step, null when off.
void token_memory(MemoryEstimate& memory, const AttentionSpec* attention, const Partition& partition, int d, int tile);

struct TokenCadence {
  std::int64_t every = 1;           // diagnostics every k layers (and at the last)
  std::int64_t snapshot_every = 0;  // snapshots every k' layers; 0: the first and the last only
};

class TokenRun : public RunState {
 public:
  // initial(x) fills this rank's rows [partition.count(rank), d] of a fresh run.
  TokenRun(const Comm& comm, const Partition& partition, int d, std::int64_t layers, Dynamics& dynamics,
           PairStatisticsPass& statistics, const TokenCadence& cadence, double beta,
           std::function<void(std::vector<double>&)> initial);

  std::int64_t steps() const override { return layers_; }
  void start() override { initial_(x_); }
  void begin(RunFile& file) override;
  std::int64_t advance(std::int64_t layer) override;
  std::string observe(std::int64_t layer, RunFile& file) override;
  bool finite() const override;
  std::string nonfinite_message(std::int64_t layer) const override;
  void save(CheckpointWriter& out) const override;
  void restore(const CheckpointReader& in, RunFile& file) override;
  double work_per_step() const override { return dynamics_.work_per_step(); }
  std::vector<std::string> summary() const override;
  std::string work_unit() const override { return dynamics_.work_unit(); }
  double state_bytes() const override { return 8.0 * static_cast<double>(partition_.n_global) * d_; }

 private:
  // A diagnostics row, what is wrong with it ("" when nothing) and its console line.
  struct Record {
    DiagnosticsRow row;
    std::string problem, line;
  };
  // E_beta of the tokens on S^1 or S^2 by its series (energy; energy_stderr: the series' error bound), when
  // pairs are sampled or off and every token is a unit vector; else none. Collective.
  std::optional<PairStatistics> series_energy() const;
  // Layer `layer`'s row from its statistics s and its series energy.
  Record record(std::int64_t layer, PairStatistics s, const std::optional<PairStatistics>& series);
  std::string write(const Record& r, RunFile& file);  // returns r.problem

  const Comm& comm_;
  Partition partition_;
  int d_;
  std::int64_t layers_;
  Dynamics& dynamics_;
  PairStatisticsPass& statistics_;
  TokenCadence cadence_;
  double beta_;
  std::string last_row_;  // the last diagnostics row, for the summary
  std::function<void(std::vector<double>&)> initial_;
  std::vector<double> x_;  // [n_local, d]
  // The row of a recorded layer, formed by its step (advance) and written by the next observe: a checkpoint
  // (taken after observe) never holds one, a resumed run forms it again in the same step.
  std::optional<Record> pending_;
};

}  // namespace tokdyn
