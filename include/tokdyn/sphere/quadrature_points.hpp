// Deterministic point sets on S^{d-1} for the Lagrangian mean-field solver: equispaced angles on S^1,
// the spherical Fibonacci lattice on S^2, and a low-discrepancy (R_d, generalised golden ratio) sequence
// mapped to the sphere through Box-Muller pairs in higher d. Point j depends only on (j, n, d): any rank
// computes any slice.
#pragma once

#include <cstdint>

namespace tokdyn {

// x [count, d]: points begin .. begin + count - 1 of the n-point set on S^{d-1}.
void quadrature_points(int d, std::int64_t n, std::int64_t begin, std::int64_t count, double* x);

}  // namespace tokdyn
