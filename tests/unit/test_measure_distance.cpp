// Distances between measures on the sphere: exact circular W2, assignment W2, sliced W2, MMD, against
// brute force over permutations, closed forms and each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/diagnostics/measure_distance.hpp"
#include "tokdyn/sphere/sphere.hpp"

using namespace tokdyn;

namespace {

constexpr double pi = std::numbers::pi;

// n uniforms in (0, scale], a pure function of (seed, n).
std::vector<double> uniforms(std::uint64_t seed, int n, double scale = 1) {
  const RandomStream s(seed, Purpose::test);
  std::vector<double> u(n);
  for (int k = 0; k < n; ++k) u[k] = scale * s.uniform4(0, k, 0)[0];
  return u;
}

std::vector<double> random_weights(std::uint64_t seed, int n) {
  std::vector<double> w = uniforms(seed, n);
  const double s = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= s;
  return w;
}

double arc(double a, double b) {
  const double r = std::fmod(std::abs(a - b), 2 * pi);
  return std::min(r, 2 * pi - r);
}

// min over permutations s of (1/n) sum_i cost(i, s(i)): the W2^2 of two uniform n-point measures.
template <class Cost>
double brute_force(int n, Cost cost) {
  std::vector<int> s(n);
  std::iota(s.begin(), s.end(), 0);
  double best = INFINITY;
  do {
    double total = 0;
    for (int i = 0; i < n; ++i) total += cost(i, s[i]);
    best = std::min(best, total / n);
  } while (std::next_permutation(s.begin(), s.end()));
  return best;
}

// Each atom k repeated counts[k] times.
std::vector<double> repeat(const std::vector<double>& v, const std::vector<int>& counts) {
  std::vector<double> out;
  for (std::size_t k = 0; k < v.size(); ++k) out.insert(out.end(), counts[k], v[k]);
  return out;
}

std::vector<double> circle_points(const std::vector<double>& phi) {  // [n, 2]
  std::vector<double> x;
  for (double p : phi) x.push_back(std::cos(p)), x.push_back(std::sin(p));
  return x;
}

}  // namespace

// ---- circular_w2 ----

// Equal weights: the optimal plan is a permutation, so the brute force is exact. Both sides are
// computed to rounding (values ~ pi^2, O(n) terms), hence 1e-12.
TEST(CircularW2, MatchesPermutationBruteForceForEqualWeights) {
  for (int n = 1; n <= 7; ++n)
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      const auto a = uniforms(100 + seed * 10 + n, n, 2 * pi), b = uniforms(200 + seed * 10 + n, n, 2 * pi);
      const double brute = brute_force(n, [&](int i, int j) { return arc(a[i], b[j]) * arc(a[i], b[j]); });
      EXPECT_NEAR(circular_w2(a, {}, b, {}), std::sqrt(brute), 1e-12) << "n = " << n << " seed " << seed;
    }
}

// Integer-multiple weights k_i / K: the same measure as K equal atoms with atom i repeated k_i times.
TEST(CircularW2, MatchesBruteForceForIntegerMultipleWeights) {
  const std::vector<std::vector<int>> ca = {{3, 1, 2}, {1, 4, 2}, {2, 2, 1, 1}}, cb = {{1, 5}, {3, 1, 1, 2}, {6}};
  for (std::size_t c = 0; c < ca.size(); ++c) {
    const int K = std::accumulate(ca[c].begin(), ca[c].end(), 0);
    const auto a = uniforms(300 + c, ca[c].size(), 2 * pi), b = uniforms(400 + c, cb[c].size(), 2 * pi);
    std::vector<double> wa, wb;
    for (int k : ca[c]) wa.push_back(double(k) / K);
    for (int k : cb[c]) wb.push_back(double(k) / K);
    const auto ra = repeat(a, ca[c]), rb = repeat(b, cb[c]);
    const double brute = brute_force(K, [&](int i, int j) { return arc(ra[i], rb[j]) * arc(ra[i], rb[j]); });
    EXPECT_NEAR(circular_w2(a, wa, b, wb), std::sqrt(brute), 1e-12) << "case " << c;
  }
}

