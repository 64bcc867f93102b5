#include "tokdyn/studies/synchronization.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/diagnostics/pair_statistics.hpp"
#include "tokdyn/noise/activation.hpp"
#include "tokdyn/sphere/sphere.hpp"

namespace tokdyn {

namespace {

// sigma(-v) = -sigma(v): without biases the field is odd and antipodal tokens stay antipodal.
bool odd_activation(const Activation& a) {
  for (double v : {0.3, 1.0, 2.5})
    if (std::abs(a.value(-v) + a.value(v)) > 1e-12 * (1 + std::abs(a.value(v)))) return false;
  return true;
}

bool is_identity(const std::vector<double>& m, int d, double scale) {
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b)
      if (m[a * d + b] != (a == b ? scale : 0.0)) return false;
  return true;
}

std::vector<std::int64_t> recorded_layers(const SynchronizationSetup& s) {
  std::vector<std::int64_t> layers;
  for (std::int64_t l = 0; l <= s.model.layers; ++l)
    if (l % s.every == 0 || l == s.model.layers) layers.push_back(l);
  return layers;
}
}  // namespace

SynchronizationReplicas::SynchronizationReplicas(const Comm& comm, const SynchronizationSetup& s)
    : ReplicaStudy(comm, static_cast<std::int64_t>(s.replicas.size()), recorded_layers(s).size() + 3), setup_(s),
      layers_(recorded_layers(s)) {}

std::string SynchronizationReplicas::nonfinite_message(std::int64_t) const {
  return "NaN or Inf in E_beta of a replica (reduce model.T/model.L, attention.beta or the weight scales)";
}

void SynchronizationReplicas::compute(std::int64_t ri, double* row) {
  const SynchronizationSetup& s = setup_;
  const std::int64_t n = s.model.n, L = s.model.layers;
  const int d = s.model.d;
  const std::size_t S = layers_.size();
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  std::vector<double> x(static_cast<std::size_t>(n) * d);  // [N, d] the replica's tokens
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
  std::size_t k = 0;
  row[k++] = pass.compute(x.data()).energy;
  for (std::int64_t l = 0; l < L; ++l) {
    model.step(l, x.data());
    if (k < S && layers_[k] == l + 1) row[k++] = pass.compute(x.data()).energy;
  }
  const PairStatistics last = pass.compute(x.data());
  row[S] = static_cast<double>(last.aligned_pairs) / pairs;
  row[S + 1] = static_cast<double>(last.antipodal_pairs) / pairs;
  row[S + 2] = last.min_cosine;
}

SynchronizationResult SynchronizationReplicas::result() const {
  const SynchronizationSetup& s = setup_;
  SynchronizationResult r;
  r.replicas = s.replicas;
  r.layer = layers_;
  const double dt = s.model.horizon / static_cast<double>(s.model.layers);
  for (std::int64_t l : layers_) r.time.push_back(static_cast<double>(l) * dt);
  const std::size_t R = s.replicas.size(), S = layers_.size(), W = width();
  for (std::size_t i = 0; i < R; ++i) {
    const double* row = rows().data() + i * W;
    r.energy.insert(r.energy.end(), row, row + S);
    r.aligned_fraction.push_back(row[S]);
    r.antipodal_fraction.push_back(row[S + 1]);
    r.min_cosine.push_back(row[S + 2]);
  }
  return r;
}

SynchronizationResult run_synchronization_study(MPI_Comm comm, const SynchronizationSetup& setup) {
  const Comm c(comm);
  SynchronizationReplicas r(c, setup);
  run_replicas(r);
  return r.result();
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

TheoremCheck check_theorem(const SynchronizationSetup& s, const LyapunovPrediction& p) {
  TheoremCheck c;
  const int d = s.model.d;
  char line[320];
  if (p.lambdabar >= 0) {
    std::snprintf(line, sizeof line, "lambdabar = %.4g >= 0: Thm 1.4 gives no decay (its bound grows)", p.lambdabar);
    c.notes.push_back(line);
  }
  c.odd_field = odd_activation(activation(s.mlp.activation)) && s.mlp.sigma_u == 0 && s.mlp.sigma_w == 0;
  if (c.odd_field)
    c.notes.push_back("odd field (odd activation, no biases): Thm 1.4 does not apply; expect two antipodal clusters");
  if (!s.mlp_enabled)
    c.notes.push_back("mlp.enabled = false: no noise; the kernel constants are those the MLP would have");
  // Softmax attention with Q^T K = beta I, V = I never increases E_beta (eps = 0 in Thm 1.4), so the bound
  // holds with it at any factor a >= 0, and without it; other weights or a repulsive factor void it.
  const AttentionTraits& traits = attention_styles().traits(s.attention_style);
  const bool identity = traits.normalized && traits.exponential && is_identity(s.weights.query, d, 1) &&
                        is_identity(s.weights.key, d, 1) && is_identity(s.weights.value, d, 1);
  if (s.model.factor < 0 || (s.model.factor > 0 && !identity))
    c.notes.push_back("the bound assumes softmax attention with Q^T K = beta I, V = I and factor >= 0 (or none); "
                      "this deck differs");
  return c;
}

}  // namespace tokdyn
