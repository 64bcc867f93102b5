#include "tokdyn/mlmc/estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/diagnostics/fit.hpp"

namespace tokdyn {

void LevelSums::add(int level, double fine, double coarse) {
  const double v = level > 0 ? fine - coarse : fine;
  double power = v;
  for (double& s : y) s += power, power *= v;
  p[0] += fine;
  p[1] += fine * fine;
  ++n;
}

void LevelSums::merge(const LevelSums& other) {
  n += other.n;
  for (int k = 0; k < 4; ++k) y[k] += other.y[k];
  p[0] += other.p[0];
  p[1] += other.p[1];
  cost += other.cost;
  seconds += other.seconds;
}

namespace {

// The sample variance from the sums of v and v^2 over n samples.
double sample_variance(std::int64_t n, double sum, double squares) {
  if (n < 2) return 0.0;
  const double N = static_cast<double>(n), mean = sum / N;
  return std::max(0.0, (squares - N * mean * mean) / (N - 1));
}

}  // namespace

double LevelSums::var_y() const { return sample_variance(n, y[0], y[1]); }
double LevelSums::var_p() const { return sample_variance(n, p[0], p[1]); }

double LevelSums::kurtosis_y() const {
  if (n < 2) return 0.0;
  const double N = static_cast<double>(n), m = y[0] / N, m2 = y[1] / N, m3 = y[2] / N, m4 = y[3] / N;
  const double var = m2 - m * m;
  if (!(var > 0)) return 0.0;
  return (m4 - 4 * m * m3 + 6 * m * m * m2 - 3 * m * m * m * m) / (var * var);
}

RateFit fit_rate(const std::vector<double>& values, int from) {
  std::vector<double> x, v;
  for (std::size_t l = static_cast<std::size_t>(std::max(from, 0)); l < values.size(); ++l)
    if (std::isfinite(values[l]) && values[l] != 0) x.push_back(static_cast<double>(l)), v.push_back(-std::log2(std::abs(values[l])));
  if (x.size() < 2) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  const Estimate e = fitted_slope(x, v);  // the interval is +-1.96 standard errors
  return {e.value, (e.high - e.low) / (2 * 1.96)};
}

LevelDriver::Draw LevelDriver::next(std::int64_t batch) {
  while (!complete_) {
    for (std::size_t l = 0; l < extra_.size(); ++l)
      if (extra_[l] > 0) return {static_cast<int>(l), sums_[l].n, std::min(extra_[l], std::max<std::int64_t>(batch, 1))};
    update();
  }
  return {};
}

void LevelDriver::add(const Draw& draw, const LevelSums& drawn) {
  if (draw.level < 0 || draw.level >= static_cast<int>(sums_.size()) || drawn.n != draw.count ||
      draw.first != sums_[draw.level].n)
    throw std::logic_error("mlmc: the sampler added " + std::to_string(drawn.n) + " samples of level " +
                           std::to_string(draw.level) + " from " + std::to_string(draw.first) + ", asked for " +
                           std::to_string(draw.count));
  sums_[draw.level].merge(drawn);
  extra_[draw.level] = std::max<std::int64_t>(0, extra_[draw.level] - drawn.n);
}

void LevelDriver::plan(const std::vector<double>& V, const std::vector<double>& C, double target) {
  double s = 0;
  for (std::size_t l = 0; l < sums_.size(); ++l) s += std::sqrt(V[l] * C[l]);
  for (std::size_t l = 0; l < sums_.size(); ++l) {
    const double want = std::ceil(std::sqrt(V[l] / C[l]) * s / target);
    extra_[l] = std::max<std::int64_t>(0, static_cast<std::int64_t>(want) - sums_[l].n);
  }
}

bool LevelDriver::settled() {
  for (std::size_t l = 0; l < sums_.size(); ++l)
    if (extra_[l] > 0.01 * static_cast<double>(sums_[l].n)) return false;
  std::fill(extra_.begin(), extra_.end(), 0);
  return true;
}

void LevelDriver::save_levels(std::vector<double>& out) const {
  for (std::size_t l = 0; l < sums_.size(); ++l) {
    const LevelSums& v = sums_[l];
    out.insert(out.end(), {static_cast<double>(v.n), v.y[0], v.y[1], v.y[2], v.y[3], v.p[0], v.p[1], v.cost, v.seconds,
                           static_cast<double>(extra_[l])});
  }
}

void LevelDriver::restore_levels(const double* v, std::size_t levels) {
  sums_.assign(levels, LevelSums{});
  extra_.assign(levels, 0);
  for (std::size_t l = 0; l < levels; ++l, v += kLevelNumbers) {
    LevelSums& t = sums_[l];
    t.n = static_cast<std::int64_t>(v[0]);
    for (int k = 0; k < 4; ++k) t.y[k] = v[1 + k];
    t.p[0] = v[5], t.p[1] = v[6], t.cost = v[7], t.seconds = v[8];
    extra_[l] = static_cast<std::int64_t>(v[9]);
  }
}

MlmcDriver::MlmcDriver(const MlmcOptions& o) : o_(o) {
  if (!(o.eps > 0) || !std::isfinite(o.eps)) throw InputError("mlmc: eps = " + std::to_string(o.eps) + " must be > 0");
  if (!o.plain && (o.min_levels < 2 || o.max_levels < o.min_levels))
    throw InputError("mlmc: levels 0 .. " + std::to_string(o.min_levels) + " to 0 .. " + std::to_string(o.max_levels) +
                     ": the bias estimate needs at least levels 0 .. 2, and max_levels >= min_levels");
  if (o.initial_samples < 2) throw InputError("mlmc: initial_samples must be at least 2 (a variance needs two)");
  if (!(o.theta > 0 && o.theta < 1)) throw InputError("mlmc: theta must lie in (0, 1)");
  L_ = o.plain ? 0 : o.min_levels;
  sums_.assign(L_ + 1, LevelSums{});
  extra_.assign(L_ + 1, o.initial_samples);
  alpha_ = o.alpha, beta_ = o.beta, gamma_ = o.gamma;
}

void MlmcDriver::update() {
  const int L = L_;
  const double target = (1 - o_.theta) * o_.eps * o_.eps;  // the sampling variance allowed
  m_.assign(L + 1, 0), V_.assign(L + 1, 0), C_.assign(L + 1, 0);
  for (int l = 0; l <= L; ++l) m_[l] = std::abs(sums_[l].mean_y()), V_[l] = sums_[l].var_y(), C_[l] = sums_[l].cost_per_sample();
  // Rates not given are fitted over levels 1 .. L, at least 0.5: the extrapolations below need them positive.
  if (o_.alpha <= 0) alpha_ = std::max(0.5, fit_rate(m_, 1).rate);
  if (o_.beta <= 0) beta_ = std::max(0.5, fit_rate(V_, 1).rate);
  if (o_.gamma <= 0) gamma_ = std::max(0.5, -fit_rate(C_, 1).rate);
  // Few samples can make a fine level look better than it is: its mean and variance are kept at least half of
  // what the coarser level and the rate give.
  for (int l = 2; l <= L; ++l) {
    m_[l] = std::max(m_[l], 0.5 * m_[l - 1] / std::pow(2.0, alpha_));
    V_[l] = std::max(V_[l], 0.5 * V_[l - 1] / std::pow(2.0, beta_));
  }
  // Costs: the model 2^{gamma l} when gamma is given or the sampler measures none, else the measured ones.
  for (int l = 0; l <= L; ++l)
    if (o_.gamma > 0 || !(C_[l] > 0)) C_[l] = std::pow(2.0, gamma_ * l);
  plan(V_, C_, target);
  if (!settled()) return;  // draw the missing samples first
  if (o_.plain) {
    converged_ = complete_ = true;
    return;
  }
  // The weak error of level L: each of the last three |E Y_l| carried to level L by 2^{-alpha}, the largest of
  // them summed over the levels beyond L (a geometric series).
  bias_ = 0;
  for (int k = 0; k < 3; ++k) bias_ = std::max(bias_, m_[L - k] * std::pow(2.0, -alpha_ * k));
  bias_ /= std::pow(2.0, alpha_) - 1;
  if (bias_ <= std::sqrt(o_.theta) * o_.eps) {
    converged_ = complete_ = true;
    return;
  }
  if (L == o_.max_levels) {
    complete_ = true;
    return;
  }
  // A new level, its variance and cost extrapolated; then every level's samples again.
  ++L_;
  sums_.emplace_back();
  m_.push_back(m_[L] / std::pow(2.0, alpha_));
  V_.push_back(V_[L] / std::pow(2.0, beta_));
  C_.push_back(C_[L] * std::pow(2.0, gamma_));
  extra_.push_back(0);
  plan(V_, C_, target);
  extra_[L_] = std::max(extra_[L_], o_.initial_samples);
}

MlmcResult MlmcDriver::result() const {
  const int L = L_;
  MlmcResult r;
  r.levels = sums_;
  std::vector<double> C(L + 1);
  for (int l = 0; l <= L; ++l) C[l] = l < static_cast<int>(C_.size()) ? C_[l] : sums_[l].cost_per_sample();
  double variance = 0;
  for (int l = 0; l <= L; ++l) {
    r.estimate += sums_[l].mean_y();
    if (sums_[l].n > 0) variance += sums_[l].var_y() / static_cast<double>(sums_[l].n);
    r.work += static_cast<double>(sums_[l].n) * C[l];
  }
  r.standard_error = std::sqrt(variance);
  r.bias = bias_;
  std::vector<double> means(L + 1), variances(L + 1), costs(L + 1);
  for (int l = 0; l <= L; ++l) means[l] = sums_[l].mean_y(), variances[l] = sums_[l].var_y(), costs[l] = 1.0 / C[l];
  r.alpha = fit_rate(means, 1), r.beta = fit_rate(variances, 1), r.gamma = fit_rate(costs, 1);
  r.alpha_used = alpha_, r.beta_used = beta_, r.gamma_used = gamma_;
  r.mc_work = sums_[L].var_p() * C[L] / ((1 - o_.theta) * o_.eps * o_.eps);
  r.converged = converged_;
  return r;
}

// The state: [L, converged, complete, alpha, beta, gamma, bias], the levels' numbers (save_levels), then per level
// [m, V, C] when they are set (after the first update; a count says how many).
namespace {
constexpr std::size_t kHeadValues = 7;
}

std::vector<double> MlmcDriver::save() const {
  std::vector<double> s = {static_cast<double>(L_), converged_ ? 1.0 : 0.0, complete_ ? 1.0 : 0.0, alpha_, beta_, gamma_,
                           bias_};
  save_levels(s);
  s.push_back(static_cast<double>(m_.size()));
  for (std::size_t l = 0; l < m_.size(); ++l) s.insert(s.end(), {m_[l], V_[l], C_[l]});
  return s;
}

void MlmcDriver::restore(const std::vector<double>& s) {
  const bool shaped = s.size() >= kHeadValues && s[0] >= 0 && s[0] <= 64 && s[0] == std::floor(s[0]);
  const std::size_t levels = shaped ? static_cast<std::size_t>(s[0]) + 1 : 0;
  const std::size_t base = kHeadValues + kLevelNumbers * levels;
  const bool sized = shaped && s.size() > base && (s[base] == 0 || s[base] == static_cast<double>(levels)) &&
                     s.size() == base + 1 + 3 * static_cast<std::size_t>(s[base]);
  if (!sized)
    throw InputError("checkpoint: the MLMC state has " + std::to_string(s.size()) + " values, not the shape of this "
                     "driver's state");
  L_ = static_cast<int>(s[0]);
  converged_ = s[1] != 0, complete_ = s[2] != 0;
  alpha_ = s[3], beta_ = s[4], gamma_ = s[5], bias_ = s[6];
  restore_levels(s.data() + kHeadValues, levels);
  m_.clear(), V_.clear(), C_.clear();
  for (std::size_t l = 0; l < static_cast<std::size_t>(s[base]); ++l)
    m_.push_back(s[base + 1 + 3 * l]), V_.push_back(s[base + 2 + 3 * l]), C_.push_back(s[base + 3 + 3 * l]);
}

MlmcResult mlmc_estimate(const LevelSampler& sample, const MlmcOptions& o) {
  MlmcDriver driver(o);
  for (;;) {
    const MlmcDriver::Draw draw = driver.next(std::numeric_limits<std::int64_t>::max());
    if (draw.count == 0) break;
    LevelSums drawn;
    sample(draw.level, draw.first, draw.count, drawn);
    driver.add(draw, drawn);
  }
  return driver.result();
}

}  // namespace tokdyn
