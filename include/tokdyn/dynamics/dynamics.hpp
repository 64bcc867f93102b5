// A layer-by-layer (or step-by-step) evolution of the tokens; the run driver does the rest.
#pragma once

#include <cstdint>
#include <string>

#include "tokdyn/diagnostics/pair_statistics.hpp"

namespace tokdyn {

class Attention;

// The pair statistics of the tokens a step starts from, asked of the step by the run's diagnostics: formed in
// the step's first attention pass over those tokens when its style can (one pass for both), else in their own
// pass before the tokens move.
class StepStatistics {
 public:
  explicit StepStatistics(PairStatisticsPass& pass) : pass_(pass) {}
  // out = Attn(x) [n_local, D] by `attention`, and the first time the statistics of x. Collective.
  void attention(Attention& attention, const double* x, double* out);
  // The statistics of x in their own pass (a step without attention). Collective.
  void own_pass(const double* x);
  bool formed() const { return formed_; }
  const PairStatistics& result() const { return result_; }

 private:
  PairStatisticsPass& pass_;
  PairStatistics result_;
  bool formed_ = false;
};

class Dynamics {
 public:
  virtual ~Dynamics() = default;
  // Advances this rank's tokens x [n_local, d] from layer `layer` to layer + 1. Collective.
  void step(std::int64_t layer, double* x) { advance(layer, x, nullptr); }
  // The same step (bit for bit), returning too the pair statistics of the tokens x it starts from. Collective.
  PairStatistics step(std::int64_t layer, double* x, PairStatisticsPass& statistics);
  // Time t of layer l (l * T / L for the transformer).
  virtual double time(std::int64_t layer) const = 0;
  // Work of one step for the throughput line, and its unit ("pairs" for attention).
  virtual double work_per_step() const = 0;
  virtual std::string work_unit() const = 0;
  // The attention the step applies first to the tokens it is given (null: none).
  virtual Attention* attention() const { return nullptr; }
  // What the diagnostics observe of this rank's tokens x: x itself, or their directions x_i / |x_i| when the
  // dynamics lets tokens leave the sphere (the transformer's pre and peri norms; a buffer of the dynamics, valid
  // until its next call or step).
  virtual const double* directions(const double* x) { return x; }

 protected:
  // The step. One with attention hands its first attention of x to statistics->attention when statistics is
  // not null (a step without attention never sees it: Dynamics::step forms them first).
  virtual void advance(std::int64_t layer, double* x, StepStatistics* statistics) = 0;
};

}  // namespace tokdyn
