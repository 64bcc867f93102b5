// Input checks shared by the measure distances (internal): weights, point arrays, unit rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn::detail {

// Masses [n] for n atoms: uniform 1/n if `weights` is empty, else checked (size n, finite, >= 0, sum 1 to
// 1e-9) and divided by their sum.
inline std::vector<double> checked_weights(std::span<const double> weights, std::size_t n, const char* what) {
  if (n == 0) throw InputError(std::string(what) + ": a measure needs at least one atom");
  if (weights.empty()) return std::vector<double>(n, 1.0 / static_cast<double>(n));
  if (weights.size() != n)
    throw InputError(std::string(what) + ": " + std::to_string(weights.size()) + " weights for " +
                     std::to_string(n) + " atoms");
  // Neumaier-compensated, hence in practice the correctly rounded sum whatever the order of the atoms: the
  // same measure listed in another order gets bitwise the same masses. That matters, W2 is only Hoelder-1/2
  // in the masses (an ulp of mass moved between atoms at distance ~1 shows as ~1e-8 in W2).
  double sum = 0, carry = 0;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0) throw InputError(std::string(what) + ": masses must be finite and >= 0");
    const double t = sum + w;
    carry += sum >= w ? (sum - t) + w : (w - t) + sum;
    sum = t;
  }
  sum += carry;
  if (std::abs(sum - 1) > 1e-9)
    throw InputError(std::string(what) + ": masses sum to " + std::to_string(sum) + ", not 1");
  std::vector<double> out(weights.begin(), weights.end());
  for (double& w : out) w /= sum;
  return out;
}

// Number of rows of a row-major [n, d] array; throws unless d >= 1, the size is a multiple of d and every
// entry is finite.
inline std::size_t checked_rows(std::span<const double> x, int d, const char* what) {
  if (d < 1) throw InputError(std::string(what) + ": dimension must be >= 1");
  if (x.size() % static_cast<std::size_t>(d) != 0)
    throw InputError(std::string(what) + ": " + std::to_string(x.size()) + " coordinates is not a multiple of d = " +
                     std::to_string(d));
  for (double v : x)
    if (!std::isfinite(v)) throw InputError(std::string(what) + ": non-finite coordinate");
  return x.size() / static_cast<std::size_t>(d);
}

// Rows of x [n, d] must lie on S^{d-1}: | |x_i|^2 - 1 | <= 1e-8 (tokens are renormalised every layer).
inline void check_unit_rows(std::span<const double> x, int d, const char* what) {
  const std::size_t n = x.size() / static_cast<std::size_t>(d);
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    for (int a = 0; a < d; ++a) s += x[i * d + a] * x[i * d + a];
    if (std::abs(s - 1) > 1e-8) throw InputError(std::string(what) + ": row " + std::to_string(i) + " is not a unit vector");
  }
}

inline void check_finite(std::span<const double> v, const char* what) {
  for (double e : v)
    if (!std::isfinite(e)) throw InputError(std::string(what) + ": non-finite value");
}

}  // namespace tokdyn::detail
