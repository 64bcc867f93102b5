// The transformer's layer with the Gaussian field for the MLP: Y = LN(X + a dt Attn), X' = LN(Y + dW(Y)).
// One scheme of the SDE registry (dynamics/sde.hpp, which lists every scheme).
#pragma once

#include <vector>

#include "tokdyn/dynamics/sde.hpp"

namespace tokdyn {

class ProjectedStep final : public SdeScheme {
 public:
  using SdeScheme::SdeScheme;

 private:
  void advance(std::int64_t layer, double* x, StepStatistics* statistics) override;
  std::vector<double> buffer_;
};

}  // namespace tokdyn