// Two Diracs at arc length a: the whole mass moves by a, including across the cut at 0 = 2 pi.
TEST(CircularW2, TwoDiracsAtArcLengthA) {
  for (double a : {1e-9, 1e-3, 0.5, 2.0, 3.0, pi})
    for (double phi : {0.0, 1.0, 6.2}) {
      const std::vector<double> x = {phi}, y = {phi + a};
      // a^2 is computed from angles reduced mod 2 pi: error ~ eps * 2 pi in the arc.
      EXPECT_NEAR(circular_w2(x, {}, y, {}), a, 4e-15) << "a = " << a << " phi = " << phi;
    }
}

// n equispaced atoms rotated by a: the cyclic matching k -> k + s moves every atom by |a - 2 pi s/n|, so
// W2 = min_s |a - 2 pi s/n|, = a for a < pi/n. Error: the angles carry ~eps * 2 pi each, hence 1e-13.
TEST(CircularW2, EquispacedMeasureRotatedByAnAngle) {
  for (int n : {1, 3, 10, 1000})
    for (double a : {1e-6, 0.3 * pi / n, 0.99 * pi / n, 0.01, 2.0}) {
      std::vector<double> x(n), y(n);
      for (int k = 0; k < n; ++k) x[k] = 2 * pi * k / n + 0.3, y[k] = x[k] + a;
      double exact = INFINITY;
      for (int s = -n; s <= n; ++s) exact = std::min(exact, std::abs(a - 2 * pi * s / n));
      if (a < pi / n) {
        EXPECT_EQ(exact, a);
      }
      EXPECT_NEAR(circular_w2(x, {}, y, {}), exact, 1e-13) << "n = " << n << " a = " << a;
    }
}

// Symmetry and zero distance: the same measure with atoms reordered and angles moved by +-2 pi.
TEST(CircularW2, SymmetricAndZeroOnEqualMeasures) {
  const auto a = uniforms(7, 40, 2 * pi), b = uniforms(8, 25, 2 * pi);
  const auto wa = random_weights(9, 40), wb = random_weights(10, 25);
  EXPECT_NEAR(circular_w2(a, wa, b, wb), circular_w2(b, wb, a, wa), 1e-13);
  std::vector<double> a2(a.rbegin(), a.rend()), wa2(wa.rbegin(), wa.rend());
  for (std::size_t k = 0; k < a2.size(); ++k) a2[k] += (k % 2 ? 2 * pi : -2 * pi);
  // +-2 pi is reduced with an error ~ 4 eps pi per angle, the distance is at most that.
  EXPECT_LT(circular_w2(a, wa, a2, wa2), 1e-14);
  EXPECT_EQ(circular_w2(a, wa, a, wa), 0.0);
}

// Density against points, versus the density discretised into s point masses per cell (subcell
// midpoints). W2(rho, rho_s) = (2 pi/M)/(s sqrt 12) (each subcell to its midpoint is optimal), so by the
// triangle inequality |W2(rho, nu) - W2(rho_s, nu)| <= that bound: error O(1/s) at least. The error is in
// fact O(1/s^2) (midpoint errors average out against the smooth part of the plan; observed slope -2.3,
// irregular from one s to the next as nu's atoms fall differently on the subcells): we check the bound at
// each s and a fitted log-log slope <= -1.5 over s = 4 .. 1024.
TEST(CircularW2, DensityMatchesFineDiscretisation) {
  const int M = 6;
  std::vector<double> cells = random_weights(11, M);
  cells[2] = 0;  // an empty cell: a jump of the density's quantile function
  const double s_total = std::accumulate(cells.begin(), cells.end(), 0.0);
  for (double& c : cells) c /= s_total;
  const auto b = uniforms(12, 5, 2 * pi);
  const auto wb = random_weights(13, 5);
  const double exact = circular_w2_density(cells, b, wb);
  std::vector<double> log_s, log_err;
  for (int s : {4, 16, 64, 256, 1024}) {
    std::vector<double> phi, w;
    for (int j = 0; j < M; ++j)
      for (int q = 0; q < s; ++q) phi.push_back(2 * pi / M * (j + (q + 0.5) / s)), w.push_back(cells[j] / s);
    const double err = std::abs(circular_w2(phi, w, b, wb) - exact);
    EXPECT_LE(err, 2 * pi / M / (s * std::sqrt(12.0)) + 1e-13) << "s = " << s;
    log_s.push_back(std::log(s));
    log_err.push_back(std::log(err + 1e-300));
  }
  EXPECT_LE(least_squares_slope(log_s, log_err), -1.5);
  // Uniform density vs itself discretised at the cell midpoints: the closed form (2 pi/M)/sqrt(12).
  const std::vector<double> uniform(M, 1.0 / M);
  std::vector<double> mid(M);
  for (int j = 0; j < M; ++j) mid[j] = 2 * pi / M * (j + 0.5);
  EXPECT_NEAR(circular_w2_density(uniform, mid, {}), 2 * pi / M / std::sqrt(12.0), 1e-14);
}

