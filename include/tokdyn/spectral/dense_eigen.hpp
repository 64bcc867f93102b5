// Dense eigen-decomposition of a general real matrix (LAPACK dgeev): the reference every
// distributed eigen-solve is checked against, and the solver of moderate-size layer matrices.
#pragma once

#include <vector>

namespace tokdyn {

// Eigenpairs sorted by decreasing modulus (ties: larger real part, then positive imaginary part first).
// A complex pair occupies positions k, k+1 with im[k] > 0, im[k+1] = -im[k]; its vector rows are
// Re v (row k) and Im v (row k+1), v = Re v + i Im v the eigenvector of lambda_k = re[k] + i im[k].
// Every eigenvector has unit 2-norm (|Re v|^2 + |Im v|^2 = 1 for a pair).
struct DenseEigen {
  int n = 0;
  std::vector<double> re, im;  // [n]
  std::vector<double> right;   // [n, n]: row k = (Re or Im part of) right eigenvector k
  std::vector<double> left;    // [n, n], same layout, when requested (u^H A = lambda u^H)
};

// a: [n, n] row-major, finite (InputError naming the first NaN or Inf: dgeev may never return on one).
// left: also compute left eigenvectors.
DenseEigen dense_eigen(int n, const double* a, bool left = false);

// Relative residual |A v - lambda v| / (|A|_F |v|) of pair k (a complex pair's residual for either member).
double dense_residual(int n, const double* a, const DenseEigen& e, int k);

}  // namespace tokdyn
