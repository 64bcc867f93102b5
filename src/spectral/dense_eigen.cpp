#include "tokdyn/spectral/dense_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/phases.hpp"

extern "C" {
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info);
}

namespace tokdyn {

namespace {

// An eigenvalue with its LAPACK column, or a conjugate pair (first = the member with im > 0).
struct DenseItem {
  int column;
  bool pair;
  double re, im, modulus;
};

}  // namespace

DenseEigen dense_eigen(int n, const double* a, bool left) {
  PhaseScope timed(Phase::eigensolve);
  DenseEigen e;
  e.n = n;
  if (n == 0) return e;
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  // dgeev neither refuses nor survives NaN or Inf (it reports illegal arguments, then may never return).
  for (std::size_t k = 0; k < nn; ++k)
    if (!std::isfinite(a[k]))
      throw InputError("the layer matrix holds NaN or Inf (first at row " + std::to_string(k / n) + ", column " +
                       std::to_string(k % n) + "): weights too large for double precision?");
  std::vector<double> m(nn);  // column-major copy: m[j * n + i] = a[i][j]
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m[static_cast<std::size_t>(j) * n + i] = a[static_cast<std::size_t>(i) * n + j];
  std::vector<double> wr(n), wi(n), vr(nn), vl(left ? nn : 1);
  const char* jobvl = left ? "V" : "N";
  const int ldvl = left ? n : 1;
  int info = 0, lwork = -1;
  double query = 0;
  dgeev_(jobvl, "V", &n, m.data(), &n, wr.data(), wi.data(), vl.data(), &ldvl, vr.data(), &n, &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(std::max(1, lwork));
  dgeev_(jobvl, "V", &n, m.data(), &n, wr.data(), wi.data(), vl.data(), &ldvl, vr.data(), &n, work.data(), &lwork,
         &info);
  if (info != 0) throw SystemError("LAPACK dgeev failed, info = " + std::to_string(info));

  std::vector<DenseItem> items;
  for (int j = 0; j < n; ++j) {
    const bool pair = wi[j] != 0;
    items.push_back({j, pair, wr[j], std::abs(wi[j]), std::hypot(wr[j], wi[j])});
    if (pair) ++j;  // LAPACK stores the pair consecutively, the member with im > 0 first
  }
  std::stable_sort(items.begin(), items.end(), [](const DenseItem& x, const DenseItem& y) {
    if (x.modulus != y.modulus) return x.modulus > y.modulus;
    return x.re > y.re;
  });

  e.re.resize(n);
  e.im.resize(n);
  e.right.resize(nn);
  if (left) e.left.resize(nn);
  // Copies LAPACK column c (column-major [n, n]) to row k of out, scaled by s.
  auto copy_column = [n](const std::vector<double>& from, int c, std::vector<double>& out, int k, double s) {
    for (int i = 0; i < n; ++i)
      out[static_cast<std::size_t>(k) * n + i] = s * from[static_cast<std::size_t>(c) * n + i];
  };
  auto norm_of = [n](const std::vector<double>& from, int c, int parts) {
    double s = 0;
    for (int p = 0; p < parts; ++p)
      for (int i = 0; i < n; ++i) s += from[static_cast<std::size_t>(c + p) * n + i] * from[static_cast<std::size_t>(c + p) * n + i];
    return std::sqrt(s);
  };
  int k = 0;
  for (const DenseItem& it : items) {
    const int parts = it.pair ? 2 : 1;
    const double sr = 1 / norm_of(vr, it.column, parts);  // dgeev normalises already; kept exact here
    for (int p = 0; p < parts; ++p) copy_column(vr, it.column + p, e.right, k + p, sr);
    if (left) {
      const double sl = 1 / norm_of(vl, it.column, parts);
      for (int p = 0; p < parts; ++p) copy_column(vl, it.column + p, e.left, k + p, sl);
    }
    e.re[k] = it.re;
    e.im[k] = it.pair ? it.im : 0;
    if (it.pair) {
      e.re[k + 1] = it.re;
      e.im[k + 1] = -it.im;
    }
    k += parts;
  }
  return e;
}

double dense_residual(int n, const double* a, const DenseEigen& e, int k) {
  // A complex pair is stored at (first, first + 1) with im[first] > 0.
  int first = k;
  if (e.im[k] < 0) first = k - 1;
  const bool pair = e.im[first] != 0;
  const double alpha = e.re[first], beta = pair ? e.im[first] : 0;
  const double* vre = &e.right[static_cast<std::size_t>(first) * n];
  const double* vim = pair ? &e.right[static_cast<std::size_t>(first + 1) * n] : nullptr;
  double frob = 0, num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    double ar = 0, ai = 0;
    for (int j = 0; j < n; ++j) {
      const double aij = a[static_cast<std::size_t>(i) * n + j];
      frob += aij * aij;
      ar += aij * vre[j];
      if (pair) ai += aij * vim[j];
    }
    // A (a + i b) - (alpha + i beta)(a + i b) = (A a - alpha a + beta b) + i (A b - beta a - alpha b)
    const double rr = ar - alpha * vre[i] + (pair ? beta * vim[i] : 0);
    const double ri = pair ? ai - beta * vre[i] - alpha * vim[i] : 0;
    num += rr * rr + ri * ri;
    den += vre[i] * vre[i] + (pair ? vim[i] * vim[i] : 0);
  }
  const double scale = std::sqrt(frob) * std::sqrt(den);
  return scale > 0 ? std::sqrt(num) / scale : std::sqrt(num);
}

}  // namespace tokdyn
