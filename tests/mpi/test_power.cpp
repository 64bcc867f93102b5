// The power-method layer (doc/science.md sections 7.2-7.4): the distributed layer against a naive serial loop
// for every attention kind, the exact power method of uniform attention, and the four claims on weights
// whose spectra are known (dominant real lambda_1, complex pair, steering, layer-varying Gaussian weights).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <numbers>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/gather.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/power/alignment.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/power/power_layer.hpp"
#include "tokdyn/power/steering.hpp"
#include "tokdyn/weights/synthetic_weights.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

using Matrix = std::vector<double>;  // row-major

// Q, K, V [D, d] and O [d, D] with iid N(0, sd^2) entries (sd = 1/sqrt(d): the Gaussian layers of claim 4).
LayerWeights gaussian_layer(int d, int heads, int head_dim, double sd, std::uint64_t seed) {
  LayerWeights w;
  w.d = d;
  w.heads = heads;
  w.head_dim = head_dim;
  w.score_scale = 1 / std::sqrt(static_cast<double>(head_dim));
  const std::size_t n = static_cast<std::size_t>(d) * w.width();
  const RandomStream rng(seed, Purpose::test);
  for (auto [which, m] : {std::pair{0, &w.query}, {1, &w.key}, {2, &w.value}, {3, &w.output}}) {
    m->resize(n);
    rng.normals(static_cast<std::uint64_t>(which), 0, m->data(), n);
    for (double& v : *m) v *= sd;
  }
  return w;
}

