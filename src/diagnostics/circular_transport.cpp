// Exact W2 on the circle and on the line through quantile functions.
// Circle: J. Delon, J. Salomon, A. Sobolevski, "Fast transport optimization for Monge costs on the circle",
// SIAM J. Appl. Math. 70 (2010). With nu's CDF lifted periodically to R (G~(s + 1) = G~(s) + 2 pi for the
// quantile), W2^2(mu, nu) = min_alpha C(alpha), C(alpha) = int_0^1 (F^{-1}(t) - G~^{-1}(t + alpha))^2 dt, and C
// is convex. Both quantiles are step functions for point measures, so C is piecewise linear in alpha (its
// kinks are where a jump of one quantile crosses a jump of the other: O(nm) of them, too many to list);
// against a density F^{-1} is piecewise linear and C piecewise quadratic.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

#include "measure_input.hpp"
#include "tokdyn/diagnostics/measure_distance.hpp"

namespace tokdyn {
namespace {

constexpr double two_pi = 2 * std::numbers::pi;

double sq(double x) { return x * x; }

double reduce_angle(double phi) {
  double r = std::fmod(phi, two_pi);
  if (r < 0) r += two_pi;
  return r < two_pi ? r : 0.0;  // -1e-300 + 2 pi rounds to 2 pi
}

// A point measure as a quantile step function: value[k] on t in (cum[k], cum[k+1]], values sorted, zero
// masses dropped, cum[0] = 0 and cum[K] = 1 exactly (the last partial sum differs from 1 only by rounding).
struct Steps {
  std::vector<double> value, cum;
};

Steps make_steps(std::span<const double> pos, const std::vector<double>& w) {
  // (position, mass) pairs sorted directly: contiguous, about twice as fast as sorting an index array.
  std::vector<std::pair<double, double>> atoms;
  atoms.reserve(pos.size());
  for (std::size_t k = 0; k < pos.size(); ++k)
    if (w[k] > 0) atoms.emplace_back(pos[k], w[k]);
  std::sort(atoms.begin(), atoms.end());
  Steps s;
  s.value.reserve(atoms.size());
  s.cum.reserve(atoms.size() + 1);
  s.cum.push_back(0.0);
  for (const auto& [x, m] : atoms) {
    s.value.push_back(x);
    s.cum.push_back(s.cum.back() + m);
  }
  s.cum.back() = 1.0;
  return s;
}

// The fixed (unshifted) measure mu as pieces of its quantile function on [0, 1]. Piece i ends at end(i);
// segment(i, t0, t1, h) = int_{t0}^{t1} (F^{-1}(t) - h)^2 dt and at(i, t) = F^{-1}(t) inside piece i.
struct PointQuantile {
  const Steps& s;
  double end(std::size_t i) const { return s.cum[i + 1]; }
  double at(std::size_t i, double) const { return s.value[i]; }
  double segment(std::size_t i, double t0, double t1, double h) const { return (t1 - t0) * sq(s.value[i] - h); }
};

// Piecewise-constant density: on its non-empty cell j the quantile rises linearly across the cell,
// F^{-1}(t) = x_j + (t - P_j) * width / p_j; empty cells are jumps of F^{-1}.
struct DensityQuantile {
  std::vector<double> left, cum, rate;  // cell start x_j, cumulative mass P_j (size K + 1), width / p_j
  double width = 0;
  double end(std::size_t i) const { return cum[i + 1]; }
  double at(std::size_t i, double t) const {
    // Clamped: (t - P_j) / p_j magnifies rounding of t when a cell is light.
    return left[i] + std::clamp((t - cum[i]) * rate[i], 0.0, width);
  }
  double segment(std::size_t i, double t0, double t1, double h) const {
    const double u0 = at(i, t0) - h, u1 = at(i, t1) - h;  // the integrand is the square of a linear function
    return (t1 - t0) * (u0 * u0 + u0 * u1 + u1 * u1) / 3;
  }
};

struct ShiftCost {
  double value;  // C(alpha)
  double slope;  // a subgradient of C at alpha (the right derivative except at exact ties)
};

// C(alpha) and its slope in one merge of the fixed quantile's pieces with the jumps of G~^{-1}(. + alpha),
// O(n + m). As alpha grows, a jump of G~ at t-position p moves left at unit speed, trading integrand
// (F^{-1}(p) - h_left)^2 for (F^{-1}(p) - h_right)^2: the slope is the sum of these differences.
// If `kink` is given it receives the shift that makes the closest pair (jump of G~, piece end of F^{-1})
// coincide, k + cum_G - cum_F written from the data so that equal partial sums give an exact tie.
template <class Fixed>
ShiftCost shift_cost(const Fixed& f, const Steps& g, double alpha, double* kink = nullptr) {
  const std::size_t m = g.value.size();
  const double k0 = std::floor(alpha);
  double base = k0 - alpha;       // t-position of s = k0, the start of the current period of the lift
  double offset = k0 * two_pi;    // G~^{-1}(s) = G^{-1}(s - k0) + k0 2 pi in that period
  // The atom of G holding s = alpha: the first j with cum[j + 1] > alpha - k0 (exists, cum[m] = 1).
  std::size_t j = std::upper_bound(g.cum.begin() + 1, g.cum.end(), -base) - (g.cum.begin() + 1);
  j = std::min(j, m - 1);
  double h = g.value[j] + offset, next_g = g.cum[j + 1] + base;
  std::size_t i = 0;
  double next_f = f.end(0), t = 0, value = 0, slope = 0, period = k0, closest = INFINITY;
  for (;;) {
    if (kink && std::abs(next_g - next_f) < closest)
      closest = std::abs(next_g - next_f), *kink = period + g.cum[j + 1] - f.end(i);
    const bool g_first = next_g <= next_f;  // at a tie moving G's jump first gives the right derivative
    const double t1 = std::min(g_first ? next_g : next_f, 1.0);
    value += f.segment(i, t, t1, h);
    t = t1;
    // A jump of G~ exactly at t = 1 enters the interval as alpha grows: part of the right derivative
    // (alpha at an integer, or atoms aligned with it). One at t = 0 leaves it and was not counted.
    if (t >= 1 && !(g_first && next_g <= 1)) break;
    if (g_first) {
      if (++j == m) j = 0, base += 1, offset += two_pi, period += 1;
      const double h_new = g.value[j] + offset, ft = f.at(i, t);
      slope += sq(ft - h_new) - sq(ft - h);
      h = h_new;
      next_g = g.cum[j + 1] + base;
      if (t >= 1) break;
    } else {
      next_f = f.end(++i);
    }
  }
  return {value, slope};
}

// min over alpha of a convex C, given C and a subgradient anywhere. The bracket [lo, hi] keeps slope(lo) < 0 <
// slope(hi); the supporting lines at lo and hi bound C from below and their crossing certifies the result.
// Model steps: the crossing itself when C is piecewise linear (exact once one kink is left in the bracket),
// else the secant zero of the slope (exact on one quadratic piece); every other step bisects, so the
// bracket halves at least every two steps whatever the model does. Stops when the certified gap is at the
// rounding level of C (~eps * (C + 2 pi sqrt(C)), from the eps * 2 pi error of each lifted difference).
// Piecewise linear C: its minimum is at a kink, and a shift off the kink by ~eps already costs ~eps * pi^2
// (a sliver of mass matched to the wrong atom), i.e. W2 ~ 1e-8 for equal measures. So the final step
// re-evaluates C at the nearest kink written from the cumulative masses, exact when they tie exactly.
// eval(alpha, kink) returns C and its slope; kink, if not null, receives the nearest kink (see shift_cost).
template <class Eval>
double minimise_shift(Eval eval, bool piecewise_linear) {
  double lo = -1, hi = 1;  // displacements are at most pi, so the optimal shift is within about one period
  ShiftCost elo = eval(lo, nullptr), ehi = eval(hi, nullptr);
  while (elo.slope > 0) hi = lo, ehi = elo, lo -= 1, elo = eval(lo, nullptr);  // C is coercive: these end
  while (ehi.slope < 0) lo = hi, elo = ehi, hi += 1, ehi = eval(hi, nullptr);
  double best = elo.value, best_alpha = lo;
  if (ehi.value < best) best = ehi.value, best_alpha = hi;
  bool done = elo.slope == 0 || ehi.slope == 0;  // a zero subgradient: that end is a minimiser
  if (done) best = elo.slope == 0 ? elo.value : ehi.value, best_alpha = elo.slope == 0 ? lo : hi;
  for (int iter = 0; iter < 400 && !done; ++iter) {
    const double dslope = ehi.slope - elo.slope;
    const double cross =
        std::clamp((elo.value - ehi.value - elo.slope * lo + ehi.slope * hi) / dslope, lo, hi);
    const double lower = elo.value + elo.slope * (cross - lo);
    if (best - lower <= 8 * 2.2e-16 * (best + two_pi * std::sqrt(best))) break;
    double x = iter % 2 == 1 ? 0.5 * (lo + hi) : piecewise_linear ? cross : lo - elo.slope * (hi - lo) / dslope;
    if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
    if (!(x > lo && x < hi)) break;  // the bracket is two adjacent doubles
    const ShiftCost e = eval(x, nullptr);
    if (e.value < best) best = e.value, best_alpha = x;
    done = e.slope == 0;
    if (e.slope < 0)
      lo = x, elo = e;
    else
      hi = x, ehi = e;
  }
  if (piecewise_linear) {
    double kink = best_alpha;
    eval(best_alpha, &kink);
    best = std::min(best, eval(kink, nullptr).value);
  }
  return best;
}

std::vector<double> reduced_angles(std::span<const double> angles, const char* what) {
  detail::check_finite(angles, what);
  std::vector<double> out(angles.size());
  for (std::size_t k = 0; k < angles.size(); ++k) out[k] = reduce_angle(angles[k]);
  return out;
}

}  // namespace

double circular_w2(std::span<const double> angles_a, std::span<const double> weights_a,
                   std::span<const double> angles_b, std::span<const double> weights_b) {
  const Steps a = make_steps(reduced_angles(angles_a, "circular_w2: angles_a"),
                             detail::checked_weights(weights_a, angles_a.size(), "circular_w2: weights_a"));
  const Steps b = make_steps(reduced_angles(angles_b, "circular_w2: angles_b"),
                             detail::checked_weights(weights_b, angles_b.size(), "circular_w2: weights_b"));
  const PointQuantile f{a};
  const double w2sq = minimise_shift([&](double alpha, double* kink) { return shift_cost(f, b, alpha, kink); }, true);
  return std::sqrt(std::max(w2sq, 0.0));
}

double circular_w2_density(std::span<const double> cell_masses, std::span<const double> angles,
                           std::span<const double> weights) {
  const std::vector<double> p = detail::checked_weights(cell_masses, cell_masses.size(), "circular_w2_density: cells");
  const Steps b = make_steps(reduced_angles(angles, "circular_w2_density: angles"),
                             detail::checked_weights(weights, angles.size(), "circular_w2_density: weights"));
  DensityQuantile f;
  f.width = two_pi / static_cast<double>(p.size());
  f.cum.push_back(0.0);
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (p[j] == 0) continue;
    f.left.push_back(static_cast<double>(j) * f.width);
    f.rate.push_back(f.width / p[j]);
    f.cum.push_back(f.cum.back() + p[j]);
  }
  f.cum.back() = 1.0;
  const double w2sq = minimise_shift([&](double alpha, double* kink) { return shift_cost(f, b, alpha, kink); }, false);
  return std::sqrt(std::max(w2sq, 0.0));
}

double line_w2(std::span<const double> values_a, std::span<const double> weights_a,
               std::span<const double> values_b, std::span<const double> weights_b) {
  detail::check_finite(values_a, "line_w2: values_a");
  detail::check_finite(values_b, "line_w2: values_b");
  const Steps a = make_steps(values_a,
                             detail::checked_weights(weights_a, values_a.size(), "line_w2: weights_a"));
  const Steps b = make_steps(values_b,
                             detail::checked_weights(weights_b, values_b.size(), "line_w2: weights_b"));
  // int_0^1 (F^{-1} - G^{-1})^2 over the merged breakpoints; every term is >= 0, no cancellation.
  double total = 0, t = 0;
  std::size_t i = 0, j = 0;
  while (i < a.value.size() && j < b.value.size()) {
    const double t1 = std::min(a.cum[i + 1], b.cum[j + 1]);
    total += (t1 - t) * sq(a.value[i] - b.value[j]);
    t = t1;
    if (a.cum[i + 1] <= t1) ++i;
    if (b.cum[j + 1] <= t1) ++j;
  }
  return std::sqrt(total);
}

}  // namespace tokdyn
