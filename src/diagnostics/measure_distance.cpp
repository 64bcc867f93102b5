// Sliced W2 over counter-based random directions, and the MMD of the interaction kernel e^{beta <x, y>}.
#include "tokdyn/diagnostics/measure_distance.hpp"

#include <cmath>
#include <complex>

#include "measure_input.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {
namespace {

// Neumaier's compensated sum: the MMD is a small difference of e^beta-sized terms.
struct CompensatedSum {
  double sum = 0, carry = 0;
  void add(double x) {
    const double t = sum + x;
    carry += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + carry; }
};

void check_beta(double beta, const char* what) {
  // beta < 0 makes e^{beta <x, y>} indefinite (I_k(beta) < 0 for odd k); e^beta overflows past ~709.
  if (!(beta >= 0 && beta <= 700)) throw InputError(std::string(what) + ": beta must be in [0, 700]");
}

}  // namespace

std::vector<double> sliced_directions(std::uint64_t seed, std::int64_t count, int d) {
  if (count < 1 || d < 1) throw InputError("sliced_directions: need count >= 1 and d >= 1");
  const RandomStream stream(seed, Purpose::sliced_w2);
  std::vector<double> theta(static_cast<std::size_t>(count) * d);
  for (std::int64_t p = 0; p < count; ++p) {
    double* t = &theta[p * d];
    // A normalised N(0, I_d) draw is uniform on S^{d-1}. Box-Muller gives an exact 0 when a word is
    // 2^64 - 1; an all-zero draw is redrawn at the next step rather than normalised to NaN.
    for (std::uint64_t step = 0;; ++step) {
      stream.normals(step, static_cast<std::uint64_t>(p), t, static_cast<std::size_t>(d));
      double s = 0;
      for (int a = 0; a < d; ++a) s += t[a] * t[a];
      if (s > 0) {
        const double inv = 1 / std::sqrt(s);
        for (int a = 0; a < d; ++a) t[a] *= inv;
        break;
      }
    }
  }
  return theta;
}

double sliced_w2(std::span<const double> x, std::span<const double> weights_x, std::span<const double> y,
                 std::span<const double> weights_y, int d, std::int64_t directions, std::uint64_t seed) {
  const std::size_t n = detail::checked_rows(x, d, "sliced_w2: x");
  const std::size_t m = detail::checked_rows(y, d, "sliced_w2: y");
  const std::vector<double> wx = detail::checked_weights(weights_x, n, "sliced_w2: weights_x");
  const std::vector<double> wy = detail::checked_weights(weights_y, m, "sliced_w2: weights_y");
  if (directions < 1) throw InputError("sliced_w2: need at least one direction");
  const std::vector<double> theta = sliced_directions(seed, directions, d);  // [P, d]
  std::vector<double> px(n), py(m);                                        // projections [n], [m]
  double total = 0;  // P terms >= 0
  for (std::int64_t p = 0; p < directions; ++p) {
    const double* t = &theta[p * d];
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0;
      for (int a = 0; a < d; ++a) s += t[a] * x[i * d + a];
      px[i] = s;
    }
    for (std::size_t j = 0; j < m; ++j) {
      double s = 0;
      for (int a = 0; a < d; ++a) s += t[a] * y[j * d + a];
      py[j] = s;
    }
    const double w = line_w2(px, wx, py, wy);
    total += w * w;
  }
  return std::sqrt(total / static_cast<double>(directions));
}

double mmd_squared(std::span<const double> x, std::span<const double> weights_x, std::span<const double> y,
                   std::span<const double> weights_y, int d, double beta) {
  const std::size_t n = detail::checked_rows(x, d, "mmd: x");
  const std::size_t m = detail::checked_rows(y, d, "mmd: y");
  const std::vector<double> wx = detail::checked_weights(weights_x, n, "mmd: weights_x");
  const std::vector<double> wy = detail::checked_weights(weights_y, m, "mmd: weights_y");
  check_beta(beta, "mmd");
  // The signed measure mu - nu on z = [x; y] [n + m, d] with masses c = [wx; -wy]. Since sum c = 0,
  // MMD^2 = sum_kl c_k c_l k(z_k, z_l) = e^beta sum_kl c_k c_l expm1(beta (<z_k, z_l> - 1)): the constant part
  // of the kernel drops out exactly, and expm1 keeps the digits of nearby pairs (where k ~ e^beta).
  const std::size_t N = n + m;
  std::vector<double> z(N * d), c(N), norm_excess(N);  // norm_excess = |z|^2 - 1
  for (std::size_t k = 0; k < N; ++k) {
    const double* src = k < n ? &x[k * d] : &y[(k - n) * d];
    double s = 0;
    for (int a = 0; a < d; ++a) z[k * d + a] = src[a], s += src[a] * src[a];
    norm_excess[k] = s - 1;
    c[k] = k < n ? wx[k] : -wy[k - n];
  }
  CompensatedSum total;
  for (std::size_t k = 0; k < N; ++k) {
    const double* zk = &z[k * d];
    CompensatedSum row;  // c_k q_kk + 2 sum_{l > k} c_l q_kl, by symmetry of the kernel
    for (std::size_t l = k; l < N; ++l) {
      const double* zl = &z[l * d];
      double dist2 = 0;
      for (int a = 0; a < d; ++a) dist2 += (zk[a] - zl[a]) * (zk[a] - zl[a]);
      // <z, z'> - 1 = ((|z|^2 - 1) + (|z'|^2 - 1) - |z - z'|^2) / 2: exact identity, no 1 - cos cancellation.
      const double q = std::expm1(0.5 * beta * (norm_excess[k] + norm_excess[l] - dist2));
      row.add((l == k ? 1.0 : 2.0) * c[l] * q);
    }
    total.add(c[k] * row.value());
  }
  return std::exp(beta) * total.value();
}

