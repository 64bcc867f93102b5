// Fourier-Bessel attention on S^1 equals the exact sums: the naive weighted O(N^2) reference for
// b in {0.1, 1, 4, 16} (and b < 0) with random masses, the ring styles with identity weights; the
// O(N p) interaction energy and mean equal the direct double sum; weights it cannot do are InputError.
#include <gtest/gtest.h>

#include <cmath>

#include "distributed.hpp"
#include "reference.hpp"
#include "tokdyn/attention/fourier_attention.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

AttentionWeights scaled_identity(double q, double k, double v, double beta) {
  AttentionWeights w = identity_attention_weights(2, beta);
  for (int a = 0; a < 2; ++a) w.query[a * 3] = q, w.key[a * 3] = k, w.value[a * 3] = v;
  return w;
}



// max_i |out_i - ref_i| / max |ref| over every rank's tokens.
double relative_error(const std::vector<double>& out, const std::vector<double>& ref, const Partition& part) {
  const Comm comm;
  const std::int64_t begin = part.begin(comm.rank()) * 2;
  double e = 0, global = 0;
  for (std::size_t i = 0; i < out.size(); ++i) e = std::max(e, std::abs(out[i] - ref[begin + i]));
  TOKDYN_MPI_CHECK(MPI_Allreduce(&e, &global, 1, MPI_DOUBLE, MPI_MAX, comm.get()));
  return global / test::max_abs(ref);
}

}  // namespace

TEST(FourierAttention, EqualsNaiveWeightedSum) {
  const std::int64_t n = 64;
  std::vector<double> all(n * 2);
  sample_uniform_sphere(21, 0, n, 2, all.data());
  const std::vector<double> mass = test::random_masses(n, 5, {2, 11, 40});
  for (double b : {0.1, 1.0, 4.0, 16.0, -4.0}) {
    // Q = 2 I, K = 0.5 I, V = -1.5 I: b = beta * 2 * 0.5, and the value scale is carried through.
    const AttentionContext c = test::world_context(n, scaled_identity(2.0, 0.5, -1.5, b));
    const std::vector<double> x = test::local_rows(all, c.partition, 2), w = test::local_rows(mass, c.partition, 1);
    for (bool normalized : {true, false}) {
      auto attention = attention_styles().make(normalized ? "fourier" : "fourier-unnormalized", c);
      attention->set_masses(w.data());
      std::vector<double> out(x.size());
      attention->apply(x.data(), out.data());
      const auto ref = test::naive_weighted_attention(all, n, c.weights, mass, normalized);
      // The Fourier sums add p ~ 40 terms of size <= e^{|b|} s_n each with round-off eps, and cancel
      // down to Z_i >= min-mass-neighbour weight; for random points on the circle the error stays
      // ~ 1e-14 of max |Attn|. Truncation adds < 1e-16 I_0(b) by the choice of p.
      EXPECT_LT(relative_error(out, ref, c.partition), 1e-12) << "b = " << b << (normalized ? " SA" : " USA");
    }
  }
}

TEST(FourierAttention, EqualsRingStylesWithIdentityWeights) {
  const std::int64_t n = 101;
  std::vector<double> all(n * 2);
  sample_uniform_sphere(4, 0, n, 2, all.data());
  const AttentionContext c = test::world_context(n, identity_attention_weights(2, 3.0));
  const std::vector<double> x = test::local_rows(all, c.partition, 2);
  for (const auto& [fourier, ring] : {std::pair<std::string, std::string>{"fourier", "softmax"},
                                      std::pair<std::string, std::string>{"fourier-unnormalized", "unnormalized"}}) {
    std::vector<double> a(x.size()), b(x.size());
    attention_styles().make(fourier, c)->apply(x.data(), a.data());
    attention_styles().make(ring, c)->apply(x.data(), b.data());
    // Gather b to compare with relative_error against the global max.
    std::vector<double> ref(n * 2, 0.0), global(n * 2);
    const Comm comm;
    std::copy(b.begin(), b.end(), ref.begin() + c.partition.begin(comm.rank()) * 2);
    TOKDYN_MPI_CHECK(MPI_Allreduce(ref.data(), global.data(), n * 2, MPI_DOUBLE, MPI_SUM, comm.get()));
    // Both are exact to round-off (ring: N eps from the sums and fast exp 2 ulp; Fourier as above).
    EXPECT_LT(relative_error(a, global, c.partition), 1e-12) << fourier << " vs " << ring;
  }
}