TEST(MeasureDistance, BadInputsThrowInputError) {
  const std::vector<double> a = {0.1, 0.2}, b = {1.0};
  EXPECT_THROW(circular_w2(a, std::vector<double>{1.0}, b, {}), InputError);        // size mismatch
  EXPECT_THROW(circular_w2(a, std::vector<double>{1.5, -0.5}, b, {}), InputError);  // negative mass
  EXPECT_THROW(circular_w2(a, std::vector<double>{0.5, 0.6}, b, {}), InputError);   // sum != 1
  EXPECT_THROW(circular_w2({}, {}, b, {}), InputError);                             // empty measure
  EXPECT_THROW(circular_w2(std::vector<double>{NAN}, {}, b, {}), InputError);
  EXPECT_THROW(circular_w2_density(std::vector<double>{0.5, -0.5, 1.0}, b, {}), InputError);
  const std::vector<double> x = {1, 0, 0, 0, 1, 0, 0, 0, 1}, y = {1, 0, 0, 0, 1, 0};
  EXPECT_THROW(assignment_w2(x, y, 3, SphereCost::geodesic), InputError);     // 3 and 2: not multiples
  EXPECT_THROW(assignment_w2(x, {y.data(), 5}, 3, SphereCost::chordal), InputError);  // not [m, 3]
  EXPECT_THROW(assignment_w2(x, std::vector<double>{2, 0, 0}, 3, SphereCost::chordal), InputError);  // not unit
  EXPECT_THROW(solve_assignment(std::vector<double>(5), 2), InputError);
  EXPECT_THROW(sliced_w2(x, {}, y, {}, 3, 0, 1), InputError);
  EXPECT_THROW(mmd_squared(x, {}, y, {}, 3, -1.0), InputError);
  EXPECT_THROW(mmd_squared_circle(a, {}, b, std::vector<double>{-1.0}, 1.0), InputError);
}

// ---- assignment_w2 ----

// Exact integer costs: the optimum is an integer, so the totals agree exactly.
TEST(AssignmentW2, SolverMatchesBruteForceOnIntegerCosts) {
  for (int M = 1; M <= 7; ++M)
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      std::vector<double> c = uniforms(500 + 10 * seed + M, M * M, 20);
      for (double& v : c) v = std::floor(v);  // many ties: stresses the tie rules
      const auto col = solve_assignment(c, M);
      std::vector<std::int64_t> sorted(col);
      std::sort(sorted.begin(), sorted.end());
      for (int j = 0; j < M; ++j) ASSERT_EQ(sorted[j], j);  // a permutation
      double total = 0;
      for (int i = 0; i < M; ++i) total += c[i * M + col[i]];
      EXPECT_EQ(total, M * brute_force(M, [&](int i, int j) { return c[i * M + j]; })) << "M = " << M;
    }
}

// Points on S^2 and S^4, both costs, equal sizes and multiples (the smaller set repeated in the brute
// force). Costs of O(1) summed over <= 7 terms: 1e-12 covers rounding in either computation.
TEST(AssignmentW2, MatchesPermutationBruteForce) {
  const std::vector<std::pair<int, int>> sizes = {{1, 1}, {3, 3}, {5, 5}, {7, 7}, {2, 6}, {6, 3}, {1, 5}};
  for (int d : {3, 5})
    for (auto [n, m] : sizes) {
      std::vector<double> x(n * d), y(m * d);
      sample_uniform_sphere(600 + n, 0, n, d, x.data());
      sample_uniform_sphere(700 + m, 0, m, d, y.data());
      const int M = std::max(n, m);
      for (SphereCost kind : {SphereCost::geodesic, SphereCost::chordal}) {
        auto cost = [&](int i, int j) {
          const double* xi = &x[(i / (M / n)) * d];
          const double* yj = &y[(j / (M / m)) * d];
          double dot = 0, dist2 = 0;
          for (int a = 0; a < d; ++a) dot += xi[a] * yj[a], dist2 += (xi[a] - yj[a]) * (xi[a] - yj[a]);
          const double theta = std::acos(std::clamp(dot, -1.0, 1.0));
          return kind == SphereCost::geodesic ? theta * theta : dist2;
        };
        EXPECT_NEAR(assignment_w2(x, y, d, kind), std::sqrt(brute_force(M, cost)), 1e-12)
            << "d = " << d << " n = " << n << " m = " << m;
      }
    }
}

