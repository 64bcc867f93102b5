#include "tokdyn/attention/harmonic_attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"
#include "tokdyn/pairs/energy.hpp"
#include "tokdyn/pairs/masses.hpp"

namespace tokdyn {
namespace {

// Points per inner chunk of the table kernel: its recurrences run across the chunk's points, the inner loops.
constexpr int kPointChunk = 64;

// table rows (m-major, see SphericalHarmonics) at n unit points, columns side by side. With
// c_m = (x + i y)^m = sin^m(theta) e^{i m phi} the harmonics are H_lm = Q_lm(z) Re c_m and Q_lm(z) Im c_m,
// where Q_mm is a constant (diag) and Q_lm = a z Q_{l-1,m} - b Q_{l-2,m} (the fully normalised associated
// Legendre recurrence with sin^m(theta) divided out: no square roots, no trigonometry per point).
// Compiled for several vector widths (core/numerics/vector_clones.hpp); the points are independent lanes.
TOKDYN_VECTOR_CLONES void harmonic_rows(int p, int n, const double* ux, const double* uy, const double* uz,
                                        const double* diag, const double* a, const double* b, double* table,
                                        int stride) {
  for (int c0 = 0; c0 < n; c0 += kPointChunk) {
    const int w = std::min(kPointChunk, n - c0);
    const double *x = ux + c0, *y = uy + c0, *z = uz + c0;
    double cr[kPointChunk], ci[kPointChunk], q0[kPointChunk], q1[kPointChunk];
    for (int k = 0; k < w; ++k) cr[k] = 1, ci[k] = 0;
    int row = 0, pair = 0;
    for (int m = 0; m <= p; ++m) {
      for (int k = 0; k < w; ++k) q1[k] = diag[m], q0[k] = 0;  // q1 = Q_{l-1,m}, q0 = Q_{l-2,m}
      for (int l = m; l <= p; ++l, ++pair) {
        if (l > m) {
          const double al = a[pair], bl = b[pair];
          for (int k = 0; k < w; ++k) {
            const double q = al * z[k] * q1[k] - bl * q0[k];
            q0[k] = q1[k];
            q1[k] = q;
          }
        }
        double* hc = table + static_cast<std::size_t>(row++) * stride + c0;
        for (int k = 0; k < w; ++k) hc[k] = q1[k] * cr[k];
        if (m > 0) {
          double* hs = table + static_cast<std::size_t>(row++) * stride + c0;
          for (int k = 0; k < w; ++k) hs[k] = q1[k] * ci[k];
        }
      }
      for (int k = 0; k < w; ++k) {  // c_{m+1} = c_m (x + i y)
        const double t = cr[k] * x[k] - ci[k] * y[k];
        ci[k] = cr[k] * y[k] + ci[k] * x[k];
        cr[k] = t;
      }
    }
  }
}

}  // namespace

SphericalHarmonics::SphericalHarmonics(int p) : p_(p), diagonal_(p + 1) {
  // Q_00 = 1, Q_11 = sqrt(3), Q_mm = sqrt((2m + 1) / 2m) Q_{m-1,m-1} (m >= 2): mean square 1 on the sphere
  // for every (l, m) and either of cos, sin (the factor 2 of m > 0 enters at m = 1).
  diagonal_[0] = 1;
  if (p >= 1) diagonal_[1] = std::sqrt(3.0);
  for (int m = 2; m <= p; ++m) diagonal_[m] = std::sqrt((2.0 * m + 1) / (2.0 * m)) * diagonal_[m - 1];
  for (int m = 0; m <= p; ++m)
    for (int l = m; l <= p; ++l) {
      const double lm = static_cast<double>(l - m) * (l + m);
      a_.push_back(l > m ? std::sqrt((2.0 * l - 1) * (2.0 * l + 1) / lm) : 0.0);
      b_.push_back(l > m + 1 ? std::sqrt((2.0 * l + 1) * (l + m - 1) * (l - m - 1) / (lm * (2.0 * l - 3))) : 0.0);
      degree_.push_back(l);
      if (m > 0) degree_.push_back(l);
    }
}

void SphericalHarmonics::evaluate(int n, const double* ux, const double* uy, const double* uz, double* table,
                                  int stride) const {
  harmonic_rows(p_, n, ux, uy, uz, diagonal_.data(), a_.data(), b_.data(), table, stride);
}

SphereStatistics sphere_statistics(MPI_Comm comm, std::int64_t n_local, const double* x, double beta,
                                   double tolerance) {
  std::int64_t n = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&n_local, &n, 1, MPI_INT64_T, MPI_SUM, comm));
  const std::vector<double> s = scaled_spherical_bessel_series(beta, tolerance);
  const SphericalHarmonics harmonics(static_cast<int>(s.size()) - 1);
  const int count = harmonics.count(), block = std::clamp(131072 / count / 8 * 8, 8, 256);
  std::vector<double> ux(block), uy(block), uz(block), table(static_cast<std::size_t>(count) * block),
      ones(block, 1.0 / static_cast<double>(n)), moments(count, 0.0), global(count);
  for (std::int64_t j0 = 0; j0 < n_local; j0 += block) {
    const int m = static_cast<int>(std::min<std::int64_t>(block, n_local - j0));
    for (int k = 0; k < m; ++k) {
      const double* p = x + (j0 + k) * 3;
      ux[k] = p[0], uy[k] = p[1], uz[k] = p[2];  // unit tokens (the caller checks): the kernel's own <x, y>
    }
    harmonics.evaluate(m, ux.data(), uy.data(), uz.data(), table.data(), block);
    gemm_nn(count, 1, m, 1.0, table.data(), block, ones.data(), 1, 1.0, moments.data(), 1);  // (1/N) sum_j H(x_j)
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(moments.data(), global.data(), count, MPI_DOUBLE, MPI_SUM, comm));
  // e^{-beta} (1/N^2) sum_ij e^{beta <x_i, x_j>} = sum_lm s_l M_lm^2, summed from the small terms up.
  double series = 0;
  for (int r = count - 1; r >= 1; --r) series += s[harmonics.row_degree()[r]] * global[r] * global[r];
  series += s[0] * global[0] * global[0];
  SphereStatistics out;
  out.energy = energy_from_scaled(beta, 0.5 * (global[0] * global[0] - series));
  out.error_bound = (tolerance + count * 2.2e-16) * std::exp(beta);
  out.terms = harmonics.degree();
  return out;
}