double mmd_squared_from_energies(std::span<const double> x, std::span<const double> weights_x,
                                 std::span<const double> y, std::span<const double> weights_y, int d, double beta,
                                 double energy_x, double energy_y) {
  const std::size_t n = detail::checked_rows(x, d, "mmd: x");
  const std::size_t m = detail::checked_rows(y, d, "mmd: y");
  const std::vector<double> wx = detail::checked_weights(weights_x, n, "mmd: weights_x");
  const std::vector<double> wy = detail::checked_weights(weights_y, m, "mmd: weights_y");
  check_beta(beta, "mmd");
  // D(mu, nu) = sum_ij a_i b_j (e^beta - e^{beta <x_i, y_j>}) in the expm1 form; with D(mu, mu) = 2 E_beta(mu),
  // MMD^2 = 2 D(mu, nu) - D(mu, mu) - D(nu, nu).
  CompensatedSum cross;
  for (std::size_t i = 0; i < n; ++i) {
    const double* xi = &x[i * d];
    CompensatedSum row;
    for (std::size_t j = 0; j < m; ++j) {
      const double* yj = &y[j * d];
      double dot = 0;
      for (int a = 0; a < d; ++a) dot += xi[a] * yj[a];
      row.add(-wy[j] * std::expm1(beta * (dot - 1)));
    }
    cross.add(wx[i] * row.value());
  }
  return 2 * std::exp(beta) * cross.value() - 2 * energy_x - 2 * energy_y;
}

double mmd(std::span<const double> x, std::span<const double> weights_x, std::span<const double> y,
           std::span<const double> weights_y, int d, double beta) {
  return std::sqrt(std::max(0.0, mmd_squared(x, weights_x, y, weights_y, d, beta)));
}

double mmd_squared_circle(std::span<const double> angles_a, std::span<const double> weights_a,
                          std::span<const double> angles_b, std::span<const double> weights_b, double beta) {
  detail::check_finite(angles_a, "mmd_squared_circle: angles_a");
  detail::check_finite(angles_b, "mmd_squared_circle: angles_b");
  const std::vector<double> wa = detail::checked_weights(weights_a, angles_a.size(), "mmd_squared_circle: weights_a");
  const std::vector<double> wb = detail::checked_weights(weights_b, angles_b.size(), "mmd_squared_circle: weights_b");
  check_beta(beta, "mmd_squared_circle");
  // Truncation: |C_k(mu) - C_k(nu)| <= 2 and the terms +-k are equal, so the tail beyond p is at most
  // 8 sum_{k > p} I_k(beta) <= 16 I_{p+1}(beta) once p >= beta (then I_{k+1}/I_k < beta/(2k+1) < 1/2).
  // The k = 0 term is I_0 |sum wa - sum wb|^2 = 0. Kept relative to e^beta = sum_k I_k(beta), the
  // kernel's own size, i.e. the size of each of the three expectations.
  const double scale = std::exp(beta);
  double total = 0;
  for (int k = 1;; ++k) {
    const double ik = std::cyl_bessel_i(static_cast<double>(k), beta);
    if (k - 1 >= beta && 16 * ik <= 1e-16 * scale) break;
    std::complex<double> dc = 0;  // C_k(mu) - C_k(nu)
    for (std::size_t j = 0; j < angles_a.size(); ++j) dc += wa[j] * std::polar(1.0, k * angles_a[j]);
    for (std::size_t j = 0; j < angles_b.size(); ++j) dc -= wb[j] * std::polar(1.0, k * angles_b[j]);
    total += 2 * ik * std::norm(dc);
  }
  return total;
}

}  // namespace tokdyn