// On S^1 with equal uniform weights both are exact W2 with geodesic cost. Rounding: ~eps pi per cost
// entry, and W2 ~ 0.1 at n = 60, so 1e-12 is safe.
TEST(AssignmentW2, AgreesWithCircularW2OnTheCircle) {
  for (int n : {1, 8, 60}) {
    const auto a = uniforms(800 + n, n, 2 * pi), b = uniforms(900 + n, n, 2 * pi);
    EXPECT_NEAR(assignment_w2(circle_points(a), circle_points(b), 2, SphereCost::geodesic), circular_w2(a, {}, b, {}),
                1e-12)
        << "n = " << n;
  }
}

// ---- line_w2 and sliced_w2 ----

TEST(LineW2, MatchesBruteForce) {
  for (int n = 1; n <= 7; ++n) {
    const auto a = uniforms(1000 + n, n, 4.0), b = uniforms(1100 + n, n, 4.0);
    const double brute = brute_force(n, [&](int i, int j) { return (a[i] - b[j]) * (a[i] - b[j]); });
    EXPECT_NEAR(line_w2(a, {}, b, {}), std::sqrt(brute), 1e-13) << "n = " << n;
  }
  const std::vector<int> ka = {1, 3, 2}, kb = {4, 2};  // weights k / 6 against duplicated atoms
  const auto a = uniforms(1200, 3, 4.0), b = uniforms(1201, 2, 4.0);
  const auto ra = repeat(a, ka), rb = repeat(b, kb);
  const double brute = brute_force(6, [&](int i, int j) { return (ra[i] - rb[j]) * (ra[i] - rb[j]); });
  EXPECT_NEAR(line_w2(a, std::vector<double>{1 / 6., 3 / 6., 2 / 6.}, b, std::vector<double>{4 / 6., 2 / 6.}),
              std::sqrt(brute), 1e-13);
}

// For any plan pi and the P directions used, SW^2 <= (1/P) sum_p int <theta_p, x - y>^2 dpi
// = int (x - y)^T Theta (x - y) dpi, Theta = (1/P) sum theta_p theta_p^T; applied to the optimal chordal
// matching, whose plan we rebuild. Since Theta <= I, also SW <= W2 (chordal). Slack 1e-12 for rounding.
TEST(SlicedW2, BoundedByTheChordalPlanSeenThroughTheDirections) {
  const int d = 4, n = 12, m = 24, P = 50;
  std::vector<double> x(n * d), y(m * d);
  sample_uniform_sphere(1300, 0, n, d, x.data());
  sample_uniform_sphere(1301, 0, m, d, y.data());
  const double sw = sliced_w2(x, {}, y, {}, d, P, 77);
  const double w2 = assignment_w2(x, y, d, SphereCost::chordal);
  EXPECT_LE(sw, w2 + 1e-12);
  // The optimal matching itself, with x repeated twice as assignment_w2 does.
  std::vector<double> cost(m * m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      double s = 0;
      for (int a = 0; a < d; ++a) s += (x[(i / 2) * d + a] - y[j * d + a]) * (x[(i / 2) * d + a] - y[j * d + a]);
      cost[i * m + j] = s;
    }
  const auto col = solve_assignment(cost, m);
  const auto theta = sliced_directions(77, P, d);
  double bound = 0;
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < P; ++p) {
      double proj = 0;
      for (int a = 0; a < d; ++a) proj += theta[p * d + a] * (x[(i / 2) * d + a] - y[col[i] * d + a]);
      bound += proj * proj / (double(m) * P);
    }
  EXPECT_LE(sw * sw, bound + 1e-12);
  EXPECT_LT(bound, w2 * w2);  // the directional bound is the sharper one (about W2^2 / d)
}