Matrix matmul(const Matrix& a, const Matrix& b, int n) {
  Matrix c(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

// A non-normal, well-conditioned basis with a closed-form inverse: S = (I + a b^T) H, H a Householder
// reflector (H^{-1} = H), (I + a b^T)^{-1} = I - a b^T / (1 + b^T a).
struct Basis {
  Matrix s, inverse;
};
Basis nonnormal_basis(int n, std::uint64_t seed) {
  const RandomStream rng(seed, Purpose::test);
  std::vector<double> a(n), b(n), h(n);
  rng.normals(10, 0, a.data(), n);
  rng.normals(11, 0, b.data(), n);
  rng.normals(12, 0, h.data(), n);
  double hh = 0, ba = 0;
  for (int k = 0; k < n; ++k) a[k] *= 0.5 / std::sqrt(n), b[k] *= 0.5 / std::sqrt(n), hh += h[k] * h[k];
  for (int k = 0; k < n; ++k) ba += b[k] * a[k];
  Matrix house(n * n), rank1(n * n), rank1_inv(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      house[i * n + j] = (i == j) - 2 * h[i] * h[j] / hh;
      rank1[i * n + j] = (i == j) + a[i] * b[j];
      rank1_inv[i * n + j] = (i == j) - a[i] * b[j] / (1 + ba);
    }
  return {matmul(rank1, house, n), matmul(house, rank1_inv, n)};
}

// F = S B S^{-1}, B block diagonal: real eigenvalues on the diagonal, a pair r e^{+-i theta} as the block
// r [[cos, -sin], [sin, cos]] in rows/columns 0, 1 when theta != 0.
Matrix prescribed_matrix(int n, const std::vector<double>& real_eigenvalues, double r, double theta, const Basis& basis) {
  Matrix b(n * n, 0.0);
  int k = 0;
  if (theta != 0) {
    b[0] = r * std::cos(theta), b[1] = -r * std::sin(theta), b[n] = r * std::sin(theta), b[n + 1] = r * std::cos(theta);
    k = 2;
  }
  for (double l : real_eigenvalues) b[k * n + k] = l, ++k;
  EXPECT_EQ(k, n);
  return matmul(matmul(basis.s, b, n), basis.inverse, n);
}

// A Householder reflector I - 2 h h^T / h^T h: orthogonal and symmetric.
Matrix householder(int n, std::uint64_t seed) {
  const RandomStream rng(seed, Purpose::test);
  std::vector<double> h(n);
  rng.normals(20, 0, h.data(), n);
  double hh = 0;
  for (double v : h) hh += v * v;
  Matrix q(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) q[i * n + j] = (i == j) - 2 * h[i] * h[j] / hh;
  return q;
}

// One head of size d: O = F V^T with V orthogonal (or V = I), so O V = F; Q, K Gaussian with entries 1/sqrt(d).
LayerWeights layer_with_matrix(const Matrix& f, int d, bool orthogonal_value, std::uint64_t seed) {
  LayerWeights w = gaussian_layer(d, 1, d, 1 / std::sqrt(static_cast<double>(d)), seed);
  Matrix v(d * d, 0.0);
  for (int i = 0; i < d; ++i) v[i * d + i] = 1;
  if (orthogonal_value) v = householder(d, seed + 3);
  w.value = v;
  // O = F V^T
  w.output.assign(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      for (int k = 0; k < d; ++k) w.output[i * d + j] += f[i * d + k] * v[j * d + k];
  return w;
}

// The definition, in plain serial loops over all N tokens: x [N, d] -> N(r x_i + sum_h O_h sum_j A^h_ij V_h x_j).
Matrix naive_power_layer(const Matrix& x, std::int64_t n, const LayerWeights& w, const PowerLayerOptions& o) {
  const int d = w.d, H = w.heads, dh = w.head_dim, D = w.width();
  auto rows_times = [&](const std::vector<double>& m, const double* v, int r) {  // (m [r, d]) v
    std::vector<double> out(r, 0.0);
    for (int a = 0; a < r; ++a)
      for (int b = 0; b < d; ++b) out[a] += m[a * d + b] * v[b];
    return out;
  };
  std::vector<std::vector<double>> q(n), k(n), v(n);
  for (std::int64_t i = 0; i < n; ++i) {
    q[i] = rows_times(w.query, &x[i * d], D);
    k[i] = rows_times(w.key, &x[i * d], D);
    v[i] = rows_times(w.value, &x[i * d], D);
  }
  Matrix out(n * d, 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<double> z(D, 0.0);  // concat_h sum_j A^h_ij V_h x_j
    const std::int64_t last = o.causal ? i : n - 1;
    for (int h = 0; h < H; ++h) {
      std::vector<double> a(n, 0.0);
      if (o.attention == "identity") {
        a[i] = 1;
      } else if (o.attention == "uniform") {
        for (std::int64_t j = 0; j <= last; ++j) a[j] = 1.0 / (last + 1);
      } else {
        double m = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j <= last; ++j) {
          double s = 0;
          for (int c = 0; c < dh; ++c) s += q[i][h * dh + c] * k[j][h * dh + c];
          a[j] = w.score_scale * s;
          m = std::max(m, a[j]);
        }
        for (std::int64_t j = 0; j <= last; ++j) sum += (a[j] = std::exp(a[j] - m));
        for (std::int64_t j = 0; j <= last; ++j) a[j] /= sum;
      }
      for (std::int64_t j = 0; j <= last; ++j)
        for (int c = 0; c < dh; ++c) z[h * dh + c] += a[j] * v[j][h * dh + c];
    }
    double norm = 0;
    for (int a = 0; a < d; ++a) {
      double y = o.residual ? x[i * d + a] : 0.0;
      for (int c = 0; c < D; ++c) y += w.output[a * D + c] * z[c];
      out[i * d + a] = y;
      norm += y * y;
    }
    for (int a = 0; a < d; ++a) out[i * d + a] /= std::sqrt(norm);
  }
  return out;
}

// This rank's rows of the global array [N, d].
std::vector<double> local_rows(const Matrix& all, const Partition& p, int rank, int d) {
  return {all.begin() + p.begin(rank) * d, all.begin() + (p.begin(rank) + p.count(rank)) * d};
}

Matrix sphere_tokens(std::int64_t n, int d, std::uint64_t seed) {
  Matrix x(n * d);
  sample_uniform_sphere(seed, 0, n, d, x.data());
  return x;
}

struct LayerRecord {
  LeadingDirection lead;
  LayerAlignment stats;
};

// L layers of `layer_t(t)` from the global tokens x0; the per-layer alignment summaries. x0 <- x(L) (global).
std::vector<LayerRecord> run_power(MPI_Comm comm, const std::function<LayerWeights(int)>& layer_t, int layers,
                                   const PowerLayerOptions& o, Matrix& x0, int d) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t n = static_cast<std::int64_t>(x0.size()) / d;
  const Partition part(n, size);
  LayerWeights w0 = layer_t(0);
  PowerLayer layer(comm, part, d, w0.width(), o);
  std::vector<double> x = local_rows(x0, part, rank, d), before;
  std::vector<LayerRecord> records;
  for (int t = 0; t < layers; ++t) {
    const LayerWeights w = t == 0 ? w0 : layer_t(t);
    before = x;
    layer.apply(w, t, x.data());
    LayerRecord r;
    r.lead = leading_direction(d, layer_matrix(w), o.residual);
    r.stats = layer_alignment(comm, part, r.lead, before.data(), x.data());
    records.push_back(r);
  }
  x0 = allgather_rows(comm, part, x, d);
  return records;
}

// exp of the least-squares slope of log y_t over layers [first, last): the fitted error ratio per layer.
double fitted_ratio(const std::vector<LayerRecord>& r, int first, int last) {
  std::vector<double> t, y;
  for (int k = first; k < last; ++k) t.push_back(k), y.push_back(std::log(r[k].stats.sin_mean));
  return std::exp(least_squares_slope(t, y));
}

}  // namespace

