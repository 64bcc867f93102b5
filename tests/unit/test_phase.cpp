// tokdyn phase's kernels: one system's step against a plain reference and a closed form, its statistics against
// a direct count, and the random matrices' structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/dynamics/phase_systems.hpp"

using namespace tokdyn;

namespace {

// The step by plain loops and std::exp (row vectors): x_i <- LN(x_i + h (sum_j A_ij x_j) V).
std::vector<double> reference_step(const PhaseParams& p, double beta, double h, const std::vector<double>& b,
                                   const std::vector<double>& v, const std::vector<double>& x) {
  const int n = static_cast<int>(p.tokens), d = p.d;
  std::vector<double> out(x.size());
  for (int i = 0; i < n; ++i) {
    std::vector<double> s(n), z(d, 0.0);
    double z_sum = 0;
    for (int j = 0; j < n; ++j) {
      double l = 0;
      for (int a = 0; a < d; ++a)
        for (int c = 0; c < d; ++c) l += x[i * d + a] * b[a * d + c] * x[j * d + c];
      s[j] = std::exp(beta * l);
      z_sum += s[j];
    }
    for (int j = 0; j < n; ++j)
      for (int a = 0; a < d; ++a) z[a] += s[j] * x[j * d + a] / (p.softmax ? z_sum : n);
    double norm = 0;
    for (int a = 0; a < d; ++a) {
      double zv = 0;
      for (int c = 0; c < d; ++c) zv += z[c] * v[c * d + a];
      out[i * d + a] = x[i * d + a] + h * zv;
      norm += out[i * d + a] * out[i * d + a];
    }
    for (int a = 0; a < d; ++a) out[i * d + a] /= std::sqrt(norm);
  }
  return out;
}

std::vector<double> random_tokens(int n, int d, std::uint64_t seed) {
  std::vector<double> x(static_cast<std::size_t>(n) * d);
  const RandomStream s(seed, Purpose::test);
  for (int i = 0; i < n; ++i) {
    s.normals(0, i, x.data() + i * d, d);
    double norm = 0;
    for (int a = 0; a < d; ++a) norm += x[i * d + a] * x[i * d + a];
    for (int a = 0; a < d; ++a) x[i * d + a] /= std::sqrt(norm);
  }
  return x;
}

}  // namespace

TEST(Phase, StepEqualsPlainLoopsForEveryChoiceOfMatrices) {
  // Every B, V and both normalisations at n = 13 (not a multiple of the kernels' 8 lanes), d = 3: 1e-14 (the
  // step's round-off, ~1e-16 relative, with sums of 13 terms; the reference's e^{s} are not shifted).
  PhaseParams p;
  p.tokens = 13, p.d = 3, p.seed = 4;
  for (bool softmax : {true, false})
    for (const char* bilinear : {"identity", "gaussian", "goe"})
      for (const char* value : {"identity", "gaussian", "plus-b", "minus-b"}) {
        p.softmax = softmax, p.bilinear = bilinear, p.value = value;
        std::vector<double> b(9), v(9), work;
        phase_matrices(p, 2, 5, b.data(), v.data());
        std::vector<double> x = random_tokens(13, 3, 1);
        const std::vector<double> want = reference_step(p, 1.7, 0.3, b, v, x);
        phase_system_step(p, 1.7, 0.3, b.data(), v.data(), x.data(), work);
        double worst = 0;
        for (std::size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - want[k]));
        EXPECT_LE(worst, 1e-14) << (softmax ? "SA " : "USA ") << bilinear << " " << value;
      }
}

TEST(Phase, TwoTokensAtBetaZeroFollowTheClosedForm) {
  // SA at beta = 0, n = 2, d = 2: each token moves toward the mean, x_i + h (x_1 + x_2) / 2, so the half-angle
  // phi between them obeys tan phi_k = tan phi_0 / (1 + h)^k exactly.
  PhaseParams p;
  p.tokens = 2, p.d = 2;
  const double phi = 1.2, h = 0.1;
  std::vector<double> x = {std::cos(phi), std::sin(phi), std::cos(phi), -std::sin(phi)}, work;
  for (int k = 1; k <= 60; ++k) {
    phase_system_step(p, 0.0, h, nullptr, nullptr, x.data(), work);
    const double want = std::atan(std::tan(phi) / std::pow(1 + h, k));
    EXPECT_NEAR(std::atan2(x[1], x[0]), want, 1e-14) << "step " << k;
    EXPECT_NEAR(std::atan2(x[3], x[2]), -want, 1e-14) << "step " << k;
  }
}

TEST(Phase, StatisticsCountPairsClustersAndTheSpan) {
  // Three clusters in a plane of R^4: 4 tokens at e1 (two of them 1e-3 rad apart: one density pair cosine
  // above 0.999 but not above 0.9999... both thresholds tested), 3 at e2, 2 at -e1.
  PhaseParams p;
  p.tokens = 9, p.d = 4;
  const double t = 1e-3;  // cos t = 1 - 5e-7: above 0.999 and 0.9999
  const double u = 0.02;  // cos u = 0.9998: above 0.999, below 0.9999 (a cluster of its own)
  std::vector<double> x = {1, 0, 0, 0, std::cos(t), std::sin(t), 0, 0, 1, 0, 0, 0, std::cos(u), -std::sin(u), 0, 0,
                           0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, -1, 0, 0, 0};
  std::vector<double> work;
  std::vector<int> parent;
  const double beta = 2;
  const SystemStatistics s = phase_system_statistics(p, beta, x.data(), work, parent);
  // Ordered pairs above 0.999: within e1's four 4 * 3 = 12 (u: cos u = 0.9998, cos(u + t) = 0.99977; all >
  // 0.999), e2's 3 * 2 = 6, -e1's 2: 20 of 72.
  EXPECT_DOUBLE_EQ(s.density, 20.0 / 72.0);
  EXPECT_EQ(s.clusters, 4);  // {e1, e1 + t}, {e1 - u}, {e2 x 3}, {-e1 x 2}
  EXPECT_EQ(s.span, 2);
  double energy = 0;
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      double c = 0;
      for (int a = 0; a < 4; ++a) c += x[i * 4 + a] * x[j * 4 + a];
      energy += std::exp(beta) - std::exp(beta * c);
    }
  EXPECT_NEAR(s.energy, energy / (2 * 81), 1e-14);
}

