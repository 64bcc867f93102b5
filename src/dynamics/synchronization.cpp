#include "tokdyn/dynamics/synchronization.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "tokdyn/core/comm.hpp"
#include "tokdyn/core/error.hpp"
#include "tokdyn/core/progress.hpp"
#include "tokdyn/core/random.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

SynchronizationResult run_synchronization_study(MPI_Comm comm, const SynchronizationSetup& s) {
  int rank = 0, size = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &size));
  const std::int64_t n = s.model.n, L = s.model.layers;
  const int d = s.model.d;
  const double dt = s.model.horizon / static_cast<double>(L);
  SynchronizationResult r;
  r.replicas = s.replicas;
  for (std::int64_t l = 0; l <= L; ++l)
    if (l % s.every == 0 || l == L) r.layer.push_back(l), r.time.push_back(l * dt);
  const std::size_t R = s.replicas.size(), S = r.layer.size();
  r.energy.assign(R * S, 0.0);
  r.aligned_fraction.assign(R, 0.0);
  r.antipodal_fraction.assign(R, 0.0);
  r.min_cosine.assign(R, 0.0);

  const Comm c(comm);
  Progress progress = replica_progress(c, static_cast<std::int64_t>(R), s.progress_interval,
                                       static_cast<double>(L), "layers");
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  bool finite = true;
  std::int64_t finished = 0;
  std::vector<double> x(static_cast<std::size_t>(n) * d);  // [N, d] one replica's tokens
  for (std::size_t ri = rank; ri < R; ri += size) {
    const std::uint64_t seed = replica_seed(s.seed, s.replicas[ri]);
    std::optional<RandomMlp> mlp;
    if (s.mlp_enabled) {
      MlpParams p = s.mlp;
      p.seed = seed;
      mlp.emplace(p, d);
    }
    Transformer model(s.model, n, replica_attention(s.attention_style, s.weights, n, s.tile, s.model.factor),
                      std::move(mlp));
    // The whole replica is on this rank: the pair pass runs on MPI_COMM_SELF with one block. One
    // histogram bin: only the energy and the cluster counts are used.
    PairStatisticsPass pass(MPI_COMM_SELF, Partition(n, 1), d, s.beta, 1, s.tile, s.cluster_cosine);
    sample_uniform_sphere(seed, 0, n, d, x.data());
    double* energy = r.energy.data() + ri * S;  // [S]
    std::size_t k = 0;
    energy[k++] = pass.compute(x.data()).energy;
    for (std::int64_t l = 0; l < L; ++l) {
      model.step(l, x.data());
      if (k < S && r.layer[k] == l + 1) energy[k++] = pass.compute(x.data()).energy;
    }
    const PairStatistics last = pass.compute(x.data());
    r.aligned_fraction[ri] = static_cast<double>(last.aligned_pairs) / pairs;
    r.antipodal_fraction[ri] = static_cast<double>(last.antipodal_pairs) / pairs;
    r.min_cosine[ri] = last.min_cosine;
    for (std::size_t j = 0; j < S; ++j) finite = finite && std::isfinite(energy[j]);
    progress.update(++finished);
  }
  // A replica that blew up is seen by its rank only: agree before anyone writes a result.
  require_all(comm, finite, "NaN or Inf in E_beta of a replica (reduce model.T/model.L, attention.beta or the weight scales)");
  // Each entry was written by exactly one rank: summing gives every rank the result, exactly.
  for (auto* v : {&r.energy, &r.aligned_fraction, &r.antipodal_fraction, &r.min_cosine})
    TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v->data(), static_cast<int>(v->size()), MPI_DOUBLE, MPI_SUM, comm));
  return r;
}

SynchronizationSummary summarize_synchronization(const SynchronizationResult& r, double lambdabar_prime,
                                                 double fit_start, std::uint64_t seed) {
  const std::size_t R = r.replicas.size(), S = r.time.size();
  SynchronizationSummary out;
  for (std::size_t j = 0; j < S; ++j) {
    double s1 = 0, s2 = 0;
    for (std::size_t i = 0; i < R; ++i) s1 += r.energy[i * S + j], s2 += r.energy[i * S + j] * r.energy[i * S + j];
    const double mean = s1 / R;
    const double var = R > 1 ? std::max(0.0, (s2 - R * mean * mean) / (R - 1)) : NAN;
    out.mean_energy.push_back(mean);
    out.standard_error.push_back(std::sqrt(var / R));
  }
  for (std::size_t j = 0; j < S; ++j) {
    out.bound.push_back(std::exp(lambdabar_prime * r.time[j]) * out.mean_energy[0]);
    out.max_ratio_to_bound = std::max(out.max_ratio_to_bound, out.mean_energy[j] / out.bound[j]);
  }
  std::vector<std::size_t> fitted;
  for (std::size_t j = 0; j < S; ++j)
    if (r.time[j] >= fit_start) fitted.push_back(j);
  if (fitted.size() < 2)
    throw InputError("deck key 'synchronize.fit_start' leaves fewer than two recorded times to fit");
  // Slope of log E_w[E_beta(t)] against t, E_w the mean with replica r counted w[r] times.
  out.decay_rate = bootstrap(static_cast<int>(R), [&](const std::vector<int>& w) {
    std::vector<double> t, y;
    for (std::size_t j : fitted) {
      double s1 = 0, count = 0;
      for (std::size_t i = 0; i < R; ++i) s1 += w[i] * r.energy[i * S + j], count += w[i];
      t.push_back(r.time[j]);
      y.push_back(std::log(s1 / count));
    }
    return least_squares_slope(t, y);
  }, 400, 0.05, seed);
  return out;
}

}  // namespace tokdyn
