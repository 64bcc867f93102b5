// Diagnostics through the ring pass equal the naive double loop: E_beta, order parameter, mean and
// minimum cosine, histogram, pairs beyond the cluster cosine; and the closed-form identity
// mean_cos = (N^2 |mean x|^2 - N) / (N (N - 1)).
// With token masses: every pair weighted by w_i w_j, and uniform masses give the unweighted bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "reference.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

TEST(PairStatistics, EqualsNaiveDoubleLoop) {
  const Comm comm;
  for (int tile : {3, 16, 64}) {
    const std::int64_t n = 41;
    const int d = 3, bins = 20;
    const double beta = 2.5;
    const Partition part(n, comm.size());
    std::vector<double> all(n * d);
    sample_uniform_sphere(8, 0, n, d, all.data());
    const double cluster = 0.6;  // low enough that uniform tokens on S^2 have pairs on both sides
    PairStatisticsPass pass(comm.get(), part, d, beta, bins, tile, cluster);
    const std::int64_t begin = part.begin(comm.rank()), count = part.count(comm.rank());
    std::vector<double> local(all.begin() + begin * d, all.begin() + (begin + count) * d);
    const PairStatistics s = pass.compute(local.data());

    double energy = 0, cos_sum = 0, cos_min = std::numeric_limits<double>::infinity();
    std::vector<std::int64_t> hist(bins, 0);
    std::int64_t aligned = 0, antipodal = 0;
    std::vector<double> mean(d, 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      for (int a = 0; a < d; ++a) mean[a] += all[i * d + a] / n;
      for (std::int64_t j = 0; j < n; ++j) {
        const double c = test::dot(&all[i * d], &all[j * d], d);
        energy += (std::exp(beta) - std::exp(beta * c)) / (2.0 * n * n);
        if (i < j) {
          cos_sum += c;
          cos_min = std::min(cos_min, c);
          ++hist[std::min(bins - 1, static_cast<int>((c + 1) / 2 * bins))];
          aligned += c > cluster;
          antipodal += c < -cluster;
        }
      }
    }
    const double pairs = n * (n - 1) / 2.0;
    EXPECT_NEAR(s.energy, energy, 1e-13 * std::exp(beta));
    EXPECT_NEAR(s.mean_cosine, cos_sum / pairs, 1e-14);
    EXPECT_NEAR(s.min_cosine, cos_min, 1e-15);
    EXPECT_NEAR(s.order_parameter, std::sqrt(test::dot(mean.data(), mean.data(), d)), 1e-15);
    EXPECT_EQ(s.histogram, hist) << "tile " << tile;
    EXPECT_GT(aligned, 0);
    EXPECT_GT(antipodal, 0);
    EXPECT_EQ(s.aligned_pairs, aligned) << "tile " << tile;
    EXPECT_EQ(s.antipodal_pairs, antipodal) << "tile " << tile;
    const double r2 = s.order_parameter * s.order_parameter;
    EXPECT_NEAR(s.mean_cosine, (n * n * r2 - n) / (n * (n - 1.0)), 1e-13);
  }
}

TEST(PairStatistics, SingleClusterHasZeroEnergy) {
  const Comm comm;
  const std::int64_t n = 10;
  const int d = 4;
  const Partition part(n, comm.size());
  std::vector<double> local(part.count(comm.rank()) * d, 0.0);
  for (std::int64_t i = 0; i < part.count(comm.rank()); ++i) local[i * d + 2] = 1.0;
  PairStatisticsPass pass(comm.get(), part, d, 3.0, 10, 4);
  const PairStatistics s = pass.compute(local.data());
  EXPECT_EQ(s.energy, 0.0);
  EXPECT_EQ(s.min_cosine, 1.0);
  EXPECT_EQ(s.order_parameter, 1.0);
  EXPECT_EQ(s.histogram.back(), n * (n - 1) / 2);
}