TEST(PowerLayer, MatchesTheNaiveLoopForEveryKind) {
  // Every attention kind, causal or not, residual or not, D = H d_h != d, tiles smaller than a rank's block:
  // three layers of different weights equal the serial definition to 1e-13, at any rank count.
  const Comm world;
  const int d = 7, heads = 3, head_dim = 3;
  const std::int64_t n = 23;
  for (const std::string kind : {"softmax", "uniform", "identity"})
    for (bool causal : {false, true})
      for (bool residual : {false, true}) {
        PowerLayerOptions o;
        o.attention = kind;
        o.causal = causal;
        o.residual = residual;
        o.tile = 4;
        Matrix x = sphere_tokens(n, d, 3), reference = x;
        const Partition part(n, world.size());
        PowerLayer layer(world.get(), part, d, heads * head_dim, o);
        std::vector<double> mine = local_rows(x, part, world.rank(), d);
        for (int t = 0; t < 3; ++t) {
          // Logits of order several units: the max-subtraction matters, the softmax is far from uniform.
          LayerWeights w = gaussian_layer(d, heads, head_dim, 0.9, 40 + t);
          layer.apply(w, t, mine.data());
          reference = naive_power_layer(reference, n, w, o);
          const std::vector<double> expect = local_rows(reference, part, world.rank(), d);
          for (std::size_t k = 0; k < mine.size(); ++k)
            ASSERT_NEAR(mine[k], expect[k], 1e-13)
                << kind << " causal " << causal << " residual " << residual << " layer " << t;
        }
      }
}

TEST(PowerLayer, LargeLogitsStayFinite) {
  // Logits of order 1e3 overflow exp without the max-subtraction; the online softmax matches the reference.
  const Comm world;
  const int d = 6;
  const std::int64_t n = 11;
  PowerLayerOptions o;
  o.tile = 3;
  LayerWeights w = gaussian_layer(d, 2, 3, 1.0, 8);
  for (double& q : w.query) q *= 30;
  for (double& k : w.key) k *= 30;
  const Matrix x = sphere_tokens(n, d, 5);
  const Partition part(n, world.size());
  PowerLayer layer(world.get(), part, d, w.width(), o);
  std::vector<double> mine = local_rows(x, part, world.rank(), d);
  layer.apply(w, 0, mine.data());
  const std::vector<double> expect = local_rows(naive_power_layer(x, n, w, o), part, world.rank(), d);
  for (std::size_t k = 0; k < mine.size(); ++k) ASSERT_NEAR(mine[k], expect[k], 1e-13);
}

TEST(PowerLayer, UniformAttentionIsThePowerMethodOnTheMean) {
  // A = 1/N without the residual: after one layer every token equals N(F xbar), after the next N(F N(F xbar)).
  // Causal: token i becomes N(F mean_{j <= i} x_j).
  const Comm world;
  const int d = 5;
  const std::int64_t n = 17;
  const LayerWeights w = gaussian_layer(d, 1, d, 0.5, 21);
  const Matrix f = layer_matrix(w);
  const Partition part(n, world.size());
  const Matrix x = sphere_tokens(n, d, 9);
  auto f_normalized = [&](const std::vector<double>& y) {
    std::vector<double> out(d, 0.0);
    double s = 0;
    for (int a = 0; a < d; ++a) {
      for (int b = 0; b < d; ++b) out[a] += f[a * d + b] * y[b];
      s += out[a] * out[a];
    }
    for (double& v : out) v /= std::sqrt(s);
    return out;
  };
  for (bool causal : {false, true}) {
    PowerLayerOptions o;
    o.attention = "uniform";
    o.causal = causal;
    PowerLayer layer(world.get(), part, d, d, o);
    std::vector<double> mine = local_rows(x, part, world.rank(), d);
    layer.apply(w, 0, mine.data());
    for (std::int64_t i = 0; i < part.count(world.rank()); ++i) {
      const std::int64_t g = part.begin(world.rank()) + i, last = causal ? g : n - 1;
      std::vector<double> mean(d, 0.0);
      for (std::int64_t j = 0; j <= last; ++j)
        for (int a = 0; a < d; ++a) mean[a] += x[j * d + a] / (last + 1);
      const std::vector<double> expect = f_normalized(mean);
      for (int a = 0; a < d; ++a) ASSERT_NEAR(mine[i * d + a], expect[a], 1e-14) << "causal " << causal << " token " << g;
    }
    if (causal) continue;
    // Second layer: the tokens are all equal, so the layer is one power-method step on that vector.
    const std::vector<double> one(mine.begin(), mine.begin() + d), expect = f_normalized(one);
    layer.apply(w, 1, mine.data());
    for (std::int64_t i = 0; i < part.count(world.rank()); ++i)
      for (int a = 0; a < d; ++a) ASSERT_NEAR(mine[i * d + a], expect[a], 1e-14);
  }
}