TEST(Phase, MatricesHaveTheirStructureAndTheUsaStepItsRule) {
  PhaseParams p;
  p.d = 5;
  std::vector<double> b(25), v(25), b2(25), v2(25);
  p.bilinear = "goe", p.value = "plus-b";
  phase_matrices(p, 0, 3, b.data(), v.data());
  for (int a = 0; a < 5; ++a)
    for (int c = 0; c < 5; ++c) {
      EXPECT_EQ(b[a * 5 + c], b[c * 5 + a]);                        // GOE: symmetric
      EXPECT_DOUBLE_EQ(v[a * 5 + c], b[a * 5 + c] / std::sqrt(6.0));  // +B / sqrt(d + 1)
    }
  p.bilinear = "gaussian", p.value = "gaussian";
  phase_matrices(p, 0, 3, b.data(), v.data());
  phase_matrices(p, 1, 3, b2.data(), v2.data());
  EXPECT_NE(b, b2);  // another draw
  phase_matrices(p, 0, 4, b2.data(), v2.data());
  EXPECT_NE(b, b2);  // another scope key
  for (int a = 0; a < 5; ++a)
    for (int c = 0; c < 5; ++c) EXPECT_NEAR(v[a * 5 + c], v[c * 5 + a], 1e-15);  // G G^T: symmetric
  p.softmax = false, p.step = 0.1, p.horizon = 1, p.records = 10;
  EXPECT_DOUBLE_EQ(phase_step(p, 4.0), 0.1 / (2 * std::exp(3.5)));
  EXPECT_DOUBLE_EQ(phase_step(p, 0.5), 0.1);  // sqrt(0.5) e^0 < 1
  EXPECT_EQ(phase_steps_per_record(p, 0.5), 1);
  EXPECT_EQ(phase_steps_per_record(p, 4.0), static_cast<std::int64_t>(std::ceil(0.1 / phase_step(p, 4.0))));
  p.softmax = true, p.horizon = 30, p.records = 100;  // interval 0.3 = 3 steps of 0.1, not 4
  EXPECT_EQ(phase_steps_per_record(p, 1.0), 3);
}

// The random-MLP sub-step against plain loops over the weights drawn from the streams themselves: system k's
// row r of step l is counter (l, k m + r), its output bias counter (l, k); system 0 is the transformer's MLP.
TEST(Phase, MlpStepEqualsPlainLoopsWithTheSystemsOwnWeights) {
  const int n = 7, d = 3, m = 16;
  MlpParams mp;
  mp.width = m, mp.activation = "relu", mp.sigma_u = 0.3, mp.sigma_w = 0.2, mp.seed = 11;
  const std::uint64_t system = 5;
  const std::int64_t layer = 3;
  const double h = 0.05;
  const std::vector<double> x0 = random_tokens(n, d, 4);
  std::vector<double> x = x0, scratch;
  RandomMlp mlp(mp, d);
  phase_mlp_step(mlp, system, layer, h, x.data(), n, d, scratch);

  const RandomStream su(mp.seed, Purpose::mlp_u), sw(mp.seed, Purpose::mlp_w), sbu(mp.seed, Purpose::mlp_bias_u),
      sbw(mp.seed, Purpose::mlp_bias_w);
  std::vector<double> bias_w(d);
  sbw.normals(layer, system, bias_w.data(), d);
  for (int i = 0; i < n; ++i) {
    std::vector<double> out(d);
    for (int a = 0; a < d; ++a) out[a] = mp.sigma_w * bias_w[a];
    for (int r = 0; r < m; ++r) {
      std::vector<double> u(d), w(d);
      su.normals(layer, system * m + r, u.data(), d);
      sw.normals(layer, system * m + r, w.data(), d);
      double pre = mp.sigma_u * sbu.normal4(layer, system * m + r, 0)[0];
      for (int a = 0; a < d; ++a) pre += u[a] * x0[i * d + a] / std::sqrt(double(d));
      for (int a = 0; a < d; ++a) out[a] += w[a] * std::max(pre, 0.0) / std::sqrt(double(m));
    }
    double norm = 0;
    for (int a = 0; a < d; ++a) out[a] = x0[i * d + a] + std::sqrt(h) * out[a], norm += out[a] * out[a];
    for (int a = 0; a < d; ++a) EXPECT_NEAR(x[i * d + a], out[a] / std::sqrt(norm), 1e-14) << i << " " << a;
  }
  // System 0's MLP is the one of draw(layer) (the transformer's): the same G on the same tokens.
  std::vector<double> g0(n * d), g1(n * d);
  mlp.draw(layer, 0);
  mlp.apply(x0.data(), n, g0.data());
  RandomMlp single(mp, d);
  single.draw(layer);
  single.apply(x0.data(), n, g1.data());
  EXPECT_EQ(g0, g1);
  mlp.draw(layer, 1);
  mlp.apply(x0.data(), n, g1.data());
  EXPECT_NE(g0, g1);
}
