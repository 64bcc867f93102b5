// The MLP covariance kernel kappa: quadrature against the ReLU closed form and the reference rows of
// doc/science.md section 2.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "tokdyn/noise/activation.hpp"
#include "tokdyn/noise/mlp_kernel.hpp"

using namespace tokdyn;

namespace {
// |a - b| <= 0.5 unit in the third significant digit of b: "equal to 3 significant digits".
void expect_three_digits(double a, double b, const char* what) {
  const double unit = std::pow(10.0, std::floor(std::log10(std::abs(b))) - 2);
  EXPECT_LE(std::abs(a - b), 0.5 * unit) << what << ": " << a << " vs " << b;
}
}  // namespace

TEST(MlpKernel, ReluQuadratureMatchesArcCosineClosedForm) {
  for (int d : {2, 5, 64})
    for (double su : {0.0, 0.1, 0.7})
      for (double sw : {0.0, 0.3})
        for (double u : {-1.0, -0.6, 0.0, 0.35, 0.9, 0.999, 1.0}) {
          const MlpKernel k{&activation("relu"), d, su, sw};
          EXPECT_NEAR(k.kappa(u), relu_kappa(d, su, sw, u), 1e-10) << d << " " << su << " " << u;
          if (u < 1.0) {
            EXPECT_NEAR(k.kappa_prime(u), relu_kappa_prime(d, su, u), 1e-10) << d << " " << su << " " << u;
          }
        }
  // kappa(1) = 1/(2d) + sigma_U^2/2 + sigma_W^2 and kappa'(1) = 1/(2d) (doc/science.md section 2).
  EXPECT_NEAR(relu_kappa(5, 0.2, 0.3, 1.0), 0.1 + 0.02 + 0.09, 1e-15);
  EXPECT_NEAR(relu_kappa_prime(5, 0.2, 1.0), 0.1, 1e-15);
}

TEST(MlpKernel, SmoothActivationsAgreeWithOneDimensionalMoments) {
  // kappa(1) = E[sigma(V)^2] + sigma_W^2 with V ~ N(0, s^2): check the 2-D rule at r = 1 against
  // the numerical derivative identity kappa'(u) = d kappa / du.
  for (const char* name : {"tanh", "sigmoid", "silu", "gelu"}) {
    const MlpKernel k{&activation(name), 5, 0.1, 0.1};
    const double h = 1e-4, u = 0.3;
    const double numeric = (k.kappa(u + h) - k.kappa(u - h)) / (2 * h);
    EXPECT_NEAR(k.kappa_prime(u), numeric, 1e-7) << name;
  }
}

TEST(MlpKernel, SpecReferenceRows) {
  struct Row {
    const char* act;
    int d;
    double s, kappa1, kappa_prime1;
  };
  const Row rows[] = {{"relu", 5, 0.0, 1.00e-1, 1.00e-1},     {"relu", 64, 0.1, 2.28e-2, 7.81e-3},
                      {"sigmoid", 5, 0.0, 2.61e-1, 1.14e-2},  {"tanh", 64, 0.1, 3.44e-2, 1.49e-2},
                      {"silu", 128, 0.1, 1.45e-2, 1.99e-3}};
  for (const Row& r : rows) {
    const MlpKernel k{&activation(r.act), r.d, r.s, r.s};
    expect_three_digits(k.kappa(1.0), r.kappa1, r.act);
    expect_three_digits(k.kappa_prime(1.0), r.kappa_prime1, r.act);
  }
}

