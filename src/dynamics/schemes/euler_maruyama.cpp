#include "tokdyn/dynamics/schemes/euler_maruyama.hpp"

#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

void EulerMaruyama::advance(std::int64_t layer, double* x, StepStatistics* statistics) {
  const std::size_t nd = static_cast<std::size_t>(n_local_) * params_.d;
  drift_.resize(nd);
  noise_.resize(nd);
  tangent_drift(x, drift_.data(), statistics);
  if (field_ && params_.radial_drift) {
    ito_correction(x, work_.data());
    for (std::size_t k = 0; k < nd; ++k) drift_[k] += work_[k];
  }
  field_increment(x, increments(layer).data(), noise_.data(), true);
  const double h = dt();
  for (std::size_t k = 0; k < nd; ++k) x[k] += h * drift_[k] + noise_[k];
  if (params_.project) normalize_rows(x, n_local_, params_.d);
}

}  // namespace tokdyn
