// The largest singular value of a dense matrix and its two singular vectors, without a dense SVD.
#pragma once

#include <vector>

namespace tokdyn {

struct SingularTriplet {
  double value = 0;                // sigma_1
  std::vector<double> left;        // u [rows], unit, its largest entry (in magnitude) positive
  std::vector<double> right;       // v [cols], unit; A^T u = sigma v
  double residual = 0;             // |A v - sigma u| / sigma (0 when A = 0)
  int products = 0;                // products with A and with A^T, each counted once
};

// Golub–Kahan–Lanczos bidiagonalisation of A [rows, cols] (row-major) from the right vector start
// [cols] (nonzero), with full reorthogonalisation, restarted from the best right vector every
// `cycle` steps until the residual is at most tol. A^T u = sigma v holds by construction, so the
// residual |A v - sigma u| / sigma is the whole error: sigma is within residual sigma of a singular value,
// and u, v within an angle of about residual sigma / (sigma_1 - sigma_2) of its vectors. A start without
// a component along the top right vector finds another triplet: give a random one. Cost
// O(rows cols) per step, where a dense SVD costs O(n^3). Throws SystemError when max_products pass
// without convergence.
SingularTriplet top_singular_triplet(const double* a, int rows, int cols, const std::vector<double>& start,
                                     double tol = 1e-12, int cycle = 64, int max_products = 100000);

}  // namespace tokdyn