namespace {

// The row form the MLPs use gives value()'s bits entry by entry, for every activation, across the kinks.
TEST(Activation, RowEqualsValueBitForBit) {
  const int m = 37;  // not a multiple of any vector width
  std::vector<double> h(m), bias(m);
  for (int r = 0; r < m; ++r) h[r] = -6 + 12.0 * r / (m - 1), bias[r] = (r % 5 == 0) ? -h[r] : 0.01 * (r % 7);
  for (const std::string& name : activation_names()) {
    const Activation& a = activation(name);
    std::vector<double> out = h;
    a.row(out.data(), bias.data(), m);
    for (int r = 0; r < m; ++r) EXPECT_EQ(out[r], a.value(h[r] + bias[r])) << name << " entry " << r;
  }
}

// tanh, sigmoid and silu come from the vectorised exponentials: within 6 ulp of libm (expm1 3 ulp, one division
// and an add ~2 more) from 1e-12 to 40 in size, either sign, NaN to NaN, and their limits at +-inf exact.
TEST(Activation, VectorisedFormsWithinSixUlpOfLibm) {
  const double eps = std::numeric_limits<double>::epsilon();
  auto libm_sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  for (double mag = 1e-12; mag < 40; mag *= 1.37)
    for (double x : {mag, -mag}) {
      const double t = std::tanh(x), s = libm_sigmoid(x);
      EXPECT_NEAR(activation("tanh").value(x), t, 6 * eps * std::abs(t)) << x;
      EXPECT_NEAR(activation("sigmoid").value(x), s, 6 * eps * s) << x;
      EXPECT_NEAR(activation("silu").value(x), x * s, 6 * eps * std::abs(x * s)) << x;
    }
  EXPECT_EQ(activation("tanh").value(1e3), 1.0);
  EXPECT_EQ(activation("tanh").value(-1e3), -1.0);
  EXPECT_EQ(activation("tanh").value(0.0), 0.0);
  EXPECT_EQ(activation("sigmoid").value(1e3), 1.0);
  EXPECT_EQ(activation("sigmoid").value(-1e3), 0.0);
  EXPECT_TRUE(std::isnan(activation("tanh").value(std::nan(""))));
  EXPECT_TRUE(std::isnan(activation("sigmoid").value(std::nan(""))));
}

// The exact GELU x Phi(x) and its derivative from the vectorised erfcx polynomial: within 8 ulp of a long-double
// reference (erfcl at 64-bit precision, whose own rounding of x/sqrt2 is 2^-11 of a double ulp at |x| = 37)
// wherever the result is normal: the polynomial is 0.73 ulp (doc/erfcx_fit.py), the exponential 2, the
// divisions and products one each. Limits and NaN exact.
TEST(Activation, GeluWithinEightUlpOfLongDouble) {
  const double eps = std::numeric_limits<double>::epsilon();
  auto reference = [](double x) {
    const long double phi = 0.5L * std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L));
    const long double density = std::exp(-0.5L * x * x) / std::sqrt(2 * 3.14159265358979323846264338327950288L);
    return std::tuple<double, double, double>(static_cast<double>(x * phi), static_cast<double>(phi + x * density),
                                              static_cast<double>(phi + std::abs(x) * density));
  };
  int checked = 0;
  for (double mag = 1e-12; mag < 37; mag *= 1.013)
    for (double x : {mag, -mag}) {
      const auto [g, dg, dg_terms] = reference(x);
      if (std::abs(g) < 1e-300) continue;  // subnormal: no relative accuracy to ask for
      EXPECT_NEAR(activation("gelu").value(x), g, 8 * eps * std::abs(g)) << x;
      // Phi + x phi changes sign near x = -0.75: relative to its terms' size, not to itself.
      EXPECT_NEAR(activation("gelu").derivative(x), dg, 8 * eps * dg_terms) << x;
      ++checked;
    }
  EXPECT_GT(checked, 4000);
  EXPECT_EQ(activation("gelu").value(0.0), 0.0);
  EXPECT_EQ(activation("gelu").value(50.0), 50.0);
  EXPECT_EQ(activation("gelu").value(-50.0), 0.0);
  EXPECT_EQ(activation("gelu").value(INFINITY), INFINITY);
  EXPECT_EQ(activation("gelu").value(-INFINITY), 0.0);
  EXPECT_TRUE(std::isnan(activation("gelu").value(std::nan(""))));
}

}  // namespace
