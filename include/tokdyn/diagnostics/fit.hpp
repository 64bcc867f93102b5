// Least-squares slopes and bootstrap confidence intervals over replicas, for measured rates.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tokdyn {

// Slope of the least-squares line through (x_i, y_i).
double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y);

struct Estimate {
  double value = 0;
  double low = 0, high = 0;  // confidence interval
};

// What every printed measurement says next to its prediction: "" when the interval holds it, else
// "  <- DISAGREES: the interval excludes the prediction P". at_most: the prediction is an upper bound
// (flagged only when the whole interval lies above it).
std::string against_prediction(const Estimate& e, double predicted, bool at_most = false);

// The least-squares slope with the interval +-1.96 standard errors (from the residuals): for a rate
// read off one smooth curve, where the interval says how straight the fitted piece is.
Estimate fitted_slope(const std::vector<double>& x, const std::vector<double>& y);

// statistic(weights) evaluates an estimate with replica r counted weights[r] times; the interval is the
// (alpha/2, 1 - alpha/2) percentile interval over `resamples` bootstrap resamples (Philox-seeded).
Estimate bootstrap(int replicas, const std::function<double(const std::vector<int>&)>& statistic,
                   int resamples = 400, double alpha = 0.05, std::uint64_t seed = 1);

}  // namespace tokdyn
