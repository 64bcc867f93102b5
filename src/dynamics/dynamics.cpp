#include "tokdyn/dynamics/dynamics.hpp"

#include <stdexcept>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/core/console/phases.hpp"

namespace tokdyn {

void StepStatistics::attention(Attention& attention, const double* x, double* out) {
  if (formed_) return attention.apply(x, out);  // a later pass of the step (Heun's corrector): other tokens
  formed_ = attention.apply_with_statistics(x, out, pass_, result_);
  if (!formed_) own_pass(x);
}

void StepStatistics::own_pass(const double* x) {
  PhaseScope timed(Phase::diagnostics);
  result_ = pass_.compute(x);
  formed_ = true;
}

PairStatistics Dynamics::step(std::int64_t layer, double* x, PairStatisticsPass& statistics) {
  StepStatistics s(statistics);
  if (!attention()) s.own_pass(directions(x));
  advance(layer, x, &s);
  // A tokdyn bug: a step with attention that did not hand its first pass to s.
  if (!s.formed()) throw std::logic_error("a step with attention formed no statistics of its tokens");
  return s.result();
}

}  // namespace tokdyn
