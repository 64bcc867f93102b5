// dense_eigen (LAPACK dgeev): eigenvalues of matrices with a known spectrum, ordering and residuals.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/eigensolver.hpp"

namespace tokdyn {
namespace {

// S B S^{-1} with B block diagonal (known eigenvalues) and S = I + 0.3 G (well conditioned).
std::vector<double> similar_to(const std::vector<double>& b, int n, std::uint64_t seed) {
  RandomStream rng(seed, Purpose::test);
  std::vector<double> s(n * n), g(n);
  for (int i = 0; i < n; ++i) {
    rng.normals(static_cast<std::uint64_t>(i), 0, g.data(), n);
    for (int j = 0; j < n; ++j) s[i * n + j] = (i == j ? 1.0 : 0.0) + 0.3 * g[j] / std::sqrt(n);
  }
  // Solve by Gauss-Jordan for S^{-1} (n small, S diagonally dominant in expectation).
  std::vector<double> inv(n * n, 0.0), m = s;
  for (int i = 0; i < n; ++i) inv[i * n + i] = 1;
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    for (int j = 0; j < n; ++j) {
      std::swap(m[c * n + j], m[p * n + j]);
      std::swap(inv[c * n + j], inv[p * n + j]);
    }
    const double piv = m[c * n + c];
    for (int j = 0; j < n; ++j) {
      m[c * n + j] /= piv;
      inv[c * n + j] /= piv;
    }
    for (int r = 0; r < n; ++r)
      if (r != c) {
        const double f = m[r * n + c];
        for (int j = 0; j < n; ++j) {
          m[r * n + j] -= f * m[c * n + j];
          inv[r * n + j] -= f * inv[c * n + j];
        }
      }
  }
  std::vector<double> sb(n * n, 0.0), a(n * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) sb[i * n + j] += s[i * n + k] * b[k * n + j];
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) a[i * n + j] += sb[i * n + k] * inv[k * n + j];
  return a;
}

TEST(DenseEigen, KnownSpectrumSortedByModulusWithPairsTogether) {
  const int n = 6;
  // Eigenvalues: 0.3, -2, 1.5 e^{+-0.7 i}, 0.1, 1.
  std::vector<double> b(n * n, 0.0);
  b[0 * n + 0] = 0.3;
  b[1 * n + 1] = -2;
  const double r = 1.5, t = 0.7;
  b[2 * n + 2] = r * std::cos(t);
  b[2 * n + 3] = r * std::sin(t);
  b[3 * n + 2] = -r * std::sin(t);
  b[3 * n + 3] = r * std::cos(t);
  b[4 * n + 4] = 0.1;
  b[5 * n + 5] = 1;
  const std::vector<double> a = similar_to(b, n, 7);
  const DenseEigen e = dense_eigen(n, a.data(), true);
  const double want_re[] = {-2, r * std::cos(t), r * std::cos(t), 1, 0.3, 0.1};
  const double want_im[] = {0, r * std::sin(t), -r * std::sin(t), 0, 0, 0};
  for (int k = 0; k < n; ++k) {
    EXPECT_NEAR(e.re[k], want_re[k], 1e-12) << k;
    EXPECT_NEAR(e.im[k], want_im[k], 1e-12) << k;
    EXPECT_LT(dense_residual(n, a.data(), e, k), 1e-14) << k;
  }
  // Left eigenvector of the real lambda = -2: u^T A = -2 u^T.
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += e.left[i] * a[i * n + j];
    EXPECT_NEAR(s, -2 * e.left[j], 1e-12);
  }
  // Pair vectors have unit norm |Re v|^2 + |Im v|^2 = 1.
  double norm = 0;
  for (int i = 0; i < 2 * n; ++i) norm += e.right[n + i] * e.right[n + i];
  EXPECT_NEAR(norm, 1, 1e-13);
}

}  // namespace
}  // namespace tokdyn

TEST(SolverChoice, AutoIsLapackUpToDenseMaxForEveryCommand) {
  // spectrum and power call this one rule: d = dense_max is still dense, one more is Krylov-Schur.
  EXPECT_FALSE(tokdyn::use_krylov("auto", 2048, 2048));
  EXPECT_TRUE(tokdyn::use_krylov("auto", 2049, 2048));
  EXPECT_TRUE(tokdyn::use_krylov("auto", 3, 0));
  EXPECT_TRUE(tokdyn::use_krylov("krylovschur", 2, 2048));
  EXPECT_FALSE(tokdyn::use_krylov("lapack", 1 << 20, 2048));
}
