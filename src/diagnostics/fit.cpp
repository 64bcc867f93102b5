#include "tokdyn/diagnostics/fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxy / sxx;
}

Estimate fitted_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  Estimate e;
  e.value = least_squares_slope(x, y);
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i] / n, my += y[i] / n;
  double sxx = 0, rss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - my - e.value * (x[i] - mx);
    sxx += (x[i] - mx) * (x[i] - mx), rss += r * r;
  }
  // Standard error of the slope from the residuals (n - 2 degrees of freedom); 1.96 of it each side.
  const double se = n > 2 ? std::sqrt(rss / static_cast<double>(n - 2) / sxx) : NAN;
  e.low = e.value - 1.96 * se;
  e.high = e.value + 1.96 * se;
  return e;
}

Estimate bootstrap(int replicas, const std::function<double(const std::vector<int>&)>& statistic, int resamples,
                   double alpha, std::uint64_t seed) {
  Estimate e;
  e.value = statistic(std::vector<int>(replicas, 1));
  const RandomStream stream(seed, Purpose::test);
  std::vector<double> values;
  std::vector<int> weights(replicas);
  for (int b = 0; b < resamples; ++b) {
    std::fill(weights.begin(), weights.end(), 0);
    for (int r = 0; r < replicas; ++r) {
      const double u = stream.uniform4(b, r, 0)[0];  // (0, 1]
      ++weights[std::min(replicas - 1, static_cast<int>((1 - u) * replicas))];
    }
    values.push_back(statistic(weights));
  }
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) { return values[std::min<std::size_t>(values.size() - 1, q * values.size())]; };
  e.low = at(alpha / 2);
  e.high = at(1 - alpha / 2);
  return e;
}

std::string against_prediction(const Estimate& e, double predicted, bool at_most) {
  char text[160];
  if (at_most ? e.low > predicted : !(e.low <= predicted && predicted <= e.high)) {
    std::snprintf(text, sizeof text, "  <- DISAGREES: the interval %s the %s %.4g", at_most ? "lies above" : "excludes",
                  at_most ? "bound" : "prediction", predicted);
    return text;
  }
  return "";
}

}  // namespace tokdyn
