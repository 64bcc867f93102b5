// tokdyn synchronize: synchronization by noise (doc/science.md section 6.4, Thm 1.4) over replicas of the discrete
// transformer: E[E_beta(t)] against the bound exp(lambdabar' t) E[E_beta(0)], a fitted decay rate, and
// the last layer's clusters (one, or two antipodal ones for odd fields).
#pragma once

#include <memory>
#include <string>

#include "tokdyn/diagnostics/lyapunov.hpp"
#include "tokdyn/studies/study.hpp"
#include "tokdyn/studies/synchronization.hpp"

namespace tokdyn {

class RunFile;

class SynchronizeStudy : public Study {
 public:
  static DeckSchema schema();
  SynchronizeStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  // Also prints the kernel constants and the notes of the theorem check.
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return params_.model.d; }

 private:
  void finish(RunFile& file) const;
  void print_energy(const SynchronizationResult& r, const SynchronizationSummary& m) const;
  void print_clusters(const SynchronizationResult& r) const;
  void write(RunFile& file, const SynchronizationResult& r, const SynchronizationSummary& m) const;

  const Comm& comm_;
  SynchronizationSetup params_;
  double fit_start_;
  MlpKernel kernel_;
  LyapunovPrediction prediction_;  // of kernel_ at params_.beta
  TheoremCheck theorem_;
  std::unique_ptr<SynchronizationReplicas> state_;
};

}  // namespace tokdyn
