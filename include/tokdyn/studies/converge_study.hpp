// tokdyn converge: the convergence studies of doc/science.md section 6 over replicas, with errors per level
// N, L or m = base 2^j and a fitted log-log slope (bootstrap CI over replicas). converge.study picks one:
//  depth, width: the coupled depth (L) and width (m) studies of section 6.1 (studies/convergence.hpp);
//  tokens: propagation of chaos, section 6.2, Prop 1.2 (studies/chaos.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/studies/chaos.hpp"
#include "tokdyn/studies/convergence.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

class RunFile;

// converge.study = depth | width: replicas of the coupled token systems against their reference.
class ConvergenceStudy : public Study {
 public:
  ConvergenceStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return params_.d; }

 private:
  ConvergenceResult result() const;
  void finish(RunFile& file) const;
  void print_levels(const ConvergenceResult& r) const;
  void write(RunFile& file, const ConvergenceResult& r) const;

  const Comm& comm_;
  bool depth_;  // else width
  AttentionWeightSpec attention_weights_;  // loaded by setup(), after the memory check
  ConvergenceSetup params_;
  DepthStudy depth_study_;
  WidthStudy width_study_;
  std::unique_ptr<ReplicaStudy> state_;
};

// converge.study = tokens: replicas of the N-token systems against the mean-field solution.
class ChaosConvergenceStudy : public Study {
 public:
  ChaosConvergenceStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return d_; }

 private:
  struct Summary;  // sups over time of the distances
  void finish(RunFile& file) const;
  void print_levels(const Summary& s) const;
  void write(RunFile& file, const ChaosResult& r, const Summary& s) const;

  const Comm& comm_;
  ChaosStudy study_;
  int d_;
  std::int64_t layers_;
  double horizon_;
  std::string solver_;           // meanfield.solver of the reference
  std::int64_t reference_size_;  // its cells (grid) or points
  std::int64_t points_;          // meanfield.points
  std::unique_ptr<ChaosReplicas> state_;
};

// The command's study: the one converge.study names, which it forwards to.
class ConvergeStudy : public Study {
 public:
  static DeckSchema schema();
  ConvergeStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override { return study_->memory(); }
  RunState& setup() override { return study_->setup(); }
  std::string banner() const override { return study_->banner(); }
  int width() const override { return study_->width(); }

 private:
  std::unique_ptr<Study> study_;
};

}  // namespace tokdyn
