#include "tokdyn/studies/pair_replicas.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

namespace {

double distance(const double* a, const double* b, int d) {
  double s = 0;
  for (int k = 0; k < d; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(s);
}

}  // namespace

PairReplicas::PairReplicas(const Comm& comm, const MlpKernel& kernel, const PairSimulation& sim)
    : ReplicaStudy(comm, sim.replicas, static_cast<std::size_t>(sim.layers) + 1), kernel_(kernel), sim_(sim) {}

void PairReplicas::compute(std::int64_t r, double* logs) {
  const MlpKernel& kernel = kernel_;
  const PairSimulation& sim = sim_;
  const int d = kernel.d;
  const std::int64_t L = sim.layers;
  const double dt = sim.horizon / static_cast<double>(L), h = std::sqrt(dt);
  std::vector<double> xy(2 * d), g(2 * d), xi(d);
  MlpParams mp;
  mp.width = sim.width;
  mp.activation = kernel.act->name;
  mp.sigma_u = kernel.sigma_u;
  mp.sigma_w = kernel.sigma_w;
  mp.seed = replica_seed(sim.seed, r);
  RandomMlp mlp(mp, d);
  const RandomStream start(mp.seed, Purpose::lyapunov);
  start.normals(0, 0, xy.data(), d);
  start.normals(0, 1, xi.data(), d);
  normalize_rows(xy.data(), 1, d);
  tangent_project(xy.data(), xi.data(), 1, d);
  normalize_rows(xi.data(), 1, d);
  for (int a = 0; a < d; ++a) xy[d + a] = xy[a] + sim.separation * xi[a];
  normalize_rows(xy.data() + d, 1, d);
  double sum = 0, before = distance(xy.data(), xy.data() + d, d);
  logs[0] = 0;
  for (std::int64_t l = 0; l < L; ++l) {
    mlp.draw(l + 1);
    mlp.apply(xy.data(), 2, g.data());  // the same layer for both tokens: the common noise
    for (int k = 0; k < 2 * d; ++k) xy[k] += h * g[k];
    normalize_rows(xy.data(), 2, d);
    const double after = distance(xy.data(), xy.data() + d, d);
    sum += std::log(after / before);
    logs[l + 1] = sum;
    // Back to separation r0 along the current direction: the pair stays in the linear regime.
    for (int a = 0; a < d; ++a) xy[d + a] = xy[a] + sim.separation * (xy[d + a] - xy[a]) / after;
    normalize_rows(xy.data() + d, 1, d);
    before = distance(xy.data(), xy.data() + d, d);
  }
}

PairExponents simulate_pair_exponents(MPI_Comm comm, const MlpKernel& kernel, const PairSimulation& sim) {
  const Comm c(comm);
  PairReplicas pairs(c, kernel, sim);
  run_replicas(pairs);
  return pairs.exponents();
}

PairExponents PairReplicas::exponents() const {
  const PairSimulation& sim = sim_;
  const std::int64_t L = sim.layers, R = sim.replicas;
  const double dt = sim.horizon / static_cast<double>(L);
  // logs[r, l]: sum of the log growth factors up to layer l, so log|X - Y|(t_l) = log r0 + logs[r, l].
  const std::vector<double>& logs = rows();
  PairExponents out;
  const double log_r0 = std::log(sim.separation);
  // Fit over [T/10, T] at up to 100 sample times: skips the relaxation of the initial direction.
  std::vector<std::int64_t> samples;
  const std::int64_t first = L / 10, stride = std::max<std::int64_t>(1, (L - first) / 100);
  for (std::int64_t l = first; l <= L; l += stride) samples.push_back(l);
  for (std::int64_t l = 0; l <= L; ++l) out.time.push_back(l * dt);
  auto moments = [&](const std::vector<int>& w, std::int64_t l, double& mean, double& var, double& lms) {
    double n = 0, s = 0, s2 = 0, m = -std::numeric_limits<double>::infinity();
    for (std::int64_t r = 0; r < R; ++r)
      if (w[r]) m = std::max(m, logs[r * (L + 1) + l]);
    double e = 0;
    for (std::int64_t r = 0; r < R; ++r) {
      const double v = logs[r * (L + 1) + l];
      n += w[r], s += w[r] * v, s2 += w[r] * v * v, e += w[r] * std::exp(2 * (v - m));
    }
    mean = s / n + log_r0;
    var = s2 / n - (s / n) * (s / n);
    lms = 2 * (m + log_r0) + std::log(e / n);  // log E|X - Y|^2, computed stably
  };
  const std::vector<int> all(R, 1);
  for (std::int64_t l = 0; l <= L; ++l) {
    double m, v, q;
    moments(all, l, m, v, q);
    out.mean_log.push_back(m);
    out.var_log.push_back(v);
    out.log_mean_square.push_back(q);
  }
  auto slope_of = [&](int which) {
    return [&, which](const std::vector<int>& w) {
      std::vector<double> t, y;
      for (std::int64_t l : samples) {
        double m, v, q;
        moments(w, l, m, v, q);
        t.push_back(l * dt);
        y.push_back(which == 0 ? m : which == 1 ? v : q);
      }
      return least_squares_slope(t, y);
    };
  };
  out.slope_mean_log = bootstrap(static_cast<int>(R), slope_of(0), 200, 0.05, sim.seed);
  out.slope_var_log = bootstrap(static_cast<int>(R), slope_of(1), 200, 0.05, sim.seed);
  out.slope_log_mean_square = bootstrap(static_cast<int>(R), slope_of(2), 200, 0.05, sim.seed);
  return out;
}

}  // namespace tokdyn