TEST(PowerLayer, ZeroOutputNamesLayerAndToken) {
  // O = 0 without the residual: every output is zero; the error names the layer and the first token.
  const Comm world;
  const int d = 4;
  const std::int64_t n = 7;
  LayerWeights w = gaussian_layer(d, 1, d, 0.5, 2);
  std::fill(w.output.begin(), w.output.end(), 0.0);
  PowerLayerOptions o;
  o.attention = "identity";
  const Partition part(n, world.size());
  PowerLayer layer(world.get(), part, d, d, o);
  std::vector<double> x = local_rows(sphere_tokens(n, d, 1), part, world.rank(), d);
  try {
    layer.apply(w, 5, x.data());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "layer 5: the output of token 0 is zero or not finite (NaN/Inf in the weights or tokens?)");
  }
  // A NaN in one token's input (the last one, on the last rank): named by its global index.
  o.residual = true;
  std::fill(w.output.begin(), w.output.end(), 0.1);
  PowerLayer residual_layer(world.get(), part, d, d, o);
  if (world.rank() == world.size() - 1) x[(part.count(world.rank()) - 1) * d] = NAN;
  EXPECT_THROW(
      {
        try {
          residual_layer.apply(w, 2, x.data());
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("layer 2: the output of token 6 "), std::string::npos) << e.what();
          throw;
        }
      },
      InputError);
}

TEST(PowerClaims, DominantRealEigenvalueErrorRatio) {
  // Shared F = S diag(lambda) S^{-1}: tokens converge to +-v_1, and with identity or uniform attention (each
  // token, or their mean, runs the power method) the sine of the angle to v_1 decays like
  // (|lambda_2| / |lambda_1|)^t: 0.6 for F, |1 + lambda_2| / |1 + lambda_1| = 0.8 for I + F. The correction
  // (|lambda_3| / |lambda_2|)^t (1/3, resp. 0.75) is below 3e-3 over the fitted layers, so the fitted ratio
  // must be within 1%. Softmax attention mixes the tokens' errors: its ratio is reported, gamma -> 1 asserted.
  const Comm world;
  const int d = 8;
  const std::vector<double> lambda = {1.0, 0.6, 0.2, -0.15, 0.1, 0.05, -0.03, 0.01};
  const Basis basis = nonnormal_basis(d, 31);
  const Matrix f = prescribed_matrix(d, lambda, 0, 0, basis);
  for (bool orthogonal_value : {false, true})
    for (const std::string kind : {"identity", "uniform", "softmax"})
      for (bool residual : {false, true}) {
        const LayerWeights w = layer_with_matrix(f, d, orthogonal_value, 5);
        PowerLayerOptions o;
        o.attention = kind;
        o.residual = residual;
        Matrix x = sphere_tokens(40, d, 17);
        const int layers = residual ? 100 : 40;
        const auto r = run_power(world.get(), [&](int) { return w; }, layers, o, x, d);
        const double closed = residual ? 1.6 / 2.0 : 0.6;
        EXPECT_FALSE(r[0].lead.pair);
        EXPECT_NEAR(r[0].lead.modulus, residual ? 2.0 : 1.0, 1e-12);
        EXPECT_NEAR(r[0].lead.gap, 1 - closed, 1e-12);
        // v_1 = S e_1 / |S e_1|
        double se = 0, overlap = 0;
        for (int a = 0; a < d; ++a) se += basis.s[a * d] * basis.s[a * d];
        for (int a = 0; a < d; ++a) overlap += basis.s[a * d] * r[0].lead.eigvec[a] / std::sqrt(se);
        EXPECT_NEAR(std::abs(overlap), 1, 1e-12);
        EXPECT_GT(r.back().stats.gamma_mean, 1 - 1e-12) << kind;
        EXPECT_GT(r.back().stats.gamma_q1, 1 - 1e-12);
        const double ratio = residual ? fitted_ratio(r, 20, 90) : fitted_ratio(r, 10, 35);
        if (world.root())
          std::printf("[ measured ] dominant %-8s residual %d V %-10s: fitted ratio %.6f, closed form %.6f\n",
                      kind.c_str(), residual, orthogonal_value ? "orthogonal" : "identity", ratio,
                      closed);
        if (kind != "softmax") {
          EXPECT_NEAR(ratio / closed, 1, 0.01) << kind << " residual " << residual;
        }
      }
}

