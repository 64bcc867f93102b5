// Geometry of S^{d-1}: layer normalisation LN(v) = v/|v|, tangent projector P_x = I - x x^T, uniform sampling.
// Token arrays are row-major [n, d].
#pragma once

#include <cstdint>

#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

// x[i] <- x[i] / |x[i]| for each row; x: [n, d]. A zero row becomes NaN (caught by the run's NaN check).
void normalize_rows(double* x, std::int64_t n, int d);

// v[i] <- P_{x[i]} v[i] = v[i] - <x[i], v[i]> x[i]; x, v: [n, d], rows of x unit vectors.
void tangent_project(const double* x, double* v, std::int64_t n, int d);

// Rows [begin, begin + n) of iid uniform points on S^{d-1}; row i depends only on (seed, i).
void sample_uniform_sphere(std::uint64_t seed, std::int64_t begin, std::int64_t n, int d, double* x);

}  // namespace tokdyn
