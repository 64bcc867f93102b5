// Diagnostics through the ring pass equal the naive double loop: E_beta, order parameter, mean and
// minimum cosine, histogram, pairs beyond the cluster cosine; and the closed-form identity mean_cos = (N^2 |mean x|^2 - N) / (N (N - 1)).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference.hpp"
#include "tokdyn/core/comm.hpp"
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