TEST(PowerClaims, ComplexPairRotatesInItsPlane) {
  // F with the leading pair e^{+-i theta} and |lambda_3| = 0.5: the distance to the plane S decays like 0.5^t,
  // and the tokens' phase in the eigen-basis (Re v_1, Im v_1) advances by theta per layer (arg(1 + e^{i theta})
  // = theta / 2 with the residual, where |1 + lambda_3| = 1.5 < 2 cos(theta / 2)). Identity and uniform attention
  // apply F itself to each token, so the rotation is exact up to the plane distance: 1e-6 at late layers.
  const Comm world;
  const int d = 8;
  const double theta = 0.5;
  const Basis basis = nonnormal_basis(d, 44);
  const Matrix f = prescribed_matrix(d, {0.5, 0.2, -0.15, 0.1, 0.05, -0.02}, 1.0, theta, basis);
  for (const std::string kind : {"identity", "uniform"})
    for (bool residual : {false, true}) {
      const LayerWeights w = layer_with_matrix(f, d, true, 6);
      PowerLayerOptions o;
      o.attention = kind;
      o.residual = residual;
      Matrix x = sphere_tokens(30, d, 4);
      const int layers = residual ? 120 : 40;
      const auto r = run_power(world.get(), [&](int) { return w; }, layers, o, x, d);
      const double angle = residual ? theta / 2 : theta;
      ASSERT_TRUE(r[0].lead.pair);
      EXPECT_NEAR(r[0].lead.angle(), angle, 1e-12);
      EXPECT_NEAR(r[0].lead.modulus, residual ? 2 * std::cos(theta / 2) : 1.0, 1e-12);
      EXPECT_LT(r.back().stats.sin_mean, 1e-9) << kind;
      EXPECT_GT(r.back().stats.gamma_mean, 1 - 1e-12);
      for (int t = layers - 5; t < layers; ++t) EXPECT_NEAR(r[t].stats.rotation, angle, 1e-6) << "layer " << t;
      const double closed = residual ? 1.5 / (2 * std::cos(theta / 2)) : 0.5;
      const double ratio = residual ? fitted_ratio(r, 25, 100) : fitted_ratio(r, 10, 35);
      if (world.root())
        std::printf("[ measured ] complex %-8s residual %d: rotation %.9f (arg lambda_1 %.9f), plane ratio %.5f "
                    "(closed form %.5f)\n",
                    kind.c_str(), residual, r.back().stats.rotation, angle, ratio, closed);
      EXPECT_NEAR(ratio / closed, 1, 0.01);
    }
}

namespace {

// The unit target u = cosine v + sqrt(1 - cosine^2) e', e' the unit part of e orthogonal to the unit v:
// <u, v> = cosine exactly.
std::vector<double> target_at(const std::vector<double>& v, std::vector<double> e, double cosine) {
  const int d = static_cast<int>(e.size());
  double ev = 0, ee = 0;
  for (int a = 0; a < d; ++a) ev += e[a] * v[a];
  for (int a = 0; a < d; ++a) e[a] -= ev * v[a], ee += e[a] * e[a];
  std::vector<double> u(d);
  for (int a = 0; a < d; ++a) u[a] = cosine * v[a] + std::sqrt(1 - cosine * cosine) * e[a] / std::sqrt(ee);
  return unit_target(u, d, "u");
}

}  // namespace

TEST(PowerClaims, SteeringMakesUThePrincipalDirection) {
  // F'_L = F_L + alpha u u^T exactly (V orthogonal, rank d), and with c = 20 the outputs align with u.
  const Comm world;
  const int d = 8;
  const Basis basis = nonnormal_basis(d, 31);
  const Matrix f = prescribed_matrix(d, {1.0, 0.6, 0.2, -0.15, 0.1, 0.05, -0.03, 0.01}, 0, 0, basis);
  const LayerWeights w = layer_with_matrix(f, d, true, 5);
  // A target at 60 degrees from v_1: u = v_1 / 2 + (sqrt(3) / 2) e, e a fixed unit vector orthogonal to v_1.
  // One steered layer maps x(L-1) = +-v_1 to F' v_1 = lambda_1 v_1 + alpha <u, v_1> u, whose alignment with u
  // is ~ 1 - 1 / (2 c^2 <u, v_1>^2): c = 20 gives 0.996 here, while a target at 85 degrees would need c ~ 80.
  const LeadingDirection lead = leading_direction(d, f, false);
  std::vector<double> e(d);
  for (int a = 0; a < d; ++a) e[a] = std::cos(1.0 + a);
  const std::vector<double> u = target_at(lead.eigvec, e, 0.5);
  double uv = 0;
  for (int a = 0; a < d; ++a) uv += u[a] * lead.eigvec[a];
  const double c = 20, alpha = c * lead.modulus;
  int rank = 0;
  const Matrix fp = layer_matrix(steer_layer(w, u, alpha, &rank));
  EXPECT_EQ(rank, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) ASSERT_NEAR(fp[i * d + j], f[i * d + j] + alpha * u[i] * u[j], 1e-12);

  const std::int64_t n = 40;
  for (const std::string kind : {"identity", "uniform", "softmax"}) {
    PowerLayerOptions o;
    o.attention = kind;
    Matrix x = sphere_tokens(n, d, 17);
    const int layers = 60;  // x(L-1) = +-v_1 to 0.6^59 ~ 1e-13
    run_power(world.get(), [&](int) { return w; }, layers - 1, o, x, d);
    const Partition part(n, world.size());
    PowerLayer layer(world.get(), part, d, d, o);
    const std::vector<double> x_in = local_rows(x, part, world.rank(), d);
    const SteeringRun last_only{[&](std::int64_t) { return w; }, layers - 1, layers, true, {lead.modulus}};
    const auto points = steering_sweep(world.get(), layer, last_only, x_in, u, {0, 1, 5, 20, 100});
    for (const SteeringPoint& p : points)
      if (world.root())
        std::printf("[ measured ] steering %-8s |<u, v_1>| = %.3f, c = %5.1f: alignment mean %.6f min %.6f, "
                    "lambda_1(F') %.4f, gap %.4f, |<v_1', u>| %.6f\n",
                    kind.c_str(), std::abs(uv), p.strength, p.alignment.mean, p.alignment.min,
                    p.lambda1_re, p.gap, p.eigvec_alignment);
    // Unsteered (c = 0): the outputs are +-v_1, so their alignment with u is |<u, v_1>|.
    EXPECT_NEAR(points[0].alignment.mean, std::abs(uv), 1e-9);
    EXPECT_GT(points[3].alignment.min, 0.99) << kind;
    EXPECT_GT(points[4].alignment.min, points[3].alignment.min);
    EXPECT_GT(points[3].eigvec_alignment, 0.99);
    // Closed form: every input is +-v_1, so every token's attention sum is a multiple of v_1 (nonzero here)
    // and its output is +-N(F' v_1), F' v_1 = lambda_1 v_1 + alpha <u, v_1> u.
    for (const SteeringPoint& p : points) {
      const double l1 = lead.re, a = p.alpha;
      const double num = std::abs(l1 * uv + a * uv), den = std::sqrt(l1 * l1 + 2 * l1 * a * uv * uv + a * a * uv * uv);
      EXPECT_NEAR(p.alignment.mean, num / den, 1e-9) << "c = " << p.strength;
    }
  }
}

