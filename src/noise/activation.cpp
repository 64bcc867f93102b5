#include "tokdyn/noise/activation.hpp"

#include <cmath>

#include "tokdyn/core/error.hpp"

namespace tokdyn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

double relu(double x) { return x > 0 ? x : 0; }
double relu_d(double x) { return x > 0 ? 1 : 0; }
double tanh_v(double x) { return std::tanh(x); }
double tanh_d(double x) {
  const double t = std::tanh(x);
  return 1 - t * t;
}
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double sigmoid_d(double x) {
  const double s = sigmoid(x);
  return s * (1 - s);
}
double silu(double x) { return x * sigmoid(x); }
double silu_d(double x) {
  const double s = sigmoid(x);
  return s * (1 + x * (1 - s));
}
// Exact GELU x Phi(x), not the tanh approximation.
double gelu(double x) { return 0.5 * x * std::erfc(-x * kInvSqrt2); }
double gelu_d(double x) { return 0.5 * std::erfc(-x * kInvSqrt2) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x); }

template <double (*F)(double)>
void row(double* h, const double* bias, int m) {
  for (int r = 0; r < m; ++r) h[r] = F(h[r] + bias[r]);
}

const Activation kActivations[] = {
    {"relu", relu, relu_d, row<relu>, true},          {"tanh", tanh_v, tanh_d, row<tanh_v>, false},
    {"sigmoid", sigmoid, sigmoid_d, row<sigmoid>, false}, {"silu", silu, silu_d, row<silu>, false},
    {"gelu", gelu, gelu_d, row<gelu>, false},
};

}  // namespace

const Activation& activation(const std::string& name) {
  for (const Activation& a : kActivations)
    if (name == a.name) return a;
  std::string known;
  for (const Activation& a : kActivations) known += (known.empty() ? "" : ", ") + std::string(a.name);
  throw InputError("unknown activation '" + name + "' (known: " + known + ")");
}

std::vector<std::string> activation_names() {
  std::vector<std::string> names;
  for (const Activation& a : kActivations) names.emplace_back(a.name);
  return names;
}

}  // namespace tokdyn
