// A mean-field solver as a run state: one layer of the SPDE per step; diagnostics every k layers (mass,
// E_beta, mean token, positivity, sub-steps) and snapshots of the measure every k' layers (and at the
// first and the last) in /meanfield; the checkpoint holds the solver's state rows and its counter.
#pragma once

#include <cstdint>
#include <memory>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/meanfield/meanfield.hpp"
#include "tokdyn/run/state.hpp"

namespace tokdyn {

class MeanFieldRun : public RunState {
 public:
  MeanFieldRun(const Comm& comm, MeanFieldSolver& solver, const std::string& solver_name, std::int64_t layers,
               double horizon, std::int64_t every, std::int64_t snapshot_every, double beta);

  std::int64_t steps() const override { return layers_; }
  void begin(RunFile& file) override;
  std::int64_t advance(std::int64_t layer) override;
  std::string observe(std::int64_t layer, RunFile& file) override;
  // Collective (the solver agrees over its ranks).
  bool finite() const override { return solver_.finite(); }
  std::string nonfinite_message(std::int64_t layer) const override;
  void save(CheckpointWriter& out) const override;
  void restore(const CheckpointReader& in, RunFile& file) override;
  void finish(RunFile& file) override;
  double work_per_step() const override { return static_cast<double>(solver_.size()); }
  std::string work_unit() const override;
  double state_bytes() const override { return 8.0 * rows_.n_global * solver_.state_width(); }

 private:
  bool snapshot_at(std::int64_t layer) const;
  double time_of(std::int64_t layer) const;

  const Comm& comm_;
  MeanFieldSolver& solver_;
  std::string solver_name_;
  std::int64_t layers_, every_, snapshot_every_;
  double horizon_, beta_;
  Partition rows_;  // of the checkpointed state
  std::uint64_t snapshot_row_ = 0;
};

}  // namespace tokdyn