// The normalisation: for two Diracs SW^2 = mean_p <theta_p, e>^2 |x - y|^2 with E <theta, e>^2 = 1/d, i.e.
// E SW^2 = W2^2 / d, the equality case of SW <= W2/sqrt(d). Tolerance: 5 standard errors of the mean
// of theta_1^2, whose variance is 3/(d(d+2)) - 1/d^2.
TEST(SlicedW2, TwoDiracsGiveTheOneOverDNormalisation) {
  const int d = 5, P = 20000;
  const std::vector<double> x = {1, 0, 0, 0, 0}, y = {0, 0.6, 0.8, 0, 0};
  const double sw = sliced_w2(x, {}, y, {}, d, P, 5);
  const double ratio = sw * sw * d / 2.0;  // |x - y|^2 = 2
  const double se = d * std::sqrt((3.0 / (d * (d + 2.0)) - 1.0 / (d * d)) / P);
  EXPECT_NEAR(ratio, 1.0, 5 * se);
}

// Same seed, points and weights permuted together: the sorted projections are the same numbers (no ties
// in random data), so the result is bitwise the same.
TEST(SlicedW2, SameSeedSameValueWhateverTheOrder) {
  const int d = 3, n = 30, m = 17;
  std::vector<double> x(n * d), y(m * d);
  sample_uniform_sphere(1400, 0, n, d, x.data());
  sample_uniform_sphere(1401, 0, m, d, y.data());
  const auto wx = random_weights(1402, n);
  std::vector<double> xr, wxr, yr;
  for (int i = n - 1; i >= 0; --i) xr.insert(xr.end(), &x[i * d], &x[i * d] + d), wxr.push_back(wx[i]);
  for (int j = m - 1; j >= 0; --j) yr.insert(yr.end(), &y[j * d], &y[j * d] + d);
  const double a = sliced_w2(x, wx, y, {}, d, 64, 9);
  EXPECT_EQ(a, sliced_w2(xr, wxr, yr, {}, d, 64, 9));
  EXPECT_EQ(a, sliced_w2(x, wx, y, {}, d, 64, 9));
  EXPECT_NE(a, sliced_w2(x, wx, y, {}, d, 64, 10));  // another seed: other directions
  EXPECT_GT(a, 0.0);
}

// ---- MMD ----

// Direct sum versus Fourier series on S^1. Both are accurate to ~1e-16 e^beta absolute and the MMD^2 of
// two random 30/40-atom measures is ~1e-2 e^beta, so 1e-12 relative leaves a wide margin.
TEST(Mmd, DirectMatchesFourierOnTheCircle) {
  const auto a = uniforms(1500, 30, 2 * pi), b = uniforms(1501, 40, 2 * pi);
  const auto wa = random_weights(1502, 30), wb = random_weights(1503, 40);
  for (double beta : {0.0, 0.5, 1.0, 4.0, 10.0, 50.0}) {
    const double direct = mmd_squared(circle_points(a), wa, circle_points(b), wb, 2, beta);
    const double fourier = mmd_squared_circle(a, wa, b, wb, beta);
    EXPECT_NEAR(direct, fourier, 1e-12 * std::max(fourier, 1e-300) + 1e-300) << "beta = " << beta;
    EXPECT_GE(direct, 0.0);
    if (beta > 0) {
      EXPECT_GT(fourier, 0.0);
    }
  }
}

// MMD^2 >= 0 on S^3 for measures that are close (a perturbation of one another), and = 0 up to rounding
// for identical measures given in another order (~1e-16 e^beta: compensated sums of O(e^beta) terms).
TEST(Mmd, NonNegativeAndZeroForIdenticalMeasures) {
  const int d = 4, n = 50;
  std::vector<double> x(n * d), y(n * d);
  sample_uniform_sphere(1600, 0, n, d, x.data());
  sample_uniform_sphere(1601, 0, n, d, y.data());
  for (int k = 0; k < n * d; ++k) y[k] = x[k] + 1e-3 * y[k];
  normalize_rows(y.data(), n, d);
  std::vector<double> xr;
  for (int i = n - 1; i >= 0; --i) xr.insert(xr.end(), &x[i * d], &x[i * d] + d);
  for (double beta : {0.5, 4.0, 30.0}) {
    EXPECT_GT(mmd_squared(x, {}, y, {}, d, beta), 0.0);
    EXPECT_NEAR(mmd_squared(x, {}, xr, {}, d, beta), 0.0, 1e-15 * std::exp(beta));
    EXPECT_EQ(mmd(x, {}, x, {}, d, beta), mmd(x, {}, x, {}, d, beta));
  }
}

