// Naive O(N^2) references for the tests: what the distributed code must reproduce.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tokdyn/attention/attention.hpp"

namespace tokdyn::test {

// Attn_X(x_i) for all N tokens, directly from the definition. x: [N, d].
inline std::vector<double> naive_attention(const std::vector<double>& x, std::int64_t n, const AttentionWeights& w,
                                           bool normalized) {
  const int d = w.d;
  auto mat_vec = [d](const std::vector<double>& m, const double* v, double* out) {
    for (int a = 0; a < d; ++a) {
      out[a] = 0;
      for (int b = 0; b < d; ++b) out[a] += m[a * d + b] * v[b];
    }
  };
  std::vector<double> q(n * d), k(n * d), v(n * d), out(n * d, 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    mat_vec(w.query, &x[i * d], &q[i * d]);
    mat_vec(w.key, &x[i * d], &k[i * d]);
    mat_vec(w.value, &x[i * d], &v[i * d]);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<double> s(n);
    for (std::int64_t j = 0; j < n; ++j) {
      s[j] = 0;
      for (int a = 0; a < d; ++a) s[j] += q[i * d + a] * k[j * d + a];
      s[j] *= w.beta;
    }
    double z = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double e = std::exp(s[j]);
      z += e;
      for (int a = 0; a < d; ++a) out[i * d + a] += e * v[j * d + a];
    }
    const double norm = normalized ? z : static_cast<double>(n);
    for (int a = 0; a < d; ++a) out[i * d + a] /= norm;
  }
  return out;
}

inline double dot(const double* a, const double* b, int d) {
  double s = 0;
  for (int i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace tokdyn::test
