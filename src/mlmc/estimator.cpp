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

MlmcResult mlmc_estimate(const LevelSampler& sample, const MlmcOptions& o) {
  if (!(o.eps > 0) || !std::isfinite(o.eps)) throw InputError("mlmc: eps = " + std::to_string(o.eps) + " must be > 0");
  if (o.min_levels < 2 || o.max_levels < o.min_levels)
    throw InputError("mlmc: levels 0 .. " + std::to_string(o.min_levels) + " to 0 .. " + std::to_string(o.max_levels) +
                     ": the bias estimate needs at least levels 0 .. 2, and max_levels >= min_levels");
  if (o.initial_samples < 2) throw InputError("mlmc: initial_samples must be at least 2 (a variance needs two)");
  if (!(o.theta > 0 && o.theta < 1)) throw InputError("mlmc: theta must lie in (0, 1)");

  const double target = (1 - o.theta) * o.eps * o.eps;  // the sampling variance allowed
  int L = o.min_levels;
  std::vector<LevelSums> sums(L + 1);
  std::vector<std::int64_t> extra(L + 1, o.initial_samples);
  std::vector<double> m, V, C;
  double alpha = o.alpha, beta = o.beta, gamma = o.gamma, bias = 0;
  bool converged = false;

  // N_l = ceil(sqrt(V_l / C_l) sum_k sqrt(V_k C_k) / target): the fewest samples for the target variance at the
  // least work (a Lagrange multiplier on sum V_l / N_l); extra[l] what level l still lacks.
  auto plan = [&] {
    double s = 0;
    for (int l = 0; l <= L; ++l) s += std::sqrt(V[l] * C[l]);
    for (int l = 0; l <= L; ++l) {
      const double want = std::ceil(std::sqrt(V[l] / C[l]) * s / target);
      extra[l] = std::max<std::int64_t>(0, static_cast<std::int64_t>(want) - sums[l].n);
    }
  };

  for (;;) {
    for (int l = 0; l <= L; ++l) {
      if (extra[l] <= 0) continue;
      LevelSums drawn;
      sample(l, sums[l].n, extra[l], drawn);
      if (drawn.n != extra[l])
        throw std::logic_error("mlmc: the sampler added " + std::to_string(drawn.n) + " samples of level " +
                            std::to_string(l) + ", asked for " + std::to_string(extra[l]));
      sums[l].merge(drawn);
    }
    m.assign(L + 1, 0), V.assign(L + 1, 0), C.assign(L + 1, 0);
    for (int l = 0; l <= L; ++l) m[l] = std::abs(sums[l].mean_y()), V[l] = sums[l].var_y(), C[l] = sums[l].cost_per_sample();
    // Rates not given are fitted over levels 1 .. L, at least 0.5: the extrapolations below need them positive.
    if (o.alpha <= 0) alpha = std::max(0.5, fit_rate(m, 1).rate);
    if (o.beta <= 0) beta = std::max(0.5, fit_rate(V, 1).rate);
    if (o.gamma <= 0) gamma = std::max(0.5, -fit_rate(C, 1).rate);
    // Few samples can make a fine level look better than it is: its mean and variance are kept at least half of
    // what the coarser level and the rate give.
    for (int l = 2; l <= L; ++l) {
      m[l] = std::max(m[l], 0.5 * m[l - 1] / std::pow(2.0, alpha));
      V[l] = std::max(V[l], 0.5 * V[l - 1] / std::pow(2.0, beta));
    }
    // Costs: the model 2^{gamma l} when gamma is given or the sampler measures none, else the measured ones.
    for (int l = 0; l <= L; ++l)
      if (o.gamma > 0 || !(C[l] > 0)) C[l] = std::pow(2.0, gamma * l);
    plan();
    bool settled = true;
    for (int l = 0; l <= L; ++l) settled = settled && extra[l] <= 0.01 * static_cast<double>(sums[l].n);
    if (!settled) continue;
    // The weak error of level L: each of the last three |E Y_l| carried to level L by 2^{-alpha}, the largest of
    // them summed over the levels beyond L (a geometric series).
    bias = 0;
    for (int k = 0; k < 3; ++k) bias = std::max(bias, m[L - k] * std::pow(2.0, -alpha * k));
    bias /= std::pow(2.0, alpha) - 1;
    if (bias <= std::sqrt(o.theta) * o.eps) {
      converged = true;
      break;
    }
    if (L == o.max_levels) break;
    // A new level, its variance and cost extrapolated; then every level's samples again.
    ++L;
    sums.emplace_back();
    m.push_back(m[L - 1] / std::pow(2.0, alpha));
    V.push_back(V[L - 1] / std::pow(2.0, beta));
    C.push_back(C[L - 1] * std::pow(2.0, gamma));
    extra.push_back(0);
    plan();
    extra[L] = std::max(extra[L], o.initial_samples);
  }

  MlmcResult r;
  r.levels = sums;
  double variance = 0;
  for (int l = 0; l <= L; ++l) {
    r.estimate += sums[l].mean_y();
    variance += sums[l].var_y() / static_cast<double>(sums[l].n);
    r.work += static_cast<double>(sums[l].n) * C[l];
  }
  r.standard_error = std::sqrt(variance);
  r.bias = bias;
  std::vector<double> means(L + 1), variances(L + 1), costs(L + 1);
  for (int l = 0; l <= L; ++l)
    means[l] = sums[l].mean_y(), variances[l] = sums[l].var_y(), costs[l] = 1.0 / C[l];
  r.alpha = fit_rate(means, 1), r.beta = fit_rate(variances, 1), r.gamma = fit_rate(costs, 1);
  r.alpha_used = alpha, r.beta_used = beta, r.gamma_used = gamma;
  r.mc_work = sums[L].var_p() * C[L] / target;
  r.converged = converged;
  return r;
}

}  // namespace tokdyn