// Two Diracs at angle a: MMD^2 = 2 e^beta - 2 e^{beta cos a} = -2 e^beta expm1(-2 beta sin^2(a/2)), the second
// form exact to rounding. O(1) angles: 1e-13 relative. a = 1e-3: the inputs' own |y|^2 - 1 ~ 1e-16 moves the
// answer (~ beta a^2 e^beta) by ~1e-10 relative, so 1e-9 there.
TEST(Mmd, TwoDiracsClosedForm) {
  for (double beta : {0.5, 3.0, 20.0})
    for (double a : {1e-3, 0.1, 1.0, 2.5, pi}) {
      const std::vector<double> x = {1, 0, 0}, y = {std::cos(a), std::sin(a), 0};
      const double exact = -2 * std::exp(beta) * std::expm1(-2 * beta * std::pow(std::sin(a / 2), 2));
      const double tol = (a < 0.01 ? 1e-9 : 1e-13) * exact;
      EXPECT_NEAR(mmd_squared(x, {}, y, {}, 3, beta), exact, tol) << "beta = " << beta << " a = " << a;
      if (a >= 0.01) {
        EXPECT_NEAR(mmd_squared_circle(std::vector<double>{0.0}, {}, std::vector<double>{a}, {}, beta), exact, tol);
      }
    }
}

// The O(n m) form with known energies equals the direct sum: energies by a naive double sum in the expm1
// form, points on S^4, random weights. Both forms carry ~1e-16 e^beta absolute error on an MMD^2 of
// ~1e-2 e^beta: 1e-11 relative.
TEST(Mmd, FromEnergiesMatchesTheDirectSum) {
  const int d = 5, n = 40, m = 60;
  std::vector<double> x(n * d), y(m * d);
  sample_uniform_sphere(1700, 0, n, d, x.data());
  sample_uniform_sphere(1701, 0, m, d, y.data());
  const auto wx = random_weights(1702, n), wy = random_weights(1703, m);
  auto energy = [d](const std::vector<double>& p, const std::vector<double>& w, double beta) {
    double e = 0;
    for (std::size_t i = 0; i < w.size(); ++i)
      for (std::size_t j = 0; j < w.size(); ++j) {
        double dot = 0;
        for (int a = 0; a < d; ++a) dot += p[i * d + a] * p[j * d + a];
        e += w[i] * w[j] * -std::exp(beta) * std::expm1(beta * (dot - 1));
      }
    return 0.5 * e;
  };
  for (double beta : {0.5, 1.0, 4.0}) {
    const double direct = mmd_squared(x, wx, y, wy, d, beta);
    const double fast = mmd_squared_from_energies(x, wx, y, wy, d, beta, energy(x, wx, beta), energy(y, wy, beta));
    EXPECT_NEAR(fast, direct, 1e-11 * direct) << "beta = " << beta;
  }
}

// Every printed measurement flags a prediction its interval excludes (two-sided), or a bound the whole
// interval lies above (one-sided); the lyapunov line of the issue: 0.1520 [0.0846, 0.1984] against 0.2.
TEST(AgainstPrediction, FlagsOnlyWhatTheIntervalExcludes) {
  EXPECT_EQ(tokdyn::against_prediction({0.1520, 0.0846, 0.1984}, 0.2),
            "  <- DISAGREES: the interval excludes the prediction 0.2");
  EXPECT_EQ(tokdyn::against_prediction({-0.1002, -0.1035, -0.0968}, -0.1), "");
  EXPECT_EQ(tokdyn::against_prediction({0.2, 0.2, 0.3}, 0.2), "");  // an end point counts as inside
  EXPECT_NE(tokdyn::against_prediction({1, 0, 2}, std::nan("")), "");  // NaN is never "inside"
  // One-sided: a rate below its upper bound agrees however far below; one whose interval lies above does not.
  EXPECT_EQ(tokdyn::against_prediction({-3, -3.5, -2.5}, -1, true), "");
  EXPECT_EQ(tokdyn::against_prediction({-0.5, -0.7, -0.3}, -1, true), "  <- DISAGREES: the interval lies above the bound -1");
}
