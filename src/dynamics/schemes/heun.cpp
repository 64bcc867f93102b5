#include "tokdyn/dynamics/schemes/heun.hpp"

#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

void StratonovichHeun::advance(std::int64_t layer, double* x, StepStatistics* statistics) {
  const std::size_t nd = static_cast<std::size_t>(n_local_) * params_.d;
  for (auto* v : {&f0_, &g0_, &f1_, &g1_, &predictor_}) v->resize(nd);
  const double h = dt();
  const double* dB = increments(layer).data();
  tangent_drift(x, f0_.data(), statistics);
  field_increment(x, dB, g0_.data(), true);
  for (std::size_t k = 0; k < nd; ++k) predictor_[k] = x[k] + h * f0_[k] + g0_[k];
  // Projected: the corrector's fields are evaluated on the sphere too, where every attention style (the
  // Fourier one reads angles) and field agrees.
  if (params_.project) normalize_rows(predictor_.data(), n_local_, params_.d);
  tangent_drift(predictor_.data(), f1_.data());
  field_increment(predictor_.data(), dB, g1_.data(), true);
  for (std::size_t k = 0; k < nd; ++k) x[k] += 0.5 * h * (f0_[k] + f1_[k]) + 0.5 * (g0_[k] + g1_[k]);
  if (params_.project) normalize_rows(x, n_local_, params_.d);
}

}  // namespace tokdyn