TEST(PairStatistics, WeightedEqualsNaiveWeightedLoop) {
  const Comm comm;
  const std::int64_t n = 43;
  const int d = 3, bins = 12;
  const double beta = 1.7;
  const Partition part(n, comm.size());
  std::vector<double> all(n * d);
  sample_uniform_sphere(19, 0, n, d, all.data());
  // Massless tokens, among them the pair with the smallest cosine, which must then drop out of the minimum.
  std::int64_t lo_i = 0, lo_j = 1;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j)
      if (test::dot(&all[i * d], &all[j * d], d) < test::dot(&all[lo_i * d], &all[lo_j * d], d)) lo_i = i, lo_j = j;
  const std::vector<double> mass = test::random_masses(n, 2, {lo_i, 7, 30});
  const std::int64_t begin = part.begin(comm.rank()), count = part.count(comm.rank());
  std::vector<double> local(all.begin() + begin * d, all.begin() + (begin + count) * d);
  std::vector<double> w(mass.begin() + begin, mass.begin() + begin + count);
  for (int tile : {4, 64}) {
    PairStatisticsPass pass(comm.get(), part, d, beta, bins, tile);
    pass.set_masses(w.data());
    const PairStatistics s = pass.compute(local.data());

    double energy = 0, cos_sum = 0, pair_mass = 0, cos_min = std::numeric_limits<double>::infinity();
    std::vector<double> hist(bins, 0.0), mean(d, 0.0);
    std::vector<std::int64_t> counts(bins, 0);
    for (std::int64_t i = 0; i < n; ++i) {
      for (int a = 0; a < d; ++a) mean[a] += mass[i] * all[i * d + a];
      for (std::int64_t j = 0; j < n; ++j) {
        const double c = test::dot(&all[i * d], &all[j * d], d), wij = mass[i] * mass[j];
        energy += 0.5 * wij * (std::exp(beta) - std::exp(beta * c));
        if (i == j) continue;
        pair_mass += wij;  // sum_{i != j} w_i w_j
        cos_sum += wij * c;
        if (wij > 0) cos_min = std::min(cos_min, c);
        if (i < j) {
          const int b = std::min(bins - 1, static_cast<int>((c + 1) / 2 * bins));
          hist[b] += wij;
          ++counts[b];
        }
      }
    }
    const double pairs = n * (n - 1) / 2.0;
    double hist_total = 0;
    for (double& h : hist) hist_total += h;
    for (double& h : hist) h *= pairs / hist_total;
    // Weighted sums of n^2 terms in another order: round-off ~ n^2 eps of the largest term.
    EXPECT_NEAR(s.energy, energy, 1e-13 * std::exp(beta));
    EXPECT_NEAR(s.mean_cosine, cos_sum / pair_mass, 1e-14);
    EXPECT_NEAR(s.min_cosine, cos_min, 1e-15);  // one dot product of d = 3 terms, BLAS vs loop: ~ eps
    EXPECT_GT(s.min_cosine, test::dot(&all[lo_i * d], &all[lo_j * d], d));
    EXPECT_NEAR(s.order_parameter, std::sqrt(test::dot(mean.data(), mean.data(), d)), 1e-15);
    EXPECT_EQ(s.histogram, counts) << "tile " << tile;
    for (int b = 0; b < bins; ++b) EXPECT_NEAR(s.mass_histogram[b], hist[b], 1e-12 * pairs) << "bin " << b;
  }
}

TEST(PairStatistics, UniformMassesGiveTheSameBits) {
  const Comm comm;
  const std::int64_t n = 29;
  const int d = 4;
  const Partition part(n, comm.size());
  std::vector<double> local(part.count(comm.rank()) * d);
  sample_uniform_sphere(6, part.begin(comm.rank()), part.count(comm.rank()), d, local.data());
  PairStatisticsPass plain(comm.get(), part, d, 2.0, 9, 5), weighted(comm.get(), part, d, 2.0, 9, 5);
  const std::vector<double> uniform(part.count(comm.rank()), 1.0 / n);
  weighted.set_masses(uniform.data());
  const PairStatistics a = plain.compute(local.data()), b = weighted.compute(local.data());
  EXPECT_EQ(a.energy, b.energy);
  EXPECT_EQ(a.order_parameter, b.order_parameter);
  EXPECT_EQ(a.mean_cosine, b.mean_cosine);
  EXPECT_EQ(a.min_cosine, b.min_cosine);
  EXPECT_EQ(a.histogram, b.histogram);
  EXPECT_EQ(a.mass_histogram, b.mass_histogram);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(a.mass_histogram[k], static_cast<double>(a.histogram[k]));
}

