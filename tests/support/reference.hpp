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

// Weighted Attn_X(x_i) for masses w [N]: sum_j w_j e^{s_ij} V x_j, divided by sum_j w_j e^{s_ij} when
// normalized. Logits shifted by their row maximum (over the positive masses) so large beta stays finite.
inline std::vector<double> naive_weighted_attention(const std::vector<double>& x, std::int64_t n,
                                                    const AttentionWeights& w, const std::vector<double>& mass,
                                                    bool normalized) {
  const int d = w.d;
  std::vector<double> q(n * d, 0.0), k(n * d, 0.0), v(n * d, 0.0), out(n * d, 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) {
        q[i * d + a] += w.query[a * d + b] * x[i * d + b];
        k[i * d + a] += w.key[a * d + b] * x[i * d + b];
        v[i * d + a] += w.value[a * d + b] * x[i * d + b];
      }
  std::vector<double> s(n);
  for (std::int64_t i = 0; i < n; ++i) {
    double m = -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) {
      s[j] = 0;
      for (int a = 0; a < d; ++a) s[j] += q[i * d + a] * k[j * d + a];
      s[j] *= w.beta;
      if (mass[j] > 0) m = std::max(m, s[j]);
    }
    double z = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double e = mass[j] * std::exp(s[j] - m);
      z += e;
      for (int a = 0; a < d; ++a) out[i * d + a] += e * v[j * d + a];
    }
    const double scale = normalized ? 1 / z : std::exp(m);
    for (int a = 0; a < d; ++a) out[i * d + a] *= scale;
  }
  return out;
}

// Random masses [N] summing to 1, the same on every rank; the tokens listed in zeros get mass 0.
inline std::vector<double> random_masses(std::int64_t n, unsigned seed, const std::vector<std::int64_t>& zeros = {}) {
  std::vector<double> m(n);
  std::uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  double sum = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // an LCG: reproducible, portable
    m[j] = 0.05 + static_cast<double>(state >> 11) * 0x1.0p-53;      // in [0.05, 1.05): ratios up to 21
  }
  for (std::int64_t j : zeros) m[j] = 0;
  for (double v : m) sum += v;
  for (double& v : m) v /= sum;
  return m;
}

inline double dot(const double* a, const double* b, int d) {
  double s = 0;
  for (int i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

// max |a - b| / max |b|; infinite when the sizes differ.
inline double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e / std::max(max_abs(b), 1e-300);
}

}  // namespace tokdyn::test
