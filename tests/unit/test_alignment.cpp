// Serial pieces of the power-method diagnostics: the leading direction of F or I + F, alignment, misalignment
// and phase in closed form, the minimum-norm least squares (dgelsd), and the steered output matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/power/alignment.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/power/steering.hpp"

namespace tokdyn {
namespace {

std::vector<double> gaussian(std::size_t n, std::uint64_t seed, double sd = 1) {
  std::vector<double> v(n);
  RandomStream(seed, Purpose::test).normals(0, 0, v.data(), n);
  for (double& x : v) x *= sd;
  return v;
}

TEST(LeadingDirection, DiagonalAndResidualShift) {
  // F = diag(-3, 1.5, 0.5, 0.25): lambda_1 = -3 (gap 0.5); I + F = diag(-2, 2.5, 1.5, 1.25): the residual
  // picks e_2 (|1 + 1.5| > |1 - 3|), gap 1 - 2 / 2.5.
  const int d = 4;
  std::vector<double> f(d * d, 0.0);
  const double diag[] = {-3, 1.5, 0.5, 0.25};
  for (int k = 0; k < d; ++k) f[k * d + k] = diag[k];
  const LeadingDirection plain = leading_direction(d, f, false);
  EXPECT_FALSE(plain.pair);
  EXPECT_DOUBLE_EQ(plain.re, -3);
  EXPECT_DOUBLE_EQ(plain.modulus, 3);
  EXPECT_DOUBLE_EQ(plain.next_modulus, 1.5);
  EXPECT_DOUBLE_EQ(plain.gap, 0.5);
  EXPECT_DOUBLE_EQ(std::abs(plain.eigvec[0]), 1);
  EXPECT_NEAR(plain.angle(), std::numbers::pi, 1e-15);
  // The plane of v_1, v_2: span(e_1, e_2).
  EXPECT_NEAR(std::abs(plain.plane[d + 1]), 1, 1e-15);
  const LeadingDirection shifted = leading_direction(d, f, true);
  EXPECT_DOUBLE_EQ(shifted.re, 2.5);
  EXPECT_DOUBLE_EQ(shifted.next_modulus, 2);
  EXPECT_NEAR(shifted.gap, 0.2, 1e-15);
  EXPECT_DOUBLE_EQ(std::abs(shifted.eigvec[1]), 1);
}

TEST(LeadingDirection, ComplexPairPhaseAdvancesByTheArgument) {
  // F = 2 R(0.7) + diag(0.3, -0.1) (block diagonal): pair 2 e^{+-0.7 i}, |lambda_3| = 0.3. A token in S rotates by
  // exactly 0.7 in the phase of its eigen-coordinates; its alignment with S is 1 and its misalignment 0.
  const int d = 4;
  const double theta = 0.7;
  std::vector<double> f(d * d, 0.0);
  f[0] = f[d + 1] = 2 * std::cos(theta);
  f[1] = -2 * std::sin(theta);
  f[d] = 2 * std::sin(theta);
  f[2 * d + 2] = 0.3;
  f[3 * d + 3] = -0.1;
  const LeadingDirection lead = leading_direction(d, f, false);
  ASSERT_TRUE(lead.pair);
  EXPECT_NEAR(lead.angle(), theta, 1e-14);
  EXPECT_NEAR(lead.modulus, 2, 1e-14);
  EXPECT_NEAR(lead.gap, 1 - 0.3 / 2, 1e-14);
  for (double phi : {0.1, 2.0, -2.9}) {
    const double x[d] = {std::cos(phi), std::sin(phi), 0, 0};
    double fx[d] = {0, 0, 0, 0};
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) fx[i] += f[i * d + j] * x[j];
    EXPECT_NEAR(std::remainder(phase(lead, fx) - phase(lead, x), 2 * std::numbers::pi), theta, 1e-14);
    EXPECT_NEAR(alignment(lead, x), 1, 1e-15);
    EXPECT_NEAR(misalignment(lead, x), 0, 1e-15);
  }
}

TEST(Alignment, MisalignmentKeepsDigitsAtTinyAngles) {
  // x = cos(phi) e_1 + sin(phi) e_3 against v_1 = e_1: gamma = cos(phi), misalignment = sin(phi) to full relative
  // precision even at phi = 1e-10, where 1 - gamma has no digits left.
  const int d = 3;
  std::vector<double> f = {2, 0, 0, 0, 1, 0, 0, 0, 0.5};
  const LeadingDirection lead = leading_direction(d, f, false);
  for (double phi : {0.5, 1e-4, 1e-10}) {
    const double x[d] = {3 * std::cos(phi), 0, 3 * std::sin(phi)};  // |x| = 3: both are scale-free
    EXPECT_NEAR(alignment(lead, x), std::cos(phi), 1e-15);
    EXPECT_NEAR(misalignment(lead, x) / std::sin(phi), 1, 1e-12);
  }
  EXPECT_NEAR(random_alignment_baseline(64, false), std::sqrt(2 / (std::numbers::pi * 64)), 1e-16);
}

TEST(LeastSquares, FullRankMinimumNormAndRankDeficient) {
  // Overdetermined, consistent: the exact solution. Underdetermined: A x = b with x in range(A^T)
  // (x = A^T y, y = (A A^T)^{-1} b, 2 x 2 here). Repeated columns: the rank, and the minimum-norm split.
  const int m = 6, n = 3;
  const std::vector<double> a = gaussian(m * n, 1), xs = {0.5, -1.25, 2};
  std::vector<double> b(m, 0.0), x(n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) b[i] += a[i * n + j] * xs[j];
  EXPECT_EQ(least_squares(m, n, a.data(), b.data(), x.data()), n);
  for (int j = 0; j < n; ++j) EXPECT_NEAR(x[j], xs[j], 1e-13);

  const int mu = 2, nu = 5;
  const std::vector<double> au = gaussian(mu * nu, 2), bu = {1.5, -0.5};
  std::vector<double> xu(nu);
  EXPECT_EQ(least_squares(mu, nu, au.data(), bu.data(), xu.data()), mu);
  double g[4] = {0, 0, 0, 0};
  for (int i = 0; i < mu; ++i)
    for (int k = 0; k < mu; ++k)
      for (int j = 0; j < nu; ++j) g[i * 2 + k] += au[i * nu + j] * au[k * nu + j];
  const double det = g[0] * g[3] - g[1] * g[2];
  const double y[2] = {(g[3] * bu[0] - g[1] * bu[1]) / det, (g[0] * bu[1] - g[2] * bu[0]) / det};
  for (int j = 0; j < nu; ++j) EXPECT_NEAR(xu[j], au[j] * y[0] + au[nu + j] * y[1], 1e-13);

  // [c, c]: rank 1, min-norm solution of [c, c] x = b is (t/2, t/2) with t = <c, b> / <c, c> (b = 2 c).
  std::vector<double> ad(4 * 2), bd(4);
  const std::vector<double> c = gaussian(4, 3);
  for (int i = 0; i < 4; ++i) ad[i * 2] = ad[i * 2 + 1] = c[i], bd[i] = 2 * c[i];
  double xd[2];
  EXPECT_EQ(least_squares(4, 2, ad.data(), bd.data(), xd, 1e-12), 1);
  EXPECT_NEAR(xd[0], 1, 1e-13);
  EXPECT_NEAR(xd[1], 1, 1e-13);
}

LayerWeights random_layer(int d, int heads, int head_dim, std::uint64_t seed) {
  LayerWeights w;
  w.d = d, w.heads = heads, w.head_dim = head_dim;
  const std::size_t n = static_cast<std::size_t>(d) * w.width();
  w.query = gaussian(n, seed), w.key = gaussian(n, seed + 1), w.value = gaussian(n, seed + 2);
  w.output = gaussian(n, seed + 3);
  return w;
}

TEST(Steering, RankOneChangeOfTheLayerMatrix) {
  // D = 12 > d = 8 (V has rank d): F' = F + alpha u u^T. D = 3 < d: F' = F + alpha u (P u)^T with
  // P = V^T (V V^T)^{-1} V the projector onto range(V^T), the 3 x 3 inverse by cofactors.
  const int d = 8;
  std::vector<double> u = unit_target(gaussian(d, 9), d, "u");
  const double alpha = 7.5;
  {
    const LayerWeights w = random_layer(d, 3, 4, 10);
    int rank = 0;
    const std::vector<double> f = layer_matrix(w), fp = layer_matrix(steer_layer(w, u, alpha, &rank));
    EXPECT_EQ(rank, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) EXPECT_NEAR(fp[i * d + j], f[i * d + j] + alpha * u[i] * u[j], 1e-12);
  }
  {
    const int D = 3;
    const LayerWeights w = random_layer(d, 1, D, 20);
    int rank = 0;
    const std::vector<double> f = layer_matrix(w), fp = layer_matrix(steer_layer(w, u, alpha, &rank));
    EXPECT_EQ(rank, D);
    double g[9] = {}, inv[9];
    for (int i = 0; i < D; ++i)
      for (int k = 0; k < D; ++k)
        for (int a = 0; a < d; ++a) g[i * 3 + k] += w.value[i * d + a] * w.value[k * d + a];
    const double det = g[0] * (g[4] * g[8] - g[5] * g[7]) - g[1] * (g[3] * g[8] - g[5] * g[6]) +
                       g[2] * (g[3] * g[7] - g[4] * g[6]);
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) {
        // inverse = adjugate / det: cofactor of (k, i)
        const int r0 = (k + 1) % 3, r1 = (k + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
        inv[i * 3 + k] = (g[r0 * 3 + c0] * g[r1 * 3 + c1] - g[r0 * 3 + c1] * g[r1 * 3 + c0]) / det;
      }
    std::vector<double> vu(D, 0.0), y(D, 0.0), pu(d, 0.0);
    for (int i = 0; i < D; ++i)
      for (int a = 0; a < d; ++a) vu[i] += w.value[i * d + a] * u[a];
    for (int i = 0; i < D; ++i)
      for (int k = 0; k < D; ++k) y[i] += inv[i * 3 + k] * vu[k];
    for (int a = 0; a < d; ++a)
      for (int i = 0; i < D; ++i) pu[a] += w.value[i * d + a] * y[i];
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) EXPECT_NEAR(fp[i * d + j], f[i * d + j] + alpha * u[i] * pu[j], 1e-12);
  }
}

TEST(Steering, TargetMustBeAUsableDirection) {
  EXPECT_THROW(unit_target({1, 2}, 3, "steer.target"), InputError);
  EXPECT_THROW(unit_target({0, 0, 0}, 3, "steer.target"), InputError);
  EXPECT_THROW(unit_target({0, NAN, 1}, 3, "steer.target"), InputError);
  const std::vector<double> u = unit_target({3, 0, 4}, 3, "steer.target");
  EXPECT_DOUBLE_EQ(u[0], 0.6);
  EXPECT_DOUBLE_EQ(u[2], 0.8);
}

}  // namespace
}  // namespace tokdyn
