// tokdyn lyapunov: kernel constants and Lyapunov exponents of the MLP noise (doc/science.md section 6.3), predicted
// from kappa and measured on pairs of nearby tokens with attention off.
#pragma once

#include <memory>
#include <string>

#include "tokdyn/diagnostics/lyapunov.hpp"
#include "tokdyn/studies/pair_replicas.hpp"
#include "tokdyn/studies/study.hpp"

namespace tokdyn {

class RunFile;

class LyapunovStudy : public Study {
 public:
  static DeckSchema schema();
  LyapunovStudy(const Comm& comm, const Deck& deck);
  MemoryEstimate memory() const override;
  // Also prints the table of predicted constants.
  RunState& setup() override;
  std::string banner() const override;
  int width() const override { return kernel_.d; }

 private:
  void print_predictions() const;
  void finish(RunFile& file) const;
  void print_measured(const PairExponents& m) const;

  const Comm& comm_;
  MlpKernel kernel_;
  double beta_;
  LyapunovPrediction prediction_;  // of kernel_ at beta_
  bool simulate_;
  PairSimulation sim_;  // no replicas without lyapunov.simulate: the predictions alone
  std::unique_ptr<PairReplicas> pairs_;
};

}  // namespace tokdyn
