// Euler-Maruyama on the Ito form.
// One scheme of the SDE registry (dynamics/sde.hpp, which lists every scheme).
#pragma once

#include <vector>

#include "tokdyn/dynamics/sde.hpp"

namespace tokdyn {

class EulerMaruyama final : public SdeScheme {
 public:
  using SdeScheme::SdeScheme;

 private:
  void advance(std::int64_t layer, double* x, StepStatistics* statistics) override;
  std::vector<double> drift_, noise_;
};

}  // namespace tokdyn