TEST(PowerClaims, SteeringEveryLayerAlignsEvenWithAFarTarget) {
  // A target almost orthogonal to v_1 (|<u, v_1>| = 0.02): one steered layer reaches only the closed-form
  // alignment ~ c |<u, v_1>| / sqrt(1 + (c <u, v_1>)^2) ~ 0.37 at c = 20, but steering every layer of the shared
  // model (one output matrix) runs the power method on F' = F + alpha u u^T, whose gap is ~0.95: after 80 layers
  // the tokens align with v_1(F') (within 1e-3 of u at c = 20) to round-off, for every attention kind.
  const Comm world;
  const int d = 8;
  const Basis basis = nonnormal_basis(d, 31);
  const Matrix f = prescribed_matrix(d, {1.0, 0.6, 0.2, -0.15, 0.1, 0.05, -0.03, 0.01}, 0, 0, basis);
  const LayerWeights w = layer_with_matrix(f, d, true, 5);
  const LeadingDirection lead = leading_direction(d, f, false);
  std::vector<double> e(d);
  for (int a = 0; a < d; ++a) e[a] = std::sin(2.0 + 3 * a);
  const std::vector<double> u = target_at(lead.eigvec, e, 0.02);
  const std::int64_t n = 40;
  const int layers = 80;  // unsteered: |1 + lambda_2| / |1 + lambda_1| = 0.8, 0.8^80 ~ 2e-8
  for (const std::string kind : {"identity", "uniform", "softmax"}) {
    PowerLayerOptions o;
    o.attention = kind;
    o.residual = true;
    const Partition part(n, world.size());
    PowerLayer layer(world.get(), part, d, d, o);
    const std::vector<double> x0 = local_rows(sphere_tokens(n, d, 3), part, world.rank(), d);
    const SteeringRun all{[&](std::int64_t) { return w; }, 0, layers, true, std::vector<double>(layers, lead.modulus)};
    const auto points = steering_sweep(world.get(), layer, all, x0, u, {0, 20});
    // Unsteered, the tokens end at +-v_1 of I + F (the same v_1): alignment |<u, v_1>|.
    EXPECT_NEAR(points[0].alignment.mean, 0.02, 1e-6) << kind;
    EXPECT_GT(points[1].alignment.min, 0.999) << kind;
    EXPECT_NEAR(points[1].alignment.min, points[1].eigvec_alignment, 1e-9);
    if (world.root())
      std::printf("[ measured ] steering every layer, %-8s |<u, v_1>| = 0.02, c = 20: alignment min %.6f, "
                  "|<v_1', u>| %.6f\n",
                  kind.c_str(), points[1].alignment.min, points[1].eigvec_alignment);
  }
}

TEST(PowerClaims, LayerVaryingGaussianWeightsTiltTowardsEachLayersV1) {
  // O, V, Q, K with N(0, 1/d) entries drawn per layer, d = 64, 4 heads, softmax, N = 64, 24 layers: the claim
  // is that rho_t (the fraction of tokens whose alignment with v_{1,t} grows) exceeds 1/2 on average.
  const Comm world;
  const int d = 64, heads = 4, layers = 24;
  for (bool residual : {true, false}) {
    PowerLayerOptions o;
    o.residual = residual;
    Matrix x = sphere_tokens(64, d, 2);
    const auto r = run_power(
        world.get(), [&](int t) { return gaussian_layer(d, heads, d / heads, 1 / std::sqrt(double(d)), 100 + t); },
        layers, o, x, d);
    double rho = 0, gamma_in = 0, gamma_out = 0;
    int pairs = 0;
    for (const auto& l : r) rho += l.stats.rho, gamma_in += l.stats.gamma_in_mean, gamma_out += l.stats.gamma_mean,
                            pairs += l.lead.pair;
    rho /= layers, gamma_in /= layers, gamma_out /= layers;
    if (world.root())
      std::printf("[ measured ] layer-varying Gaussian, residual %d: mean rho %.4f, mean gamma in %.4f -> out %.4f "
                  "(baseline %.4f), %d of %d layers with a complex lambda_1\n",
                  residual, rho, gamma_in, gamma_out, random_alignment_baseline(d, false), pairs, layers);
    EXPECT_GT(rho, 0.5) << "residual " << residual;
  }
}

