// Brownian paths: dyadic refinement reproduces the coarse path exactly, increments have variance dt.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tokdyn/noise/brownian_path.hpp"

using namespace tokdyn;

TEST(BrownianPath, RefinedPathPassesThroughTheCoarsePath) {
  const std::int64_t coords = 7;
  for (std::int64_t base : {1, 3, 5}) {
    const BrownianPath coarse(3, base * 8, 2.0, coords), fine(3, base * 32, 2.0, coords);
    EXPECT_EQ(coarse.base_steps(), base);
    EXPECT_EQ(fine.levels(), 5);
    std::vector<double> a(coords), b(coords), inc_c(coords), inc_f(coords);
    for (std::int64_t l = 0; l <= base * 8; ++l) {
      coarse.values(l, a.data());
      fine.values(4 * l, b.data());
      for (int c = 0; c < coords; ++c) ASSERT_EQ(a[c], b[c]) << "base " << base << " step " << l;  // the same bits
    }
    for (std::int64_t l = 0; l < base * 8; ++l) {
      coarse.increments(l, inc_c.data());
      std::vector<double> sum(coords, 0.0);
      for (int r = 0; r < 4; ++r) {
        fine.increments(4 * l + r, inc_f.data());
        for (int c = 0; c < coords; ++c) sum[c] += inc_f[c];
      }
      for (int c = 0; c < coords; ++c) ASSERT_NEAR(sum[c], inc_c[c], 4e-16 * (1 + std::abs(inc_c[c])));
    }
  }
}

TEST(BrownianPath, IncrementsAreIndependentWithVarianceDt) {
  // 64 steps x 500 coordinates: mean 0, variance dt, lag-1 correlation 0, within 5 standard errors.
  const std::int64_t steps = 64, coords = 500;
  const double horizon = 3.0, dt = horizon / steps;
  const BrownianPath path(9, steps, horizon, coords);
  std::vector<double> inc(coords), prev(coords);
  double s = 0, s2 = 0, cross = 0;
  for (std::int64_t l = 0; l < steps; ++l) {
    path.increments(l, inc.data());
    for (int c = 0; c < coords; ++c) {
      s += inc[c], s2 += inc[c] * inc[c];
      if (l > 0) cross += inc[c] * prev[c];
    }
    prev = inc;
  }
  const double n = static_cast<double>(steps * coords);
  EXPECT_NEAR(s / n, 0.0, 5 * std::sqrt(dt / n));
  EXPECT_NEAR(s2 / n, dt, 5 * dt * std::sqrt(2 / n));
  EXPECT_NEAR(cross / (n - coords), 0.0, 5 * dt / std::sqrt(n - coords));
}

TEST(BrownianPath, ValueAtTheHorizonHasVarianceT) {
  const std::int64_t coords = 4000;
  const BrownianPath path(2, 48, 1.5, coords);  // b = 3, J = 4
  std::vector<double> v(coords);
  path.values(48, v.data());
  double s2 = 0;
  for (double x : v) s2 += x * x;
  EXPECT_NEAR(s2 / coords, 1.5, 5 * 1.5 * std::sqrt(2.0 / coords));
}

// The top-down block fill gives the very increments of the step-by-step walk (same keys, same arithmetic),
// for blocks of every size, inside and at the ends of base intervals, with an odd base (L = 3 * 2^6).
TEST(BrownianPath, BlockIncrementsEqualStepIncrementsBitwise) {
  const std::int64_t coords = 6;  // not a multiple of 4: the last group is partial
  BrownianPath path(11, 3 * 64, 2.5, coords);
  std::vector<double> step(coords);
  for (std::int64_t count : {1, 2, 8, 64}) {
    std::vector<double> block(count * coords);
    for (std::int64_t first = 0; first < 3 * 64; first += count) {
      path.increments_block(first, count, block.data());
      for (std::int64_t s = 0; s < count; ++s) {
        path.increments(first + s, step.data());
        for (std::int64_t c = 0; c < coords; ++c)
          ASSERT_EQ(block[s * coords + c], step[c]) << "count " << count << " step " << first + s << " coord " << c;
      }
    }
  }
  std::vector<double> block(128 * coords);
  EXPECT_THROW(path.increments_block(0, 128, block.data()), std::invalid_argument);  // 128 > 2^J = 64
  EXPECT_THROW(path.increments_block(4, 8, block.data()), std::invalid_argument);    // not aligned
}
