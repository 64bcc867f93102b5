#include "tokdyn/mlmc/observables.hpp"

#include <cmath>
#include <vector>

namespace tokdyn {
namespace {

// |sum_i x_i|^2 and sum_i |x_i|^2.
void sums(const double* x, std::int64_t n, int d, double& total2, double& self) {
  std::vector<double> s(d, 0.0);
  self = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (int a = 0; a < d; ++a) s[a] += x[i * d + a], self += x[i * d + a] * x[i * d + a];
  total2 = 0;
  for (double v : s) total2 += v * v;
}

class OrderSquared final : public TokenObservable {
 public:
  double operator()(const double* x, std::int64_t n, int d) const override {
    double total2, self;
    sums(x, n, d, total2, self);
    return total2 / (static_cast<double>(n) * static_cast<double>(n));
  }
};

class MeanCosine final : public TokenObservable {
 public:
  double operator()(const double* x, std::int64_t n, int d) const override {
    double total2, self;
    sums(x, n, d, total2, self);
    return n > 1 ? (total2 - self) / (static_cast<double>(n) * static_cast<double>(n - 1)) : 1.0;
  }
};

// Summed as (e^beta / (2N^2)) sum_ij -expm1(beta (<x_i, x_j> - 1)), as every E_beta of tokdyn (pairs/energy.hpp):
// no e^beta-sized term cancels, and the diagonal is exactly 0.
class Energy final : public TokenObservable {
 public:
  explicit Energy(double beta) : beta_(beta) {}
  double operator()(const double* x, std::int64_t n, int d) const override {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) {
        double dot = 0;
        for (int a = 0; a < d; ++a) dot += x[i * d + a] * x[j * d + a];
        s += -std::expm1(beta_ * (dot - 1));
      }
    return std::exp(beta_) * s / (static_cast<double>(n) * static_cast<double>(n));  // 2 s over 2 N^2
  }

 private:
  double beta_;
};

}  // namespace

const ObservableRegistry& token_observables() {
  static const ObservableRegistry registry = [] {
    ObservableRegistry r("observable");
    r.add("order2", "|mean x|^2: the squared order parameter, the mean of <x_i, x_j> over all ordered pairs",
          [](double) { return std::make_unique<OrderSquared>(); });
    r.add("energy", "E_beta = (1/(2N^2)) sum_ij (e^beta - e^{beta <x_i, x_j>}), beta = attention.beta",
          [](double beta) { return std::make_unique<Energy>(beta); });
    r.add("cosine", "the mean cosine <x_i, x_j> over the pairs i != j",
          [](double) { return std::make_unique<MeanCosine>(); });
    return r;
  }();
  return registry;
}

}  // namespace tokdyn
