// The fast attention styles beyond the circle against the exact sums: the spherical-harmonic styles on S^2 at
// their stated tolerance for several beta (and b < 0), weighted, SA and USA; the random-feature styles exact at
// beta = 0, unbiased with a standard error that matches their observed spread, and independent of the ranks.
#include <gtest/gtest.h>

#include <cmath>

#include "distributed.hpp"
#include "reference.hpp"
#include "tokdyn/attention/feature_attention.hpp"
#include "tokdyn/attention/harmonic_attention.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {




AttentionWeights scaled_identity(int d, double q, double k, double v, double beta) {
  AttentionWeights w = identity_attention_weights(d, beta);
  for (int a = 0; a < d; ++a) w.query[a * (d + 1)] = q, w.key[a * (d + 1)] = k, w.value[a * (d + 1)] = v;
  return w;
}

}  // namespace

TEST(HarmonicAttention, EqualsTheExactSumsToItsTolerance) {
  const std::int64_t n = 2000;
  std::vector<double> all(n * 3);
  sample_uniform_sphere(31, 0, n, 3, all.data());
  const std::vector<double> mass = test::random_masses(n, 9, {3, 700});
  for (double tolerance : {1e-12, 1e-6})
    for (double b : {0.5, 4.0, 20.0, -4.0}) {
      // Q = 2 I, K = 0.5 I, V = -1.5 I: logits b <x, y>, the value scale carried through.
      AttentionContext c = test::world_context(n, scaled_identity(3, 2.0, 0.5, -1.5, b));
      c.tolerance = tolerance;
      const std::vector<double> x = test::local_rows(all, c.partition, 3), w = test::local_rows(mass, c.partition, 1);
      for (bool normalized : {true, false}) {
        auto attention = attention_styles().make(normalized ? "harmonic" : "harmonic-unnormalized", c);
        attention->set_masses(w.data());
        std::vector<double> out(x.size());
        attention->apply(x.data(), out.data());
        const double error = test::relative_error(test::gather_rows(out, c.partition, 3),
                                            test::naive_weighted_attention(all, n, c.weights, mass, normalized));
        // Z and U come out with an absolute error below (tolerance + ~p^2 eps) e^{|b|}; relative to Z (SA) or max
        // |U| (USA), both ~ e^{|b|} / (2|b|) for points spread over the sphere (and within the masses' ratio 21):
        // ~ 2|b| * 21 * tolerance at worst, 1e-10 at tolerance 1e-12 and beta 20 (seen: a few 1e-13), and
        // 100 |b| tolerance at 1e-6.
        const double bound = tolerance < 1e-10 ? 1e-10 : 100 * std::abs(b) * tolerance;
        EXPECT_LT(error, bound) << "b " << b << " tolerance " << tolerance << (normalized ? " SA" : " USA");
        if (tolerance == 1e-6 && std::abs(b) >= 4) {
          // The truncation shows: the knob does something (the error is above round-off).
          EXPECT_GT(error, 1e-12) << "b " << b;
        }
      }
    }
}

