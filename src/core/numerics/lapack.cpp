#include "tokdyn/core/numerics/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tokdyn/core/errors/error.hpp"

extern "C" {
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info);
void dstev_(const char* jobz, const int* n, double* d, double* e, double* z, const int* ldz, double* work, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
}

namespace tokdyn {

void symmetric_eigensolve(int n, const double* a, double* w, double* vectors) {
  // Column-major for LAPACK: a symmetric matrix is its own transpose.
  std::vector<double> m(a, a + static_cast<std::size_t>(n) * n);
  int info = 0, lwork = -1, liwork = -1, iwork_query = 0;
  double work_query = 0;
  dsyevd_("V", "L", &n, m.data(), &n, w, &work_query, &lwork, &iwork_query, &liwork, &info);
  lwork = static_cast<int>(work_query);
  liwork = iwork_query;
  std::vector<double> work(std::max(1, lwork));
  std::vector<int> iwork(std::max(1, liwork));
  dsyevd_("V", "L", &n, m.data(), &n, w, work.data(), &lwork, iwork.data(), &liwork, &info);
  if (info != 0) throw SystemError("LAPACK dsyevd failed, info = " + std::to_string(info));
  // m column-major: m[k * n + i] = v_k[i]; return row-major columns.
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) vectors[i * n + k] = m[static_cast<std::size_t>(k) * n + i];
}

double symmetric_sqrt(int n, const double* a, double* root) {
  std::vector<double> w(n), v(static_cast<std::size_t>(n) * n);
  symmetric_eigensolve(n, a, w.data(), v.data());
  double clipped = 0;
  for (int k = 0; k < n; ++k) {
    if (w[k] < 0) clipped = std::min(clipped, w[k]);
    w[k] = std::sqrt(std::max(w[k], 0.0));
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += v[i * n + k] * w[k] * v[j * n + k];
      root[i * n + j] = root[j * n + i] = s;
    }
  return clipped;
}

void tridiagonal_eigensolve(int n, double* diag, double* off, double* first) {
  std::vector<double> z(static_cast<std::size_t>(n) * n), work(std::max(1, 2 * n - 2));
  int info = 0;
  dstev_("V", &n, diag, off, z.data(), &n, work.data(), &info);
  if (info != 0) throw SystemError("LAPACK dstev failed, info = " + std::to_string(info));
  for (int k = 0; k < n; ++k) first[k] = z[static_cast<std::size_t>(k) * n];  // column k, row 0
}

int least_squares(int m, int n, const double* a, const double* b, double* x, double rcond) {
  // Column-major copy of A, and b padded to max(m, n) rows (dgelsd returns x in its first n).
  const int ldb = std::max(1, std::max(m, n));
  std::vector<double> ac(static_cast<std::size_t>(std::max(1, m)) * std::max(1, n));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) ac[static_cast<std::size_t>(j) * m + i] = a[static_cast<std::size_t>(i) * n + j];
  std::vector<double> bx(ldb, 0.0), s(std::max(1, std::min(m, n)));
  std::copy(b, b + m, bx.begin());
  const int nrhs = 1, lda = std::max(1, m);
  int rank = 0, info = 0, lwork = -1, iwork_query = 0;
  double work_query = 0;
  dgelsd_(&m, &n, &nrhs, ac.data(), &lda, bx.data(), &ldb, s.data(), &rcond, &rank, &work_query, &lwork, &iwork_query,
          &info);
  lwork = static_cast<int>(work_query);
  std::vector<double> work(std::max(1, lwork));
  std::vector<int> iwork(std::max(1, iwork_query));
  dgelsd_(&m, &n, &nrhs, ac.data(), &lda, bx.data(), &ldb, s.data(), &rcond, &rank, work.data(), &lwork, iwork.data(),
          &info);
  if (info != 0) throw SystemError("LAPACK dgelsd failed, info = " + std::to_string(info));
  std::copy(bx.begin(), bx.begin() + n, x);
  return rank;
}

}  // namespace tokdyn