TEST(PowerAlignment, OrderStatisticsRhoAndRotationOverAllTokens) {
  // F = diag(2, 1, 0.5, 0.25) has v_1 = e_1: tokens x_i = cos(phi_i) e_1 + sin(phi_i) e_2, phi_i = 0.1 (i + 1),
  // have gamma_i = cos(phi_i), sorted in reverse index order. N = 10: q1 at position 2.25 of the sorted
  // values, median 4.5, q3 6.75 (linear interpolation). After: phi halved for even i, times 1.2 for odd i, so
  // rho = 1/2. The pair F = R(0.3) + diag(0.5, 0.25) moves S-tokens by exactly 0.3 in phase.
  const Comm world;
  const int d = 4;
  const std::int64_t n = 10;
  const Partition part(n, world.size());
  std::vector<double> f(d * d, 0.0);
  f[0] = 2, f[5] = 1, f[10] = 0.5, f[15] = 0.25;
  const LeadingDirection lead = leading_direction(d, f, false);
  auto tokens = [&](auto&& angle) {
    Matrix all(n * d, 0.0);
    for (std::int64_t i = 0; i < n; ++i) all[i * d] = std::cos(angle(i)), all[i * d + 1] = std::sin(angle(i));
    return local_rows(all, part, world.rank(), d);
  };
  const auto before = tokens([](std::int64_t i) { return 0.1 * (i + 1); });
  const auto after = tokens([](std::int64_t i) { return 0.1 * (i + 1) * (i % 2 == 0 ? 0.5 : 1.2); });
  const LayerAlignment s = layer_alignment(world.get(), part, lead, before.data(), before.data());
  std::vector<double> sorted;
  double mean = 0;
  for (std::int64_t i = n - 1; i >= 0; --i) sorted.push_back(std::cos(0.1 * (i + 1))), mean += sorted.back() / n;
  EXPECT_NEAR(s.gamma_mean, mean, 1e-15);
  EXPECT_NEAR(s.gamma_q1, sorted[2] + 0.25 * (sorted[3] - sorted[2]), 1e-15);
  EXPECT_NEAR(s.gamma_median, (sorted[4] + sorted[5]) / 2, 1e-15);
  EXPECT_NEAR(s.gamma_q3, sorted[6] + 0.75 * (sorted[7] - sorted[6]), 1e-15);
  EXPECT_EQ(s.rho, 0);  // nothing moved: no token's alignment grew
  EXPECT_TRUE(std::isnan(s.rotation));
  EXPECT_EQ(layer_alignment(world.get(), part, lead, before.data(), after.data()).rho, 0.5);

  std::vector<double> g(d * d, 0.0);
  g[0] = g[5] = std::cos(0.3), g[1] = -std::sin(0.3), g[4] = std::sin(0.3), g[10] = 0.5, g[15] = 0.25;
  const LeadingDirection pair = leading_direction(d, g, false);
  std::vector<double> moved(before.size(), 0.0);
  for (std::size_t i = 0; i < before.size() / d; ++i)
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) moved[i * d + a] += g[a * d + b] * before[i * d + b];
  const LayerAlignment r = layer_alignment(world.get(), part, pair, before.data(), moved.data());
  EXPECT_NEAR(r.rotation, 0.3, 1e-14);
  EXPECT_NEAR(r.gamma_mean, 1, 1e-15);
}

