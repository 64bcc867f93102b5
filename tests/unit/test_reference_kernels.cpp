// The hot row kernels against their plain references (pairs/reference_kernels.hpp), on rows of every length
// around the 8 lanes and the 4 histogram copies, with cosines at the bin edges, outside [-1, 1] and NaN.
// Counts, minimum and maximum exactly; sums to 1e-14 of the sum of their absolute terms (each exp within
// 3 ulp, about 1e-16 per term, and another order of addition: about n 1e-16 for n <= 70).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/pairs/pair_kernels.hpp"
#include "tokdyn/pairs/reference_kernels.hpp"
#include "tokdyn/pairs/softmax_kernels.hpp"

namespace tokdyn {
namespace {

// A row of n cosines: random in [-1, 1], with exact bin edges, the ends, values just outside and, when asked,
// a NaN; the h of unit-ish tokens.
void row(int n, int bins, std::uint64_t seed, bool nan, std::vector<double>& c, std::vector<double>& h, double beta) {
  const RandomStream s(seed, Purpose::test);
  c.assign(n, 0.0);
  h.assign(n, 0.0);
  for (int j = 0; j < n; ++j) {
    const std::array<double, 4> u = s.uniform4(0, j, 0);
    c[j] = 2 * u[0] - 1;
    if (j % 5 == 1) c[j] = -1 + 2.0 * (j % bins) / bins;  // an exact bin edge
    if (j % 7 == 3) c[j] = j % 2 ? 1.0 : -1.0;
    if (j % 11 == 4) c[j] = j % 2 ? 1.0 + 1e-12 : -1.0 - 1e-12;
    h[j] = 0.5 * beta * (1 + 0.1 * u[1]);
  }
  if (nan && n > 2) c[n / 2] = std::numeric_limits<double>::quiet_NaN();
}

TEST(ReferenceKernels, PairRowStatisticsEqualTheReference) {
  const int bins = 10;
  const double beta = 3.0, cluster = 0.9, h_row = 1.6;
  for (int n = 0; n <= 70; ++n) {
    std::vector<double> c, h;
    row(n, bins, 10 + n, false, c, h, beta);
    std::vector<std::int64_t> counts(kHistogramCopies * bins, 0), plain(bins, 0);
    std::vector<int> scratch(n + 1);
    const PairRowStatistics fast = pair_row_statistics(c.data(), h.data(), n, beta, h_row, bins, cluster,
                                                       counts.data(), scratch.data());
    const PairRowStatistics ref = pair_row_statistics_reference(c.data(), h.data(), n, beta, h_row, bins, cluster,
                                                                plain.data());
    std::vector<std::int64_t> summed(bins, 0);
    for (int k = 0; k < kHistogramCopies; ++k)
      for (int b = 0; b < bins; ++b) summed[b] += counts[k * bins + b];
    EXPECT_EQ(summed, plain) << "n = " << n;
    EXPECT_EQ(fast.aligned, ref.aligned);
    EXPECT_EQ(fast.antipodal, ref.antipodal);
    EXPECT_EQ(fast.min, ref.min);
    double abs_cos = 0;
    for (double x : c) abs_cos += std::abs(x);
    EXPECT_NEAR(fast.energy, ref.energy, 1e-14 * ref.energy + 1e-300) << "n = " << n;
    EXPECT_NEAR(fast.cosine, ref.cosine, 1e-14 * abs_cos) << "n = " << n;
    // The weights of the same pairs, and the fused weights-and-statistics kernel: the same bits as its parts.
    std::vector<double> w(n), w_ref(n), w_fused(n);
    pair_row_weights(c.data(), h.data(), n, beta, h_row, w.data());
    pair_row_weights_reference(c.data(), h.data(), n, beta, h_row, w_ref.data());
    for (int j = 0; j < n; ++j) EXPECT_NEAR(w[j], w_ref[j], 4e-16) << "n = " << n << ", j = " << j;
    std::vector<std::int64_t> counts2(kHistogramCopies * bins, 0);
    const PairRowStatistics fused = pair_row_weights_statistics(c.data(), h.data(), n, beta, h_row, bins, cluster,
                                                                counts2.data(), scratch.data(), w_fused.data());
    EXPECT_EQ(w_fused, w);
    EXPECT_EQ(counts2, counts);
    EXPECT_EQ(fused.energy, fast.energy);
    EXPECT_EQ(pair_row_energy(c.data(), h.data(), n, beta, h_row), fast.energy);
  }
}

TEST(ReferenceKernels, NanCosineCountsInTheFirstBin) {
  const int bins = 6, n = 21;
  std::vector<double> c, h;
  row(n, bins, 3, true, c, h, 1.0);
  std::vector<std::int64_t> counts(kHistogramCopies * bins, 0), plain(bins, 0), summed(bins, 0);
  std::vector<int> scratch(n);
  pair_row_statistics(c.data(), h.data(), n, 1.0, 0.5, bins, 0.5, counts.data(), scratch.data());
  pair_row_statistics_reference(c.data(), h.data(), n, 1.0, 0.5, bins, 0.5, plain.data());
  for (int k = 0; k < kHistogramCopies; ++k)
    for (int b = 0; b < bins; ++b) summed[b] += counts[k * bins + b];
  EXPECT_EQ(summed, plain);
  EXPECT_EQ(std::accumulate(plain.begin(), plain.end(), std::int64_t(0)), n);
}

TEST(ReferenceKernels, SoftmaxRowsEqualTheReference) {
  const RandomStream s(6, Purpose::test);
  for (int n : {1, 7, 8, 9, 16, 17, 64, 255}) {
    std::vector<double> v(n);
    s.normals(1, n, v.data(), n);
    for (double& x : v) x *= 10;
    std::vector<double> fast = v, plain = v;
    const double m = row_max_reference(v.data(), n);
    EXPECT_EQ(row_max(v.data(), n), m);
    const double sum = shifted_exp_sum_reference(plain.data(), n, m);
    const double got = shifted_exp_sum(fast.data(), n, m);
    EXPECT_NEAR(got, sum, 1e-14 * sum);
    for (int j = 0; j < n; ++j) EXPECT_NEAR(fast[j], plain[j], 4e-16 * plain[j] + 1e-300);
  }
}

}  // namespace
}  // namespace tokdyn
