// The replica loop of every study over independent replicas (convergence, synchronization, Lyapunov
// pairs, propagation of chaos), as a run state: each replica gives one row of a table [replicas, width].
// Round by round, rank r computes replica `done + r` on its own (MPI_COMM_SELF) and the rows of the round
// are gathered on every rank; a distributed study instead computes one replica per step with every rank.
// Either way a row does not depend on the number of ranks, and a checkpoint holds the rows done.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/run/state.hpp"

namespace tokdyn {

class ReplicaStudy : public RunState {
 public:
  ReplicaStudy(const Comm& comm, std::int64_t replicas, std::size_t width, bool distributed = false);

  std::int64_t steps() const override { return replicas_; }
  std::string unit() const override { return "replica"; }
  void begin(RunFile& file) override {}
  std::int64_t advance(std::int64_t done) override;
  std::string observe(std::int64_t step, RunFile& file) override { return ""; }
  bool finite() const override { return finite_; }
  std::string nonfinite_message(std::int64_t step) const override;
  void save(CheckpointWriter& out) const override;
  void restore(const CheckpointReader& in, RunFile& file) override;
  double state_bytes() const override { return 8.0 * static_cast<double>(table_.size()); }
  void finish(RunFile& file) override {
    if (on_finish_) on_finish_(file);
  }

  // What the command does with the whole table once every replica is done (summaries, datasets).
  void on_finish(std::function<void(RunFile&)> f) { on_finish_ = std::move(f); }
  // Rows of the replicas done: [replicas, width], row-major; every rank holds them.
  const std::vector<double>& rows() const { return table_; }
  std::size_t width() const { return width_; }

 protected:
  // Replica `index` (0-based in this run): its row of `width` values. On this rank alone, or (distributed)
  // with every rank, which all get the row.
  virtual void compute(std::int64_t index, double* row) = 0;
  const Comm& comm() const { return comm_; }

 private:
  const Comm& comm_;
  std::int64_t replicas_;
  std::size_t width_;
  bool distributed_;
  bool finite_ = true;
  std::int64_t bad_replica_ = -1;
  std::vector<double> table_;
  std::function<void(RunFile&)> on_finish_;
};

// Computes every replica of a study, without a run file (library calls and tests).
void run_replicas(ReplicaStudy& study);

}  // namespace tokdyn
