// The multilevel Monte Carlo driver (mlmc/estimator.hpp) on geometric Brownian motion, whose Euler scheme has a
// known answer at every level: E[S_T] of M Euler steps is S0 (1 + r T / M)^M (each step multiplies the mean by
// 1 + r h), so E[Y_l] and the exact E[S_T] = S0 e^{rT} are closed forms to test the estimate, the levels and the
// rates against.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/mlmc/estimator.hpp"

using namespace tokdyn;

namespace {

struct Gbm {
  double s0 = 1, r = 1, sigma = 0.5, T = 1;
  std::uint64_t seed = 7;
  bool independent_coarse = false;  // a broken coupling: the coarse path from noise of its own
};

// Level l: 2^l Euler steps for the fine path, 2^{l-1} for the coarse one on the pairwise sums of the same
// increments; sample s of level l draws counter (l, s). Cost: the fine path's steps.
void gbm_sample(const Gbm& g, int level, std::int64_t first, std::int64_t count, LevelSums& sums) {
  const RandomStream stream(g.seed, Purpose::test), other(g.seed + 1, Purpose::test);
  const std::int64_t M = std::int64_t(1) << level;
  const double h = g.T / static_cast<double>(M);
  std::vector<double> dw(M), dv(M);
  for (std::int64_t s = first; s < first + count; ++s) {
    stream.normals(level, s, dw.data(), M);
    double fine = g.s0, coarse = g.s0;
    for (std::int64_t k = 0; k < M; ++k) fine += g.r * fine * h + g.sigma * fine * std::sqrt(h) * dw[k];
    if (level > 0) {
      if (g.independent_coarse) other.normals(level, s, dv.data(), M);
      const std::vector<double>& w = g.independent_coarse ? dv : dw;
      for (std::int64_t k = 0; k < M; k += 2)
        coarse += g.r * coarse * 2 * h + g.sigma * coarse * std::sqrt(h) * (w[k] + w[k + 1]);
    }
    sums.add(level, fine, coarse);
  }
  sums.cost += static_cast<double>(count * M);
}

// E[P_l]: the mean of 2^l Euler steps.
double euler_mean(const Gbm& g, int level) {
  const double M = std::ldexp(1.0, level);
  return g.s0 * std::pow(1 + g.r * g.T / M, M);
}

MlmcResult run(const Gbm& g, double eps) {
  MlmcOptions o;
  o.eps = eps;
  return mlmc_estimate([&](int l, std::int64_t first, std::int64_t count, LevelSums& s) { gbm_sample(g, l, first, count, s); },
                       o);
}

}  // namespace

// The estimate of E[S_T] = e is within 3 eps of it (RMSE eps: sampling error sqrt(1 - theta) eps = 0.71 eps and a
// bias estimated below sqrt(theta) eps), the estimated bias is below its target, the standard error is what the
// target allows, and every level's mean of Y_l is within 4 of its standard errors of the closed form (a false alarm
// over the ~8 levels: < 1e-3).
TEST(Mlmc, GeometricBrownianMotionWithinEpsOfTheExactMean) {
  const Gbm g;
  const double eps = 5e-3, exact = g.s0 * std::exp(g.r * g.T);
  const MlmcResult r = run(g, eps);
  const int L = static_cast<int>(r.levels.size()) - 1;
  std::printf("MLMC: %.6f +- %.2e (bias estimate %.2e, %d levels) against e = %.6f; work %.3g, plain MC %.3g (%.1fx)\n",
              r.estimate, r.standard_error, r.bias, L + 1, exact, r.work, r.mc_work, r.mc_work / r.work);
  EXPECT_TRUE(r.converged);
  EXPECT_LT(std::abs(r.estimate - exact), 3 * eps);
  EXPECT_LE(r.bias, std::sqrt(0.5) * eps);
  EXPECT_LE(r.standard_error, std::sqrt(0.5) * eps * 1.01);  // the N_l are rounded up: within 1 %
  // The true bias of level L: e - E[P_L], below eps (the driver's estimate of it is an extrapolation).
  EXPECT_LT(exact - euler_mean(g, L), eps);
  for (int l = 0; l <= L; ++l) {
    const LevelSums& s = r.levels[l];
    const double want = euler_mean(g, l) - (l > 0 ? euler_mean(g, l - 1) : 0.0);
    const double se = std::sqrt(s.var_y() / static_cast<double>(s.n));
    std::printf("level %d: N %lld, mean Y %.4e (exact %.4e, %.1f se), var Y %.3e, kurtosis %.2f\n", l,
                static_cast<long long>(s.n), s.mean_y(), want, (s.mean_y() - want) / se, s.var_y(), s.kurtosis_y());
    EXPECT_LT(std::abs(s.mean_y() - want), 4 * se) << "level " << l;
  }
  // Plain Monte Carlo of P_L for the same sampling variance costs more.
  EXPECT_GT(r.mc_work, r.work);
}

