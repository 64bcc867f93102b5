// Dense LAPACK eigensolvers and least squares (from the OpenBLAS build), with checked return codes.
#pragma once

#include <vector>

namespace tokdyn {

// Symmetric A [n, n] (row-major; symmetric, so either order): eigenvalues ascending in w [n], and
// the eigenvectors as the columns of vectors [n, n] (row-major: vectors[i * n + k] = v_k[i]).
void symmetric_eigensolve(int n, const double* a, double* w, double* vectors);

// Symmetric square root V max(w, 0)^{1/2} V^T of A [n, n], eigenvalues clipped at zero (round-off
// makes PSD matrices slightly indefinite). Returns the most negative eigenvalue clipped (0 if none).
double symmetric_sqrt(int n, const double* a, double* root);

// Symmetric tridiagonal matrix (diag [n], off [n-1]): eigenvalues (ascending) replace diag; the first
// component of each normalised eigenvector goes to first [n].
void tridiagonal_eigensolve(int n, double* diag, double* off, double* first);

// Minimum-norm least-squares solution x [n] of min |A x - b|, A [m, n] row-major, b [m] (LAPACK dgelsd,
// by the SVD): x = pinv(A) b. Singular values below rcond * s_max count as zero (rcond < 0: machine
// precision). Returns the effective rank of A.
int least_squares(int m, int n, const double* a, const double* b, double* x, double rcond = -1);

}  // namespace tokdyn