TEST(PowerState, DetectsConsensusBipartiteLimitCycleAndNone) {
  const Comm world;
  const int d = 5;
  const std::int64_t n = 12;
  const Partition part(n, world.size());
  const double tol = 1e-3;
  std::vector<double> plane(2 * d, 0.0);
  plane[0] = 1, plane[d + 1] = 1;  // span(e_1, e_2)
  auto tokens = [&](auto&& row) {
    Matrix all(n * d, 0.0);
    for (std::int64_t i = 0; i < n; ++i) row(i, &all[i * d]);
    return local_rows(all, part, world.rank(), d);
  };
  const double tiny = 1e-5;
  // Consensus: e_1 plus tiny perturbations.
  const auto consensus = tokens([&](std::int64_t i, double* x) { x[0] = 1, x[2 + i % 3] = tiny; });
  // Bipartite: +-e_1 (token 0 positive) plus tiny perturbations.
  const auto bipartite = tokens([&](std::int64_t i, double* x) { x[0] = i % 3 == 1 ? -1 : 1, x[2 + i % 3] = tiny; });
  FinalStateDetector none(world.get(), part, d, plane, tol, 3);
  EXPECT_EQ(none.classify(consensus.data()), "consensus");
  EXPECT_EQ(none.classify(bipartite.data()), "bipartite");
  // Limit cycle: tokens at phases phi_i in the plane, rotating by 0.3 per layer, for 4 >= W = 3 layers.
  auto circle = [&](double shift) {
    return tokens([&](std::int64_t i, double* x) { x[0] = std::cos(0.5 * i + shift), x[1] = std::sin(0.5 * i + shift); });
  };
  FinalStateDetector cycle(world.get(), part, d, plane, tol, 3);
  for (int t = 0; t < 4; ++t) cycle.observe(circle(0.3 * t).data(), circle(0.3 * (t + 1)).data());
  EXPECT_EQ(cycle.classify(circle(1.2).data()), "limit_cycle");
  // A cluster rotating in the plane (every token at one point that advances by 0.3): a limit cycle, not consensus.
  auto cluster = [&](double phi) { return tokens([&](std::int64_t, double* x) { x[0] = std::cos(phi), x[1] = std::sin(phi); }); };
  FinalStateDetector rotating(world.get(), part, d, plane, tol, 3);
  for (int t = 0; t < 4; ++t) rotating.observe(cluster(0.3 * t).data(), cluster(0.3 * (t + 1)).data());
  EXPECT_EQ(rotating.classify(cluster(1.2).data()), "limit_cycle");
  FinalStateDetector settling(world.get(), part, d, plane, tol, 3);
  settling.observe(cluster(0.0).data(), cluster(0.3).data());
  EXPECT_EQ(settling.classify(cluster(0.3).data()), "none");  // still moving, too few layers for a cycle
  settling.observe(cluster(0.3).data(), cluster(0.3).data());
  EXPECT_EQ(settling.classify(cluster(0.3).data()), "consensus");
  // Two layers only (< W), or tokens that stopped moving, or left the plane: none.
  FinalStateDetector short_run(world.get(), part, d, plane, tol, 3);
  for (int t = 0; t < 2; ++t) short_run.observe(circle(0.3 * t).data(), circle(0.3 * (t + 1)).data());
  EXPECT_EQ(short_run.classify(circle(0.6).data()), "none");
  FinalStateDetector stopped(world.get(), part, d, plane, tol, 3);
  for (int t = 0; t < 4; ++t) stopped.observe(circle(0.3 * t).data(), circle(t < 3 ? 0.3 * (t + 1) : 0.9).data());
  EXPECT_EQ(stopped.classify(circle(0.9).data()), "none");
  const auto spread = tokens([&](std::int64_t i, double* x) { x[i % d] = 1, x[(i + 1) % d] = 0.5; });
  FinalStateDetector off_plane(world.get(), part, d, plane, tol, 1);
  off_plane.observe(spread.data(), spread.data());
  EXPECT_EQ(off_plane.classify(spread.data()), "none");
}

// The Krylov–Schur leading direction (matrix-free, vectors gathered) equals the dense one: eigenvalues,
// the gap, and the projectors onto span(v_1) or S and onto the plane of v_1, v_2, with and without residual.
TEST(PowerKrylov, LeadingDirectionEqualsTheDenseOne) {
  const Comm comm;
  for (const char* kind : {"dominant", "complex"})
    for (const bool residual : {false, true}) {
      SyntheticSpec spec;
      spec.kind = kind;
      spec.d = 48;
      spec.heads = 4;
      spec.outliers = 4;
      const SyntheticWeights w(spec);
      const int d = w.d();
      const LeadingDirection dense = leading_direction(d, layer_matrix(w.layer(0)), residual);
      const LeadingDirection krylov = leading_direction_krylov(comm.get(), w, 0, residual);
      ASSERT_EQ(krylov.pair, dense.pair) << kind;
      EXPECT_EQ(dense.pair, std::string(kind) == "complex");
      EXPECT_NEAR(krylov.re, dense.re, 1e-10 * dense.modulus) << kind << residual;
      EXPECT_NEAR(krylov.im, dense.im, 1e-10 * dense.modulus) << kind << residual;
      EXPECT_NEAR(krylov.next_modulus, dense.next_modulus, 1e-10 * dense.modulus) << kind << residual;
      EXPECT_NEAR(krylov.gap, dense.gap, 1e-10) << kind << residual;
      // Projectors P = B^T B of the orthonormal bases agree (the bases themselves may differ by phase).
      for (const auto basis : {&LeadingDirection::basis, &LeadingDirection::plane}) {
        const std::vector<double>& a = krylov.*basis;
        const std::vector<double>& b = dense.*basis;
        ASSERT_EQ(a.size(), b.size());
        const int rows = static_cast<int>(a.size()) / d;
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) {
            double pa = 0, pb = 0;
            for (int r = 0; r < rows; ++r) {
              pa += a[r * d + i] * a[r * d + j];
              pb += b[r * d + i] * b[r * d + j];
            }
            ASSERT_NEAR(pa, pb, 1e-8) << kind << " residual " << residual << " rows " << rows;
          }
      }
    }
}