TEST(FourierAttention, WeightsItCannotDoAreInputErrors) {
  auto message_of = [](const AttentionContext& c) {
    try {
      attention_styles().make("fourier", c);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  AttentionWeights w = identity_attention_weights(2, 1.0);
  w.query[1] = 1e-10;  // off-diagonal, far above 1e-14
  EXPECT_NE(message_of(test::world_context(10, w)).find("attention.query"), std::string::npos);
  w = identity_attention_weights(2, 1.0);
  w.key[3] = 1.0 + 1e-12;  // diagonal not constant
  EXPECT_NE(message_of(test::world_context(10, w)).find("attention.key"), std::string::npos);
  w = identity_attention_weights(2, 1.0);
  w.value[2] = -0.3;
  EXPECT_NE(message_of(test::world_context(10, w)).find("attention.value"), std::string::npos);
  EXPECT_NE(message_of(test::world_context(10, identity_attention_weights(3, 1.0))).find("model.d"),
            std::string::npos);
  w = identity_attention_weights(2, 1.0);
  w.query[0] = w.query[3] = 1.0 + 1e-15;  // inside the tolerance: accepted
  EXPECT_EQ(message_of(test::world_context(10, w)), "no error");
}

TEST(CircleStatistics, EnergyAndMeanEqualTheDirectDoubleSum) {
  const Comm comm;
  const std::int64_t n = 90;
  const Partition part(n, comm.size());
  std::vector<double> all(n * 2);
  sample_uniform_sphere(13, 0, n, 2, all.data());
  const std::vector<double> x = test::local_rows(all, part, 2);
  for (bool weighted : {false, true}) {
    const std::vector<double> mass =
        weighted ? test::random_masses(n, 8, {0, 5}) : std::vector<double>(n, 1.0 / n);
    const std::vector<double> w = test::local_rows(mass, part, 1);
    for (double beta : {0.0, 0.5, 2.0, 10.0, 40.0}) {
      const CircleStatistics s =
          circle_statistics(comm.get(), part.count(comm.rank()), x.data(), weighted ? w.data() : nullptr, beta);
      double energy = 0, mean[2] = {0, 0};
      for (std::int64_t i = 0; i < n; ++i) {
        for (int a = 0; a < 2; ++a) mean[a] += mass[i] * all[i * 2 + a];
        for (std::int64_t j = 0; j < n; ++j)
          energy += 0.5 * mass[i] * mass[j] * -std::exp(beta) *
                    std::expm1(beta * (test::dot(&all[i * 2], &all[j * 2], 2) - 1));
      }
      // The series is a difference of two numbers of size e^beta: absolute error ~ p eps e^beta
      // (p <= 60 here), against 1e-13 e^beta; the direct sum's error is smaller.
      EXPECT_NEAR(s.energy, energy, 1e-13 * std::exp(beta)) << "beta " << beta << (weighted ? " weighted" : "");
      EXPECT_NEAR(s.mean[0], mean[0], 1e-15);  // sums of 90 terms of size 1/90: round-off ~ 1e-16
      EXPECT_NEAR(s.mean[1], mean[1], 1e-15);
      EXPECT_NEAR(s.order_parameter, std::hypot(mean[0], mean[1]), 1e-15);
    }
  }
  // Close to the largest beta of the decks (log DBL_MAX = 709.78) the energy is finite and equal to the direct
  // sum in long double (the series' absolute error p eps e^beta is a relative 1e-12 of E_beta ~ e^beta / 2).
  {
    const double beta = 700;
    const CircleStatistics s = circle_statistics(comm.get(), part.count(comm.rank()), x.data(), nullptr, beta);
    long double sum = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        sum += 0.5L / (n * n) * -std::expm1(static_cast<long double>(beta) * (test::dot(&all[i * 2], &all[j * 2], 2) - 1));
    const long double reference = std::exp(static_cast<long double>(beta)) * sum;
    ASSERT_TRUE(std::isfinite(s.energy));
    EXPECT_NEAR(s.energy / static_cast<double>(reference), 1.0, 1e-11);
  }
  // The ring-pass diagnostic agrees on the uniform cloud (an independent O(N^2) code path).
  PairStatisticsPass pass(comm.get(), part, 2, 2.0, 10, 16);
  const PairStatistics p = pass.compute(x.data());
  const CircleStatistics s = circle_statistics(comm.get(), part.count(comm.rank()), x.data(), nullptr, 2.0);
  EXPECT_NEAR(s.energy, p.energy, 1e-13 * std::exp(2.0));
  EXPECT_NEAR(s.order_parameter, p.order_parameter, 1e-15);
}
