#include "tokdyn/spectral/top_singular.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/lapack.hpp"

namespace tokdyn {
namespace {

double norm(const std::vector<double>& x) { return cblas_dnrm2(static_cast<int>(x.size()), x.data(), 1); }

// x -= Q Q^T x for the first k rows of Q [k, n] (orthonormal), twice: one pass of classical Gram–Schmidt
// loses orthogonality when x is nearly in the span ("twice is enough").
void orthogonalise(const std::vector<double>& Q, int k, int n, std::vector<double>& x) {
  if (k == 0) return;
  std::vector<double> c(k);
  for (int pass = 0; pass < 2; ++pass) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, k, n, 1.0, Q.data(), n, x.data(), 1, 0.0, c.data(), 1);
    cblas_dgemv(CblasRowMajor, CblasTrans, k, n, -1.0, Q.data(), n, c.data(), 1, 1.0, x.data(), 1);
  }
}

}  // namespace

SingularTriplet top_singular_triplet(const double* a, int rows, int cols, const std::vector<double>& start, double tol,
                                     int cycle, int max_products) {
  SingularTriplet t;
  t.left.assign(rows, 0.0);
  t.right.assign(cols, 0.0);
  const double frobenius = cblas_dnrm2(rows * cols, a, 1);
  if (frobenius == 0) {  // every vector is singular: the first unit vectors
    t.left[0] = t.right[0] = 1;
    return t;
  }
  // An invariant subspace once a new direction is this small against |A|.
  const double breakdown = 1e-14 * frobenius;
  const int steps = std::max(1, std::min({cycle, rows, cols}));
  std::vector<double> v = start;
  if (!(norm(v) > 0)) throw SystemError("top_singular_triplet: the start vector is zero");
  // Rows of U [steps, rows] and V [steps + 1, cols] are the Lanczos vectors.
  std::vector<double> U(static_cast<std::size_t>(steps) * rows), V(static_cast<std::size_t>(steps + 1) * cols, 0.0);
  std::vector<double> alpha, beta, r(rows), w(cols);
  for (;;) {
    // One cycle of k steps: A^T U_k = V_{k+1} B^T with B [k, k + 1] upper bidiagonal (alpha on the
    // diagonal, beta above it), and A V_k = U_k B_k (its first k columns).
    alpha.clear(), beta.clear();
    const double vn = norm(v);
    for (int j = 0; j < cols; ++j) V[j] = v[j] / vn;
    int k = 0;
    while (k < steps) {
      // u_k: A v_k orthogonalised against u_1..u_{k-1} (removes beta_{k-1} u_{k-1} with the rest).
      cblas_dgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.0, a, cols, &V[static_cast<std::size_t>(k) * cols], 1, 0.0,
                  r.data(), 1);
      ++t.products;
      orthogonalise(U, k, rows, r);
      const double ak = norm(r);
      if (ak <= breakdown) break;  // A v_k lies in span(u_1..u_{k-1}): B's last column holds it
      alpha.push_back(ak);
      for (int i = 0; i < rows; ++i) U[static_cast<std::size_t>(k) * rows + i] = r[i] / ak;
      // v_{k+1}: A^T u_k orthogonalised against v_1..v_k (removes alpha_k v_k with the rest).
      cblas_dgemv(CblasRowMajor, CblasTrans, rows, cols, 1.0, a, cols, &U[static_cast<std::size_t>(k) * rows], 1, 0.0,
                  w.data(), 1);
      ++t.products;
      orthogonalise(V, k + 1, cols, w);
      const double bk = norm(w);
      ++k;
      beta.push_back(bk > breakdown ? bk : 0.0);
      if (beta.back() == 0) break;  // A^T span(u) = span(v): exact on this side
      for (int j = 0; j < cols; ++j) V[static_cast<std::size_t>(k) * cols + j] = w[j] / bk;
    }
    if (k == 0) throw SystemError("top_singular_triplet: A v = 0 for the start vector");
    // The top left singular vector p of B: the top eigenvector of B B^T [k, k] (tridiagonal, small);
    // then sigma q = B^T p, u = U_k p, v = V_{k+1} q, so that A^T u = sigma v.
    std::vector<double> bbt(static_cast<std::size_t>(k) * k, 0.0), ev(k), vectors(bbt.size());
    for (int i = 0; i < k; ++i) {
      bbt[static_cast<std::size_t>(i) * k + i] = alpha[i] * alpha[i] + beta[i] * beta[i];
      if (i + 1 < k)
        bbt[static_cast<std::size_t>(i) * k + i + 1] = bbt[static_cast<std::size_t>(i + 1) * k + i] = beta[i] * alpha[i + 1];
    }
    symmetric_eigensolve(k, bbt.data(), ev.data(), vectors.data());
    std::vector<double> p(k), q(k + 1);
    for (int i = 0; i < k; ++i) p[i] = vectors[static_cast<std::size_t>(i) * k + (k - 1)];
    for (int i = 0; i <= k; ++i) q[i] = (i < k ? alpha[i] * p[i] : 0.0) + (i > 0 ? beta[i - 1] * p[i - 1] : 0.0);
    const double sigma = norm(q);
    for (double& x : q) x /= sigma;
    cblas_dgemv(CblasRowMajor, CblasTrans, k, rows, 1.0, U.data(), rows, p.data(), 1, 0.0, t.left.data(), 1);
    cblas_dgemv(CblasRowMajor, CblasTrans, k + 1, cols, 1.0, V.data(), cols, q.data(), 1, 0.0, t.right.data(), 1);
    t.value = sigma;
    // The residual of the other side, |A v - sigma u|, measured.
    cblas_dgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.0, a, cols, t.right.data(), 1, 0.0, r.data(), 1);
    ++t.products;
    for (int i = 0; i < rows; ++i) r[i] -= sigma * t.left[i];
    t.residual = norm(r) / sigma;
    if (t.residual <= tol) {
      // The sign that makes the largest entry of u positive: the same vectors from any start.
      const auto big = std::max_element(t.left.begin(), t.left.end(), [](double x, double y) { return std::abs(x) < std::abs(y); });
      if (*big < 0) {
        for (double& x : t.left) x = -x;
        for (double& x : t.right) x = -x;
      }
      return t;
    }
    if (t.products >= max_products)
      throw SystemError("top_singular_triplet: no convergence in " + std::to_string(t.products) +
                        " products (residual " + std::to_string(t.residual) + ")");
    v = t.right;
  }
}

}  // namespace tokdyn
