#include "tokdyn/sphere/sphere.hpp"

#include <cmath>
#include <vector>

namespace tokdyn {

void normalize_rows(double* x, std::int64_t n, int d) {
  for (std::int64_t i = 0; i < n; ++i) {
    double* xi = x + i * d;
    double s = 0;
    for (int a = 0; a < d; ++a) s += xi[a] * xi[a];
    const double inv = 1.0 / std::sqrt(s);
    for (int a = 0; a < d; ++a) xi[a] *= inv;
  }
}

void tangent_project(const double* x, double* v, std::int64_t n, int d) {
  for (std::int64_t i = 0; i < n; ++i) {
    const double* xi = x + i * d;
    double* vi = v + i * d;
    double p = 0;
    for (int a = 0; a < d; ++a) p += xi[a] * vi[a];
    for (int a = 0; a < d; ++a) vi[a] -= p * xi[a];
  }
}

void sample_uniform_sphere(std::uint64_t seed, std::int64_t begin, std::int64_t n, int d, double* x) {
  // A standard Gaussian vector divided by its norm is uniform on the sphere.
  const RandomStream stream(seed, Purpose::initial_tokens);
  for (std::int64_t i = 0; i < n; ++i) stream.normals(0, static_cast<std::uint64_t>(begin + i), x + i * d, d);
  normalize_rows(x, n, d);
}

}  // namespace tokdyn
