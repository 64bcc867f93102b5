#include "tokdyn/attention/fourier_attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tokdyn/pairs/energy.hpp"
#include "tokdyn/pairs/masses.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"

namespace tokdyn {
namespace {

// Points are processed kPointLanes at a time, the lanes in the inner loops: the loops vectorise, and the
// lane partial sums are combined in a fixed order, so the result does not depend on the vector width.
// The recurrence E_{n+1} = E_n E_1 is a dependency chain per lane: 16 lanes (4 AVX2 vectors) hide its
// latency; 8 lanes ran 2.5x slower on AVX2 (b = 16, N = 10^6), 32 no faster.
constexpr int kPointLanes = 16;

// (cos t, sin t) of a point x = r (cos t, sin t).
inline void unit_angle(const double* x, double& c, double& s) {
  const double r = std::sqrt(x[0] * x[0] + x[1] * x[1]);  // not hypot: 10x slower, and tokens are O(1)
  c = r > 0 ? x[0] / r : 1.0;
  s = r > 0 ? x[1] / r : 0.0;
}

std::int64_t global_count(MPI_Comm comm, std::int64_t n_local) {
  std::int64_t n = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&n_local, &n, 1, MPI_INT64_T, MPI_SUM, comm));
  return n;
}

// The two O(N p) kernels, compiled for several x86 vector widths and chosen at load time
// (core/numerics/vector_clones.hpp); the lanes are independent, so every variant gives the same bits.

// lanes [terms, 2, kPointLanes] += partial sums of w_j Re/Im e^{i n phi_j}, lane = j mod kPointLanes.
TOKDYN_VECTOR_CLONES void fourier_moment_lanes(std::int64_t n_local, const double* x, const double* masses, int terms,
                                               double* lanes) {
  for (std::int64_t j0 = 0; j0 < n_local; j0 += kPointLanes) {
    double zr[kPointLanes], zi[kPointLanes], pr[kPointLanes], pi[kPointLanes], w[kPointLanes];
    for (int k = 0; k < kPointLanes; ++k) {
      const bool in = j0 + k < n_local;  // padding lanes carry mass 0
      zr[k] = 1, zi[k] = 0;
      if (in) unit_angle(x + (j0 + k) * 2, zr[k], zi[k]);
      w[k] = in ? masses[j0 + k] : 0.0;
      pr[k] = w[k], pi[k] = 0;  // w_j e^{i n phi_j} for n = 0
    }
    for (int n = 0; n < terms; ++n) {
      double* re = lanes + static_cast<std::size_t>(n) * 2 * kPointLanes;
      double* im = re + kPointLanes;
      for (int k = 0; k < kPointLanes; ++k) {
        re[k] += pr[k], im[k] += pi[k];
        const double t = pr[k] * zr[k] - pi[k] * zi[k];
        pi[k] = pr[k] * zi[k] + pi[k] * zr[k];
        pr[k] = t;
      }
    }
  }
}

// out [n_local, 2] from the moments c [p + 2, 2] and the series s [p + 1].
TOKDYN_VECTOR_CLONES void fourier_evaluate(std::int64_t n_local, const double* x, const double* s, int p,
                                           const double* c, bool normalized, double value_scale, double usa_scale,
                                           double* out) {
  for (std::int64_t i0 = 0; i0 < n_local; i0 += kPointLanes) {
    const int lanes = static_cast<int>(std::min<std::int64_t>(kPointLanes, n_local - i0));
    double er[kPointLanes], ei[kPointLanes], zr[kPointLanes], zi[kPointLanes], z[kPointLanes], ur[kPointLanes], ui[kPointLanes];
    for (int k = 0; k < kPointLanes; ++k) {
      zr[k] = 1, zi[k] = 0;
      if (k < lanes) unit_angle(x + (i0 + k) * 2, zr[k], zi[k]);
      er[k] = zr[k], ei[k] = zi[k];  // E_1
      z[k] = 0, ur[k] = 0, ui[k] = 0;
    }
    // E_{n+1} = E_n E_1: the recurrence costs one complex product per term, its error grows like n eps.
    for (int n = 1; n <= p; ++n) {
      const double sn = s[n];
      const double cr = c[2 * n], ci = c[2 * n + 1], lr = c[2 * n - 2], li = c[2 * n - 1], hr = c[2 * n + 2],
                   hi = c[2 * n + 3];
      for (int k = 0; k < kPointLanes; ++k) {
        z[k] += 2 * sn * (er[k] * cr + ei[k] * ci);
        ur[k] += sn * ((er[k] * lr + ei[k] * li) + (er[k] * hr + ei[k] * hi));
        ui[k] += sn * ((ei[k] * lr - er[k] * li) + (er[k] * hi - ei[k] * hr));
        const double t = er[k] * zr[k] - ei[k] * zi[k];
        ei[k] = er[k] * zi[k] + ei[k] * zr[k];
        er[k] = t;
      }
    }
    for (int k = 0; k < lanes; ++k) {
      const double zk = z[k] + s[0] * c[0], uk_r = ur[k] + s[0] * c[2], uk_i = ui[k] + s[0] * c[3];
      double* o = out + (i0 + k) * 2;
      if (normalized) {
        o[0] = value_scale * uk_r / zk;
        o[1] = value_scale * uk_i / zk;
      } else {
        o[0] = usa_scale * uk_r;
        o[1] = usa_scale * uk_i;
      }
    }
  }
}

}  // namespace

