// top_singular_triplet (Lanczos bidiagonalisation) against a LAPACK eigensolve of A^T A, closed forms
// (rank one, a single row or column, zero) and a clustered spectrum that needs restarts.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tokdyn/core/numerics/lapack.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/spectral/top_singular.hpp"

namespace tokdyn {
namespace {

std::vector<double> gaussian_entries(int n, std::uint64_t index) {
  std::vector<double> x(n);
  RandomStream(7, Purpose::test).normals(0, index, x.data(), n);
  return x;
}

double dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// The reference: the top eigenpair of A^T A [cols, cols] by LAPACK; u = A v / sigma.
SingularTriplet dense_top(const std::vector<double>& a, int rows, int cols) {
  std::vector<double> ata(static_cast<std::size_t>(cols) * cols, 0.0), w(cols), vectors(ata.size());
  for (int i = 0; i < cols; ++i)
    for (int j = 0; j < cols; ++j)
      for (int k = 0; k < rows; ++k) ata[i * cols + j] += a[k * cols + i] * a[k * cols + j];
  symmetric_eigensolve(cols, ata.data(), w.data(), vectors.data());
  SingularTriplet t;
  t.value = std::sqrt(w[cols - 1]);
  t.right.resize(cols);
  for (int i = 0; i < cols; ++i) t.right[i] = vectors[i * cols + cols - 1];
  t.left.assign(rows, 0.0);
  for (int k = 0; k < rows; ++k)
    for (int i = 0; i < cols; ++i) t.left[k] += a[k * cols + i] * t.right[i] / t.value;
  return t;
}

void expect_triplet(const std::vector<double>& a, int rows, int cols, double value_tol, double angle_tol) {
  const SingularTriplet ref = dense_top(a, rows, cols);
  const SingularTriplet t = top_singular_triplet(a.data(), rows, cols, gaussian_entries(cols, 99));
  EXPECT_NEAR(t.value, ref.value, value_tol * ref.value) << rows << " x " << cols;
  EXPECT_LE(t.residual, 1e-12);
  // Unit vectors, the same up to sign: 1 - |<x, y>| ~ angle^2 / 2.
  EXPECT_NEAR(dot(t.left, t.left), 1.0, 1e-13);
  EXPECT_NEAR(dot(t.right, t.right), 1.0, 1e-13);
  EXPECT_GE(std::abs(dot(t.left, ref.left)), 1 - angle_tol);
  EXPECT_GE(std::abs(dot(t.right, ref.right)), 1 - angle_tol);
  // The defining relations, measured: A v = sigma u and A^T u = sigma v.
  double r1 = 0, r2 = 0;
  for (int k = 0; k < rows; ++k) {
    double s = 0;
    for (int i = 0; i < cols; ++i) s += a[k * cols + i] * t.right[i];
    r1 += (s - t.value * t.left[k]) * (s - t.value * t.left[k]);
  }
  for (int i = 0; i < cols; ++i) {
    double s = 0;
    for (int k = 0; k < rows; ++k) s += a[k * cols + i] * t.left[k];
    r2 += (s - t.value * t.right[i]) * (s - t.value * t.right[i]);
  }
  EXPECT_LE(std::sqrt(r1), 2e-12 * t.value);
  EXPECT_LE(std::sqrt(r2), 1e-12 * t.value);
}

TEST(TopSingular, GaussianMatricesAgreeWithLapack) {
  // Gaussian matrices: sigma_1 - sigma_2 is about n^{-1/6} sigma_1 (Tracy–Widom), the angles are
  // then near residual; eigenvalues of A^T A carry 1e-16 |A|^2, sigma half of that relatively.
  for (auto [rows, cols] : {std::pair{5, 5}, {40, 40}, {200, 150}, {150, 200}, {1, 30}, {30, 1}}) {
    std::vector<double> a(static_cast<std::size_t>(rows) * cols);
    for (int k = 0; k < rows; ++k) {
      const std::vector<double> row = gaussian_entries(cols, 1000 + k);
      std::copy(row.begin(), row.end(), a.begin() + static_cast<std::ptrdiff_t>(k) * cols);
    }
    expect_triplet(a, rows, cols, 1e-13, 1e-9);
  }
}

TEST(TopSingular, RankOneIsExact) {
  const int rows = 60, cols = 45;
  const std::vector<double> x = gaussian_entries(rows, 1), y = gaussian_entries(cols, 2);
  std::vector<double> a(static_cast<std::size_t>(rows) * cols);
  for (int k = 0; k < rows; ++k)
    for (int i = 0; i < cols; ++i) a[k * cols + i] = x[k] * y[i];
  const SingularTriplet t = top_singular_triplet(a.data(), rows, cols, gaussian_entries(cols, 3));
  EXPECT_NEAR(t.value, std::sqrt(dot(x, x) * dot(y, y)), 1e-13 * t.value);
  EXPECT_NEAR(std::abs(dot(t.left, x)), std::sqrt(dot(x, x)), 1e-12);
  EXPECT_LE(t.products, 4);  // one step finds it, one product measures the residual
}

TEST(TopSingular, ZeroMatrixGivesZero) {
  const std::vector<double> a(12, 0.0);
  const SingularTriplet t = top_singular_triplet(a.data(), 3, 4, gaussian_entries(4, 5));
  EXPECT_EQ(t.value, 0.0);
  EXPECT_EQ(dot(t.left, t.left), 1.0);
}

TEST(TopSingular, ClusteredSpectrumConvergesThroughRestarts) {
  // diag(1, 1 - 1e-4, ..., 1 - k 1e-4, ...) [80, 80] mixed by nothing: sigma_1 = 1 exactly, a relative gap
  // of 1e-4; cycles of 4 steps must restart many times.
  const int n = 80;
  std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) a[i * n + i] = 1 - 1e-4 * i;
  const SingularTriplet t = top_singular_triplet(a.data(), n, n, gaussian_entries(n, 6), 1e-12, 4);
  EXPECT_NEAR(t.value, 1.0, 1e-13);
  EXPECT_GT(t.products, 3 * 9);  // more than three cycles
  EXPECT_GE(std::abs(t.right[0]), 1 - 1e-8);
}

}  // namespace
}  // namespace tokdyn
