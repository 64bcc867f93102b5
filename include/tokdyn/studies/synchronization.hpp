// Synchronization by noise (doc/science.md section 6.4, Thm 1.4) as a replica study: R independent copies of the
// discrete transformer (own tokens and MLPs, streams from replica_seed), E_beta of each at every
// diagnostics layer, and the cluster statistics of the last layer (one cluster, or two antipodal ones
// for odd fields). Each replica lives on one rank, so results do not depend on the rank count.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/attention/attention.hpp"
#include "tokdyn/diagnostics/fit.hpp"
#include "tokdyn/diagnostics/lyapunov.hpp"
#include "tokdyn/dynamics/transformer.hpp"
#include "tokdyn/noise/random_mlp.hpp"
#include "tokdyn/run/replicas.hpp"

namespace tokdyn {

struct SynchronizationSetup {
  TransformerParams model;  // N, d, L, T and the attention factor
  std::string attention_style = "softmax";
  AttentionWeights weights;
  int tile = 256;
  bool mlp_enabled = true;
  MlpParams mlp;  // its seed is replaced by each replica's
  std::uint64_t seed = 1;
  std::vector<std::int64_t> replicas;  // replica ids covered by this run
  std::int64_t every = 1;              // E_beta every k layers (and at the last)
  double beta = 1;                     // of E_beta
  double cluster_cosine = 0.99;        // a pair is in one cluster when cos > c, antipodal when cos < -c
};

struct SynchronizationResult {
  std::vector<std::int64_t> replicas;
  std::vector<std::int64_t> layer;  // [S] recorded layers: 0, every, 2 every, ..., L
  std::vector<double> time;         // [S]
  std::vector<double> energy;       // [R, S] E_beta of replica r at layer[s]
  // Last layer, per replica [R]: fractions of the N(N-1)/2 pairs with cos > c and cos < -c.
  std::vector<double> aligned_fraction, antipodal_fraction, min_cosine;
};

// The study as replicas: the row of a replica is [E_beta at the S recorded layers | aligned | antipodal | min cos].
class SynchronizationReplicas : public ReplicaStudy {
 public:
  SynchronizationReplicas(const Comm& comm, const SynchronizationSetup& setup);
  SynchronizationResult result() const;
  std::string nonfinite_message(std::int64_t step) const override;

 protected:
  void compute(std::int64_t index, double* row) override;

 private:
  SynchronizationSetup setup_;
  std::vector<std::int64_t> layers_;  // [S] recorded layers
};

// Collective on comm; every rank gets the whole result.
SynchronizationResult run_synchronization_study(MPI_Comm comm, const SynchronizationSetup& setup);

// Mean over replicas of E_beta(t) with its standard error, the bound exp(lambdabar' t) E[E_beta(0)] of
// Thm 1.4, and the least-squares slope of log E[E_beta] over time >= fit_start with a bootstrap interval
// over replicas.
struct SynchronizationSummary {
  std::vector<double> mean_energy, standard_error, bound;  // [S]
  Estimate decay_rate;
  double max_ratio_to_bound = 0;  // max_t E[E_beta(t)] / bound(t)
};
SynchronizationSummary summarize_synchronization(const SynchronizationResult& result, double lambdabar_prime,
                                                 double fit_start, std::uint64_t seed);

// Whether Thm 1.4 (doc/science.md section 6.4) applies to a setup with the exponents p of its MLP kernel:
// what keeps it from applying, one sentence each (said in the output; the study runs either way), and
// whether the field is odd (two antipodal clusters are then expected instead of one).
struct TheoremCheck {
  std::vector<std::string> notes;
  bool odd_field = false;
};
TheoremCheck check_theorem(const SynchronizationSetup& setup, const LyapunovPrediction& p);

}  // namespace tokdyn
