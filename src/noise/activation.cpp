#include "tokdyn/noise/activation.hpp"

#include <cmath>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"

namespace tokdyn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

double relu(double x) { return x > 0 ? x : 0; }
double relu_d(double x) { return x > 0 ? 1 : 0; }
// tanh (tanh_v), sigmoid and silu from the vectorisable exponentials of core/numerics/fast_exp.hpp (within a few ulp of libm;
// the same bits on every machine and vector width), so that the MLP's row loop vectorises: tanh through
// libm ran 7x slower than relu, these within 1.3x (doc/performance.md).
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
// Exact GELU x Phi(x), not the tanh approximation, vectorised (libm's erfc ran 3x slower than relu).
// Phi(x) = erfc(-x / sqrt2) / 2 from erfcx(z) = e^{z^2} erfc(z), z = |x| / sqrt2 >= 0: (1 + 2z) erfcx(z) is
// one polynomial in t = (z - 3)/(z + 3) in [-1, 1) (Chebyshev interpolant at 50 digits, 25 terms, Horner
// within 0.73 ulp: doc/erfcx_fit.py prints these coefficients). e^{-x^2/2} from x^2 split exactly into
// hi + lo by fma, so the exponent carries no rounding (|x| = 30 would otherwise lose 10 bits).
constexpr double kErfcxPoly[25] = {
    1.25300805826972961e+00, -1.35621106124581170e-01, -4.75622943534491985e-02,
    1.29645158702759389e-01, -1.19273663415386380e-01, 6.83080273440098973e-02,
    -2.37705149171713384e-02, 2.52939181569396959e-03, 1.88869034499917175e-03,
    -7.79832269654330600e-04, -1.05159719584480653e-04, 1.25099342458372901e-04,
    4.94919664996834501e-06, -2.01005422685256124e-05, -7.30828146878361399e-07,
    3.47237094497716817e-06, 3.55760866840805954e-07, -6.16601146039872571e-07,
    -1.40476543154284621e-07, 1.01836206038427363e-07, 4.10640136679403546e-08,
    -1.33129196610386871e-08, -8.21759505871145460e-09, 9.86253351034558736e-10,
    8.39373485869087735e-10,
};
struct NormalTail {
  double density;  // e^{-x^2/2}
  double tail;     // Phi(-|x|) = erfc(|x| / sqrt2) / 2
};
inline NormalTail normal_tail(double x) {  // x in [-40, 40] (beyond, the tail is 0 in double)
  const double z = std::abs(x) * kInvSqrt2;
  const double u = z + 3, v = 1 + 2 * z, r = 1 / (u * v);  // one division for t and 1 / (1 + 2z)
  const double t = (z - 3) * v * r;
  // Four interleaved Horner chains in t^4 (terms k = j mod 4), so the dependent chain is 6 deep, not 24:
  // the vectorised loop was bound by that latency. Straight-line code, so the row loop vectorises.
  const double t2 = t * t, t4 = t2 * t2;
  double c0 = std::fma(kErfcxPoly[24], t4, kErfcxPoly[20]), c1 = kErfcxPoly[21], c2 = kErfcxPoly[22],
         c3 = kErfcxPoly[23];
#pragma GCC unroll 5
  for (int k = 16; k >= 0; k -= 4) {
    c0 = std::fma(c0, t4, kErfcxPoly[k]);
    c1 = std::fma(c1, t4, kErfcxPoly[k + 1]);
    c2 = std::fma(c2, t4, kErfcxPoly[k + 2]);
    c3 = std::fma(c3, t4, kErfcxPoly[k + 3]);
  }
  const double p = std::fma(std::fma(c3, t, c2), t2, std::fma(c1, t, c0));
  const double hi = x * x, lo = std::fma(x, x, -hi);  // x^2 = hi + lo exactly
  const double e = exp_nonpositive(-0.5 * hi) * (1 - 0.5 * lo);
  return {e, 0.5 * e * (p * (u * r))};
}
inline double clamp40(double x) { return x < -40 ? -40 : (x > 40 ? 40 : x); }  // NaN stays NaN
inline double gelu(double x) {
  const double c = clamp40(x), q = normal_tail(c).tail;
  return x < 0 ? c * q : x * (1 - q);  // -inf -> -0, +inf -> +inf
}
double gelu_d(double x) {
  const double c = clamp40(x);
  const NormalTail n = normal_tail(c);
  return (x < 0 ? n.tail : 1 - n.tail) + c * kInvSqrt2Pi * n.density;
}

template <double (*F)(double)>
inline void row(double* h, const double* bias, int m) {
  for (int r = 0; r < m; ++r) h[r] = F(h[r] + bias[r]);
}
// One clone set per activation (core/numerics/vector_clones.hpp): each loop vectorised for the machine it runs on.
TOKDYN_VECTOR_CLONES void relu_row(double* h, const double* bias, int m) { row<relu>(h, bias, m); }
TOKDYN_VECTOR_CLONES void tanh_row(double* h, const double* bias, int m) { row<tanh_v>(h, bias, m); }
TOKDYN_VECTOR_CLONES void sigmoid_row(double* h, const double* bias, int m) { row<sigmoid>(h, bias, m); }
TOKDYN_VECTOR_CLONES void silu_row(double* h, const double* bias, int m) { row<silu>(h, bias, m); }
TOKDYN_VECTOR_CLONES void gelu_row(double* h, const double* bias, int m) { row<gelu>(h, bias, m); }

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
