#include "tokdyn/attention/bessel_series.hpp"

#include <cmath>

namespace tokdyn {
namespace {

// I_{n+nu}(a) / I_nu(a), n = 0..p, times a weight c_n, for the two series: the ratios r_n = I_{n+nu} / I_{n-1+nu}
// come from the backward recurrence r_n = a / (2(n + nu) + a r_{n+1}) started at r_{M+1} = 0 (Miller): stable,
// no overflow, exact to round-off for n << M. I_{n+nu} / I_nu decays like e^{-n^2 / (2a)} for n << a and faster
// beyond, so the start M = 40 + 12 sqrt(a), doubled until the last ratio product is below 1e-40, is enough.
// weight(n): the series' coefficient at t = 1 (2 for n >= 1 on S^1, 2l + 1 on S^2), so that
// sum_n weight(n) I_{n+nu} = e^a times the constant that the normalisation removes.
// Returns e^{-|b|} times the terms, with (-1)^n for b < 0, truncated at the smallest p whose tail
// sum_{n > p} weight(n) rel_n is below tolerance times the whole sum (of_total) or times rel_0 = 1.
template <class Weight>
std::vector<double> miller_series(double b, double nu, Weight weight, double tolerance, bool of_total) {
  const double a = std::abs(b);
  if (a == 0) return {1.0};  // e^0 = 1: only the constant term survives
  for (int m = 40 + static_cast<int>(std::ceil(12 * std::sqrt(a)));; m *= 2) {
    std::vector<double> rel(m + 1), ratio(m + 2, 0.0);  // rel_n = I_{n+nu} / I_nu
    double r = 0;
    for (int n = m; n >= 1; --n) ratio[n] = r = a / (2.0 * (n + nu) + a * r);
    rel[0] = 1;
    for (int n = 1; n <= m; ++n) rel[n] = rel[n - 1] * ratio[n];
    if (rel[m] >= 1e-40) continue;
    // tail[p] = sum_{n > p} weight(n) rel_n, summed from the small end; the whole sum is tail[0] + weight(0).
    std::vector<double> tail(m + 1, 0.0);
    for (int n = m - 1; n >= 0; --n) tail[n] = tail[n + 1] + weight(n + 1) * rel[n + 1];
    const double total = weight(0) + tail[0];
    const double bound = of_total ? tolerance * total : tolerance;
    int p = 0;
    while (tail[p] > bound) ++p;
    // e^{-a} I_{n+nu}(a) (times the series' constant) = rel_n / total: the terms at t = 1 sum to e^a.
    const double scaled_first = 1.0 / total;
    std::vector<double> s(p + 1);
    for (int n = 0; n <= p; ++n) s[n] = (b < 0 && n % 2 ? -1.0 : 1.0) * rel[n] * scaled_first;
    return s;
  }
}

}  // namespace

std::vector<double> scaled_bessel_series(double b) {
  return miller_series(b, 0.0, [](int n) { return n == 0 ? 1.0 : 2.0; }, 1e-16, false);
}

std::vector<double> scaled_spherical_bessel_series(double b, double tolerance) {
  return miller_series(b, 0.5, [](int l) { return 2.0 * l + 1; }, tolerance, true);
}

}  // namespace tokdyn
