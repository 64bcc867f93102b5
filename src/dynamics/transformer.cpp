#include "tokdyn/dynamics/transformer.hpp"

#include <cmath>

#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

Transformer::Transformer(const TransformerParams& params, std::int64_t n_local, std::unique_ptr<Attention> attention,
                         std::optional<RandomMlp> mlp)
    : params_(params), n_local_(n_local), attention_(std::move(attention)), mlp_(std::move(mlp)),
      buffer_(static_cast<std::size_t>(n_local) * params.d) {}

double Transformer::work_per_step() const {
  const double n = static_cast<double>(params_.n);
  return attention_ ? n * n : n;
}

const double* Transformer::directions(const double* x) {
  if (params_.norm == "post" || params_.norm == "ngpt") return x;  // on the sphere already
  const std::size_t size = static_cast<std::size_t>(n_local_) * params_.d;
  unit_.assign(x, x + size);
  normalize_rows(unit_.data(), n_local_, params_.d);
  return unit_.data();
}

template <class Map>
void Transformer::substep(double* x, double h, Map&& map) {
  const std::size_t size = static_cast<std::size_t>(n_local_) * params_.d;
  const int d = params_.d;
  const std::string& norm = params_.norm;
  if (norm == "post") {
    map(static_cast<const double*>(x), buffer_.data());
    for (std::size_t k = 0; k < size; ++k) x[k] += h * buffer_[k];
    normalize_rows(x, n_local_, d);
  } else if (norm == "pre" || norm == "peri") {
    map(directions(x), buffer_.data());
    if (norm == "peri") normalize_rows(buffer_.data(), n_local_, d);
    for (std::size_t k = 0; k < size; ++k) x[k] += h * buffer_[k];
  } else {  // ngpt
    map(static_cast<const double*>(x), buffer_.data());
    normalize_rows(buffer_.data(), n_local_, d);
    for (std::size_t k = 0; k < size; ++k) x[k] += h * params_.ngpt_alpha[k % d] * (buffer_[k] - x[k]);
    normalize_rows(x, n_local_, d);
  }
}

void Transformer::advance(std::int64_t layer, double* x, StepStatistics* statistics) {
  if (attention_) {
    PhaseScope timed(Phase::attention);
    // Attn_{X_l}(X^i_l), every token sees the old X_l (with the statistics of X_l when asked).
    substep(x, params_.factor * dt(), [&](const double* in, double* out) {
      if (statistics) statistics->attention(*attention_, in, out);
      else attention_->apply(in, out);
    });
  }
  if (mlp_) {
    PhaseScope timed(Phase::mlp);
    mlp_->draw(layer + 1);  // G^m_{l+1}: fresh weights, the same on every rank
    substep(x, std::sqrt(dt()), [&](const double* in, double* out) { mlp_->apply(in, n_local_, out); });
  }
}

}  // namespace tokdyn