TEST(HarmonicAttention, WeightsItCannotDoAreInputErrors) {
  auto message_of = [](const AttentionContext& c) {
    try {
      attention_styles().make("harmonic", c);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(test::world_context(10, identity_attention_weights(2, 1.0))).find("model.d = 3"),
            std::string::npos);
  AttentionWeights w = identity_attention_weights(3, 1.0);
  w.key[1] = 0.1;
  EXPECT_NE(message_of(test::world_context(10, w)).find("attention.key"), std::string::npos);
  AttentionContext c = test::world_context(10, identity_attention_weights(3, 1.0));
  c.causal = true;
  EXPECT_NE(message_of(c).find("causal"), std::string::npos);
}

TEST(RandomFeatureAttention, BetaZeroIsExact) {
  // At beta = 0 every feature's product is e^{|w|^2/2 - c} e^{-|w|^2/2} e^{c} = 1: SA is the weighted mean of
  // V x_j and USA the same sum unnormalised, whatever the features (round-off only).
  const Comm comm;
  const std::int64_t n = 300;
  const int d = 5;
  AttentionWeightSpec spec;
  for (auto& m : spec.matrices) m = {"gaussian", 1.0};
  spec.beta = 0;
  const AttentionWeights weights = make_attention_weights(spec, d, comm.get());
  std::vector<double> all(n * d);
  sample_uniform_sphere(5, 0, n, d, all.data());
  const std::vector<double> mass = test::random_masses(n, 2);
  AttentionContext c = test::world_context(n, weights);
  c.features = 16;
  for (bool normalized : {true, false}) {
    auto attention = attention_styles().make(normalized ? "random-features" : "random-features-unnormalized", c);
    const std::vector<double> x = test::local_rows(all, c.partition, d), w = test::local_rows(mass, c.partition, 1);
    attention->set_masses(w.data());
    std::vector<double> out(x.size());
    attention->apply(x.data(), out.data());
    EXPECT_LT(test::relative_error(test::gather_rows(out, c.partition, d),
                             test::naive_weighted_attention(all, n, weights, mass, normalized)),
              1e-13);
  }
}

TEST(RandomFeatureAttention, UnbiasedWithTheStandardErrorItReports) {
  // Tokens (1, y) with V = e_1 e_1^T: USA's first output coordinate is Z_i itself, so over independent feature
  // seeds its mean must approach the exact Z_i and its spread must match the standard error the style reports.
  const Comm comm;
  const std::int64_t n = 200;
  const int d = 4, seeds = 40;
  AttentionWeightSpec spec;
  spec.matrices[0] = spec.matrices[1] = {"gaussian", 1.0};
  spec.beta = 0.3;
  spec.seed = 11;
  AttentionWeights weights = make_attention_weights(spec, d, comm.get());
  std::fill(weights.value.begin(), weights.value.end(), 0.0);
  weights.value[0] = 1;
  std::vector<double> all(n * d);
  sample_uniform_sphere(8, 0, n, d, all.data());
  for (std::int64_t i = 0; i < n; ++i) all[i * d] = 1;
  const std::vector<double> mass = test::random_masses(n, 4);
  const std::vector<double> exact = test::naive_weighted_attention(all, n, weights, mass, false);
  std::vector<double> sum(n, 0.0), sum2(n, 0.0);
  double reported = 0;
  AttentionContext c = test::world_context(n, weights);
  c.features = 256;
  const std::vector<double> x = test::local_rows(all, c.partition, d), w = test::local_rows(mass, c.partition, 1);
  for (int s = 0; s < seeds; ++s) {
    c.seed = 1000 + s;
    FeatureAttention attention(c, false);
    attention.set_masses(w.data());
    std::vector<double> out(x.size());
    attention.apply(x.data(), out.data());
    const std::vector<double> z = test::gather_rows(out, c.partition, d);
    for (std::int64_t i = 0; i < n; ++i) sum[i] += z[i * d] / seeds, sum2[i] += z[i * d] * z[i * d] / seeds;
    reported += attention.relative_stderr() * attention.relative_stderr() / seeds;
  }
  double worst_z = 0, observed = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double sd = std::sqrt(std::max(0.0, sum2[i] - sum[i] * sum[i]) * seeds / (seeds - 1));
    worst_z = std::max(worst_z, std::abs(sum[i] - exact[i * d]) / (sd / std::sqrt(seeds)));
    observed += (sd / exact[i * d]) * (sd / exact[i * d]) / n;
  }
  // Unbiased: the mean over 40 seeds within 5 standard errors of the exact Z_i at every token (tokens share the
  // features, so the 200 z-scores are strongly correlated: a 5-sigma excursion is rare, a bias of 5 sd would fail).
  EXPECT_LT(worst_z, 5.0);
  // The reported rms relative standard error against the observed one (40 seeds: ~11 % noise in each, and the
  // estimate from 256 heavy-tailed terms its own; a factor 1.5 either way is a wrong formula, not noise).
  const double ratio = std::sqrt(reported / observed);
  EXPECT_GT(ratio, 1 / 1.5) << "reported " << std::sqrt(reported) << " observed " << std::sqrt(observed);
  EXPECT_LT(ratio, 1.5) << "reported " << std::sqrt(reported) << " observed " << std::sqrt(observed);
}

TEST(RandomFeatureAttention, SameResultOnEveryRankCount) {
  // The features come from (seed, feature index): the distributed apply equals one rank's apply of all tokens
  // (MPI_COMM_SELF) up to the moments' summation order.
  const Comm comm;
  const std::int64_t n = 257;
  const int d = 6;
  std::vector<double> all(n * d);
  sample_uniform_sphere(3, 0, n, d, all.data());
  AttentionContext c = test::world_context(n, identity_attention_weights(d, 1.5));
  c.features = 64;
  std::vector<double> local(test::local_rows(all, c.partition, d).size()), whole(all.size());
  attention_styles().make("random-features", c)->apply(test::local_rows(all, c.partition, d).data(), local.data());
  AttentionContext self = c;
  self.comm = MPI_COMM_SELF;
  self.partition = Partition(n, 1);
  attention_styles().make("random-features", self)->apply(all.data(), whole.data());
  EXPECT_LT(test::relative_error(test::gather_rows(local, c.partition, d), whole), 1e-13);
}

TEST(SphereStatistics, EnergyEqualsTheDirectDoubleSum) {
  // E_beta of unit points on S^2 by the harmonic series against (1/2N^2) sum_ij -expm1(beta (<x_i, x_j> - 1)) e^beta
  // summed directly in long double: within the series' error bound, which is ~1e-15 e^beta.
  const Comm comm;
  const std::int64_t n = 500;
  std::vector<double> all(n * 3);
  sample_uniform_sphere(41, 0, n, 3, all.data());
  for (std::int64_t i = 0; i < 40; ++i)  // a cluster too: E_beta far below e^beta / 2
    for (int a = 0; a < 3; ++a) all[i * 3 + a] = all[a];
  const Partition part(n, comm.size());
  const std::vector<double> x = test::local_rows(all, part, 3);
  for (double beta : {0.0, 0.5, 4.0, 20.0}) {
    long double sum = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        sum += -std::expm1(static_cast<long double>(beta) * (test::dot(&all[i * 3], &all[j * 3], 3) - 1));
    const double direct = static_cast<double>(0.5L * sum / (n * n) * std::exp(static_cast<long double>(beta)));
    const SphereStatistics s = sphere_statistics(comm.get(), part.count(comm.rank()), x.data(), beta);
    EXPECT_NEAR(s.energy, direct, s.error_bound) << "beta " << beta << " p " << s.terms;
    EXPECT_LT(s.error_bound, 1e-12 * std::exp(beta)) << "beta " << beta;
  }
}
