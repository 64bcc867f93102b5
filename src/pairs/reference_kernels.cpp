#include "tokdyn/pairs/reference_kernels.hpp"

#include <cmath>
#include <limits>

namespace tokdyn {

PairRowStatistics pair_row_statistics_reference(const double* c, const double* h, int n, double beta, double h_row,
                                                int bins, double cluster_cosine, std::int64_t* counts) {
  PairRowStatistics out;
  out.min = std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) {
    out.energy += -std::expm1((beta * c[j] - h_row) - h[j]);
    out.cosine += c[j];
    if (c[j] < out.min) out.min = c[j];
    if (c[j] > cluster_cosine) ++out.aligned;
    if (c[j] < -cluster_cosine) ++out.antipodal;
    // Bin floor((c + 1) bins / 2) of [-1, 1], clamped to the end bins; NaN in bin 0.
    const double b = std::floor((c[j] + 1.0) * 0.5 * bins);
    ++counts[std::isnan(b) || b < 0 ? 0 : b > bins - 1 ? bins - 1 : static_cast<int>(b)];
  }
  return out;
}

void pair_row_weights_reference(const double* c, const double* h, int n, double beta, double h_row, double* weights) {
  for (int j = 0; j < n; ++j) weights[j] = std::exp((beta * c[j] - h_row) - h[j]);
}

double row_max_reference(const double* s, int n) {
  double m = s[0];
  for (int j = 1; j < n; ++j)
    if (s[j] > m) m = s[j];
  return m;
}

double shifted_exp_sum_reference(double* s, int n, double m) {
  double sum = 0;
  for (int j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - m);
    sum += s[j];
  }
  return sum;
}

}  // namespace tokdyn
