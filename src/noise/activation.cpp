#include "tokdyn/noise/activation.hpp"

#include <cmath>

#include "tokdyn/core/error.hpp"
#include "tokdyn/core/fast_exp.hpp"
#include "tokdyn/core/vector_clones.hpp"

namespace tokdyn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

double relu(double x) { return x > 0 ? x : 0; }
double relu_d(double x) { return x > 0 ? 1 : 0; }
// tanh, sigmoid and silu from the vectorisable exponentials of core/fast_exp.hpp (within a few ulp of libm;
// the same bits on every machine and vector width), so that the MLP's row loop vectorises: tanh through
// libm ran 7x slower than relu, these within 1.3x (README "Performance").
inline double tanh_v(double x) {
  // tanh |x| = -expm1(-2|x|) / (2 + expm1(-2|x|)): no cancellation near 0, 1 for large |x|.
  const double e = expm1_nonpositive(-2 * std::abs(x));
  return std::copysign(-e / (2 + e), x);
}
double tanh_d(double x) {
  const double t = tanh_v(x);
  return 1 - t * t;
}
inline double sigmoid(double x) {
  const double e = exp_nonpositive(-std::abs(x));  // e^{-|x|} <= 1: no overflow
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}
double sigmoid_d(double x) {
  const double s = sigmoid(x);
  return s * (1 - s);
}
inline double silu(double x) { return x * sigmoid(x); }
double silu_d(double x) {
  const double s = sigmoid(x);
  return s * (1 + x * (1 - s));
}
// Exact GELU x Phi(x), not the tanh approximation.
double gelu(double x) { return 0.5 * x * std::erfc(-x * kInvSqrt2); }
double gelu_d(double x) { return 0.5 * std::erfc(-x * kInvSqrt2) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x); }

template <double (*F)(double)>
inline void row(double* h, const double* bias, int m) {
  for (int r = 0; r < m; ++r) h[r] = F(h[r] + bias[r]);
}
// One clone set per activation (core/vector_clones.hpp): each loop vectorised for the machine it runs on.
TOKDYN_VECTOR_CLONES void relu_row(double* h, const double* bias, int m) { row<relu>(h, bias, m); }
TOKDYN_VECTOR_CLONES void tanh_row(double* h, const double* bias, int m) { row<tanh_v>(h, bias, m); }
TOKDYN_VECTOR_CLONES void sigmoid_row(double* h, const double* bias, int m) { row<sigmoid>(h, bias, m); }
TOKDYN_VECTOR_CLONES void silu_row(double* h, const double* bias, int m) { row<silu>(h, bias, m); }
void gelu_row(double* h, const double* bias, int m) { row<gelu>(h, bias, m); }  // libm's erfc: not vectorised

const Activation kActivations[] = {
    {"relu", relu, relu_d, relu_row, true},          {"tanh", tanh_v, tanh_d, tanh_row, false},
    {"sigmoid", sigmoid, sigmoid_d, sigmoid_row, false}, {"silu", silu, silu_d, silu_row, false},
    {"gelu", gelu, gelu_d, gelu_row, false},
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
