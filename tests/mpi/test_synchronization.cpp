// The synchronization study: each replica equals a transformer run on its own seed with E_beta from
// the naive double sum, whatever the rank count; the summary's rate is exact on exponential energies.
#include <gtest/gtest.h>

#include <cmath>

#include "reference.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/studies/synchronization.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

TEST(Synchronization, ReplicasEqualTransformerRunsWithNaiveEnergy) {
  const Comm comm;
  SynchronizationSetup s;
  s.model.n = 9;
  s.model.d = 5;
  s.model.layers = 12;
  s.model.horizon = 3;
  s.model.factor = 1;
  s.weights = identity_attention_weights(5, 1.5);
  s.beta = 1.5;
  s.mlp.width = 32;
  s.mlp.activation = "sigmoid";
  s.mlp.sigma_u = 0.2;
  s.seed = 5;
  s.replicas = {3, 4, 5, 6, 7};  // more replicas than ranks, not starting at 0
  s.every = 5;                    // layers 0, 5, 10 and the last, 12
  s.cluster_cosine = 0.5;         // low enough that both counts are exercised after 12 layers
  const SynchronizationResult r = run_synchronization_study(comm.get(), s);
  ASSERT_EQ(r.layer, (std::vector<std::int64_t>{0, 5, 10, 12}));
  const std::size_t S = r.layer.size();
  const int d = s.model.d;
  const std::int64_t n = s.model.n;
  for (std::size_t ri = 0; ri < s.replicas.size(); ++ri) {
    const std::uint64_t seed = replica_seed(s.seed, s.replicas[ri]);
    MlpParams p = s.mlp;
    p.seed = seed;
    Transformer model(s.model, n, replica_attention("softmax", s.weights, n, 256, 1), RandomMlp(p, d));
    std::vector<double> x(n * d);
    sample_uniform_sphere(seed, 0, n, d, x.data());
    std::size_t k = 0;
    std::int64_t aligned = 0, antipodal = 0;
    for (std::int64_t l = 0; l <= s.model.layers; ++l) {
      if (l > 0) model.step(l - 1, x.data());
      if (k < S && r.layer[k] == l) {
        double energy = 0;
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            energy += (std::exp(s.beta) - std::exp(s.beta * test::dot(&x[i * d], &x[j * d], d))) / (2.0 * n * n);
        EXPECT_NEAR(r.energy[ri * S + k], energy, 1e-13) << "replica " << ri << " layer " << l;
        ++k;
      }
    }
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) {
        const double c = test::dot(&x[i * d], &x[j * d], d);
        aligned += c > s.cluster_cosine, antipodal += c < -s.cluster_cosine;
      }
    const double pairs = n * (n - 1) / 2.0;
    EXPECT_DOUBLE_EQ(r.aligned_fraction[ri], aligned / pairs);
    EXPECT_DOUBLE_EQ(r.antipodal_fraction[ri], antipodal / pairs);
  }
}

TEST(Synchronization, SummaryOfExponentialEnergies) {
  // E_r(t) = c_r e^{-0.7 t}: the mean is exactly exponential, so every bootstrap slope is -0.7.
  SynchronizationResult r;
  r.replicas = {0, 1, 2, 3};
  const std::vector<double> c = {0.5, 0.8, 1.1, 0.6};
  for (int k = 0; k <= 10; ++k) r.time.push_back(0.3 * k), r.layer.push_back(k);
  for (double ci : c)
    for (double t : r.time) r.energy.push_back(ci * std::exp(-0.7 * t));
  const SynchronizationSummary m = summarize_synchronization(r, -0.2, 0.0, 1);
  EXPECT_NEAR(m.decay_rate.value, -0.7, 1e-12);
  EXPECT_NEAR(m.decay_rate.low, -0.7, 1e-12);
  EXPECT_NEAR(m.decay_rate.high, -0.7, 1e-12);
  EXPECT_NEAR(m.mean_energy[0], 0.75, 1e-15);
  EXPECT_NEAR(m.bound[10], 0.75 * std::exp(-0.2 * 3.0), 1e-15);
  EXPECT_NEAR(m.max_ratio_to_bound, 1.0, 1e-15);  // at t = 0; below 1 after
  // s.e. = sd / sqrt(R) with ddof 1: sd of {0.5, 0.8, 1.1, 0.6} is sqrt(0.07).
  EXPECT_NEAR(m.standard_error[0], std::sqrt(0.07) / 2, 1e-14);
  EXPECT_THROW(summarize_synchronization(r, -0.2, 2.8, 1), InputError);  // only t = 3 left to fit
}
