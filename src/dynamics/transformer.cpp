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

void Transformer::advance(std::int64_t layer, double* x, StepStatistics* statistics) {
  const std::size_t size = static_cast<std::size_t>(n_local_) * params_.d;
  if (attention_) {
    PhaseScope timed(Phase::attention);
    // Attn_{X_l}(X^i_l), every token sees the old X_l (with the statistics of X_l when asked).
    if (statistics) statistics->attention(*attention_, x, buffer_.data());
    else attention_->apply(x, buffer_.data());
    const double h = params_.factor * dt();
    for (std::size_t k = 0; k < size; ++k) x[k] += h * buffer_[k];
    normalize_rows(x, n_local_, params_.d);
  }
  if (mlp_) {
    PhaseScope timed(Phase::mlp);
    mlp_->draw(layer + 1);  // G^m_{l+1}: fresh weights, the same on every rank
    mlp_->apply(x, n_local_, buffer_.data());
    const double h = std::sqrt(dt());
    for (std::size_t k = 0; k < size; ++k) x[k] += h * buffer_[k];
    normalize_rows(x, n_local_, params_.d);
  }
}

}  // namespace tokdyn