// E_beta close to the largest beta the decks allow (log DBL_MAX = 709.78): finite, and equal to the double sum in
// long double, where e^700 ~ 1e304 is an ordinary number. Summing terms of size e^beta overflowed here (256 tokens:
// 32640 pairs of up to 1e304 each), giving Inf or NaN.
TEST(PairStatistics, EnergyAtBeta700IsFiniteAndEqualsLongDoubleSum) {
  const Comm comm;
  const std::int64_t n = 256;
  const int d = 3;
  const double beta = 700;
  const Partition part(n, comm.size());
  std::vector<double> all(n * d);
  sample_uniform_sphere(21, 0, n, d, all.data());
  for (bool weighted : {false, true}) {
    const std::vector<double> mass = weighted ? test::random_masses(n, 4, {3}) : std::vector<double>(n, 1.0 / n);
    PairStatisticsPass pass(comm.get(), part, d, beta, 10, 16);
    const std::int64_t begin = part.begin(comm.rank()), count = part.count(comm.rank());
    if (weighted) pass.set_masses(mass.data() + begin);
    std::vector<double> local(all.begin() + begin * d, all.begin() + (begin + count) * d);
    const PairStatistics s = pass.compute(local.data());
    long double sum = 0;  // (1/2) sum_ij w_i w_j (1 - e^{beta (c - 1)}), then times e^beta
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const long double c = test::dot(&all[i * d], &all[j * d], d);
        sum += 0.5L * mass[i] * mass[j] * -std::expm1(static_cast<long double>(beta) * (c - 1));
      }
    const long double reference = std::exp(static_cast<long double>(beta)) * sum;
    ASSERT_TRUE(std::isfinite(s.energy)) << (weighted ? "weighted" : "uniform");
    // exp(beta + log S) carries a relative error of about beta eps = 1.6e-13.
    EXPECT_NEAR(s.energy / static_cast<double>(reference), 1.0, 1e-12) << (weighted ? "weighted" : "uniform");
  }
}

namespace {
// This rank's rows of N tokens on S^{d-1} with a preferred direction (a cloud with spread pair terms).
std::vector<double> tilted_tokens(const Partition& part, int rank, int d, std::uint64_t seed) {
  const std::int64_t n = part.n_global;
  std::vector<double> all(n * d);
  sample_uniform_sphere(seed, 0, n, d, all.data());
  for (std::int64_t i = 0; i < n; ++i) {
    all[i * d] += 0.8;
    double r = 0;
    for (int a = 0; a < d; ++a) r += all[i * d + a] * all[i * d + a];
    for (int a = 0; a < d; ++a) all[i * d + a] /= std::sqrt(r);
  }
  return std::vector<double>(all.begin() + part.begin(rank) * d, all.begin() + (part.begin(rank) + part.count(rank)) * d);
}
}  // namespace

TEST(PairStatistics, PairsModeAutoIsExactUpToTheLimit) {
  EXPECT_EQ(pairs_mode("auto", kExactPairsLimit), PairsMode::exact);
  EXPECT_EQ(pairs_mode("auto", kExactPairsLimit + 1), PairsMode::sampled);
  EXPECT_EQ(pairs_mode("off", 10), PairsMode::off);
  EXPECT_THROW(pairs_mode("some", 10), InputError);
}

