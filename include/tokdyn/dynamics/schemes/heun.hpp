// Stochastic Heun (predictor-corrector) on the Stratonovich tangent form.
// One scheme of the SDE registry (dynamics/sde.hpp, which lists every scheme).
#pragma once

#include <vector>

#include "tokdyn/dynamics/sde.hpp"

namespace tokdyn {

class StratonovichHeun final : public SdeScheme {
 public:
  using SdeScheme::SdeScheme;

 private:
  void advance(std::int64_t layer, double* x, StepStatistics* statistics) override;
  std::vector<double> f0_, g0_, f1_, g1_, predictor_;
};

}  // namespace tokdyn