// The rates: Euler's weak order 1 (alpha = 1 exactly in the closed form, asymptotically), its strong order 1/2 for
// GBM (V_l ~ h: beta = 1), the cost doubling a level (gamma = 1). beta is fitted from estimated variances (relative
// error sqrt(2 / N_l), N_l >= 100) over levels whose first ones are pre-asymptotic: within 0.2 of 1.
TEST(Mlmc, RatesOfEulerOnGeometricBrownianMotion) {
  const Gbm g;
  std::vector<double> exact;
  for (int l = 0; l <= 14; ++l) exact.push_back(euler_mean(g, l) - (l > 0 ? euler_mean(g, l - 1) : 0.0));
  // Over levels 8 .. 14 the O(2^{-l}) corrections leave the slope at 0.9977 (from the closed forms in 40 digits).
  const RateFit alpha = fit_rate(exact, 8);
  EXPECT_NEAR(alpha.rate, 1.0, 0.005) << alpha.error;
  const MlmcResult r = run(g, 5e-3);
  std::printf("fitted alpha %.3f +- %.3f, beta %.3f +- %.3f, gamma %.3f +- %.3f\n", r.alpha.rate, r.alpha.error,
              r.beta.rate, r.beta.error, r.gamma.rate, r.gamma.error);
  EXPECT_NEAR(r.beta.rate, 1.0, 0.2);
  EXPECT_NEAR(r.gamma.rate, 1.0, 1e-12);  // the costs measured by the sampler: C_l = 2^l exactly
}

// A broken coupling (the coarse path from noise of its own) shows in the variance rate: V_l = Var[P_l] + Var[P_{l-1}]
// no longer falls with l (it grows here, -0.44, as the Euler law of S_T widens with the steps), against beta = 1 for
// the coupled paths. The falling variances are what make MLMC pay.
TEST(Mlmc, ABrokenCouplingShowsInTheVarianceRate) {
  Gbm g;
  g.independent_coarse = true;
  std::vector<double> variances;
  for (int l = 1; l <= 6; ++l) {
    LevelSums s;
    gbm_sample(g, l, 0, 2000, s);
    variances.push_back(s.var_y());
  }
  const RateFit beta = fit_rate(variances, 0);
  EXPECT_LT(beta.rate, 0.2) << beta.rate;
}

// A driver run is a function of its options and sampler: the same twice, bit for bit.
TEST(Mlmc, SameRunSameBits) {
  const Gbm g;
  const MlmcResult a = run(g, 1e-2), b = run(g, 1e-2);
  EXPECT_EQ(a.estimate, b.estimate);
  EXPECT_EQ(a.levels.size(), b.levels.size());
}

TEST(Mlmc, BadOptionsAreInputErrors) {
  const LevelSampler none = [](int, std::int64_t, std::int64_t, LevelSums&) {};
  MlmcOptions o;
  o.eps = 0;
  EXPECT_THROW(mlmc_estimate(none, o), InputError);
  o = MlmcOptions{};
  o.min_levels = 1;
  EXPECT_THROW(mlmc_estimate(none, o), InputError);
  o = MlmcOptions{};
  o.initial_samples = 1;
  EXPECT_THROW(mlmc_estimate(none, o), InputError);
  o = MlmcOptions{};
  EXPECT_THROW(mlmc_estimate(none, o), std::logic_error);  // a sampler that adds no samples
}

// The complexity over a decade of eps (5e-2 .. 5e-3, four points): the work of MLMC grows like eps^-2 (log eps)^2
// for Euler (beta = gamma = 1), a fitted exponent of log(work) against log(eps) between -2 and -2.8 over this decade
// (the log^2 factor adds about 0.6), and plain Monte Carlo at the finest level like eps^-3 (L ~ log2(1/eps) levels
// of cost 2^L; within 0.4 of -3, the finest level moving in whole steps). Measured: -2.00 and -2.90; at the
// largest eps the 100 initial samples of each of the 8 levels are most of the work, which flattens the curve there.
TEST(Mlmc, ComplexityOverADecadeOfEps) {
  const Gbm g;
  std::vector<double> log_eps, log_work, log_mc;
  for (double eps : {5e-2, 2e-2, 1e-2, 5e-3}) {
    const MlmcResult r = run(g, eps);
    log_eps.push_back(std::log(eps)), log_work.push_back(std::log(r.work)), log_mc.push_back(std::log(r.mc_work));
    std::printf("eps %.0e: levels 0..%zu, work %.3g, plain MC %.3g, eps^2 work %.3g\n", eps, r.levels.size() - 1, r.work,
                r.mc_work, eps * eps * r.work);
  }
  const double mlmc = least_squares_slope(log_eps, log_work), mc = least_squares_slope(log_eps, log_mc);
  std::printf("work ~ eps^%.2f (MLMC), eps^%.2f (plain MC)\n", mlmc, mc);
  EXPECT_LT(mlmc, -1.9);
  EXPECT_GT(mlmc, -2.8);
  EXPECT_NEAR(mc, -3.0, 0.4);
}
