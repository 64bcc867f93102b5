#include "tokdyn/mlmc/multi_index.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

MimcDriver::MimcDriver(const MimcOptions& o) : o_(o) {
  if (!(o.eps > 0) || !std::isfinite(o.eps)) throw InputError("mlmc: eps = " + std::to_string(o.eps) + " must be > 0");
  if (o.min_level < 1 || o.max_level < o.min_level)
    throw InputError("mlmc: index-set levels " + std::to_string(o.min_level) + " to " + std::to_string(o.max_level) +
                     ": the set needs at least level 1, and max_levels >= min_levels");
  if (o.initial_samples < 2) throw InputError("mlmc: initial_samples must be at least 2 (a variance needs two)");
  if (!(o.theta > 0 && o.theta < 1)) throw InputError("mlmc: theta must lie in (0, 1)");
  ell_ = -1;
  while (ell_ < o.min_level) grow();
}

bool MimcDriver::last_layer(const LevelIndex& i) const {
  return o_.total_degree ? i.depth + i.tokens == ell_ : std::max(i.depth, i.tokens) == ell_;
}

// Level ell + 1: the indices the set gains, in order of depth then tokens.
void MimcDriver::grow() {
  ++ell_;
  for (int a = 0; a <= ell_; ++a)
    for (int b = 0; b <= ell_; ++b) {
      const LevelIndex i{a, b};
      if (!last_layer(i)) continue;
      indices_.push_back(i);
      sums_.emplace_back();
      extra_.push_back(o_.initial_samples);
    }
}

void MimcDriver::update() {
  const std::size_t K = sums_.size();
  std::vector<double> V(K), C(K);
  for (std::size_t k = 0; k < K; ++k) {
    V[k] = sums_[k].var_y();
    C[k] = sums_[k].cost_per_sample() > 0 ? sums_[k].cost_per_sample() : 1.0;
  }
  plan(V, C, (1 - o_.theta) * o_.eps * o_.eps);
  if (!settled()) return;
  bias_ = 0;
  for (std::size_t k = 0; k < K; ++k)
    if (last_layer(indices_[k])) bias_ += std::abs(sums_[k].mean_y());
  if (bias_ <= std::sqrt(o_.theta) * o_.eps) {
    converged_ = complete_ = true;
    return;
  }
  if (ell_ == o_.max_level) {
    complete_ = true;
    return;
  }
  grow();
}

RateFit MimcDriver::axis_fit(bool depth_axis, bool variances) const {
  std::vector<double> values;
  for (int j = 0;; ++j) {
    const auto it = std::find_if(indices_.begin(), indices_.end(), [&](const LevelIndex& i) {
      return depth_axis ? (i.depth == j && i.tokens == 0) : (i.tokens == j && i.depth == 0);
    });
    if (it == indices_.end()) break;
    const LevelSums& s = sums_[static_cast<std::size_t>(it - indices_.begin())];
    values.push_back(variances ? s.var_y() : s.mean_y());
  }
  return fit_rate(values, 1);
}

RateFit MimcDriver::tokens_alpha() const { return axis_fit(false, false); }
RateFit MimcDriver::tokens_beta() const { return axis_fit(false, true); }

MlmcResult MimcDriver::result() const {
  MlmcResult r;
  r.levels = sums_;
  double variance = 0;
  for (const LevelSums& s : sums_) {
    r.estimate += s.mean_y();
    if (s.n > 0) variance += s.var_y() / static_cast<double>(s.n);
    r.work += s.cost;
  }
  r.standard_error = std::sqrt(variance);
  r.bias = bias_;
  r.alpha = axis_fit(true, false), r.beta = axis_fit(true, true);
  std::vector<double> inverse;  // 1 / cost along the depth axis
  for (std::size_t k = 0; k < sums_.size(); ++k)
    if (indices_[k].tokens == 0) inverse.push_back(sums_[k].cost_per_sample() > 0 ? 1 / sums_[k].cost_per_sample() : 0);
  r.gamma = fit_rate(inverse, 1);
  r.converged = converged_;
  return r;
}

// The state: [ell, converged, complete, bias, K], the levels' numbers (save_levels), then K pairs (a, b).
std::vector<double> MimcDriver::save() const {
  std::vector<double> s = {static_cast<double>(ell_), converged_ ? 1.0 : 0.0, complete_ ? 1.0 : 0.0, bias_,
                           static_cast<double>(indices_.size())};
  save_levels(s);
  for (const LevelIndex& i : indices_) s.insert(s.end(), {static_cast<double>(i.depth), static_cast<double>(i.tokens)});
  return s;
}

void MimcDriver::restore(const std::vector<double>& s) {
  const bool shaped = s.size() >= 5 && s[4] >= 1 && s[4] <= 4096 && s[4] == std::floor(s[4]) && s[0] >= 0 && s[0] <= 64;
  const std::size_t K = shaped ? static_cast<std::size_t>(s[4]) : 0;
  if (!shaped || s.size() != 5 + (kLevelNumbers + 2) * K)
    throw InputError("checkpoint: the multi-index state has " + std::to_string(s.size()) +
                     " values, not the shape of this driver's state");
  ell_ = static_cast<int>(s[0]);
  converged_ = s[1] != 0, complete_ = s[2] != 0;
  bias_ = s[3];
  restore_levels(s.data() + 5, K);
  indices_.clear();
  const double* v = s.data() + 5 + kLevelNumbers * K;
  for (std::size_t k = 0; k < K; ++k) indices_.push_back({static_cast<int>(v[2 * k]), static_cast<int>(v[2 * k + 1])});
}

}  // namespace tokdyn