const KeyTable<AttentionSpec>& HarmonicAttention::keys() {
  static const KeyTable<AttentionSpec> table = KeyTable<AttentionSpec>("attention").real(
      "tolerance", &AttentionSpec::tolerance, 1e-12,
      "harmonic styles: truncate the series where its neglected tail is below this times e^|beta|", 1e-16, 0.5);
  return table;
}

HarmonicAttention::HarmonicAttention(const AttentionContext& context, bool normalized)
    : AttentionStyle(context, "harmonic"), normalized_(normalized) {
  const AttentionWeights& w = context_.weights;
  if (w.d != 3)
    throw InputError("attention style harmonic works on the sphere S^2: it needs model.d = 3, not " +
                     std::to_string(w.d));
  if (w.heads != 1 || w.width() != 3)
    throw InputError("attention style harmonic has one head of width 3, not " + std::to_string(w.heads) +
                     " of width " + std::to_string(w.head_dim()));
  if (context_.causal) throw InputError("attention style harmonic has no causal mask: its sums are over all tokens");
  if (!(context_.tolerance > 0 && context_.tolerance < 1))
    throw InputError("attention style harmonic: attention.tolerance must lie in (0, 1), not " +
                     std::to_string(context_.tolerance));
  set_weights(w);
  masses_.assign(n_local_, 1.0 / static_cast<double>(context_.partition.n_global));
}

