// The discrete transformer: agreement across rank counts, the equiangular ODE of doc/science.md section 6.6,
// and the monotone decay of E_beta under noiseless attention.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/dynamics/transformer.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

// Runs L layers on comm from the global initial tokens `all`; returns this rank's rows.
std::vector<double> run_layers(MPI_Comm mpi, const TransformerParams& p, const AttentionWeights& w,
                               const std::string& style, std::optional<MlpParams> mlp_params,
                               const std::vector<double>& all, int tile,
                               const std::function<void(std::int64_t, const double*)>& each_layer = nullptr) {
  const Comm comm(mpi);
  const Partition part(p.n, comm.size());
  const std::int64_t begin = part.begin(comm.rank()), count = part.count(comm.rank());
  AttentionContext c;
  c.comm = mpi;
  c.partition = part;
  c.weights = w;
  c.tile = tile;
  std::optional<RandomMlp> mlp;
  if (mlp_params) mlp.emplace(*mlp_params, p.d);
  Transformer model(p, count, p.factor != 0 ? attention_styles().make(style, c) : nullptr, std::move(mlp));
  std::vector<double> x(all.begin() + begin * p.d, all.begin() + (begin + count) * p.d);
  for (std::int64_t l = 0; l < p.layers; ++l) {
    model.step(l, x.data());
    if (each_layer) each_layer(l + 1, x.data());
  }
  return x;
}

// rho(T) of the equiangular ODE by RK4 with many steps (error ~ 1e-14).
double equiangular_rk4(bool softmax, int n, double beta, double rho0, double t_end) {
  auto f = [&](double r) {
    const double e = std::exp(beta * r), g = (1 - r) * ((n - 1) * r + 1);
    return softmax ? 2 * e * g / (std::exp(beta) + (n - 1) * e) : 2.0 / n * e * g;
  };
  const int steps = 20000;
  const double h = t_end / steps;
  double r = rho0;
  for (int k = 0; k < steps; ++k) {
    const double k1 = f(r), k2 = f(r + h / 2 * k1), k3 = f(r + h / 2 * k2), k4 = f(r + h * k3);
    r += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  return r;
}

}  // namespace

TEST(Transformer, AgreesAcrossRankCounts) {
  // Random Q, K, V (SA) and a biased tanh MLP: the distributed run equals the same run on one rank.
  const Comm world;
  TransformerParams p;
  p.n = 37;
  p.d = 5;
  p.layers = 30;
  p.horizon = 3;
  p.factor = 1;
  AttentionWeights w = identity_attention_weights(p.d, 1.0);
  for (int k = 0; k < p.d * p.d; ++k) w.query[k] += 0.3 * std::sin(k + 1.0), w.key[k] += 0.2 * std::cos(2.0 * k);
  MlpParams m;
  m.width = 64;
  m.activation = "tanh";
  m.sigma_u = m.sigma_w = 0.1;
  m.seed = 5;
  std::vector<double> all(p.n * p.d);
  sample_uniform_sphere(4, 0, p.n, p.d, all.data());
  const std::vector<double> distributed = run_layers(world.get(), p, w, "softmax", m, all, 6);
  const std::vector<double> serial = run_layers(MPI_COMM_SELF, p, w, "softmax", m, all, 6);
  const Partition part(p.n, world.size());
  const std::int64_t begin = part.begin(world.rank());
  for (std::size_t k = 0; k < distributed.size(); ++k) ASSERT_NEAR(distributed[k], serial[begin * p.d + k], 1e-12);
}

TEST(Transformer, EquiangularStartFollowsTheScalarOde) {
  // x_i = sqrt(1 - rho0) e_i + sqrt(rho0) e_n stays equiangular; the Euler-with-LN layers are first order
  // in dt = T/L, so the error must halve when L doubles (ratio 2 within 10%).
  const Comm comm;
  const int n = 6, d = n + 1;
  const double beta = 1.5, rho0 = 0.2;
  std::vector<double> all(n * d, 0.0);
  for (int i = 0; i < n; ++i) all[i * d + i] = std::sqrt(1 - rho0), all[i * d + n] = std::sqrt(rho0);
  for (bool softmax : {true, false}) {
    const double t_end = softmax ? 2.0 : 0.5;  // both end well short of the cluster rho = 1
    const double exact = equiangular_rk4(softmax, n, beta, rho0, t_end);
    double errors[2];
    for (int k = 0; k < 2; ++k) {
      TransformerParams p;
      p.n = n;
      p.d = d;
      p.layers = 200 << k;
      p.horizon = t_end;
      const auto x = run_layers(comm.get(), p, identity_attention_weights(d, beta), softmax ? "softmax" : "unnormalized",
                                std::nullopt, all, 4);
      PairStatisticsPass stats(comm.get(), Partition(n, comm.size()), d, beta, 10, 4);
      errors[k] = std::abs(stats.compute(x.data()).mean_cosine - exact);
    }
    EXPECT_GT(exact, rho0 + 0.1);  // the test sees real motion
    EXPECT_LT(errors[1], 2e-3) << (softmax ? "SA" : "USA");
    EXPECT_LT(exact, 0.95);
    EXPECT_NEAR(errors[0] / errors[1], 2.0, 0.1) << (softmax ? "SA" : "USA");
  }
}

TEST(Transformer, InteractionEnergyNonIncreasingWithoutNoise) {
  const Comm comm;
  TransformerParams p;
  p.n = 40;
  p.d = 3;
  p.layers = 150;
  p.horizon = 6;
  const double beta = 1.0;
  std::vector<double> all(p.n * p.d);
  sample_uniform_sphere(12, 0, p.n, p.d, all.data());
  for (const char* style : {"softmax", "unnormalized"}) {
    PairStatisticsPass stats(comm.get(), Partition(p.n, comm.size()), p.d, beta, 10, 8);
    std::vector<double> energy;
    {
      const Partition part(p.n, comm.size());
      std::vector<double> x0(all.begin() + part.begin(comm.rank()) * p.d,
                             all.begin() + (part.begin(comm.rank()) + part.count(comm.rank())) * p.d);
      energy.push_back(stats.compute(x0.data()).energy);
    }
    run_layers(comm.get(), p, identity_attention_weights(p.d, beta), style, std::nullopt, all, 8,
               [&](std::int64_t, const double* x) { energy.push_back(stats.compute(x).energy); });
    for (std::size_t l = 1; l < energy.size(); ++l) ASSERT_LE(energy[l], energy[l - 1] + 1e-14) << style << " layer " << l;
    EXPECT_LT(energy.back(), 0.5 * energy.front()) << style;  // and it really decays
  }
}

TEST(Transformer, NoAttentionAndNoMlpIsTheIdentity) {
  const Comm comm;
  TransformerParams p;
  p.n = 9;
  p.d = 3;
  p.layers = 5;
  p.factor = 0;
  std::vector<double> all(p.n * p.d);
  sample_uniform_sphere(1, 0, p.n, p.d, all.data());
  const auto x = run_layers(comm.get(), p, identity_attention_weights(3, 1), "softmax", std::nullopt, all, 4);
  const Partition part(p.n, comm.size());
  for (std::size_t k = 0; k < x.size(); ++k) EXPECT_EQ(x[k], all[part.begin(comm.rank()) * p.d + k]);
}
