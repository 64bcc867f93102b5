#include "tokdyn/dynamics/schemes/projected.hpp"

#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

void ProjectedStep::advance(std::int64_t layer, double* x, StepStatistics* statistics) {
  const std::size_t nd = static_cast<std::size_t>(n_local_) * params_.d;
  buffer_.resize(nd);
  if (attention_) {
    if (statistics) statistics->attention(*attention_, x, buffer_.data());
    else attention_->apply(x, buffer_.data());
    const double h = params_.factor * dt();
    for (std::size_t k = 0; k < nd; ++k) x[k] += h * buffer_[k];
    normalize_rows(x, n_local_, params_.d);
  }
  if (field_) {
    field_increment(x, increments(layer).data(), buffer_.data(), false);
    for (std::size_t k = 0; k < nd; ++k) x[k] += buffer_[k];
    normalize_rows(x, n_local_, params_.d);
  }
}

}  // namespace tokdyn