void HarmonicAttention::set_weights(const AttentionWeights& w) {
  const ScalarAttention scalar = scalar_attention(w, "attention style harmonic");
  AttentionStyle::set_weights(w);
  b_ = scalar.b;
  value_scale_ = scalar.v;
  series_ = scaled_spherical_bessel_series(b_, context_.tolerance);
  harmonics_ = SphericalHarmonics(static_cast<int>(series_.size()) - 1);
  // A table of ~1 MiB (it stays in cache between its evaluation and the product that reads it), 8..256 points.
  const int count = harmonics_.count();
  block_ = std::clamp(131072 / count / 8 * 8, 8, 256);
  ux_.assign(block_, 0.0), uy_.assign(block_, 0.0), uz_.assign(block_, 0.0);
  table_.assign(static_cast<std::size_t>(count) * block_, 0.0);
  values_.assign(static_cast<std::size_t>(block_) * 4, 0.0), sums_.assign(values_.size(), 0.0);
  moments_.assign(static_cast<std::size_t>(count) * 4, 0.0);
}

void HarmonicAttention::set_masses(const double* masses) {
  validate_masses(context_.comm, n_local_, context_.partition.n_global, masses);
  std::copy(masses, masses + n_local_, masses_.begin());
}

void HarmonicAttention::load_block(const double* x, std::int64_t begin, int n) {
  for (int k = 0; k < n; ++k) {
    const double* p = x + (begin + k) * 3;
    const double r = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    ux_[k] = r > 0 ? p[0] / r : 0.0, uy_[k] = r > 0 ? p[1] / r : 0.0, uz_[k] = r > 0 ? p[2] / r : 1.0;
    const double w = masses_[begin + k];
    double* v = values_.data() + k * 4;  // w_j (1, u_j): the moments' right-hand side [block, 4]
    v[0] = w, v[1] = w * ux_[k], v[2] = w * uy_[k], v[3] = w * uz_[k];
  }
}

void HarmonicAttention::apply(const double* x, double* out) {
  const int count = harmonics_.count();
  // moments [count, 4] = sum_j H(u_j) w_j (1, u_j): per block a table [count, n] times values [n, 4].
  std::fill(moments_.begin(), moments_.end(), 0.0);
  for (std::int64_t j0 = 0; j0 < n_local_; j0 += block_) {
    const int n = static_cast<int>(std::min<std::int64_t>(block_, n_local_ - j0));
    load_block(x, j0, n);
    harmonics_.evaluate(n, ux_.data(), uy_.data(), uz_.data(), table_.data(), block_);
    gemm_nn(count, 4, n, 1.0, table_.data(), block_, values_.data(), 4, 1.0, moments_.data(), 4);
  }
  std::vector<double> global(moments_.size());
  TOKDYN_MPI_CHECK(MPI_Allreduce(moments_.data(), global.data(), static_cast<int>(global.size()), MPI_DOUBLE, MPI_SUM,
                                 context_.comm));
  // e^{-|b|} (Z, U)(x) = sum_lm s_l H_lm(x) M_lm: fold s_l into the moments once.
  const std::vector<int>& degree = harmonics_.row_degree();
  for (int r = 0; r < count; ++r)
    for (int c = 0; c < 4; ++c) global[r * 4 + c] *= series_[degree[r]];
  const double usa_scale = value_scale_ * std::exp(std::abs(b_));
  for (std::int64_t i0 = 0; i0 < n_local_; i0 += block_) {
    const int n = static_cast<int>(std::min<std::int64_t>(block_, n_local_ - i0));
    load_block(x, i0, n);
    harmonics_.evaluate(n, ux_.data(), uy_.data(), uz_.data(), table_.data(), block_);
    gemm_tn(n, 4, count, 1.0, table_.data(), block_, global.data(), 4, 0.0, sums_.data(), 4);  // [n, 4]
    for (int k = 0; k < n; ++k) {
      const double* s = sums_.data() + k * 4;
      double* o = out + (i0 + k) * 3;
      for (int c = 0; c < 3; ++c) o[c] = normalized_ ? value_scale_ * s[1 + c] / s[0] : usa_scale * s[1 + c];
    }
  }
}

}  // namespace tokdyn