// A subset that holds every token (sample_tokens >= N) is the exact pass by another loop: the same
// histogram and cluster counts, E_beta to round-off, and a standard error of 0 (no token left out).
TEST(PairStatistics, SampledWithEveryTokenEqualsExact) {
  const Comm comm;
  const std::int64_t n = 301;
  const int d = 5, bins = 40;
  const Partition part(n, comm.size());
  const std::vector<double> x = tilted_tokens(part, comm.rank(), d, 3);
  PairStatisticsPass pass(comm.get(), part, d, 3.0, bins, 32, 0.9);
  const PairStatistics exact = pass.compute(x.data());
  pass.set_sampling({PairsMode::sampled, 1000, 9});
  EXPECT_EQ(pass.sample_size(), n);
  const PairStatistics all = pass.compute(x.data());
  EXPECT_EQ(all.histogram, exact.histogram);
  EXPECT_EQ(all.histogram_pairs, n * (n - 1) / 2);
  EXPECT_EQ(exact.histogram_pairs, n * (n - 1) / 2);
  EXPECT_EQ(all.aligned_pairs, exact.aligned_pairs);
  EXPECT_EQ(all.antipodal_pairs, exact.antipodal_pairs);
  EXPECT_EQ(all.min_cosine, exact.min_cosine);
  EXPECT_NEAR(all.energy, exact.energy, 1e-13 * exact.energy);
  EXPECT_EQ(all.energy_stderr, 0.0);
  EXPECT_NEAR(all.mean_cosine, exact.mean_cosine, 1e-14);
  EXPECT_NEAR(all.order_parameter, exact.order_parameter, 1e-15);
}

// The sampled E_beta is unbiased and its stated standard error is its actual one: over 60 independent
// subsets of ~300 of 3000 tokens, the z-scores (E_sampled - E_exact) / stderr have mean 0 (within
// 4 / sqrt(60) = 0.52, a 4-sigma band) and an RMS in [0.6, 1.5] (the RMS of 60 unit normals lies there
// with probability > 1 - 1e-4). Off and sampled keep |mean x| and the mean cosine exact.
TEST(PairStatistics, SampledEnergyErrorIsItsStandardError) {
  const Comm comm;
  const std::int64_t n = 3000;
  const int d = 3;
  const Partition part(n, comm.size());
  const std::vector<double> x = tilted_tokens(part, comm.rank(), d, 4);
  PairStatisticsPass pass(comm.get(), part, d, 2.0, 20, 64);
  const PairStatistics exact = pass.compute(x.data());
  double z_sum = 0, z2_sum = 0;
  const int seeds = 60;
  for (int seed = 1; seed <= seeds; ++seed) {
    pass.set_sampling({PairsMode::sampled, 300, static_cast<std::uint64_t>(seed)});
    const PairStatistics s = pass.compute(x.data());
    const std::int64_t m = pass.sample_size();
    EXPECT_GT(m, 200);
    EXPECT_LT(m, 400);
    EXPECT_EQ(s.histogram_pairs, m * (m - 1) / 2);
    std::int64_t counted = 0;
    for (std::int64_t c : s.histogram) counted += c;
    EXPECT_EQ(counted, s.histogram_pairs);
    EXPECT_GE(s.min_cosine, exact.min_cosine);
    EXPECT_NEAR(s.mean_cosine, exact.mean_cosine, 1e-14);
    EXPECT_NEAR(s.order_parameter, exact.order_parameter, 1e-15);
    ASSERT_GT(s.energy_stderr, 0.0);
    const double z = (s.energy - exact.energy) / s.energy_stderr;
    z_sum += z;
    z2_sum += z * z;
  }
  const double mean = z_sum / seeds, rms = std::sqrt(z2_sum / seeds);
  if (comm.rank() == 0)
    std::printf("sampled E_beta: z-score mean %.3f (prediction 0), RMS %.3f (prediction 1)\n", mean, rms);
  EXPECT_LT(std::abs(mean), 4 / std::sqrt(double(seeds)));
  EXPECT_GT(rms, 0.6);
  EXPECT_LT(rms, 1.5);
  pass.set_sampling({PairsMode::off, 0, 1});
  const PairStatistics off = pass.compute(x.data());
  EXPECT_TRUE(std::isnan(off.energy));
  EXPECT_TRUE(std::isnan(off.min_cosine));
  EXPECT_EQ(off.histogram_pairs, 0);
  EXPECT_NEAR(off.mean_cosine, exact.mean_cosine, 1e-14);
}