std::vector<double> circle_moments(MPI_Comm comm, std::int64_t n_local, const double* x, const double* masses,
                                   int n_max) {
  const int terms = n_max + 1;
  std::vector<double> lanes(static_cast<std::size_t>(terms) * 2 * kPointLanes, 0.0);
  fourier_moment_lanes(n_local, x, masses, terms, lanes.data());
  std::vector<double> local(static_cast<std::size_t>(terms) * 2, 0.0), global(local.size());
  for (int n = 0; n < terms; ++n)
    for (int part = 0; part < 2; ++part)
      for (int k = 0; k < kPointLanes; ++k)
        local[n * 2 + part] += lanes[(static_cast<std::size_t>(n) * 2 + part) * kPointLanes + k];
  TOKDYN_MPI_CHECK(MPI_Allreduce(local.data(), global.data(), 2 * terms, MPI_DOUBLE, MPI_SUM, comm));
  return global;
}

CircleStatistics circle_statistics(MPI_Comm comm, std::int64_t n_local, const double* x, const double* masses,
                                   double beta) {
  const std::int64_t n = global_count(comm, n_local);
  std::vector<double> uniform;
  if (masses == nullptr) {
    uniform.assign(n_local, 1.0 / static_cast<double>(n));
    masses = uniform.data();
  } else {
    validate_masses(comm, n_local, n, masses);
  }
  const std::vector<double> s = scaled_bessel_series(beta);
  const int p = static_cast<int>(s.size()) - 1;
  const std::vector<double> c = circle_moments(comm, n_local, x, masses, std::max(p, 1));
  // sum_{n in Z} e^{-|beta|} I_n(beta) |C_n|^2, truncated at |n| <= p (neglected part < 1e-16 e^{-|beta|} I_0);
  // summed from the small terms up.
  double series = 0;
  for (int k = p; k >= 1; --k) series += 2 * s[k] * (c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1]);
  series += s[0] * c[0] * c[0];
  CircleStatistics out;
  // (1/2)(e^beta C_0^2 - sum_n I_n |C_n|^2) with C_0 = sum w = 1 up to round-off; the difference of two
  // numbers of size e^beta leaves an absolute error ~ p eps e^beta (the double sum's expm1 does better
  // near a single cluster, at O(N^2) cost).
  out.energy = energy_from_scaled(std::abs(beta), 0.5 * (std::exp(beta - std::abs(beta)) * c[0] * c[0] - series));
  out.mean[0] = c[2], out.mean[1] = c[3];
  out.order_parameter = std::hypot(c[2], c[3]);
  out.terms = p;
  return out;
}

FourierAttention::FourierAttention(const AttentionContext& context, bool normalized)
    : AttentionStyle(context, "fourier"), normalized_(normalized) {
  const AttentionWeights& w = context_.weights;
  if (w.d != 2)
    throw InputError("attention style fourier works on the circle: it needs model.d = 2, not " + std::to_string(w.d));
  if (w.heads != 1 || w.width() != 2)
    throw InputError("attention style fourier has one head of width 2, not " + std::to_string(w.heads) + " of width " +
                     std::to_string(w.head_dim()));
  if (context_.causal) throw InputError("attention style fourier has no causal mask: its sums are over all tokens");
  set_weights(w);
  masses_.assign(n_local_, 1.0 / static_cast<double>(context_.partition.n_global));
}

void FourierAttention::set_weights(const AttentionWeights& w) {
  const ScalarAttention scalar = scalar_attention(w, "attention style fourier");
  AttentionStyle::set_weights(w);
  b_ = scalar.b;  // beta <q x, k y> = b cos(t - phi)
  value_scale_ = scalar.v;
  bessel_ = scaled_bessel_series(b_);
}

void FourierAttention::set_masses(const double* masses) {
  validate_masses(context_.comm, n_local_, context_.partition.n_global, masses);
  std::copy(masses, masses + n_local_, masses_.begin());
}

void FourierAttention::apply(const double* x, double* out) {
  const int p = static_cast<int>(bessel_.size()) - 1;
  const std::vector<double> c = circle_moments(context_.comm, n_local_, x, masses_.data(), p + 1);  // [p + 2, 2]
  const double* s = bessel_.data();
  // With E_n = e^{i n t}, truncated at |n| <= p (each neglected part < 1e-16 e^{-|b|} I_0(|b|), as |C_n| <= 1):
  //   e^{-|b|} Z = s_0 C_0 + 2 sum_{n>=1} s_n Re(E_n conj C_n),
  //   e^{-|b|} U = s_0 C_1 + sum_{n>=1} s_n (E_n conj C_{n-1} + conj E_n C_{n+1}),
  // with U = sum_j w_j e^{b cos(t - phi_j)} e^{i phi_j}, so that Attn = v (Re U, Im U) [/ Z for SA].
  fourier_evaluate(n_local_, x, s, p, c.data(), normalized_, value_scale_, value_scale_ * std::exp(std::abs(b_)), out);
}

}  // namespace tokdyn
