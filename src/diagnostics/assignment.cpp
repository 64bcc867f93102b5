// Exact W2 on S^{d-1} between uniform point measures by a dense linear assignment.
// Solver: shortest augmenting paths with dual potentials (Jonker & Volgenant 1987), in the form of
// D. F. Crouse, "On implementing 2D rectangular assignment algorithms", IEEE TAES 52 (2016), which is
// SciPy's linear_sum_assignment: one Dijkstra search per row over reduced costs c_ij - u_i - v_j >= 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "measure_input.hpp"
#include "tokdyn/diagnostics/measure_distance.hpp"

namespace tokdyn {
namespace {

// Shortest augmenting path from free row `row`; returns the free column it ends at. Fills path (row
// before each column), the scanned rows/columns and their path lengths, and min_val (the path length).
std::int64_t augmenting_path(const double* cost, std::int64_t M, const std::vector<double>& u,
                             const std::vector<double>& v, std::vector<std::int64_t>& path,
                             const std::vector<std::int64_t>& row4col, std::vector<double>& dist,
                             std::vector<char>& scanned_row, std::vector<char>& scanned_col,
                             std::vector<std::int64_t>& remaining, std::int64_t row, double& min_val) {
  const double inf = std::numeric_limits<double>::infinity();
  std::int64_t left = M;  // remaining[0, left): columns not yet scanned; order reversed so ties favour low j
  for (std::int64_t k = 0; k < M; ++k) remaining[k] = M - k - 1;
  std::fill(scanned_row.begin(), scanned_row.end(), 0);
  std::fill(scanned_col.begin(), scanned_col.end(), 0);
  std::fill(dist.begin(), dist.end(), inf);
  min_val = 0;
  std::int64_t i = row, sink = -1;
  while (sink == -1) {
    scanned_row[i] = 1;
    std::int64_t best = -1;
    double lowest = inf;
    const double* ci = cost + i * M;  // row i of cost [M, M]
    for (std::int64_t k = 0; k < left; ++k) {
      const std::int64_t j = remaining[k];
      const double r = min_val + ci[j] - u[i] - v[j];
      if (r < dist[j]) path[j] = i, dist[j] = r;
      // Prefer a free column among equals: the search ends sooner.
      if (dist[j] < lowest || (dist[j] == lowest && row4col[j] == -1)) lowest = dist[j], best = k;
    }
    min_val = lowest;
    const std::int64_t j = remaining[best];
    if (row4col[j] == -1)
      sink = j;
    else
      i = row4col[j];
    scanned_col[j] = 1;
    remaining[best] = remaining[--left];
  }
  return sink;
}

// Cost matrix [M, M] of the repeated point sets: row r is x[r / rx], column c is y[c / ry].
std::vector<double> sphere_costs(std::span<const double> x, std::span<const double> y, int d, std::int64_t M,
                                 std::int64_t rx, std::int64_t ry, SphereCost kind) {
  std::vector<double> cost(static_cast<std::size_t>(M * M));
  for (std::int64_t r = 0; r < M; ++r) {
    const double* xr = &x[(r / rx) * d];
    for (std::int64_t c = 0; c < M; ++c) {
      const double* yc = &y[(c / ry) * d];
      double minus = 0, plus = 0;  // |x - y|^2, |x + y|^2
      for (int a = 0; a < d; ++a) {
        minus += (xr[a] - yc[a]) * (xr[a] - yc[a]);
        plus += (xr[a] + yc[a]) * (xr[a] + yc[a]);
      }
      if (kind == SphereCost::chordal) {
        cost[r * M + c] = minus;
      } else {
        // arccos<x, y> for unit vectors, without arccos's loss of half the digits near 0 and pi.
        const double theta = 2 * std::atan2(std::sqrt(minus), std::sqrt(plus));
        cost[r * M + c] = theta * theta;
      }
    }
  }
  return cost;
}

}  // namespace

std::vector<std::int64_t> solve_assignment(std::span<const double> cost, std::int64_t M) {
  if (M < 1) throw InputError("solve_assignment: the matrix must be at least 1 x 1");
  if (cost.size() != static_cast<std::size_t>(M * M))
    throw InputError("solve_assignment: " + std::to_string(cost.size()) + " costs for a " + std::to_string(M) +
                     " x " + std::to_string(M) + " matrix");
  detail::check_finite(cost, "solve_assignment: cost");
  std::vector<double> u(M, 0.0), v(M, 0.0), dist(M);
  std::vector<std::int64_t> path(M, -1), col4row(M, -1), row4col(M, -1), remaining(M);
  std::vector<char> scanned_row(M), scanned_col(M);
  for (std::int64_t row = 0; row < M; ++row) {
    double min_val = 0;
    std::int64_t j = augmenting_path(cost.data(), M, u, v, path, row4col, dist, scanned_row, scanned_col,
                                     remaining, row, min_val);
    // Dual update keeps reduced costs >= 0 and zero along the matching.
    u[row] += min_val;
    for (std::int64_t i = 0; i < M; ++i)
      if (scanned_row[i] && i != row) u[i] += min_val - dist[col4row[i]];
    for (std::int64_t c = 0; c < M; ++c)
      if (scanned_col[c]) v[c] -= min_val - dist[c];
    // Augment along the path back to `row`.
    for (;;) {
      const std::int64_t i = path[j];
      row4col[j] = i;
      std::swap(col4row[i], j);
      if (i == row) break;
    }
  }
  return col4row;
}

double assignment_w2(std::span<const double> x, std::span<const double> y, int d, SphereCost cost) {
  const auto n = static_cast<std::int64_t>(detail::checked_rows(x, d, "assignment_w2: x"));
  const auto m = static_cast<std::int64_t>(detail::checked_rows(y, d, "assignment_w2: y"));
  if (n == 0 || m == 0) throw InputError("assignment_w2: a measure needs at least one point");
  if (std::max(n, m) % std::min(n, m) != 0)
    throw InputError("assignment_w2: sizes " + std::to_string(n) + " and " + std::to_string(m) +
                     " are not multiples of one another");
  detail::check_unit_rows(x, d, "assignment_w2: x");
  detail::check_unit_rows(y, d, "assignment_w2: y");
  const std::int64_t M = std::max(n, m);
  const std::vector<double> c = sphere_costs(x, y, d, M, M / n, M / m, cost);
  const std::vector<std::int64_t> col = solve_assignment(c, M);
  double total = 0;  // M terms >= 0: plain summation is accurate to ~M eps relative
  for (std::int64_t r = 0; r < M; ++r) total += c[r * M + col[r]];
  return std::sqrt(total / static_cast<double>(M));
}

}  // namespace tokdyn
